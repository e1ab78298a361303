"""A checker asked with a new setting answers as a new checker with that setting would: the
settings and everything made under them (edge requests, workspaces with their endpoint
caches, the model's self pairs and bodies) are published together (checker/settings.py)."""

from __future__ import annotations

import numpy as np
import pytest

import planning_collision as pc
from planning_collision.demos.scenes import planar_arm_gap


@pytest.fixture(scope="module")
def arm():
    robot, scene, _, _ = planar_arm_gap()
    rng = np.random.default_rng(1)
    Q = robot.random_configurations(400, rng)
    step = rng.uniform(-0.4, 0.4, Q.shape)
    edges = [(q, np.clip(q + d, robot.lower, robot.upper)) for q, d in zip(Q, step, strict=True)]
    return robot, scene, Q, edges


def _answers(checker, Q, edges, method="dichotomy"):
    states = np.array([checker.is_valid(q) for q in Q])
    moves = np.array([checker.check_edge(a, b, method).valid for a, b in edges])
    return states, moves


@pytest.mark.parametrize(
    ("name", "before", "after"),
    [("padding", 0.05, 0.0), ("padding", 0.0, 0.05), ("eta", 0.02, 1e-4), ("eta", 1e-4, 0.02)],
)
@pytest.mark.parametrize("method", ["dichotomy", "ca"])
def test_a_checker_set_to_a_new_margin_answers_as_a_new_checker_with_it(
    arm, name, before, after, method
):
    """The endpoint cache marked end states colliding within the old margin: set from
    padding 0.05 to 0 (or eta 0.02 to 1e-4), a checker rejected 43 (19) of 400 edges that
    a new checker certified free."""
    robot, scene, Q, edges = arm
    checker = pc.CollisionChecker(robot, scene, **{name: before})
    _answers(checker, Q, edges, method)  # fills its caches under the old setting
    setattr(checker, name, after)
    assert getattr(checker, name) == after
    fresh = pc.CollisionChecker(robot, scene, **{name: after})
    got, want = _answers(checker, Q, edges, method), _answers(fresh, Q, edges, method)
    assert np.array_equal(got[0], want[0])
    assert np.array_equal(got[1], want[1]), int((got[1] != want[1]).sum())


def test_self_collision_switched_off_and_on_answers_as_a_new_checker(arm):
    robot, scene, Q, edges = arm
    checker = pc.CollisionChecker(robot, scene)
    for flag in (False, True):
        _answers(checker, Q, edges)
        checker.self_collision = flag
        fresh = pc.CollisionChecker(robot, scene, self_collision=flag)
        got, want = _answers(checker, Q, edges), _answers(fresh, Q, edges)
        assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])
        assert checker.body_names == fresh.body_names
        assert np.array_equal(checker.is_valid_batch(Q), want[0])


def test_the_model_options_set_later_give_a_new_checkers_bodies_and_answers(arm):
    robot, scene, Q, edges = arm
    checker = pc.CollisionChecker(robot, scene)
    checker.rigid_bodies = False
    checker.self_tables = False
    fresh = pc.CollisionChecker(robot, scene, rigid_bodies=False, self_tables=False)
    assert checker.body_names == fresh.body_names
    got, want = _answers(checker, Q, edges), _answers(fresh, Q, edges)
    assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])


def test_caches_switched_off_later_keep_nothing_between_queries(arm):
    robot, scene, _, edges = arm
    checker = pc.CollisionChecker(robot, scene)
    checker.cache = False
    for a, b in edges[:50]:
        checker.check_edge(a, b)
        checker.check_edge(a, b)  # the same edge again: nothing remembered
    assert checker.stats["endpoint_hits"] == 0
    checker.cache = True
    for a, b in edges[:50]:
        checker.check_edge(a, b)
        checker.check_edge(a, b)
    assert checker.stats["endpoint_hits"] > 0


@pytest.mark.parametrize(
    ("name", "value"),
    [("padding", -1.0), ("padding", 1e5), ("eta", 0.0), ("cache", "yes"), ("front_lists", 2),
     ("self_collision", None), ("resolution", 2.0)],
)  # fmt: skip
def test_a_bad_setting_is_refused_by_name_and_changes_nothing(arm, name, value):
    robot, scene, Q, _ = arm
    checker = pc.CollisionChecker(robot, scene)
    before = getattr(checker, name)
    with pytest.raises(ValueError, match=name):
        setattr(checker, name, value)
    assert getattr(checker, name) == before
    assert checker.is_valid(Q[0]) in (True, False)
