"""Whole-path checks (`CollisionChecker.check_path`, the plugin's `check_path`): a path
called free has no collision on the exact meshes anywhere along it (python-fcl on the
Panda's URDF collision meshes, states at most STEP apart in every link point's motion), a
colliding path's prefix up to its first invalid segment's last valid time is free on the
meshes, and that time is the first contact on the checker's models (within eta). OMPL's
paths are read through the setup's codec, continuous joints the short way round."""

from __future__ import annotations

import numpy as np
import pytest

import planning_collision as pc
from planning_collision.testing.edges import dense_first_collision, thin_obstacles

pytest.importorskip("fcl")
og = pytest.importorskip("ompl.geometric")

from planning_collision import robots  # noqa: E402
from planning_collision.demos.scenes import panda_shelf, planar_arm_gap  # noqa: E402
from planning_collision.plugins.ompl import check_path, make_setup, new_state, solution_path, solve  # noqa: E402
from planning_collision.testing.fcl_robot import FclRobot  # noqa: E402
from tests.conftest import load_panda  # noqa: E402

FINGERS = {"panda_finger_joint1": 0.04, "panda_finger_joint2": 0.04}
STEP = 0.002  # m: at most this far does any point of a link move between sampled states
N_PATHS, SEGMENTS = 10, 3


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


def _paths(robot, checker, rng, n: int, segments: int, thin):
    """n paths of `segments` random motions (0.2-1.0 rad) from a free state; with `thin`
    motions (across a thin obstacle) as their middle segment, where there are some."""
    out = []
    while len(out) < n:
        q = robot.random_configurations(1, rng)[0]
        if not checker.is_valid(q):
            continue
        Q = [q]
        for k in range(segments):
            if k == 1 and thin and len(out) < len(thin):
                a, b = thin[len(out)]
                Q[-1:] = [Q[-1], a, b]  # joined to the thin motion's start
                continue
            d = rng.normal(size=robot.dof)
            Q.append(np.clip(Q[-1] + d / np.linalg.norm(d) * rng.uniform(0.2, 1.0),
                             robot.lower, robot.upper))  # fmt: skip
        out.append(np.array(Q))
    return out


def _mesh_first_collision(fcl_robot, robot, Q):
    """(segment, t) of the first sampled state of the path through Q that collides on the
    meshes, or None (states STEP apart in every link point's motion)."""
    for k, (q0, q1) in enumerate(zip(Q[:-1], Q[1:], strict=True)):
        mu = robot.motion_bound_R @ np.abs(q1 - q0)
        n = max(2, int(np.ceil(mu.max() / STEP)))
        for j in range(0 if k == 0 else 1, n + 1):
            q = q1 if j == n else q0 + (j / n) * (q1 - q0)
            if fcl_robot.collides(np.clip(q, robot.lower, robot.upper)):
                return k, j / n
    return None


@pytest.fixture(scope="module")
def world():
    robot = load_panda(FINGERS)
    rng = np.random.default_rng(20261128)
    scene, thin = _boxes(), []
    while len(thin) < 4:  # thin plates and rods across some paths' middle segment
        more, (edge,) = thin_obstacles(robot, rng, 1, base_scene=scene)
        check = pc.CollisionChecker(robot, more)
        if check.is_valid(edge[0]) and check.is_valid(edge[1]):
            scene = more
            thin.append(edge)
    checker = pc.CollisionChecker(robot, scene)
    return robot, scene, checker, _paths(robot, checker, rng, N_PATHS, SEGMENTS, thin)


@pytest.mark.parametrize("method", ["dichotomy", "ca"])
def test_path_checks_agree_with_python_fcl_on_the_exact_meshes(world, method):
    robot, scene, checker, paths = world
    fcl_robot = FclRobot(robot, scene)
    verdicts = []
    for i, Q in enumerate(paths):
        r = checker.check_path(Q, method)
        hit = _mesh_first_collision(fcl_robot, robot, Q)
        verdicts.append(r.valid)
        assert r.certified and r.method == method and bool(r) == r.valid
        # the same answer as the loop it replaces: the first state, then each motion from a
        # state known free
        assert r.valid == (
            checker.is_valid(Q[0])
            and all(
                checker.check_edge(a, b, method, check_start=False).valid
                for a, b in zip(Q[:-1], Q[1:], strict=True)
            )
        )
        if r.valid:
            assert hit is None, f"path {i} called free, the meshes collide at {hit}"
            assert r.segment == -1 and r.last_valid_t == 1.0 and np.array_equal(r.last_valid, Q[-1])
            continue
        k, t = r.segment, r.last_valid_t
        assert 0 <= k < len(Q) - 1 and 0.0 <= t <= 1.0
        assert np.allclose(r.last_valid, Q[k] + t * (Q[k + 1] - Q[k]))
        # the prefix is free on the meshes: their first contact comes at or after it
        assert hit is None or hit >= (k, t - 1e-9), (i, (k, t), hit)
        # ... and on the models, every segment before the first invalid one
        for a, b in zip(Q[:k], Q[1 : k + 1], strict=True):
            assert dense_first_collision(checker, a, b, 500)[0] is None
        # the prefix ends at the first contact, within the contact tolerance
        if checker.is_valid(Q[k]):
            assert checker.clearance(r.last_valid) <= 2 * checker.eta, (i, k, t)
            first, _ = dense_first_collision(checker, Q[k], Q[k + 1], 2000)
            assert first is None or first >= t - 1e-9
    assert any(verdicts) and not all(verdicts)


def test_a_path_of_one_state_and_bad_paths(world):
    robot, scene, checker, paths = world
    q = paths[0][0]
    r = checker.check_path(q[None])
    assert r.valid and r.segment == -1 and np.array_equal(r.last_valid, q)
    Q = paths[0].copy()
    with pytest.raises(ValueError, match=r"Q must have shape \(n, 7\)"):
        checker.check_path(Q[:, :6])
    with pytest.raises(ValueError, match=r"Q must have shape"):
        checker.check_path(np.zeros((0, 7)))
    Q[2, 3] = np.nan
    with pytest.raises(ValueError, match=r"Q\[2\]\[3\] \(panda_joint4\) = nan must be finite"):
        checker.check_path(Q)
    Q[2, 3] = 5.0
    with pytest.raises(ValueError, match=r"Q\[2\]\[3\] \(panda_joint4\) = 5.0 is outside"):
        checker.check_path(Q)
    with pytest.raises(ValueError, match="method"):
        checker.check_path(paths[0], "sometimes")


def test_the_plugin_checks_ompl_paths_and_arrays_the_way_they_were_planned():
    """A solved path is free; the same path through a state in the shelf is not, and its
    free prefix ends before that state; a planar arm's path across +-pi is read the short
    way round, as OMPL interpolates it."""
    robot, scene, start, goal = panda_shelf()
    checker = pc.CollisionChecker(robot, scene)
    ss = make_setup(robot, scene, start, goal, checker=checker)
    assert solve(ss, 5.0)
    r = check_path(ss)
    assert r.valid and r.method == "dichotomy" and np.allclose(r.last_valid, goal)
    Q = solution_path(ss)
    inside = next(q for q in robot.random_configurations(500, 3) if not checker.is_valid(q))
    bad = np.concatenate([Q[:1], inside[None], Q[1:]])
    r = check_path(ss, bad)
    assert not r.valid and r.segment == 0 and r.last_valid_t < 1.0
    path = og.PathGeometric(ss.getSpaceInformation())
    svc = ss.getStateValidityChecker()
    s = new_state(ss.getSpaceInformation())
    for q in bad:
        svc.codec.write(q, s)
        path.append(s)
    same = check_path(ss, path, method="ca")
    assert same.segment == 0 and same.method == "ca"

    arm, room, _, _ = planar_arm_gap()
    c = pc.CollisionChecker(arm, room)
    ss = make_setup(arm, room, checker=c)
    a = np.array([3.0, 0.3, -0.4])
    b = np.array([-3.0, 0.3, -0.4])  # 0.28 rad away through pi, 6 rad through 0
    short = a.copy()
    short[0] = 2 * np.pi - 3.0
    got, ref = check_path(ss, np.stack([a, b])), c.check_path(np.stack([a, short]))
    assert (got.valid, got.segment) == (ref.valid, ref.segment)
    assert np.allclose(got.last_valid, ref.last_valid)


def test_a_robot_with_continuous_joints_takes_unwrapped_paths():
    arm = robots.load("planar_arm")
    c = pc.CollisionChecker(arm, pc.Scene())
    Q = np.array([[3.0, 0.3, -0.4], [3.5, 0.3, -0.4], [4.0, 0.2, -0.3]])  # past pi: fine
    assert c.check_path(Q).valid


def test_a_path_may_begin_within_eta_of_an_obstacle_as_a_planners_start_may():
    """The path's first state is checked as a state (`is_valid`: clearance above the
    padding), not as an edge's start, which calls a state within eta of an obstacle a
    collision: the fuzzer's planner part (seed 7) drew this start in the bookshelf, 0.08 mm
    from a shelf, and the compiled planner's path from it was called not free."""
    from importlib.resources import files

    robot = load_panda(FINGERS)
    scene = pc.Scene.from_file(files("planning_collision") / "data" / "bookshelf.json")
    checker = pc.CollisionChecker(robot, scene)
    a = np.array([1.4472194532485116, 1.2178856531278863, -2.254470389937611,
                  -1.2416072519360632, -0.163762602033108, 1.9720505346749095,
                  -1.5404601116440975])  # fmt: skip
    b = np.array([1.4259621850264652, 0.9927373611820107, -2.259233277331035,
                  -1.108807923091975, -0.28353452627385245, 2.2686277976938025,
                  -0.7269985022440473])  # fmt: skip
    assert checker.is_valid(a) and 0.0 < checker.clearance(a) < checker.eta
    assert not checker.check_edge(a, b).valid  # the start within eta: an edge's collision
    assert checker.check_edge(a, b, check_start=False).valid
    assert checker.check_path(np.stack([a, b])).valid
    assert checker.check_path(a[None]).valid
    assert _mesh_first_collision(FclRobot(robot, scene), robot, np.stack([a, b])) is None
