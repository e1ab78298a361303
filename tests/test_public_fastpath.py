"""The compiled pose check inside the public queries agrees with the Python validator."""

import numpy as np
import pytest

import planning_collision as pc
from planning_collision.geometry import validate
from planning_collision.kernels import public


def test_compiled_and_python_rotation_tolerances_are_the_same():
    assert public.ROTATION_TOL == validate.ROTATION_TOL


@pytest.mark.parametrize(
    "bad",
    [
        np.diag([1.0, 1.0, 1.0 + 1e-3, 1.0]),  # scaled
        np.array([[1, 0.01, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1.0]]),  # sheared
        np.diag([-1.0, 1.0, 1.0, 1.0]),  # reflection
        np.array([[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0.5, 0, 0, 1.0]]),  # last row
        np.full((4, 4), np.inf),
    ],
)
def test_every_pose_the_compiled_check_rejects_the_validator_rejects_too(bad):
    assert public.pose_check(bad) != public.POSE_OK
    with pytest.raises(ValueError):
        validate.as_pose(bad)
    for query in (pc.collide, pc.distance, pc.penetration):
        with pytest.raises(ValueError, match="Tb"):
            query(pc.Sphere(0.1), np.eye(4), pc.Box((1, 1, 1)), bad)


def test_a_pose_rotated_within_float32_precision_is_accepted():
    T = np.eye(4)
    T[:3, :3] += 1e-7
    assert public.pose_check(T) == public.POSE_OK
    assert pc.collide(pc.Sphere(0.1), T, pc.Sphere(0.1), np.eye(4))


def test_shape_flat_form_is_cached_on_the_shape():
    s = pc.Convex(np.random.default_rng(0).normal(size=(50, 3)))
    assert s.flat is s.flat
