"""The compiled planner behind OMPL's `Planner` interface (plugins/ompl/planner.py): what
SimpleSetup, ompl.tools.Benchmark and Planner Arena see of it, its answers against the
plugin's validators, its inputs read from the problem definition."""

from __future__ import annotations

import shutil
import sqlite3
import subprocess

import numpy as np
import pytest

ob = pytest.importorskip("ompl.base")
og = pytest.importorskip("ompl.geometric")

import planning_collision as pc  # noqa: E402
from planning_collision.demos.bench.planners import validators_agree as _validators_agree  # noqa: E402
from planning_collision.demos.scenes import panda_shelf, piano_room  # noqa: E402
from planning_collision.plugins.ompl import (  # noqa: E402
    CompiledRRTConnect,
    make_setup,
    set_goals,
    solution_path,
    solve,
)

NAME = "CompiledRRTConnect"


@pytest.fixture(scope="module")
def shelf():
    from ompl import util as ou

    ou.setLogLevel(ou.LOG_ERROR)
    robot, scene, start, goal = panda_shelf()
    checker = pc.CollisionChecker(robot, scene)
    checker.warm_up(methods=("dichotomy",))
    return robot, scene, start, goal, checker


def test_make_setup_names_it_and_solve_gives_a_certified_path(shelf):
    robot, scene, start, goal, checker = shelf
    ss = make_setup(robot, scene, start, goal, planner=NAME, checker=checker)
    assert isinstance(ss.getPlanner(), CompiledRRTConnect)
    assert ss.getPlanner().getName() == NAME
    status = solve(ss, 10.0)
    assert status and ss.haveExactSolutionPath()
    Q = solution_path(ss)
    assert np.allclose(Q[0], start) and np.allclose(Q[-1], goal)
    assert _validators_agree(ss, Q)
    assert ss.getSolutionPath().check()  # OMPL's own check, through the validators
    r = ss.getPlanner().last
    assert r.solved and r.edges >= len(Q) - 1


def test_its_trees_are_no_planner_data_and_asking_for_them_is_safe(shelf):
    """`ss.getPlannerData` (which Benchmark calls after every run) gives no vertices for
    it, and returns: the binding cannot take a Python planner's own getPlannerData (an
    override aborts the process), so the planner does not define one (docs/ompl.md)."""
    robot, scene, start, goal, checker = shelf
    ss = make_setup(robot, scene, start, goal, planner=NAME, checker=checker)
    assert solve(ss, 10.0)
    assert "getPlannerData" not in vars(CompiledRRTConnect)
    pd = ob.PlannerData(ss.getSpaceInformation())
    ss.getPlannerData(pd)
    assert pd.numVertices() == 0 and ss.haveExactSolutionPath()


def test_ss_solve_with_a_time_limit_and_repeated_solves(shelf):
    robot, scene, start, goal, checker = shelf
    ss = make_setup(robot, scene, start, goal, planner=NAME, checker=checker)
    for _ in range(3):
        ss.clear()
        assert ss.solve(5.0) and ss.haveExactSolutionPath()
        assert _validators_agree(ss, solution_path(ss))


def test_ompl_rng_seed_makes_runs_repeatable(shelf):
    from ompl import util as ou

    robot, scene, start, goal, checker = shelf
    paths = []
    for _ in range(2):
        ss = make_setup(robot, scene, start, goal, checker=checker,
                        planner=lambda si: CompiledRRTConnect(si, seed=7, direct=False),
        )  # fmt: skip
        assert solve(ss, 10.0)
        paths.append(solution_path(ss))
    assert np.array_equal(paths[0], paths[1])
    p = CompiledRRTConnect(make_setup(robot, scene, checker=checker).getSpaceInformation())
    assert isinstance(p._seed, int)  # drawn from OMPL's RNG (ou.RNG.setSeed repeats it)
    assert ou.RNG.getSeed() >= 0


def test_several_goal_states_and_the_path_ends_at_one(shelf):
    robot, scene, start, goal, checker = shelf
    rng = np.random.default_rng(3)
    goals = [goal]
    while len(goals) < 4:
        q = rng.uniform(robot.lower, robot.upper)
        if checker.is_valid(q):
            goals.append(q)
    ss = make_setup(robot, scene, start, planner=NAME, checker=checker)
    set_goals(ss, np.array(goals))
    assert solve(ss, 10.0)
    Q = solution_path(ss)
    assert min(np.abs(Q[-1] - g).max() for g in goals) < 1e-9
    assert _validators_agree(ss, Q)


def test_an_invalid_start_or_no_goal_is_ompls_status_not_an_exception(shelf):
    robot, scene, start, goal, checker = shelf
    rng = np.random.default_rng(4)
    while True:
        bad = rng.uniform(robot.lower, robot.upper)
        if not checker.is_valid(bad):
            break
    ss = make_setup(robot, scene, bad, goal, planner=NAME, checker=checker,
                    check_endpoints=False)  # fmt: skip
    st = solve(ss, 1.0)
    assert not st and st == ob.PlannerStatus.INVALID_START
    ss = make_setup(robot, scene, start, bad, planner=NAME, checker=checker,
                    check_endpoints=False)  # fmt: skip
    st = solve(ss, 1.0)
    assert not st and st == ob.PlannerStatus.INVALID_GOAL


def test_set_range_and_get_range_as_ompls_rrtconnect(shelf):
    robot, scene, start, goal, checker = shelf
    ss = make_setup(robot, scene, start, goal, planner=NAME, checker=checker)
    p = ss.getPlanner()
    assert p.getRange() == pytest.approx(pc.RRTConnect.RANGE_FRACTION * p._engine().diameter)
    p.setRange(0.5)
    assert p.getRange() == 0.5
    assert solve(ss, 10.0) and _validators_agree(ss, solution_path(ss))
    Q = solution_path(ss)
    # the search's motions are at most the range (the connection's steps too)
    assert np.linalg.norm(np.diff(Q, axis=0), axis=1).max() <= 0.5 + 1e-9
    ss = make_setup(robot, scene, start, goal, planner=NAME, checker=checker, planner_range=0.3)
    assert ss.getPlanner().getRange() == 0.3


def test_a_setup_without_the_plugins_validators_is_refused_by_name(shelf):
    robot = shelf[0]
    from planning_collision.plugins.ompl import make_state_space

    ss = og.SimpleSetup(make_state_space(robot))
    ss.setStateValidityChecker(lambda s: True)
    p = CompiledRRTConnect(ss.getSpaceInformation())
    with pytest.raises(ValueError, match="CollisionValidityChecker"):
        p._engine()


def test_a_free_flyer_with_so2_components(shelf):
    robot, scene, start, goal = piano_room()
    ss = make_setup(robot, scene, start, goal, planner=NAME)
    assert solve(ss, 30.0)
    Q = solution_path(ss)
    assert _validators_agree(ss, Q)
    assert ss.getSolutionPath().check()


def test_ompl_benchmark_runs_it_beside_ompls_planners(shelf, tmp_path, monkeypatch):
    from ompl import tools as ot

    if shutil.which("ompl_benchmark_statistics") is None:
        pytest.skip("the ompl wheel's ompl_benchmark_statistics script is not on PATH")
    monkeypatch.chdir(tmp_path)
    robot, scene, start, goal, checker = shelf
    ss = make_setup(robot, scene, start, goal, checker=checker)
    b = ot.Benchmark(ss, "shelf")
    si = ss.getSpaceInformation()
    b.addPlanner(CompiledRRTConnect(si))
    b.addPlannerAllocator(lambda si: CompiledRRTConnect(si, simplify=True))
    b.addPlanner(og.RRTConnect(si))
    req = ot.Request(maxTime=2.0, maxMem=1000.0, runCount=3, displayProgress=False)
    b.benchmark(req)
    log = tmp_path / "shelf.log"
    b.saveResultsToFile(str(log))
    db = tmp_path / "shelf.db"
    r = subprocess.run(["ompl_benchmark_statistics", "-d", str(db), str(log)],
                       capture_output=True, text=True)  # fmt: skip
    assert r.returncode == 0, r.stderr[-2000:]
    rows = (
        sqlite3.connect(db)
        .execute(
            "select plannerConfigs.name, runs.solved from runs join plannerConfigs "
            "on runs.plannerid = plannerConfigs.id"
        )
        .fetchall()
    )
    names = sorted(name for name, _ in rows)
    assert names == [f"geometric_{NAME}"] * 6 + ["geometric_RRTConnect"] * 3, names
    assert all(solved == 1 for name, solved in rows if NAME in name)
