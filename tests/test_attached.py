"""Attached objects (MoveIt's AttachedCollisionObject; robot/attached.py): a box held by the
Panda's hand moves with it in every query — states, certified edges (its motion bounds
included), distances, contacts, the viewer and the glTF file — touches only the fingers it
may touch, and is checked against the scene and the rest of the robot; attach and detach
between plans, seen by checkers built before."""

import threading

import numpy as np
import pytest
import trimesh
from scipy.spatial import ConvexHull

import planning_collision as pc
from planning_collision import viz
from planning_collision.testing.edges import rrt_edges
from tests.conftest import load_panda

FINGERS = ["panda_leftfinger", "panda_rightfinger"]
HELD = {"panda_finger_joint1": 0.04, "panda_finger_joint2": 0.04}
BOX = pc.Box((0.03, 0.09, 0.06))  # 9 cm across the fingers, 8 cm apart: a firm grasp
READY = np.array([0.0, -0.5, 0.0, -2.2, 0.0, 1.7, 0.785])


def _grasp(z: float = 0.1034) -> np.ndarray:
    """T_hand_box: the box centred at the hand's TCP (10.34 cm down its z)."""
    T = np.eye(4)
    T[2, 3] = z
    return T


@pytest.fixture
def panda():
    return load_panda(HELD)


def _with_box(robot, **kw):
    kw.setdefault("touch_links", FINGERS)
    return robot.attach("box", "panda_hand", BOX, _grasp(), **kw)


def test_the_box_moves_with_the_hand_in_fk_and_in_its_pieces(panda):
    obj = _with_box(panda)
    assert panda.attached == {"box": obj} and obj.touch_links == tuple(FINGERS)
    assert "attached=['box']" in repr(panda) and "touch_links" in repr(obj)
    rng = np.random.default_rng(0)
    for q in panda.random_configurations(5, rng):
        T = panda.fk(q)
        np.testing.assert_allclose(T["box"], T["panda_hand"] @ _grasp(), atol=1e-12)
        k = [i for i, p in enumerate(panda.pieces) if p.link == "box"]
        assert len(k) == 1 and panda.pieces[k[0]].shape == BOX
        np.testing.assert_allclose(panda.piece_poses(q)[k[0]], T["box"], atol=1e-12)
    assert viz.end_effector_link(panda) == "panda_hand_tcp"  # the held box is not the tool


def test_a_checker_built_before_the_attach_sees_the_box_until_it_is_detached(panda):
    scene = pc.Scene()
    tcp = panda.fk(READY)["panda_hand_tcp"]
    scene.add(pc.Sphere(0.005), tcp, name="pebble")  # between the open fingers
    checker = pc.CollisionChecker(panda, scene)
    assert checker.is_valid(READY) and checker.contacts(READY) == []
    v0 = panda.version
    _with_box(panda)
    assert panda.version != v0
    assert not checker.is_valid(READY)
    assert checker.contacts(READY)[0][:2] == ("box", "obstacle 'pebble'")
    assert "box" in checker.body_names
    assert not checker.check_edge(READY, READY + 0.1).valid
    panda.detach("box")
    assert checker.is_valid(READY) and "box" not in checker.body_names


def test_the_box_may_touch_the_fingers_it_is_given_and_nothing_else(panda):
    # per link (rigid_bodies=False) every checked pair is tested: the box overlaps both
    # fingers (a grasp) and is allowed to touch the hand it hangs on
    per_link = pc.CollisionChecker(panda, pc.Scene(), rigid_bodies=False)
    _with_box(panda, touch_links=())
    assert not per_link.is_valid(READY)
    touching = {(c.body, c.other) for c in per_link.contacts(READY)}
    assert touching == {("panda_leftfinger", "box"), ("panda_rightfinger", "box")}
    panda.detach("box")
    _with_box(panda)
    assert per_link.is_valid(READY)
    # rigid bodies (the default): the held fingers and the box ride on one rigid group, so
    # their pair never moves and is not checked (robot/rigid.py); a moving finger is
    assert pc.CollisionChecker(panda, pc.Scene()).is_valid(READY)
    arm = [f"panda_joint{i}" for i in range(1, 8)]
    moving = load_panda({}, active_joints=[*arm, "panda_finger_joint1"])
    q = np.append(READY, 0.04)
    checker = pc.CollisionChecker(moving, pc.Scene())
    moving.attach("box", "panda_hand", BOX, _grasp())
    assert not checker.is_valid(q)
    assert {c.other for c in checker.contacts(q)} | {c.body for c in checker.contacts(q)} >= {"box"}
    moving.detach("box")
    moving.attach("box", "panda_hand", BOX, _grasp(), touch_links=FINGERS)
    assert checker.is_valid(q)


def test_the_box_is_checked_against_the_rest_of_the_robot_as_python_fcl_checks_it(panda):
    """A 60 cm rod in the hand reaches the arm's own links in some configurations: every
    configuration the checker calls free is free for python-fcl on the exact meshes and
    the exact rod, and the rod's self collisions are found."""
    pytest.importorskip("fcl")
    from planning_collision.testing.fcl_robot import FclRobot

    rod = pc.Box((0.02, 0.02, 0.6))
    panda.attach("rod", "panda_hand", rod, _grasp(0.35), touch_links=FINGERS)
    checker = pc.CollisionChecker(panda, pc.Scene())
    oracle = FclRobot(panda, pc.Scene())
    Q = panda.random_configurations(600, np.random.default_rng(1))
    free = checker.is_valid_batch(Q)
    exact = np.array([not oracle.collides(q) for q in Q])
    assert not np.any(free & ~exact)  # never free where the exact model collides
    rod_hits = [
        q for q, f in zip(Q, free, strict=True)
        if not f and any("rod" in (c.body, c.other) for c in checker.contacts(q))
    ]  # fmt: skip
    assert len(rod_hits) >= 10, len(rod_hits)
    assert all(oracle.collides(q) for q in rod_hits[:10])
    partners = {
        c.body if c.other == "rod" else c.other for q in rod_hits for c in checker.contacts(q)
    }
    assert partners & {f"panda_link{i}" for i in range(7)}


def test_link_distances_give_the_box_its_exact_distance_to_the_scene(panda):
    scene = pc.Scene()
    T = np.eye(4)
    T[:3, 3] = (0.65, 0.25, 0.3)
    scene.add(pc.Box((0.2, 0.2, 0.2)), T, name="crate")
    _with_box(panda)
    checker = pc.CollisionChecker(panda, scene)
    for q in panda.random_configurations(20, np.random.default_rng(2)):
        d = checker.link_distances(q)
        k = list(d.links).index("box")
        ref = pc.distance(BOX, panda.fk(q)["box"], pc.Box((0.2, 0.2, 0.2)), T).distance
        if ref > 0:
            assert d.scene[k] == pytest.approx(ref, abs=1e-7)
            assert d.name[k] == "crate"
        else:
            assert d.scene[k] <= 0.0


def test_the_boxs_motion_bound_holds_on_sampled_motions(panda):
    _with_box(panda)
    i = list(panda.collision_links).index(panda.link_index["box"])
    corners = np.array([[x, y, z, 1.0] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)])
    corners[:, :3] *= 0.5 * np.asarray(BOX.extents)
    rng = np.random.default_rng(3)
    for q0, q1 in panda.random_configurations(60, rng).reshape(30, 2, -1):
        mu = panda.motion_bounds(q0, q1)[i]
        t = np.linspace(0.0, 1.0, 41)
        P = np.stack([(panda.fk(q0 + s * (q1 - q0))["box"] @ corners.T)[:3].T for s in t])
        moved = np.linalg.norm(P[:, None] - P[None, :], axis=-1).max(axis=-1)
        assert np.all(moved <= mu * np.abs(t[:, None] - t[None, :]) + 1e-12)


def _plates_across_the_box(robot, rng, n: int):
    """A scene of n plates (3 cm square, 3 mm thick) and n motions: each motion an RRT-like
    step (0.3-1 rad) that the arm without the box makes free, with a plate across the path
    of the box's centre half-way and clear of the robot at both ends."""
    scene = pc.Scene()
    bare = pc.CollisionChecker(robot, pc.Scene())
    held = robot.attached["box"]
    robot.detach("box")
    steps = rrt_edges(bare, rng, 8 * n, step=(0.3, 1.0))
    steps = [(q0, q1) for q0, q1 in steps if bare.check_edge(q0, q1).valid]
    robot.attach("box", held.link, list(held.parts), held.pose, touch_links=held.touch_links)
    edges = []
    for q0, q1 in steps:
        a, b = (robot.fk(q0 + s * (q1 - q0))["box"][:3, 3] for s in (0.49, 0.51))
        if np.linalg.norm(b - a) < 1e-4:
            continue
        z = (b - a) / np.linalg.norm(b - a)
        x = np.cross(z, [1.0, 0, 0]) if abs(z[0]) < 0.9 else np.cross(z, [0, 1.0, 0])
        x /= np.linalg.norm(x)
        T = np.eye(4)
        T[:3, :3] = np.stack([x, np.cross(z, x), z], axis=1)
        T[:3, 3] = 0.5 * (a + b)
        probe = pc.Scene()
        probe.add(pc.Box((0.03, 0.03, 0.003)), T)
        ends = pc.CollisionChecker(robot, probe)
        if ends.is_valid(q0) and ends.is_valid(q1):
            scene.add(pc.Box((0.03, 0.03, 0.003)), T, name=f"plate {len(edges)}")
            edges.append((q0, q1))
            if len(edges) == n:
                break
    return scene, edges


def test_certified_edges_with_the_box_are_free_on_the_exact_meshes_and_box(panda):
    """Every motion "dichotomy" or "ca" calls free, with a box in the hand, has no colliding
    state among 300 on the exact link meshes and the exact box (python-fcl): RRT-like
    motions among the bookshelf, and motions with a thin plate across the box's path only,
    which the box's own certificate must refuse."""
    pytest.importorskip("fcl")
    from planning_collision.testing.fcl_robot import FclRobot

    rng = np.random.default_rng(4)
    _with_box(panda)
    shelf = pc.Scene.from_file(viz.BOOKSHELF)
    plates, plated = _plates_across_the_box(panda, rng, 12)
    assert len(plated) == 12
    for scene, edges in ((shelf, None), (plates, plated)):
        checker = pc.CollisionChecker(panda, scene)
        edges = edges or rrt_edges(checker, rng, 24, step=(0.3, 1.2))
        oracle = FclRobot(panda, scene)
        free = {
            m: [checker.check_edge(a, b, m).valid for a, b in edges] for m in ("dichotomy", "ca")
        }
        for k, (q0, q1) in enumerate(edges):
            if free["dichotomy"][k] or free["ca"][k]:
                assert oracle.edge_collides(q0, q1, 300) is None, k
        if scene is shelf:
            assert sum(free["dichotomy"]) >= 5
    # the box's centre crosses each plate: no certified method calls those motions free;
    # the arm without the box makes some of them (the hand sweeps most plates too: its
    # path is the box's, 10 cm up), so there only the box's own certificate refused them
    assert not any(free["dichotomy"]) and not any(free["ca"])
    panda.detach("box")
    passed = 0
    for ob, (q0, q1) in zip(plates, plated, strict=True):  # each with its own plate
        alone = pc.Scene()
        alone.add(ob.shape, ob.T)
        passed += pc.CollisionChecker(panda, alone).check_edge(q0, q1).valid
    assert passed >= 1


def test_attach_errors_name_the_argument(panda):
    with pytest.raises(ValueError, match="link 'gripper' is not a link"):
        panda.attach("box", "gripper", BOX)
    with pytest.raises(ValueError, match="name 'panda_hand' is already a link"):
        panda.attach("panda_hand", "panda_link7", BOX)
    with pytest.raises(ValueError, match="touch_links names 'thumb'"):
        panda.attach("box", "panda_hand", BOX, touch_links=["thumb"])
    with pytest.raises(ValueError, match="a Halfspace cannot be attached"):
        panda.attach("box", "panda_hand", pc.Halfspace((0, 0, 1), 0.0))
    with pytest.raises(ValueError, match="pose"):
        panda.attach("box", "panda_hand", BOX, np.full((4, 4), np.nan))
    with pytest.raises(TypeError, match="name must be a non-empty str"):
        panda.attach("", "panda_hand", BOX)
    with pytest.raises(ValueError, match="no object 'box' is attached"):
        panda.detach("box")
    assert panda.attached == {}  # nothing half-attached
    _with_box(panda)
    with pytest.raises(ValueError, match="name 'box' is already a link"):
        _with_box(panda)


def test_detach_restores_the_robot_and_keeps_the_users_acm_edits(panda):
    pieces, key = list(panda.pieces), panda.geometry_key
    assert not panda.acm.is_allowed("panda_link0", "panda_link5")
    panda.allow("panda_link0", "panda_link5", "user")
    entries = panda.acm.entries()
    _with_box(panda)
    assert panda.acm.reason("box", "panda_hand") == "attached"
    assert panda.acm.reason("box", "panda_leftfinger") == "touch"
    panda.allow("box", "panda_link6")  # an ACM edit naming the object
    assert panda.acm.is_allowed("panda_link0", "panda_link5")
    assert not panda.acm_is_adjacent_only
    panda.detach("box")
    assert panda.geometry_key == key and len(panda.pieces) == len(pieces)
    assert panda.acm.entries() == entries
    assert panda.link_names[-1] == "panda_rightfinger"


def test_an_obstacle_moves_onto_the_hand_and_back_into_the_scene_where_it_is(panda):
    scene = pc.Scene()
    T = panda.fk(READY)["panda_hand_tcp"]
    oid = scene.add(BOX, T, name="crate")
    obj = panda.attach_from_scene(scene, oid, "panda_hand", READY, touch_links=FINGERS)
    assert len(scene) == 0 and obj.name == "crate"
    np.testing.assert_allclose(panda.fk(READY)["crate"], T, atol=1e-12)
    q = READY + 0.3
    new = panda.detach_to_scene("crate", scene, q)
    ob = scene.get(new)
    assert ob.name == "crate" and ob.shape == BOX and panda.attached == {}
    np.testing.assert_allclose(ob.T, panda.fk(q)["panda_hand"] @ obj.pose, atol=1e-12)


def test_an_attached_mesh_is_decomposed_with_its_whole_surface_inside(panda):
    ring = trimesh.creation.annulus(r_min=0.03, r_max=0.05, height=0.02, sections=24)
    mesh = pc.Mesh(ring.vertices, ring.faces)
    panda.attach("ring", "panda_hand", [(mesh, _grasp())], touch_links=FINGERS)
    pieces = [p for p in panda.pieces if p.link == "ring"]
    assert len(pieces) > 1 and all(isinstance(p.shape, pc.Convex) for p in pieces)
    pts = trimesh.sample.sample_surface(ring, 3000, seed=5)[0]
    pts = trimesh.transform_points(pts, _grasp())  # in the ring link's frame
    inside = np.zeros(len(pts), bool)
    for p in pieces:
        eq = ConvexHull(trimesh.transform_points(np.asarray(p.shape.points), p.pose)).equations
        inside |= (pts @ eq[:, :3].T + eq[:, 3] <= 1e-9).all(axis=1)
    assert inside.all()


def test_the_glb_file_and_the_viewer_draw_the_box(panda, tmp_path):
    _with_box(panda)
    viz.export_glb(tmp_path / "held.glb", robot=panda, configurations=[READY])
    nodes = set(trimesh.load(tmp_path / "held.glb").graph.nodes_geometry)
    assert viz.glb.robot_node_name(0, "box") in nodes
    pytest.importorskip("viser", reason="the viewer needs viser (pip install '.[viz]')")
    with viz.show(robot=panda, q=READY) as viewer:
        assert "box" in viewer._link_handles
        panda.detach("box")
        viewer.set_configuration(READY)
        assert "box" not in viewer._link_handles
        panda.attach("cup", "panda_hand", pc.Cylinder(0.03, 0.08), _grasp())
        viewer.set_configuration(READY + 0.1)
        i, h = viewer._link_handles["cup"]
        np.testing.assert_allclose(h.position, panda.fk(READY + 0.1)["cup"][:3, 3], atol=1e-6)


def test_attach_and_detach_while_other_threads_check(panda):
    """Queries in two threads while the main thread attaches and detaches 40 times: every
    answer is the one with the box or the one without it, and nothing raises."""
    scene = pc.Scene()
    scene.add(pc.Sphere(0.005), panda.fk(READY)["panda_hand_tcp"], name="pebble")
    checker = pc.CollisionChecker(panda, scene)
    far = READY.copy()
    far[0] += 0.5
    answers, errors = [], []
    stop = threading.Event()

    def work():
        try:
            while not stop.is_set():
                answers.append((checker.is_valid(READY), checker.check_edge(far, far + 0.05).valid))
                checker.is_valid_batch(np.stack([READY, far]))
                checker.link_distances(far)
        except Exception as e:  # noqa: BLE001 - the test reports any
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(2)]
    for t in threads:
        t.start()
    for _ in range(40):
        _with_box(panda)
        panda.detach("box")
    stop.set()
    for t in threads:
        t.join()
    assert not errors, errors
    assert {a for a, _ in answers} <= {True, False} and all(e for _, e in answers)


def test_an_attach_builds_no_self_pair_table_and_answers_as_without_tables(panda, monkeypatch):
    """The bodies without the object keep the robot's tables (the pairs with it have none):
    a new grasp costs no table build, and the answers are those of a checker that reads no
    table at all (self_tables=False, their oracle)."""
    from planning_collision.checker import self_tables

    checker = pc.CollisionChecker(panda, pc.Scene())
    checker.is_valid(READY)  # the robot's own tables, built or read from the cache

    def no_build(*a, **k):
        raise AssertionError("an attach built a self-pair table")

    monkeypatch.setattr(self_tables, "_build_group", no_build)
    panda.attach("rod", "panda_hand", pc.Box((0.02, 0.02, 0.6)), _grasp(0.37), touch_links=FINGERS)
    Q = panda.random_configurations(3000, np.random.default_rng(6))
    got = checker.is_valid_batch(Q)
    exact = pc.CollisionChecker(panda, pc.Scene(), self_tables=False).is_valid_batch(Q)
    assert np.array_equal(got, exact) and 0 < got.sum() < len(Q)
    tabled = checker.model.robot.pt_start >= 0
    names = checker.body_names[checker.model.n_links :]
    assert any(tabled) and not any(t for t, n in zip(tabled, names, strict=True) if "rod" in n)
