"""Shared test set-up: hypothesis profiles, seeded randomness, and a session directory for
the robot model cache (tests never write to the user's cache)."""

import os
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, settings

# The first call of a kernel compiles it: no deadline. CI is derandomized so a red run
# reproduces; locally hypothesis explores.
settings.register_profile(
    "ci",
    deadline=None,
    derandomize=True,
    max_examples=60,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "dev", deadline=None, max_examples=100, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile("ci" if os.environ.get("CI") else os.environ.get("HYPOTHESIS_PROFILE", "dev"))


def example_robot_data_or_skip() -> Path:
    """example-robot-data's directory (the URDFs and meshes of the Panda, the UR5, ...), or
    a skip of the calling test when it is not installed."""
    try:
        from planning_collision.io.urdf import example_robot_data_dir

        return example_robot_data_dir()
    except ImportError as e:
        pytest.skip(str(e))


@pytest.fixture(scope="session")
def example_robot_data() -> Path:
    """`example_robot_data_or_skip` as a fixture: tests that need those robots ask for it
    (or, for some of their parameters only, `request.getfixturevalue`)."""
    return example_robot_data_or_skip()


def load_panda(fixed_joints: dict, **kw):
    """The registry's Panda with `fixed_joints` held (and `kw` for Robot.from_urdf), or a
    skip when example-robot-data (its URDF) is missing."""
    example_robot_data_or_skip()
    from planning_collision import robots

    return robots.load("panda", fixed_joints=fixed_joints, **kw)


@pytest.fixture(scope="session", autouse=True)
def robot_cache_dir(tmp_path_factory) -> Path:
    """The per-user robot model cache, pointed at a directory of this test session
    (``$PLANNING_COLLISION_CACHE``; robot/cache.py), so tests neither read a stale model
    from the user's cache nor leave files in it."""
    from planning_collision.robot.cache import CACHE_ENV

    d = tmp_path_factory.mktemp("robot-cache")
    old = os.environ.get(CACHE_ENV)
    os.environ[CACHE_ENV] = str(d)
    yield d
    if old is None:
        os.environ.pop(CACHE_ENV, None)
    else:
        os.environ[CACHE_ENV] = old


@pytest.fixture
def rng():
    """A seeded generator; never the global seed."""
    return np.random.default_rng(20261121)
