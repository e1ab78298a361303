"""Certified edges against the exact meshes: python-fcl on the Panda's URDF collision meshes
(triangle BVHs; planning_collision.testing.fcl_robot), an oracle that shares nothing with
the checker but FK (tested against yourdfpy). The edge tests of test_checker.py compare with
the checker's own state check on its link models; this tier closes the loop to the meshes
the user gave, on a few edges (`python -m planning_collision.demos.dev.certify` runs thousands).

The certificate's claim: an edge the checker calls free has no collision anywhere along it.
The link models contain the meshes, so a mesh collision at any state of an edge means the
checker must not call it free. States are sampled so that no point of any link moves more
than STEP between two of them (the edge's motion bound, robot/bounds.py): an obstacle at
least that thick cannot slip between them.
"""

import numpy as np
import pytest

import planning_collision as pc
from planning_collision.testing.edges import rrt_edges, thin_obstacles

pytest.importorskip("fcl")

from planning_collision.testing.fcl_robot import FclRobot  # noqa: E402
from tests.conftest import load_panda  # noqa: E402

FINGERS = {"panda_finger_joint1": 0.04, "panda_finger_joint2": 0.04}
STEP = 0.002  # m: at most this far does any point of a link move between sampled states
N_THIN, N_RRT = 10, 10  # edges across plates and rods 2-5 mm thick; edges as RRT draws them


def _boxes() -> pc.Scene:
    s = pc.Scene()
    for centre, extents in [
        ((0.55, 0.0, 0.35), (0.3, 0.8, 0.03)),  # a table top in front
        ((0.5, 0.45, 0.6), (0.12, 0.12, 0.5)),  # a post to the left
        ((-0.45, -0.3, 0.45), (0.3, 0.05, 0.9)),  # a wall behind
    ]:
        T = np.eye(4)
        T[:3, 3] = centre
        s.add(pc.Box(extents), T)
    return s


@pytest.fixture(scope="module")
def world():
    robot = load_panda(FINGERS)
    rng = np.random.default_rng(20261125)
    # one thin obstacle at a time across a motion between two states free of everything
    # placed so far (random ends often collide with the boxes or the robot itself)
    scene, thin = _boxes(), []
    while len(thin) < N_THIN:
        more, (edge,) = thin_obstacles(robot, rng, 1, base_scene=scene)
        check = pc.CollisionChecker(robot, more)
        if check.is_valid(edge[0]) and check.is_valid(edge[1]):
            scene = more
            thin.append(edge)
    checker = pc.CollisionChecker(robot, scene)
    edges = thin + rrt_edges(checker, rng, N_RRT, step=(0.2, 1.2))
    return robot, scene, checker, edges


def _mesh_first_collision(fcl_robot, robot, q0, q1):
    """The first sampled t whose state collides on the meshes, or None (STEP apart)."""
    mu = robot.motion_bound_R @ np.abs(q1 - q0)
    n = max(2, int(np.ceil(mu.max() / STEP)))
    for k in range(n + 1):
        q = q1 if k == n else q0 + (k / n) * (q1 - q0)
        if fcl_robot.collides(np.clip(q, robot.lower, robot.upper)):
            return k / n
    return None


def test_certified_edges_agree_with_python_fcl_on_the_exact_meshes(world):
    robot, scene, checker, edges = world
    fcl_robot = FclRobot(robot, scene)
    wrong, verdicts = [], []
    for k, (q0, q1) in enumerate(edges):
        hit = _mesh_first_collision(fcl_robot, robot, q0, q1)
        for method in ("dichotomy", "ca"):
            r = checker.check_edge(q0, q1, method=method)
            assert r.certified, (k, method)
            verdicts.append((r.valid, hit is None))
            if r.valid and hit is not None:
                wrong.append(f"edge {k} ({method}): called free, meshes collide at t={hit:.4f}")
            if method == "ca" and not r.valid and hit is not None and r.toc > hit + 1e-12:
                # [0, toc) is certified free on the models, which hold the meshes: the
                # meshes' first contact (at or before the first colliding sample) comes later
                wrong.append(f"edge {k}: ca's contact at {r.toc:.4f}, the meshes' at {hit:.4f}")
    assert not wrong, "\n".join(wrong)
    # both answers were asked for, on the meshes and from the checker
    assert any(free for _, free in verdicts) and not all(free for _, free in verdicts)
    assert any(valid for valid, _ in verdicts) and not all(valid for valid, _ in verdicts)
