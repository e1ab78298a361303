"""The Panda model on real planning problems: every start and goal of the shipped
MotionBenchMaker Panda sets (fingers at 0.065 m) is free of self-collision under the ACM and
of obstacle collision, by our link model and our queries — the verdict exact meshes give
(planning_collision/data/mbm/README.md: all free, 2.7–25 mm clearance), which coal confirms
on the meshes here."""

import json

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

import planning_collision as pc
from planning_collision import robots
from planning_collision.io import mbm_path

SETS = ["bookshelf_small", "box", "cage", "table_pick"]
FINGERS = {"panda_finger_joint1": 0.065, "panda_finger_joint2": 0.065}


@pytest.fixture(scope="module")
def panda():
    pytest.importorskip("cmeel")  # example-robot-data's installer
    return robots.load("panda", fixed_joints=FINGERS)


def _pose(o):
    T = np.eye(4)
    T[:3, :3] = Rotation.from_quat(o["orientation_xyzw"]).as_matrix()  # scipy: (x, y, z, w)
    T[:3, 3] = o["position"]
    return T


def _obstacle(o):
    if o["type"] == "box":
        return pc.Box(o["size"]), _pose(o)
    if o["type"] == "cylinder":
        return pc.Cylinder(o["radius"], o["length"]), _pose(o)
    raise ValueError(o["type"])


def _states(name):
    d = json.loads(mbm_path(name).read_text())
    assert "panda_link0" in d["frame"]
    for p in d["problems"]:
        assert p["other_joints"] == FINGERS
        obst = [_obstacle(o) for o in p["obstacles"]]
        yield p["name"], "start", np.array(p["start"]), obst
        for k, g in enumerate(p["goals"]):
            yield p["name"], f"goal{k}", np.array(g), obst


@pytest.mark.parametrize("name", SETS)
def test_every_start_and_goal_is_collision_free_with_our_model_and_queries(panda, name, capsys):
    assert panda.link_names[0] == "panda_link0"  # the problems' frame is the robot base
    pairs = panda.self_collision_pairs()
    c = panda.collision
    Q, clearance = [], np.inf
    for pname, which, q, obst in _states(name):
        Q.append(q)
        P = panda.piece_poses(q)
        for i, piece in enumerate(panda.pieces):
            for shape, T in obst:
                assert not pc.collide(piece.shape, P[i], shape, T), f"{pname} {which}: {piece.link}"
                clearance = min(clearance, pc.distance(piece.shape, P[i], shape, T).distance)
        for a, b in pairs:
            for i in range(c.link_start[a], c.link_start[a + 1]):
                for j in range(c.link_start[b], c.link_start[b + 1]):
                    assert not pc.collide(
                        panda.pieces[i].shape, P[i], panda.pieces[j].shape, P[j]
                    ), f"{pname} {which}: {panda.link_names[a]} hits {panda.link_names[b]}"
    # the batch kernel (FK + pair_overlap in one call) says the same for every state
    assert panda.count_self_collisions(np.array(Q), pairs).sum() == 0
    with capsys.disabled():
        print(
            f"\n{name}: {len(Q)} states free; smallest obstacle clearance {clearance * 1e3:.1f} mm"
        )
    assert 2.0e-3 < clearance < 30e-3  # data/mbm/README.md's 2.7-25 mm, less our hulls' 1e-4


def test_the_checked_self_pairs_include_every_pair_the_problems_check(panda):
    d = json.loads(mbm_path("box").read_text())
    ours = {
        frozenset((panda.link_names[a], panda.link_names[b]))
        for a, b in panda.self_collision_pairs()
    }
    theirs = {frozenset(p) for p in d["self_collision_pairs"]}
    assert theirs <= ours, sorted(map(sorted, theirs - ours))


def test_two_table_pick_goals_exceed_joint4_and_the_documented_widening_admits_them():
    pytest.importorskip("cmeel")
    strict = robots.load("panda")
    wide = robots.load("panda", joint_limits={"panda_joint4": (-3.0718, 0.0175)})
    outside = []
    for name in SETS:
        for pname, which, q, _ in _states(name):
            try:
                strict.validate_q(q, check_limits=True)
            except ValueError as e:
                assert "panda_joint4" in str(e)
                outside.append(f"{pname}/{which}")
                wide.validate_q(q, check_limits=True)
    assert sorted(outside) == ["table_pick/0031/goal0", "table_pick/0049/goal0"]


def test_exact_meshes_in_coal_agree_that_every_state_is_free(panda, capsys):
    """coal on the original STL meshes (BVH) and URDF finger boxes: every state is free, and
    our hull model's clearance is within 1 mm below the exact one (hulls contain meshes)."""
    coal = pytest.importorskip("coal")
    from planning_collision.io.urdf import read_urdf

    data = read_urdf(panda.urdf_path)

    def tf(T):
        return coal.Transform3s(np.ascontiguousarray(T[:3, :3]), np.ascontiguousarray(T[:3, 3]))

    link_geoms = []  # (link index, coal geometry, T_link_geom)
    for ln, rec in data.links.items():
        for el in rec.collisions:
            if el.kind == "mesh":
                g = coal.MeshLoader().load(el.filename, np.asarray(el.scale, float))
            else:
                g = coal.Box(*el.size)
            link_geoms.append((panda.link_index[ln], g, el.origin))
    req = coal.DistanceRequest()
    worst_gap = 0.0
    for name in SETS:
        for pname, which, q, obst in _states(name):
            L = panda.fk_array(q)
            P = panda.piece_poses(q)
            exact = np.inf
            for li, g, To in link_geoms:
                for shape, T in obst:
                    og = (
                        coal.Box(*shape.extents)
                        if isinstance(shape, pc.Box)
                        else coal.Cylinder(shape.radius, shape.length)
                    )
                    res = coal.DistanceResult()
                    exact = min(exact, coal.distance(g, tf(L[li] @ To), og, tf(T), req, res))
            ours = min(
                pc.distance(p.shape, P[i], s, T).distance
                for i, p in enumerate(panda.pieces)
                for s, T in obst
            )
            assert exact > 0.0, f"{pname} {which} collides on exact meshes"
            assert ours <= exact + 1e-9, f"{pname} {which}: hull clearance {ours} > mesh {exact}"
            worst_gap = max(worst_gap, exact - ours)
    with capsys.disabled():
        print(
            "\ncoal exact meshes: every state free; our clearance is at most "
            f"{worst_gap * 1e6:.1f} um below"
        )
    assert worst_gap < 1e-3
