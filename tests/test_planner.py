"""The compiled planner (planning_collision/planner.py, kernels/planner/rrt_connect.py):
certified paths on real robots in real scenes, checked by the checker and by python-fcl on
the exact meshes; repeatable seeds, several goals, continuous and prismatic joints, time
limits, threads."""

from __future__ import annotations

import math
import threading
import time

import numpy as np
import pytest

import planning_collision as pc
from planning_collision import robots
from planning_collision.demos.scenes import panda_shelf, piano_room, planar_arm_gap
from planning_collision.io import load_mbm, mbm_path
from planning_collision.kernels.planner import rrt_connect as K
from planning_collision.planner import SLICE


@pytest.fixture(scope="module")
def shelf():
    robot, scene, start, goal = panda_shelf()
    checker = pc.CollisionChecker(robot, scene)
    checker.warm_up(methods=("dichotomy",))
    pc.RRTConnect(checker).warm_up()  # compiled here, not in a solve's time limit
    return robot, scene, start, goal, checker


@pytest.fixture(scope="module")
def cage(shelf):
    problems = [p for p in load_mbm(str(mbm_path("cage"))).problems if p.valid][:3]
    robot = robots.load("panda", fixed_joints=problems[0].fixed_joints)
    return robot, problems


def _certified(checker, Q) -> bool:
    return all(checker.check_edge(a, b).valid for a, b in zip(Q[:-1], Q[1:], strict=True))


def _exact_free(robot, scene, Q, step=0.002) -> bool:
    """No state of the polyline Q collides on the exact meshes (python-fcl), states spaced
    so that no point of the robot moves more than `step` m between two."""
    pytest.importorskip("fcl")
    from planning_collision.demos.bench.planning import recheck
    from planning_collision.testing.fcl_robot import FclRobot

    return not recheck(FclRobot(robot, scene), robot, Q, step)


def test_paths_on_motionbenchmaker_cage_are_certified_and_free_on_the_exact_meshes(cage):
    robot, problems = cage
    for k, p in enumerate(problems):
        scene = pc.Scene.from_records(p.obstacles)
        checker = pc.CollisionChecker(robot, scene)
        r = pc.RRTConnect(checker, seed=k).solve(p.start, p.goals[0], seconds=20.0)
        assert r.solved and r.status == "solved" and r.goal == 0, r
        assert np.array_equal(r.path[0], p.start) and np.array_equal(r.path[-1], p.goals[0])
        assert _certified(checker, r.path)
        assert _exact_free(robot, scene, r.path)
        assert r.edges >= len(r.path) - 1 and sum(r.nodes) >= 2


def test_a_seed_repeats_the_same_path_and_another_seed_does_not(shelf):
    robot, scene, start, goal, checker = shelf
    a = pc.RRTConnect(checker, seed=3, direct=False).solve(start, goal)
    b = pc.RRTConnect(checker, seed=3, direct=False).solve(start, goal)
    c = pc.RRTConnect(checker, seed=4, direct=False).solve(start, goal)
    assert a.solved and b.solved and c.solved
    assert np.array_equal(a.path, b.path) and a.iterations == b.iterations
    assert not (len(a.path) == len(c.path) and np.array_equal(a.path, c.path))


@pytest.mark.parametrize("sampler", ["halton", "uniform"])
@pytest.mark.parametrize(
    "balance, dynamic_domain, connect, lazy",
    [
        (True, True, "ompl", 8), (False, False, "ompl", 0), (True, True, "vamp", 0),
        (False, False, "vamp", 8),
    ],
)  # fmt: skip
def test_every_setting_finds_certified_exact_free_paths(
    shelf, sampler, balance, dynamic_domain, connect, lazy
):
    robot, scene, start, goal, checker = shelf
    planner = pc.RRTConnect(
        checker, seed=1, sampler=sampler, balance=balance, dynamic_domain=dynamic_domain,
        connect=connect, lazy=lazy, lazy_after=0,
    )  # fmt: skip
    r = planner.solve(start, goal, seconds=20.0)
    assert r.solved
    assert _certified(checker, r.path) and _exact_free(robot, scene, r.path)


def test_lazy_solutions_refuted_by_their_certificate_are_searched_past(cage):
    """Probing each motion only at its end and middle, from the first motion, a cage's bars
    slip between the probes: solutions whose certificate finds a collision lose the branch
    below it, and the search goes on to a path whose every motion is certified (and free
    on the exact meshes); certifying every motion as tried refutes none."""
    robot, problems = cage
    problem = problems[1]
    scene = pc.Scene.from_records(problem.obstacles)
    checker = pc.CollisionChecker(robot, scene)
    lazy = pc.RRTConnect(checker, lazy=1, lazy_after=0, lazy_failures=10**6)
    eager = pc.RRTConnect(checker, lazy=0)
    refuted = 0
    for seed in range(4):
        lazy.seed = eager.seed = seed
        r = lazy.solve(problem.start, problem.goals[0], seconds=20.0)
        assert r.solved and _certified(checker, r.path) and _exact_free(robot, scene, r.path)
        refuted += r.rejected
        assert eager.solve(problem.start, problem.goals[0], seconds=20.0).rejected == 0
    assert refuted > 0
    # after lazy_failures refuted solutions each motion is certified as it is tried (the
    # probed branches left may still refute a few): with none allowed, the eager search
    capped = pc.RRTConnect(checker, seed=1, lazy=1, lazy_after=0, lazy_failures=1)
    r = capped.solve(problem.start, problem.goals[0], seconds=20.0)
    assert r.solved and _certified(checker, r.path)
    eager.seed = 1
    r = pc.RRTConnect(checker, seed=1, lazy=1, lazy_failures=0).solve(
        problem.start, problem.goals[0]
    )
    e = eager.solve(problem.start, problem.goals[0])
    assert r.rejected == 0 and (r.iterations, r.edges) == (e.iterations, e.edges)
    assert np.array_equal(r.path, e.path)


def test_a_free_straight_motion_is_the_path_and_a_colliding_one_is_searched_around(shelf):
    """The straight motion from the start to the goal goes first: sampled at states half a
    range apart (which only ever proves it collides), then certified."""
    robot, scene, start, goal, checker = shelf
    assert not checker.edge_free(start, goal)
    r = pc.RRTConnect(checker, seed=1).solve(start, goal, seconds=20.0)
    assert r.solved and len(r.path) > 2 and _certified(checker, r.path)
    for k, (a, b) in enumerate([r.path[:2], r.path[-2:]]):  # certified: a long motion each
        for near in (a + 0.02 * (b - a), b):  # and a short one
            assert checker.edge_free(a, near)
            got = pc.RRTConnect(checker, seed=k).solve(a, near, seconds=20.0)
            assert got.solved and got.iterations == 0 and got.edges == 1, (k, got)
            assert np.array_equal(got.path, np.stack([a, near]))


def test_the_path_ends_at_one_of_several_goals_and_says_which(shelf):
    robot, scene, start, goal, checker = shelf
    rng = np.random.default_rng(0)
    others = []
    while len(others) < 3:  # free configurations as decoy goals
        q = rng.uniform(robot.lower, robot.upper)
        if checker.is_valid(q):
            others.append(q)
    goals = np.array(others + [goal])
    r = pc.RRTConnect(checker, seed=2).solve(start, goals, seconds=20.0)
    assert r.solved and 0 <= r.goal < 4
    assert np.array_equal(r.path[-1], goals[r.goal])
    assert _certified(checker, r.path)


def test_continuous_and_prismatic_joints_the_free_flying_piano():
    robot, scene, start, goal = piano_room()
    assert robot.continuous.any()
    checker = pc.CollisionChecker(robot, scene)
    r = pc.RRTConnect(checker, seed=0).solve(start, goal, seconds=30.0)
    assert r.solved
    c = robot.continuous
    steps = np.abs(np.diff(r.path, axis=0))[:, c]
    assert (steps <= math.pi + 1e-12).all()  # each motion the short way round, as OMPL's SO2
    assert _certified(checker, r.path)
    # the ends are the start and the goal, up to whole turns of the continuous joints
    d = r.path[-1] - goal
    d[c] = (d[c] + math.pi) % (2 * math.pi) - math.pi
    assert np.abs(d).max() < 1e-12 and np.array_equal(r.path[0], start)
    assert _exact_free(robot, scene, r.path, step=0.005)


def test_a_continuous_joint_that_must_turn_the_short_way_across_pi():
    robot, scene, start, goal = planar_arm_gap()
    checker = pc.CollisionChecker(robot, scene)
    c = robot.continuous
    assert c.any()
    r = pc.RRTConnect(checker, seed=5).solve(start, goal, seconds=20.0)
    assert r.solved and _certified(checker, r.path)
    assert (np.abs(np.diff(r.path, axis=0))[:, c] <= math.pi + 1e-12).all()


def test_fourteen_joints_baxters_two_arms_among_boxes():
    from planning_collision.demos.bench.planners import random_world

    robot = robots.load("baxter")
    assert robot.dof == 14
    rng = np.random.default_rng(2)
    scene = random_world(robot, 8, rng)
    checker = pc.CollisionChecker(robot, scene)
    Q = robot.random_configurations(200, rng)
    start, goal = Q[checker.is_valid_batch(Q)][:2]
    r = pc.RRTConnect(checker, seed=0).solve(start, goal, seconds=30.0)
    assert r.solved and _certified(checker, r.path)
    assert _exact_free(robot, scene, r.path, step=0.005)


def test_a_box_held_in_the_hand_is_planned_around_and_its_paths_are_free_with_it(shelf):
    """An attached object is part of the robot's model: the compiled planner's motions are
    certified with it (its motion bounds included), on the exact meshes and box too."""
    _, scene, start, goal, _ = shelf
    robot = robots.load("panda", fixed_joints={"panda_finger_joint1": 0.04,
                                               "panda_finger_joint2": 0.04})  # fmt: skip
    T = np.eye(4)
    T[2, 3] = 0.1034  # at the hand's TCP, between the fingers
    robot.attach("box", "panda_hand", pc.Box((0.03, 0.09, 0.06)), T,
                 touch_links=("panda_leftfinger", "panda_rightfinger"))  # fmt: skip
    checker = pc.CollisionChecker(robot, scene)
    if not (checker.is_valid(start) and checker.is_valid(goal)):
        pytest.skip("the box touches the shelf at an end")
    r = pc.RRTConnect(checker, seed=0).solve(start, goal, seconds=30.0)
    assert r.solved and _certified(checker, r.path)
    assert _exact_free(robot, scene, r.path)
    robot.detach("box")
    assert _certified(checker, r.path)  # the same motions, without it


def test_simplify_keeps_the_ends_shortens_and_certifies(cage):
    robot, problems = cage
    p = problems[0]
    scene = pc.Scene.from_records(p.obstacles)
    checker = pc.CollisionChecker(robot, scene)
    planner = pc.RRTConnect(checker, seed=0)
    r = planner.solve(p.start, p.goals[0], seconds=20.0)
    S = planner.simplify(r.path)
    length = lambda Q: float(np.linalg.norm(np.diff(Q, axis=0), axis=1).sum())  # noqa: E731
    assert np.array_equal(S[0], r.path[0]) and np.array_equal(S[-1], r.path[-1])
    assert len(S) <= len(r.path) and length(S) <= length(r.path) + 1e-12
    assert _certified(checker, S) and _exact_free(robot, scene, S)


def _arm_between_posts():
    """The planar arm's first link (0.45 m, continuous joint) between two posts on the x
    axis, 0.25 m from its joint: it cannot turn from +y to -y either way round. (robot,
    checker, start, goal): both free, no path between them."""
    robot = robots.load("planar_arm")
    scene = pc.Scene()
    for x in (0.25, -0.25):
        T = np.eye(4)
        T[:3, 3] = (x, 0.0, 0.0)
        scene.add(pc.Cylinder(0.03, 0.3), T)
    checker = pc.CollisionChecker(robot, scene)
    start = np.array([np.pi / 2, 0.0, 0.0])
    goal = np.array([-np.pi / 2, 0.0, 0.0])
    assert checker.is_valid(start) and checker.is_valid(goal)
    assert not checker.is_valid(np.zeros(3)) and not checker.is_valid(np.array([np.pi, 0, 0]))
    return robot, checker, start, goal


def test_an_unreachable_goal_times_out_within_its_limit():
    robot, checker, start, goal = _arm_between_posts()
    planner = pc.RRTConnect(checker, seed=0)
    planner.solve(start, goal, seconds=0.05)  # compiled, and the trees' memory made
    t0 = time.perf_counter()
    r = planner.solve(start, goal, seconds=0.3)
    took = time.perf_counter() - t0
    assert not r.solved and r.status == "timeout" and r.path is None and r.goal == -1
    assert r.iterations > 100 and r.edges > 10
    assert 0.3 <= took < 0.3 + 1.0, took  # the limit, overrun by a slice or a busy machine


def test_stop_ends_the_search_and_infinite_time_needs_a_stop():
    robot, checker, start, goal = _arm_between_posts()
    calls = []

    def stop():
        calls.append(time.perf_counter())
        return len(calls) >= 5

    planner = pc.RRTConnect(checker, seed=0)
    t0 = time.perf_counter()
    r = planner.solve(start, goal, seconds=math.inf, stop=stop)
    assert not r.solved and len(calls) == 5
    assert calls[-1] - t0 < 5 * SLICE + 2.0  # polled once per time slice, not at the end
    with pytest.raises(ValueError, match="seconds"):
        planner.solve(start, goal, seconds=math.inf)


def test_trees_grow_past_their_first_room(cage, monkeypatch):
    from planning_collision import planner as P

    robot, problems = cage
    monkeypatch.setattr(P, "CAPACITY", 8)  # then the room for one iteration's nodes: 40
    p = problems[1]
    scene = pc.Scene.from_records(p.obstacles)
    checker = pc.CollisionChecker(robot, scene)
    for lazy in (0, 8):  # (a lazy search's records carry each node's certificate too)
        planner = pc.RRTConnect(checker, lazy=lazy, lazy_after=0)
        for seed in range(40):  # the first seed whose trees grow past 40 nodes
            planner.seed = seed
            getattr(P._POOL, "trees", {}).pop(7, None)  # a record of the first room
            r = planner.solve(p.start, p.goals[0], seconds=20.0)
            if max(r.nodes) > 40:
                break
        assert r.solved and _certified(checker, r.path) and _exact_free(robot, scene, r.path)
        room = P._POOL.trees[7].x.shape[2]
        assert max(r.nodes) > 40 and room >= max(r.nodes) and room in (80, 160, 320, 640)


def test_each_thread_plans_in_a_record_of_its_own(shelf):
    from planning_collision import planner as P

    robot, scene, start, goal, checker = shelf
    planner = pc.RRTConnect(checker, seed=0)
    planner.solve(start, goal)
    mine = P._POOL.trees[7]
    seen = []
    t = threading.Thread(target=lambda: (planner.solve(start, goal), seen.append(P._POOL.trees[7])))
    t.start()
    t.join()
    assert seen and seen[0] is not mine and P._POOL.trees[7] is mine


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"range": 0.0}, "range"),
        ({"range": float("nan")}, "range"),
        ({"seed": True}, "seed"),
        ({"seed": 1.5}, "seed"),
        ({"sampler": "sobol"}, "sampler"),
        ({"connect": "kpiece"}, "connect"),
        ({"lazy": -1}, "lazy"),
        ({"lazy": 65}, "lazy"),
        ({"lazy": 1.5}, "lazy"),
        ({"lazy_failures": -1}, "lazy_failures"),
        ({"lazy_after": True}, "lazy_after"),
    ],
)
def test_bad_settings_are_refused_by_name(shelf, kwargs, match):
    with pytest.raises(ValueError, match=match):
        pc.RRTConnect(shelf[4], **kwargs)


def test_bad_starts_and_goals_are_refused_by_name(shelf):
    robot, scene, start, goal, checker = shelf
    planner = pc.RRTConnect(checker, seed=0)
    with pytest.raises(ValueError, match="start"):
        planner.solve(start[:3], goal)
    with pytest.raises(ValueError, match="goal"):
        planner.solve(start, np.full(7, np.nan))
    with pytest.raises(ValueError, match="goal"):
        planner.solve(start, robot.upper + 1.0)
    inside = start.copy()
    found = None
    rng = np.random.default_rng(1)
    for _ in range(2000):
        q = rng.uniform(robot.lower, robot.upper)
        if not checker.is_valid(q):
            found = q
            break
    with pytest.raises(ValueError, match="goal is in collision: .* touches"):
        planner.solve(inside, found)
    with pytest.raises(ValueError, match="seconds"):
        planner.solve(start, goal, seconds=0.0)


def test_a_continuous_joint_takes_any_finite_angle_and_refuses_infinity():
    robot, scene, start, goal = planar_arm_gap()
    checker = pc.CollisionChecker(robot, scene)
    planner = pc.RRTConnect(checker, seed=5)
    k = int(np.flatnonzero(robot.continuous)[0])
    turned = start.copy()
    turned[k] += 8 * math.pi  # four whole turns: the same configuration
    r = planner.solve(turned, goal, seconds=20.0)
    assert r.solved and _certified(checker, r.path)
    for bad in (math.inf, -math.inf, math.nan):
        q = start.copy()
        q[k] = bad
        with pytest.raises(ValueError, match=robot.joint_names[k]):
            planner.solve(q, goal)


def test_settings_changed_between_solves_are_the_next_solves(shelf):
    robot, scene, start, goal, checker = shelf
    planner = pc.RRTConnect(checker, seed=3, direct=False)
    planner.solve(start, goal, seconds=20.0)
    planner.seed = 4
    planner.range = 0.5 * planner.range
    again = planner.solve(start, goal, seconds=20.0)
    fresh = pc.RRTConnect(checker, seed=4, range=planner.range, direct=False)
    assert np.array_equal(again.path, fresh.solve(start, goal, seconds=20.0).path)
    planner.seed = None  # fresh streams per solve: two solves differ
    a, b = planner.solve(start, goal, seconds=20.0), planner.solve(start, goal, seconds=20.0)
    assert a.solved and b.solved and not np.array_equal(a.path, b.path)


def test_one_planner_refuses_a_second_thread_and_two_planners_plan_in_parallel(shelf):
    robot, scene, start, goal, checker = shelf
    results, errors = [], []

    def run(planner):
        try:
            results.append(planner.solve(start, goal, seconds=20.0))
        except Exception as e:  # noqa: BLE001 - collected for the assertion
            errors.append(e)

    threads = [threading.Thread(target=run, args=(pc.RRTConnect(checker, seed=s),)) for s in (1, 2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(results) == 2 and all(r.solved for r in results)
    for r in results:
        assert _certified(checker, r.path)
    planner = pc.RRTConnect(checker, seed=1)
    planner._busy.acquire()
    try:
        with pytest.raises(RuntimeError, match="another thread"):
            planner.solve(start, goal)
    finally:
        planner._busy.release()


def test_a_scene_edit_is_planned_around_by_the_next_solve(shelf):
    robot, _, start, goal, _ = shelf
    scene = pc.Scene()
    checker = pc.CollisionChecker(robot, scene)
    planner = pc.RRTConnect(checker, seed=0)
    r = planner.solve(start, goal)
    assert r.solved and len(r.path) == 2  # the straight motion: nothing in the way
    # a box on the hand's way at the straight motion's middle, clear of both ends
    hand = robot.fk(0.5 * (start + goal))["panda_hand"][:3, 3]
    T = np.eye(4)
    T[:3, 3] = hand
    oid = scene.add(pc.Box((0.08, 0.08, 0.08)), T)
    assert checker.is_valid(start) and checker.is_valid(goal)
    assert not checker.check_edge(start, goal).valid
    r2 = planner.solve(start, goal, seconds=20.0)
    assert r2.solved and len(r2.path) > 2 and _certified(checker, r2.path)
    scene.remove(oid)
    assert len(planner.solve(start, goal).path) == 2


def test_the_xoshiro_step_compiled_and_in_python_agree():
    """The compiled step against its plain-Python twin, 1,000 draws; the first two from
    state (1, 2, 3, 4) worked by hand from Blackman & Vigna's algorithm."""
    s = np.array([1, 2, 3, 4], np.uint64)
    t = s.copy()
    compiled = [int(K._next_u64(s)) for _ in range(1000)]
    python = [int(K._python_next_u64(t)) for _ in range(1000)]
    assert compiled[:2] == [11520, 0]
    assert compiled == python and np.array_equal(s, t)
    assert len(set(compiled[2:])) == 998


def test_the_fuzzers_planner_part_finds_every_answer_certified_or_refused_by_name():
    """`python -m planning_collision.demos.dev.fuzz --parts planner`, small: the compiled
    planner alone and through OMPL, fed free, several, colliding and odd starts and goals."""
    pytest.importorskip("ompl")
    from planning_collision.demos.dev import fuzz

    t = fuzz.fuzz_planner(40, np.random.default_rng(3))
    assert t.counts["VIOLATION"] == 0, t.violations
    assert t.counts["alone path certified"] > 0 and t.counts["ompl path certified"] > 0
    assert t.counts["refused by name"] > 0
