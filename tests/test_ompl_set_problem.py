"""One setup for many problems (`set_problem` after `Scene.replace_all`): each solve plans
in the current problem's scene, from its start to its goal, with the compiled planner and
with OMPL's own through the plugin's validators; no path of an earlier problem comes back."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("ompl.base")

import planning_collision as pc  # noqa: E402
from planning_collision.io import MBM_SETS, load_mbm, mbm_path  # noqa: E402
from planning_collision.plugins.ompl import make_setup, set_problem, solution_path, solve  # noqa: E402
from tests.conftest import load_panda  # noqa: E402

FINGERS = {"panda_finger_joint1": 0.065, "panda_finger_joint2": 0.065}


def _problems(per_set: int) -> list:
    out = []
    for name in MBM_SETS:
        out += [p for p in load_mbm(mbm_path(name)).problems if p.valid][:per_set]
    return out


@pytest.mark.parametrize("planner", ["CompiledRRTConnect", "RRTConnect"])
def test_one_setup_solves_problem_after_problem_in_each_problems_scene(planner):
    from ompl import util as ou

    ou.setLogLevel(ou.LOG_ERROR)
    panda = load_panda(FINGERS)
    problems = _problems(2)
    scene = pc.Scene.from_arrays(pc.ObstacleArrays.from_records(problems[0].obstacles))
    checker = pc.CollisionChecker(panda, scene)
    ss = make_setup(panda, scene, checker=checker, planner=planner)
    for p in problems:
        scene.replace_all(pc.ObstacleArrays.from_records(p.obstacles))
        set_problem(ss, p.start, p.goals[0])
        assert solve(ss, 5.0), p.name
        Q = solution_path(ss)
        assert np.allclose(Q[0], p.start) and np.allclose(Q[-1], p.goals[0], atol=1e-6)
        fresh = pc.CollisionChecker(panda, pc.Scene.from_records(p.obstacles))
        assert all(fresh.check_edge(a, b).valid for a, b in zip(Q[:-1], Q[1:], strict=True))


def test_set_problem_checks_the_start_and_goal_in_the_new_scene():
    panda = load_panda(FINGERS)
    p, q = _problems(1)[:2]
    scene = pc.Scene.from_arrays(pc.ObstacleArrays.from_records(p.obstacles))
    ss = make_setup(panda, scene, p.start, p.goals[0], planner="CompiledRRTConnect")
    # a configuration of p's that collides in q's scene
    scene.replace_all(pc.ObstacleArrays.from_records(q.obstacles))
    checker = pc.CollisionChecker(panda, scene)
    rng = np.random.default_rng(5)
    bad = next(c for c in panda.random_configurations(500, rng) if not checker.is_valid(c))
    with pytest.raises(ValueError, match="start is in collision: .* touches"):
        set_problem(ss, bad, q.goals[0])
    with pytest.raises(ValueError, match=r"goal\[0\] \(panda_joint1\) must be finite"):
        set_problem(ss, q.goals[0], np.full(7, np.nan))  # (a free start)
    # refused: the setup still holds p's query, not the free start with p's goal
    assert _is_query(ss, p.start, p.goals[0]) and not _is_query(ss, q.goals[0], p.goals[0])
    set_problem(ss, bad, q.goals[0], check=False)  # taken as given
    assert _is_query(ss, bad, q.goals[0])


def _is_query(ss, start, goal) -> bool:
    """Whether the setup's one start state is `start` and its goal state `goal`."""
    from planning_collision.plugins.ompl import validators
    from planning_collision.plugins.ompl.spaces import new_state

    svc, _ = validators(ss)
    pdef, si = ss.getProblemDefinition(), ss.getSpaceInformation()
    s = new_state(si)
    svc.codec.write(np.asarray(start, float), s)
    g = np.asarray(goal, float)
    return (
        pdef.getStartStateCount() == 1
        and pdef.hasStartState(s, 0)
        and np.allclose(svc.codec.read(ss.getGoal().getState()), g)
    )
