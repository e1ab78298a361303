"""What would hang or abort a planning process is refused or contained: PRM with several
goal states (a deadlock with Python validators) wherever the planner or the goal is set
and before it solves, and a user's own validity callback that raises (`guarded`)."""

from __future__ import annotations

import logging
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

ob = pytest.importorskip("ompl.base")
og = pytest.importorskip("ompl.geometric")

import planning_collision as pc  # noqa: E402
from planning_collision.demos.scenes import planar_arm_gap  # noqa: E402
from planning_collision.plugins.ompl import (  # noqa: E402
    check_planner_goals,
    guarded,
    make_setup,
    new_state,
    solve,
    validators,
)

ROOT = Path(__file__).resolve().parents[1]

# Every way to reach PRM with several goal states, each in a fresh interpreter with a time
# limit: if a guard were missing, the planner would deadlock, and the test must fail, not
# hang. Each case prints "refused" when a ValueError naming the deadlock stops it.
_HAZARDS = """
import sys
import numpy as np
from ompl import base as ob, geometric as og
import planning_collision as pc
from planning_collision.demos.scenes import planar_arm_gap
from planning_collision.plugins.ompl import make_setup, new_state, set_goals, solve

robot, scene, start, goal = planar_arm_gap()
checker = pc.CollisionChecker(robot, scene)
goals = np.stack([goal, goal + 0.05, goal - 0.05])


def setup(planner="RRTConnect"):
    return make_setup(robot, scene, start, goals, planner=planner, checker=checker)


def several(ss):
    si = ss.getSpaceInformation()
    g = ob.GoalStates(si)
    for q in goals:
        s = new_state(si)
        ss.getStateValidityChecker().codec.write(q, s)
        g.addState(s)
    return g


def renamed(si):
    p = og.PRM(si)
    p.setName("my roadmap")
    return p


def via_pdef():
    ss = prm_setup()
    ss.getProblemDefinition().setGoal(several(ss))
    return ss


def via_allocator(run):
    ss = setup()
    ss.setPlannerAllocator(lambda si: og.PRMstar(si))
    ss.clear()
    return run(ss)


def prm_setup():
    return make_setup(robot, scene, start, goal, planner="PRM", checker=checker)


def set_planner(make):
    ss = setup()
    ss.setPlanner(make(ss.getSpaceInformation()))


def planner_alone():
    ss = via_pdef()
    p = og.PRM(ss.getSpaceInformation())
    p.setProblemDefinition(ss.getProblemDefinition())
    solve(p, 2.0)


def set_goal():
    ss = prm_setup()
    ss.setGoal(several(ss))


def grown(run):
    ss = prm_setup()
    ss.setup()  # a planner set up for one goal state
    grown_goal = ob.GoalStates(ss.getSpaceInformation())
    for q in goals:  # then a goal of several, set through the problem definition
        s = new_state(ss.getSpaceInformation())
        ss.getStateValidityChecker().codec.write(q, s)
        grown_goal.addState(s)
    ss.getProblemDefinition().setGoal(grown_goal)
    return run(ss)


def grown_after_set(run):
    ss = prm_setup()
    g = ob.GoalStates(ss.getSpaceInformation())
    s = new_state(ss.getSpaceInformation())
    ss.getStateValidityChecker().codec.write(goal, s)
    g.addState(s)
    ss.setGoal(g)  # one state: accepted
    ss.setup()
    for q in goals[1:]:  # then grown past one by addState, behind the setup's back
        s = new_state(ss.getSpaceInformation())
        ss.getStateValidityChecker().codec.write(q, s)
        g.addState(s)
    return run(ss)


def own_solve(ss):  # OMPL's Planner.solve, reached from Python without the setup
    return ss.getPlanner().solve(ob.timedPlannerTerminationCondition(2.0))


cases = {
    "make_setup": lambda: setup("PRM"),
    "setPlanner PRM": lambda: set_planner(og.PRM),
    "setPlanner PRMstar": lambda: set_planner(og.PRMstar),
    "setPlanner renamed": lambda: set_planner(renamed),
    "set_goals": lambda: set_goals(prm_setup(), goals),
    "setGoal": set_goal,
    "pdef then ss.solve": lambda: via_pdef().solve(2.0),
    "pdef then solve()": lambda: solve(via_pdef(), 2.0),
    "planner solve()": planner_alone,
    "allocator then ss.solve": lambda: via_allocator(lambda ss: ss.solve(2.0)),
    "allocator then solve()": lambda: via_allocator(lambda ss: solve(ss, 2.0)),
    "set up, pdef, the planner's own solve": lambda: grown(own_solve),
    "addState then ss.solve": lambda: grown_after_set(lambda ss: ss.solve(2.0)),
    "addState then the planner's own solve": lambda: grown_after_set(own_solve),
}
for name, case in cases.items():
    try:
        case()
        print(name, "ran", flush=True)
    except ValueError as e:
        print(name, "refused" if "deadlocks" in str(e) else f"other: {e}", flush=True)
"""


def test_prm_with_several_goal_states_is_refused_wherever_it_is_set_or_solved():
    r = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(_HAZARDS)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=240,
    )
    lines = r.stdout.strip().splitlines()
    assert r.returncode == 0, r.stderr[-2000:]
    assert len(lines) == 14 and all(line.endswith(" refused") for line in lines), lines


def test_prm_with_one_goal_and_other_planners_with_several_still_plan():
    robot, scene, start, goal = planar_arm_gap()
    checker = pc.CollisionChecker(robot, scene)
    ss = make_setup(robot, scene, start, goal, planner="PRM", checker=checker)
    assert solve(ss, 5.0) and ss.haveExactSolutionPath()
    goals = np.stack([goal, goal + 0.05])
    ss = make_setup(robot, scene, start, goals, planner="RRTConnect", checker=checker)
    assert ss.getGoal().getStateCount() == 2
    assert solve(ss, 5.0) and ss.haveExactSolutionPath()
    ss.setPlanner(og.RRT(ss.getSpaceInformation()))  # not PRM: accepted
    check_planner_goals(og.PRM(ss.getSpaceInformation()), None)  # no goal yet: nothing to say


def test_a_user_callback_that_raises_under_prm_is_logged_once_and_reported_invalid(caplog):
    """Without `guarded`, a Python exception in a validity callback aborts the process in
    PRM (OMPL's PRM thread: `terminate called without an active exception`)."""
    robot, scene, start, goal = planar_arm_gap()
    checker = pc.CollisionChecker(robot, scene)
    ss = make_setup(robot, scene, start, goal, planner="PRM", checker=checker)
    svc, _ = validators(ss)
    calls = [0]

    def mine(state):
        calls[0] += 1
        q = svc.codec.read(state)
        if calls[0] > 5:  # from then on every state: PRM finds no path and runs its time
            raise RuntimeError("my constraint broke")
        return np.bool_(checker.is_valid(q))  # not a Python bool: converted

    check = guarded(mine)
    ss.setStateValidityChecker(check)
    with caplog.at_level(logging.ERROR, logger="planning_collision.plugins.ompl"):
        solve(ss, 1.0)
    assert check.errors > 0 and calls[0] > check.errors
    logged = [r for r in caplog.records if "my constraint broke" in r.getMessage()]
    assert len(logged) == 1 and "Traceback" in logged[0].getMessage()
    assert check(new_state(ss.getSpaceInformation())) in (True, False)


def test_guarded_refuses_what_is_not_callable():
    with pytest.raises(TypeError, match="fn must be callable"):
        guarded(42)
