"""Link collision models: convex, containing the meshes, not much larger, cached."""

import numpy as np
import pytest
import trimesh
from scipy.spatial import ConvexHull

import robots
from planning_collision.geometry import Box, Convex, Cylinder, Sphere
from planning_collision.io.urdf import read_urdf
from planning_collision.robot import Robot, convexify_mesh

TOL = 1e-9  # metres: "inside or on" up to qhull round-off


def _erd():
    try:
        from planning_collision.io.urdf import example_robot_data_dir

        return example_robot_data_dir()
    except ImportError as e:
        pytest.skip(str(e))


def _piece_planes(robot, link):
    """[(A (k, 3), b (k,))] facet planes of each Convex piece of `link`, in the link frame:
    inside where A x + b <= 0."""
    out = []
    for p in robot.pieces:
        if p.link != link:
            continue
        assert isinstance(p.shape, Convex) and p.shape.radius == 0.0
        eq = ConvexHull(np.asarray(p.shape.points)).equations
        R, t = p.pose[:3, :3], p.pose[:3, 3]
        A = eq[:, :3] @ R.T  # plane normals rotated into the link frame
        b = eq[:, 3] - A @ t
        out.append((A, b))
    return out


def _mesh_vertices_in_link(robot, link):
    """Every vertex of every collision mesh of `link`, in the link frame, read afresh."""
    data = read_urdf(robot.urdf_path)
    vs = []
    for c in data.links[link].collisions:
        if c.kind != "mesh":
            continue
        m = trimesh.load(c.filename, force="mesh", process=False)
        v = np.asarray(m.vertices) * np.asarray(c.scale)
        vs.append(v @ c.origin[:3, :3].T + c.origin[:3, 3])
    return np.concatenate(vs)


@pytest.mark.parametrize("name", ["panda", "ur5", "free_flyer"])
def test_every_mesh_vertex_is_inside_or_on_the_link_model(name):
    if name != "free_flyer":
        _erd()
    robot = robots.load(name)
    mesh_links = [k for k, v in robot.volume_report.items() if v["has_mesh"]]
    assert mesh_links
    for link in mesh_links:
        v = _mesh_vertices_in_link(robot, link)
        worst = np.full(len(v), np.inf)
        for A, b in _piece_planes(robot, link):
            worst = np.minimum(worst, (v @ A.T + b).max(axis=1))
        assert worst.max() <= TOL, f"{name}/{link}: a vertex is {worst.max():.3g} m outside"


def test_panda_model_volume_is_within_1_3_of_the_meshes_and_each_link_is_reported(capsys):
    _erd()
    robot = robots.load("panda")
    rep = robot.volume_report
    mesh = sum(v["mesh_volume"] for v in rep.values())
    model = sum(v["model_volume"] for v in rep.values())
    ratios = robot.volume_ratios()
    with capsys.disabled():
        print(
            "\npanda model/mesh volume per link: "
            + ", ".join(f"{k} {r:.4f}" for k, r in ratios.items())
        )
        print(f"panda total model/mesh volume: {model / mesh:.4f}")
    assert model / mesh <= 1.3
    assert set(ratios) == {n for n in robot.link_names if n in rep}
    assert all(1.0 - 1e-9 <= r <= 1.3 for r in ratios.values())
    # independent check of the mesh volume of one link
    m = trimesh.load(_erd() / "robots/panda_description/meshes/collision/link3.stl", force="mesh")
    assert rep["panda_link3"]["mesh_volume"] == pytest.approx(m.volume, rel=1e-9)


def test_ur5_nonconvex_meshes_are_decomposed_and_stay_close_in_volume():
    _erd()
    robot = robots.load("ur5")
    per_link = {}
    for p in robot.pieces:
        per_link[p.link] = per_link.get(p.link, 0) + 1
    assert max(per_link.values()) > 2  # some link needed more than its components' hulls
    assert all(r <= 1.15 for r in robot.volume_ratios().values()), robot.volume_ratios()


def test_urdf_primitives_stay_primitives():
    robot = robots.load("planar_arm")
    kinds = {(p.link, type(p.shape)) for p in robot.pieces}
    assert ("base", Box) in kinds and ("link1", Cylinder) in kinds and ("link2", Sphere) in kinds
    assert not any(isinstance(p.shape, Convex) for p in robot.pieces)
    assert all(r == 1.0 for r in robot.volume_ratios().values())


def test_a_nonconvex_ring_is_decomposed_and_repaired_to_contain_every_vertex():
    ring = trimesh.creation.annulus(r_min=0.3, r_max=0.5, height=0.2, sections=24)
    pieces, vol = convexify_mesh(ring.vertices, ring.faces, hull_ratio=1.1, max_pieces=6)
    assert vol == pytest.approx(ring.volume, rel=1e-9)
    assert 2 <= len(pieces) <= 6 + 1
    worst = np.full(len(ring.vertices), np.inf)
    total = 0.0
    for p in pieces:
        h = ConvexHull(p)
        total += h.volume
        worst = np.minimum(
            worst, (ring.vertices @ h.equations[:, :3].T + h.equations[:, 3]).max(axis=1)
        )
    assert worst.max() <= TOL
    hull_ratio = ring.convex_hull.volume / ring.volume
    assert total / ring.volume < 0.75 * hull_ratio  # much tighter than the plain hull (1.56x)


def test_the_geometry_cache_is_keyed_by_file_contents(tmp_path):
    src = robots.urdf_path("free_flyer")
    for f in ("free_flyer.urdf", "piano.stl"):
        (tmp_path / f).write_bytes((src.parent / f).read_bytes())
    r1 = Robot.from_urdf(tmp_path / "free_flyer.urdf", cache_dir=tmp_path / "cache")
    files = list((tmp_path / "cache").glob("geometry-*.npz"))
    assert len(files) == 1
    r2 = Robot.from_urdf(tmp_path / "free_flyer.urdf", cache_dir=tmp_path / "cache")
    assert r2.geometry_key == r1.geometry_key
    for a, b in zip(r1.pieces, r2.pieces, strict=True):
        assert a.shape == b.shape and np.array_equal(a.pose, b.pose)
    # a changed mesh file is a different key (the old cache is not trusted)
    m = trimesh.load(tmp_path / "piano.stl")
    m.apply_scale(1.01)
    m.export(tmp_path / "piano.stl")
    r3 = Robot.from_urdf(tmp_path / "free_flyer.urdf", cache_dir=tmp_path / "cache")
    assert r3.geometry_key != r1.geometry_key
    assert len(list((tmp_path / "cache").glob("geometry-*.npz"))) == 2
