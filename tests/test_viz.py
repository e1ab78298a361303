"""planning_collision.viz: the glTF file round trip (one named node per obstacle and link,
bounds equal to the engine's boxes), the tessellation's promises, per-link collision and
clearance, the viewer's state, the demo, and the page itself in a real headless Chromium."""

import importlib
import io

import numpy as np
import pytest
import trimesh
from scipy.spatial.transform import Rotation

import planning_collision as pc
from planning_collision import robots, viz
from planning_collision.io import mbm_path
from planning_collision.testing.sampling import bounding_radius
from planning_collision.viz import _colors
from planning_collision.viz.glb import (
    PATH_NODE,
    ghost_node_name,
    obstacle_node_name,
    robot_node_name,
)
from planning_collision.viz.meshes import obstacle_drawable, shape_mesh
from tests.conftest import load_panda

FINGERS = {"panda_finger_joint1": 0.065, "panda_finger_joint2": 0.065}
# The Panda in front of the bookshelf (planning_collision/data/bookshelf.json): READY is
# franka's ready pose; REACH puts the hand into the middle compartment (7.4 cm clear);
# HIT tips the arm forward so that the hand and link 7 go into the shelf.
READY = np.array([0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785])
REACH = np.array([0.12, 0.01, -0.28, -2.12, -0.30, 3.72, -0.53])
HIT = REACH + [0.0, 0.25, 0.0, 0.0, 0.0, 0.0, 0.0]
TOL = 1e-6  # m; glTF stores vertices as float32 (~1e-7 m at the scene's sizes)


def _pose(rotvec=(0.0, 0.0, 0.0), t=(0.0, 0.0, 0.0)):
    T = np.eye(4)
    T[:3, :3] = Rotation.from_rotvec(rotvec).as_matrix()
    T[:3, 3] = t
    return T


@pytest.fixture(scope="module")
def panda():
    return load_panda(FINGERS)


@pytest.fixture(scope="module")
def bookshelf():
    return pc.Scene.from_file(viz.BOOKSHELF)


def _every_kind_scene():
    """One obstacle of every kind at a tilted pose, and a compound one. The cone stands
    with its axis along a world axis: the engine's cone box is the rotated local box,
    exact only then (see the tilted-cone test)."""
    rng = np.random.default_rng(7)
    s = pc.Scene()
    s.add(pc.Sphere(0.1), _pose((0.3, 0.2, 0.1), (0.5, 0, 0.3)), name="ball")
    s.add(pc.Capsule(0.05, 0.3), _pose((0.7, -0.4, 0.2), (0.4, 0.5, 0.2)), name="rod")
    s.add(pc.Cylinder(0.07, 0.25), _pose((0.2, 1.0, 0.5), (-0.3, 0.4, 0.5)), name="can")
    s.add(pc.Cone(0.08, 0.2), _pose((np.pi / 2, 0, 0), (0.0, -0.5, 0.4)), name="cone")
    s.add(pc.Box((0.3, 0.1, 0.2)), _pose((0.1, 0.2, 0.9), (0.6, -0.3, 0.1)), name="crate")
    s.add(pc.Convex(rng.normal(size=(25, 3)) * 0.06, 0.02), _pose((1, 2, 3), (-0.4, -0.4, 0.6)))
    s.add(
        pc.Mesh([[0, 0, 0], [0.3, 0, 0], [0, 0.3, 0.1], [9, 9, 9]], [[0, 1, 2]]),
        _pose((0.5, 0.0, 0.0), (0.2, -0.8, 0.0)),
        name="sheet",
    )
    s.add(pc.PointCloud(rng.normal(size=(40, 3)) * 0.1, 0.015), _pose(t=(1, 0, 0.5)), "cloud")
    s.add(pc.PointCloud(rng.normal(size=(40, 3)) * 0.1), _pose(t=(1, 1, 0.5)), name="scan")
    grid = pc.VoxelGrid([[0, 0, 0], [1, 0, 0], [1, 1, 2]], 0.04, origin=(0.1, 0.0, -0.05))
    s.add(grid, _pose((0.0, 0.4, 0.3), (-0.6, 0.6, 0.2)), name="voxels")
    lamp = [
        (pc.Cylinder(0.08, 0.02), np.eye(4)),
        (pc.Capsule(0.01, 0.4), _pose((0.3, 0, 0), (0, 0.05, 0.21))),
    ]
    s.add(lamp, _pose((0, 0, 0.5), (0.6, 0.6, 0.0)), name="lamp")
    return s


def _node_bounds(glb: trimesh.Scene) -> dict:
    out = {}
    for node in glb.graph.nodes_geometry:
        T, g = glb.graph[node]
        v = trimesh.transform_points(np.asarray(glb.geometry[g].vertices), T)
        out[node] = (v.min(axis=0), v.max(axis=0))
    return out


@pytest.mark.parametrize("robot_name", ["planar_arm", "panda"])
def test_export_glb_has_a_named_node_per_obstacle_and_link_with_the_engines_bounds(
    robot_name, tmp_path, request
):
    if robot_name == "panda":
        robot = request.getfixturevalue("panda")
        Q = np.stack([REACH, READY])
    else:
        robot = robots.load(robot_name)
        Q = np.array([[0.3, -0.5, 1.0], [-1.0, 0.7, 0.2]])
    scene = _every_kind_scene()
    viz.export_glb(tmp_path / "x.glb", scene, robot, configurations=Q, path=Q)
    bounds = _node_bounds(trimesh.load(tmp_path / "x.glb"))

    expected = {}
    for ob in scene:
        expected[obstacle_node_name(ob.id, ob.name)] = viz.engine_obstacle_bounds(ob.shape, ob.T)
    for k, q in enumerate(Q):
        for link, box in viz.engine_link_bounds(robot, q).items():
            expected[robot_node_name(k, link)] = box
    assert set(expected) <= set(bounds)
    links = {p.link for p in robot.pieces}
    ghosts = {ghost_node_name(i, link) for i in range(len(Q)) for link in links}
    assert set(bounds) == set(expected) | ghosts | {PATH_NODE}
    for node, (lo, hi) in expected.items():
        np.testing.assert_allclose(bounds[node][0], lo, atol=TOL, rtol=0, err_msg=node)
        np.testing.assert_allclose(bounds[node][1], hi, atol=TOL, rtol=0, err_msg=node)


def test_a_tilted_cone_is_drawn_with_its_exact_bounds_inside_the_engines_looser_box():
    cone, T = pc.Cone(0.08, 0.3), _pose((0.4, -0.7, 0.2), (0.1, 0.2, 0.3))
    v, _ = shape_mesh(cone, T)
    axis, h = T[:3, 2], 0.15
    apex, base = T[:3, 3] + h * axis, T[:3, 3] - h * axis
    rim = 0.08 * np.sqrt(1.0 - axis**2)  # a circle's half extent along each world axis
    lo = np.minimum(apex, base - rim)
    hi = np.maximum(apex, base + rim)
    np.testing.assert_allclose(v.min(axis=0), lo, atol=1e-12)
    np.testing.assert_allclose(v.max(axis=0), hi, atol=1e-12)
    elo, ehi = viz.engine_obstacle_bounds(cone, T)
    assert np.all(elo <= lo + 1e-12) and np.all(hi <= ehi + 1e-12)
    assert np.any(elo < lo - 1e-3)  # the engine's box is looser here, not the mesh


@pytest.mark.parametrize(
    "shape",
    [
        pc.Sphere(0.1),
        pc.Capsule(0.05, 0.3),
        pc.Cylinder(0.07, 0.25),
        pc.Cone(0.08, 0.2),
        pc.Box((0.3, 0.1, 0.2)),
        pc.Convex(np.random.default_rng(3).normal(size=(25, 3)) * 0.06, 0.02),
        pc.Convex([[0, 0, 0], [0.2, 0, 0], [0, 0.1, 0]]),  # flat: a two-sided triangle
    ],
    ids=lambda s: type(s).__name__,
)
def test_every_tessellation_vertex_lies_in_the_shape_and_on_its_surface_unless_swept(shape, rng):
    swept = isinstance(shape, pc.Convex) and shape.radius > 0
    for _ in range(3):
        T = _pose(rng.normal(size=3), rng.normal(size=3))
        v, f = shape_mesh(shape, T)
        assert f.min() >= 0 and f.max() < len(v)
        d = np.array([pc.distance(pc.Convex([p]), np.eye(4), shape, T).distance for p in v])
        # to the accuracy of GJK's distance on curved shapes (~1e-8 m)
        assert d.max() < 1e-7
        if not swept:
            assert d.min() > -1e-7


def test_closed_tessellations_are_outward_watertight_solids(rng):
    for shape in [
        pc.Sphere(0.1),
        pc.Capsule(0.05, 0.3),
        pc.Cylinder(0.07, 0.25),
        pc.Cone(0.08, 0.2),
    ]:
        m = trimesh.Trimesh(*shape_mesh(shape, _pose(rng.normal(size=3))), process=True)
        assert m.is_watertight and m.is_winding_consistent and m.volume > 0


def test_a_zero_radius_cloud_is_points_and_a_compound_with_one_gets_a_points_node(tmp_path):
    scan = pc.PointCloud([[0, 0, 0], [0.1, 0.2, 0.3]])
    d = obstacle_drawable(scan, np.eye(4))
    assert d.vertices is None and d.points.shape == (2, 3)
    s = pc.Scene()
    s.add([(scan, np.eye(4)), (pc.Sphere(0.05), _pose(t=(0, 0, 1)))], name="mixed")
    viz.export_glb(tmp_path / "m.glb", s)
    glb = trimesh.load(tmp_path / "m.glb")
    assert set(glb.graph.nodes_geometry) == {"obstacle 0 mixed", "obstacle 0 mixed points"}


def test_the_path_node_is_the_end_effectors_curve_through_every_waypoint(tmp_path):
    arm = robots.load("planar_arm")
    path = np.array([[0.0, 0.0, 0.0], [0.8, -0.4, 0.3], [1.2, 0.5, -0.6]])
    viz.export_glb(tmp_path / "p.glb", robot=arm, path=path, ghosts=2)
    glb = trimesh.load(tmp_path / "p.glb")
    curve = np.asarray(glb.geometry[glb.graph[PATH_NODE][1]].vertices)
    ee = viz.end_effector_link(arm)
    for q in path:
        p = arm.fk(q)[ee][:3, 3]
        assert np.min(np.linalg.norm(curve - p, axis=1)) < TOL
    ghosts = {
        n.split()[1] for n in glb.graph.nodes_geometry if n.startswith("path ") and n != PATH_NODE
    }
    assert ghosts == {"0", "2"}  # two ghosts: first and last waypoint


def test_export_glb_names_the_bad_argument():
    arm = robots.load("planar_arm")
    with pytest.raises(ValueError, match=r"path must have shape \(m, 3\)"):
        viz.export_glb(io.BytesIO(), robot=arm, path=np.zeros((4, 2)))
    with pytest.raises(ValueError, match="need a robot"):
        viz.export_glb(io.BytesIO(), configurations=[[0.0, 0.0, 0.0]])


def _nearest(shape, T, parts) -> float:
    """min over parts of pc.distance(shape, T, part): the pair queries in order of a lower
    bound from balls about the shapes' origins (`bounding_radius`), stopping once the bound
    exceeds the best distance found (the same minimum as querying every part)."""
    r = bounding_radius(shape)
    bounds = []
    for s, Ts in parts:
        gap = float(np.linalg.norm(T[:3, 3] - Ts[:3, 3])) - r - bounding_radius(s)
        bounds.append((gap, s, Ts))
    best = np.inf
    for lower, s, Ts in sorted(bounds, key=lambda b: b[0]):
        if lower > best:
            break
        best = min(best, pc.distance(shape, T, s, Ts).distance)
    return best


def test_link_status_agrees_with_pair_queries_on_every_shelf_part(panda, bookshelf):
    parts = []
    for ob in bookshelf:
        if isinstance(ob.shape, pc.Shape):
            parts.append((ob.shape, ob.T))
        else:
            parts += [(s, ob.T @ Tp) for s, Tp in ob.shape]
    for q, colliding in [(REACH, set()), (HIT, {"panda_link7", "panda_hand"})]:
        status = viz.link_status(bookshelf, panda, q)
        assert {k for k, s in status.items() if s.colliding} == colliding
        ref = {}
        for p, T in zip(panda.pieces, panda.piece_poses(q), strict=True):
            ref[p.link] = min(ref.get(p.link, np.inf), _nearest(p.shape, T, parts))
        assert list(status) == list(ref)
        for link, s in status.items():
            assert s.clearance == pytest.approx(ref[link], abs=1e-7), link
            assert s.colliding == (ref[link] <= 0.0)


def test_the_viewer_colours_colliding_links_and_lists_each_links_clearance(panda, bookshelf):
    pytest.importorskip("viser", reason="the viewer needs viser (pip install '.[viz]')")
    vertices = np.stack([READY, REACH, HIT])
    with viz.show(
        bookshelf, panda, path=[READY, REACH], roadmap=(vertices, [[0, 1], [1, 2]])
    ) as viewer:
        assert viewer.url.startswith("http://127.0.0.1:")
        np.testing.assert_array_equal(viewer.q, READY)  # the path's start
        viewer.set_configuration(HIT)
        colours = {link: tuple(h.color) for link, (_, h) in viewer._link_handles.items()}
        hit = {k for k, c in colours.items() if c == _colors.COLLISION}
        assert hit == {"panda_link7", "panda_hand"}
        assert all(c == _colors.ROBOT for k, c in colours.items() if k not in hit)
        text = viewer._panel.content
        assert "2 links in collision" in text and all(link in text for link in colours)
        viewer.set_path_position(0.5)  # half-way along the path, through its slider's code
        np.testing.assert_allclose(viewer.q, 0.5 * (READY + REACH))
        assert [s.value for s in viewer.joint_sliders] == pytest.approx(viewer.q)
        viewer.joint_sliders[0].value = 0.4  # a slider move runs the update
        assert viewer.q[0] == pytest.approx(0.4)
        with pytest.raises(ValueError, match=r"edges\[0\] = \[0, 5\]"):
            viz.show(robot=panda, roadmap=(vertices, [[0, 5]]))


def _hue_mask(img, rgb, hue_tol=12.0, min_sat=0.35, min_val=0.2):
    """Pixels of `rgb`'s hue (within hue_tol degrees), saturated and lit enough: the
    colour as drawn under the viewer's lights."""
    from PIL import Image

    hsv = np.asarray(Image.fromarray(img).convert("HSV"), float) / 255.0
    target = np.asarray(Image.new("RGB", (1, 1), tuple(rgb)).convert("HSV"), float)[0, 0] / 255
    dh = np.abs(hsv[..., 0] - target[0])
    dh = np.minimum(dh, 1.0 - dh) * 360.0
    return (dh <= hue_tol) & (hsv[..., 1] >= min_sat) & (hsv[..., 2] >= min_val)


def _pixel_box(points, camera, width, height):
    """Pixel bounding box (x0, y0, x1, y1) of 3-D points seen by the viewer's initial
    camera (three.js: vertical field of view `viewer.FOV`, z up), clipped to the image."""
    from planning_collision.viz.viewer import FOV

    position, look_at = camera
    f = (look_at - position) / np.linalg.norm(look_at - position)
    r = np.cross(f, (0.0, 0.0, 1.0))
    r /= np.linalg.norm(r)
    u = np.cross(r, f)
    d = points - position
    t = np.tan(FOV / 2)
    x = (d @ r) / ((d @ f) * t * width / height)
    y = (d @ u) / ((d @ f) * t)
    px, py = (x + 1) / 2 * width, (1 - y) / 2 * height
    x0, x1 = np.clip([px.min(), px.max()], 0, width).astype(int)
    y0, y1 = np.clip([py.min(), py.max()], 0, height).astype(int)
    return x0, y0, x1, y1


def _corners(lo, hi):
    return np.array(
        [[a, b, c] for a in (lo[0], hi[0]) for b in (lo[1], hi[1]) for c in (lo[2], hi[2])]
    )


def test_a_headless_chromium_draws_the_panda_and_the_shelf_where_the_camera_looks(
    panda, bookshelf, tmp_path
):
    pytest.importorskip("viser", reason="the viewer needs viser (pip install '.[viz]')")
    pytest.importorskip("playwright", reason="the browser test drives Chromium with playwright")
    from planning_collision.viz.browser import find_chromium, screenshot

    if find_chromium() is None:
        pytest.skip("no Chromium to test in (Debian: apt-get install chromium; .ci/run does)")
    W, H = 1280, 800
    robot_pts = np.concatenate(
        [_corners(*b) for b in viz.engine_link_bounds(panda, REACH).values()]
    )
    shelf = bookshelf.get(bookshelf.find("bookshelf")[0])
    shelf_pts = _corners(*viz.engine_obstacle_bounds(shelf.shape, shelf.T))

    with viz.show(bookshelf, panda, q=REACH) as viewer:
        robot_box = _pixel_box(robot_pts, viewer.camera, W, H)
        shelf_box = _pixel_box(shelf_pts, viewer.camera, W, H)

        def counts(img):
            out = []
            for rgb, (x0, y0, x1, y1) in [
                (_colors.ROBOT, robot_box),
                (_colors.OBSTACLE, shelf_box),
            ]:
                m = _hue_mask(img, rgb)
                inside = m[y0:y1, x0:x1].sum()
                out.append((inside / max((x1 - x0) * (y1 - y0), 1), inside / max(m.sum(), 1)))
            return out

        def drawn(img):
            (robot_fill, robot_in), (shelf_fill, _) = counts(img)
            return robot_fill > 0.08 and robot_in > 0.95 and shelf_fill > 0.2

        img = screenshot(
            viewer.url, tmp_path / "view.png", width=W, height=H, ready=drawn, timeout=45
        )
    (robot_fill, robot_in), (shelf_fill, _) = counts(img)
    # the robot's orange fills its projected box, and nearly all orange on the page is there
    assert robot_fill > 0.08 and robot_in > 0.95, (robot_fill, robot_in, tmp_path / "view.png")
    assert shelf_fill > 0.2, (shelf_fill, tmp_path / "view.png")


def test_the_view_demo_writes_a_glb_without_serving(tmp_path, capsys):
    demo = importlib.import_module("planning_collision.demos.view")
    out = tmp_path / "arm.glb"
    argv = [str(viz.BOOKSHELF), "--robot", "planar_arm", "--q", "0.3", "0.2", "0.1"]
    assert demo.main([*argv, "--export", str(out), "--no-serve"]) == 0
    nodes = set(trimesh.load(out).graph.nodes_geometry)
    assert "obstacle 0 bookshelf" in nodes and "robot 0 link1" in nodes
    assert "5 objects" in capsys.readouterr().out


def test_the_view_demo_shows_your_urdf_and_srdf_in_your_scene_file(tmp_path, capsys):
    """--urdf / --srdf / --fixed / --scene: a robot that is not in the registry, in a scene
    file with a mesh and a point cloud, along a path of two configurations."""
    import json

    demo = importlib.import_module("planning_collision.demos.view")
    trimesh.creation.box((0.2, 0.2, 0.3)).export(tmp_path / "crate.stl")
    cloud = {"type": "pointcloud", "points": [[-0.5, y, 0.0] for y in (-0.2, 0.0, 0.2)]}
    scene = {
        "format": "planning_collision.scene",
        "objects": [
            {
                "name": "crate",
                "pose": {"position": [0.6, -0.5, 0]},
                "shape": {"type": "mesh", "file": "crate.stl"},
            },
            {"name": "wall", "shape": {**cloud, "radius": 0.05}},
        ],
    }
    (tmp_path / "cell.json").write_text(json.dumps(scene))
    srdf = tmp_path / "arm.srdf"
    srdf.write_text('<robot name="arm"><disable_collisions link1="base" link2="link2"/></robot>')
    out = tmp_path / "mine.glb"
    argv = ["--urdf", str(robots.urdf_path("planar_arm")), "--srdf", str(srdf)]
    argv += ["--fixed", "finger_joint=0.015", "--scene", str(tmp_path / "cell.json")]
    argv += ["--q", "1.2", "0.3", "0.3", "--q", "0", "0", "0", "--export", str(out), "--no-serve"]
    assert demo.main(argv) == 0
    nodes = set(trimesh.load(out).graph.nodes_geometry)
    assert {"obstacle 0 crate", "obstacle 1 wall", "robot 0 link1", PATH_NODE} <= nodes
    text = capsys.readouterr().out
    assert (
        "cell.json, 2 objects" in text and "3 joints" in text and "links in collision: none" in text
    )


def test_the_view_demo_refuses_a_robot_given_twice(capsys):
    demo = importlib.import_module("planning_collision.demos.view")
    with pytest.raises(SystemExit) as e:
        demo.main(["--robot", "panda", "--urdf", "arm.urdf"])
    assert e.value.code == 2 and "not both" in capsys.readouterr().err


def test_the_view_demo_shows_a_motionbenchmaker_problem_from_start_to_goal(panda, tmp_path):
    demo = importlib.import_module("planning_collision.demos.view")
    out = tmp_path / "mbm.glb"
    mbm = mbm_path("bookshelf_small")
    assert demo.main([str(mbm), "--problem", "2", "--export", str(out), "--no-serve"]) == 0
    nodes = set(trimesh.load(out).graph.nodes_geometry)
    assert PATH_NODE in nodes and ghost_node_name(1, "panda_hand") in nodes


def test_the_view_demo_serves_for_the_given_seconds_then_stops(capsys):
    pytest.importorskip("viser", reason="the viewer needs viser (pip install '.[viz]')")
    demo = importlib.import_module("planning_collision.demos.view")
    assert demo.main(["--robot", "planar_arm", "--seconds", "0.2"]) == 0
    assert "serving http://127.0.0.1:" in capsys.readouterr().out
