"""Many queries on one setup: a solve answers the start and goal the setup has now (never a
path of an earlier query, from OMPL's kept solutions or a planner's kept trees), within its
time limit, for every planner of PLANNERS; a PRM roadmap serves the next query."""

from __future__ import annotations

import faulthandler
import math
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

ob = pytest.importorskip("ompl.base")
og = pytest.importorskip("ompl.geometric")
ou = pytest.importorskip("ompl.util")

import planning_collision as pc  # noqa: E402
from planning_collision.demos.scenes import panda_shelf  # noqa: E402
from planning_collision.plugins.ompl import (  # noqa: E402
    PLANNERS,
    make_setup,
    new_state,
    set_goals,
    set_start,
    solution_path,
    solve,
    validators,
)

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def shelf():
    ou.setLogLevel(ou.LOG_ERROR)
    robot, scene, start, goal = panda_shelf()
    checker = pc.CollisionChecker(robot, scene)
    checker.warm_up(methods=("dichotomy",))
    # a second goal, 3.3 rad from the first (what issue 34 measured with)
    rng = np.random.default_rng(1)
    while not checker.is_valid(g2 := rng.uniform(robot.lower, robot.upper)):
        pass
    return robot, scene, start, goal, g2, checker


def _dense_free(checker, Q, per_edge=200) -> bool:
    t = np.linspace(0.0, 1.0, per_edge)[:, None]
    return all(
        checker.is_valid_batch(a + t * (b - a)).all() for a, b in zip(Q[:-1], Q[1:], strict=True)
    )


def _first_solution_is_enough(ss) -> None:
    """The optimizing planners stop at their first solution (AORRTC, anytime, runs its
    budget whatever the threshold)."""
    objective = ob.PathLengthOptimizationObjective(ss.getSpaceInformation())
    objective.setCostThreshold(ob.Cost(math.inf))
    ss.setOptimizationObjective(objective)


def _timed_solve(ss, seconds: float):
    """solve(ss, seconds) and its wall time; a solve that outruns its limit by a minute ends
    the process with the tracebacks (a planner loop that ignores its termination
    condition holds the GIL: nothing else could stop it)."""
    faulthandler.dump_traceback_later(seconds + 60.0, exit=True)
    try:
        t0 = time.perf_counter()
        status = solve(ss, seconds)
        return status, time.perf_counter() - t0
    finally:
        faulthandler.cancel_dump_traceback_later()


@pytest.mark.parametrize("planner", PLANNERS)
def test_a_second_solve_after_set_goals_ends_in_the_new_goal_within_its_limit(shelf, planner):
    """1 s for the first goal, then set_goals and 2 s for the second: the second solve's
    path ends in the new goal and starts at the start (before, 11 of 13 planners that had
    solved returned the old path as exact, and SORRTstar never returned)."""
    robot, scene, start, goal, g2, checker = shelf
    ss = make_setup(robot, scene, start, goal, planner=planner, checker=checker)
    _first_solution_is_enough(ss)
    first, t1 = _timed_solve(ss, 1.0)
    assert t1 <= 2.0, f"{planner}: the first solve took {t1:.2f} s for a 1 s limit"
    set_goals(ss, g2)
    assert not ss.haveSolutionPath(), f"{planner}: the old solution outlived set_goals"
    status, t2 = _timed_solve(ss, 2.0)
    assert t2 <= 3.0, f"{planner}: the second solve took {t2:.2f} s for a 2 s limit"
    if ss.haveSolutionPath():
        Q = solution_path(ss)
        assert np.allclose(Q[0], start), (planner, str(status))
        if status:
            assert np.abs(Q[-1] - g2).max() <= 1e-6, (planner, Q[-1], g2)
            assert _dense_free(checker, Q), planner
    assert bool(status) == ss.haveExactSolutionPath()
    if first:  # every planner that solved the first query solves this one (measured: all)
        assert status, f"{planner}: {status} on the second goal"


@pytest.mark.parametrize("planner", ["RRTConnect", "PRM", "BITstar", "CompiledRRTConnect"])
def test_a_new_start_is_where_the_next_path_begins(shelf, planner):
    """RRTConnect keeps its old start tree and PRM its start milestones: after
    set_start (or OMPL's setStartState) the path begins at the new start."""
    robot, scene, start, goal, g2, checker = shelf
    ss = make_setup(robot, scene, start, goal, planner=planner, checker=checker)
    _first_solution_is_enough(ss)
    assert solve(ss, 5.0)
    if planner in ("PRM", "CompiledRRTConnect"):
        set_start(ss, g2)  # from g2 to the same goal
    else:
        svc, _ = validators(ss)
        s = new_state(ss.getSpaceInformation())
        svc.codec.write(g2, s)
        ss.setStartState(s)  # OMPL's setter, the same
    assert solve(ss, 5.0)
    Q = solution_path(ss)
    assert np.allclose(Q[0], g2) and np.allclose(Q[-1], goal, atol=1e-6)
    assert _dense_free(checker, Q)


@pytest.mark.parametrize("planner", ["RRTConnect", "SORRTstar"])
def test_a_goal_changed_through_the_problem_definition_is_seen_at_the_next_solve(shelf, planner):
    """`ss.getProblemDefinition().setGoalState(...)` bypasses the setup's setters: the
    solve compares the query with the last one solved and clears what is stale."""
    robot, scene, start, goal, g2, checker = shelf
    # SORRTstar's first solution has a long tail on this shelf (median 9 ms, 4 of 30 unseeded
    # runs over 1 s, one over 10 s): a seed that OMPL's sampler solves at once, so the time
    # limits below measure whether the second solve sees the new goal, not that tail
    ou.RNG.setSeed(3)
    ss = make_setup(robot, scene, start, goal, planner=planner, checker=checker)
    _first_solution_is_enough(ss)
    assert solve(ss, 2.0)
    svc, _ = validators(ss)
    g = new_state(ss.getSpaceInformation())
    svc.codec.write(g2, g)
    ss.getProblemDefinition().setGoalState(g, 1e-6)
    status, seconds = _timed_solve(ss, 2.0)
    assert seconds <= 3.0 and status
    assert np.abs(solution_path(ss)[-1] - g2).max() <= 1e-6


def test_a_start_changed_through_the_problem_definition_is_seen_at_the_next_solve(shelf):
    """The same number of start states, another one: RRTConnect's old start tree goes."""
    robot, scene, start, goal, g2, checker = shelf
    ss = make_setup(robot, scene, start, goal, checker=checker)
    assert solve(ss, 5.0)
    svc, _ = validators(ss)
    s = new_state(ss.getSpaceInformation())
    svc.codec.write(g2, s)
    pdef = ss.getProblemDefinition()
    pdef.clearStartStates()
    pdef.addStartState(s)
    assert solve(ss, 5.0)
    Q = solution_path(ss)
    assert np.allclose(Q[0], g2) and np.abs(Q[-1] - goal).max() <= 1e-6


def test_a_planner_solved_alone_starts_afresh_when_its_goal_changed(shelf):
    """A bare planner's problem definition keeps the old solution when the goal changes
    under it: solve sees that solution does not answer the query and clears it (and the
    planner's trees) before solving."""
    robot, scene, start, goal, g2, checker = shelf
    ss = make_setup(robot, scene, start, goal, checker=checker)
    si = ss.getSpaceInformation()
    pdef = ss.getProblemDefinition()
    planner = og.RRTConnect(si)
    planner.setProblemDefinition(pdef)
    planner.setup()
    assert solve(planner, 5.0)
    svc, _ = validators(ss)
    g = new_state(si)
    svc.codec.write(g2, g)
    pdef.setGoalState(g, 1e-6)
    assert solve(planner, 5.0)
    states = pdef.getSolutionPath().getStates()
    assert np.abs(svc.codec.read(states[-1]) - g2).max() <= 1e-6
    assert np.allclose(svc.codec.read(states[0]), start)


class _Elsewhere(ob.Planner):
    """A planner that answers another query: its exact path ends at `q`, not in the goal."""

    def __init__(self, si, codec, path):
        super().__init__(si, "Elsewhere")
        self.codec, self.path = codec, path

    def solve(self, ptc):
        si = self.getSpaceInformation()
        path = og.PathGeometric(si)
        s = new_state(si)
        for q in self.path:
            self.codec.write(q, s)
            path.append(s)
        self.getProblemDefinition().addSolutionPath(path, False, 0.0, self.getName())
        return ob.PlannerStatus(ob.PlannerStatus.EXACT_SOLUTION)


@pytest.mark.parametrize("ends", ["goal", "start"])
def test_a_path_that_does_not_answer_the_query_is_refused_by_name(shelf, ends):
    robot, scene, start, goal, g2, checker = shelf
    ss = make_setup(robot, scene, start, goal, checker=checker)
    svc, _ = validators(ss)
    path = [start, g2] if ends == "goal" else [g2, goal]
    ss.setPlanner(_Elsewhere(ss.getSpaceInformation(), svc.codec, path))
    why = "ends outside the goal [0-9.]+ from it" if ends == "goal" else "begins [0-9.]+ from"
    with pytest.raises(ValueError, match=f"Elsewhere answered an earlier query: its .*{why}"):
        solve(ss, 1.0)
    assert not ss.haveSolutionPath()  # and nothing of it stays


@pytest.mark.parametrize("planner", ["PRM", "PRMstar"])
def test_a_prm_roadmap_serves_many_queries(shelf, planner):
    """set_goals keeps PRM's roadmap (planner.clearQuery) and drops the last answer: each
    query's path ends in its goal, and the roadmap only grows."""
    robot, scene, start, goal, g2, checker = shelf
    ss = make_setup(robot, scene, start, goal, planner=planner, checker=checker)
    _first_solution_is_enough(ss)
    assert solve(ss, 5.0)
    prm = ss.getPlanner()
    sizes = [prm.milestoneCount()]
    for g in (g2, goal, g2):
        set_goals(ss, g)
        assert solve(ss, 5.0)
        assert np.abs(solution_path(ss)[-1] - g).max() <= 1e-6
        sizes.append(prm.milestoneCount())
    assert sizes == sorted(sizes) and sizes[0] > 2, sizes


def test_solving_without_a_goal_or_a_start_says_which_is_missing(shelf):
    robot, scene, start, goal, g2, checker = shelf
    ss = make_setup(robot, scene, start, checker=checker)
    with pytest.raises(ValueError, match="no goal yet"):
        solve(ss, 1.0)
    with pytest.raises(ValueError, match="no goal yet"):
        ss.solve(1.0)
    ss = make_setup(robot, scene, goal=goal, checker=checker)
    with pytest.raises(ValueError, match="no start state yet"):
        solve(ss, 1.0)
    set_goals(ss, g2)  # a goal is not a start
    ss.clearStartStates()
    with pytest.raises(ValueError, match="no start state yet"):
        ss.solve(1.0)


def test_the_many_queries_idiom_of_the_docs_runs(shelf):
    """docs/ompl.md's "Many queries on one setup" block, as written."""
    text = (ROOT / "docs" / "ompl.md").read_text()
    part = text[text.index("## Many queries on one setup") :]
    code = part[part.index("```python") + 9 : part.index("```", part.index("```python") + 9)]
    scope: dict = {}
    exec(compile(code, "docs/ompl.md", "exec"), scope)
    assert scope["ends"] and all(d <= 1e-6 for d in scope["ends"]), scope["ends"]


SORRT = """
import sys, time, faulthandler
import numpy as np
import planning_collision as pc
from planning_collision.demos.scenes import panda_shelf
from planning_collision.plugins.ompl import make_setup, set_goals, solve, solution_path
from ompl import util as ou
ou.setLogLevel(ou.LOG_ERROR)
robot, scene, start, goal = panda_shelf()
checker = pc.CollisionChecker(robot, scene)
rng = np.random.default_rng(1)
while not checker.is_valid(g2 := rng.uniform(robot.lower, robot.upper)):
    pass
ss = make_setup(robot, scene, start, goal, planner="SORRTstar", checker=checker)
solve(ss, 1.0)
set_goals(ss, g2)
faulthandler.dump_traceback_later(30.0, exit=True)  # the old code never returned
t0 = time.perf_counter()
ok = bool(solve(ss, 2.0))
print(time.perf_counter() - t0, ok, np.abs(solution_path(ss)[-1] - g2).max() if ok else -1)
# OMPL's own SimpleSetup, whose query the plugin does not follow: solve sees the old solution
from ompl import base as ob, geometric as og
from planning_collision.plugins.ompl import CollisionValidityChecker, CollisionMotionValidator
from planning_collision.plugins.ompl import StateCodec, make_state_space, new_state
space = make_state_space(robot)
plain = og.SimpleSetup(space)
si = plain.getSpaceInformation()
plain.setStateValidityChecker(CollisionValidityChecker(si, checker))
si.setMotionValidator(CollisionMotionValidator(si, checker))
plain.setPlanner(og.SORRTstar(si))
codec = StateCodec(space)
s, g, h = new_state(si), new_state(si), new_state(si)
codec.write(start, s); codec.write(goal, g); codec.write(g2, h)
plain.setStartAndGoalStates(s, g, 1e-6)
solve(plain, 1.0)
plain.setGoalState(h, 1e-6)
t0 = time.perf_counter()
ok = bool(solve(plain, 2.0))
Q = codec.path(plain.getSolutionPath().getStates()) if ok else None
print(time.perf_counter() - t0, ok, np.abs(Q[-1] - g2).max() if ok else -1)
"""


def test_sorrtstar_after_set_goals_returns_within_its_limit():
    """SORRTstar's second solve ran at full CPU past 90 s: its ordered informed sampler drew
    from the old start-goal ellipse and kept only samples that could beat the old best cost
    towards the new goal, of which there were none, without reading the termination
    condition. In a fresh interpreter, as the issue ran it (OMPL's default objective), on a
    setup from make_setup and on OMPL's own SimpleSetup."""
    r = subprocess.run(
        [sys.executable, "-c", SORRT], cwd=ROOT, capture_output=True, text=True, timeout=900
    )
    assert r.returncode == 0, r.stderr[-3000:]
    for line in r.stdout.splitlines()[-2:]:  # a PlanningSetup, then OMPL's SimpleSetup
        seconds, ok, far = line.split()
        assert float(seconds) <= 3.0, r.stdout
        assert ok == "True" and float(far) <= 1e-6, r.stdout
