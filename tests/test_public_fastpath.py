"""The compiled pose check inside the public queries agrees with the Python validator."""

import dataclasses

import numpy as np
import pytest

import planning_collision as pc
from planning_collision.geometry import poses
from planning_collision.kernels.convex import public


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
        poses.as_pose(bad)
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


@pytest.mark.parametrize(
    "make",
    [
        lambda T: np.asfortranarray(T),  # not C-contiguous
        lambda T: np.ascontiguousarray(T.astype(np.float32)),  # another dtype
        lambda T: np.repeat(T, 2, axis=1)[:, ::2],  # a strided view
        lambda T: T.tolist(),  # not an array
        lambda T: T.astype(np.dtype(">f8")),  # float64, big-endian: a different dtype object
    ],
)
def test_poses_off_the_fast_path_give_the_same_answers(make):
    rng = np.random.default_rng(3)
    a, b = pc.Box((0.2, 0.3, 0.4)), pc.Convex(rng.normal(size=(12, 3)) * 0.1)
    Ta, Tb = np.eye(4), np.eye(4)
    Tb[:3, 3] = (0.45, 0.1, -0.05)
    ref = pc.distance(a, Ta, b, Tb)
    got = pc.distance(a, make(Ta), b, make(Tb))
    assert got.distance == pytest.approx(ref.distance, abs=1e-6)  # float32 poses round
    assert pc.collide(a, make(Ta), b, make(Tb)) == pc.collide(a, Ta, b, Tb)


def test_results_are_frozen():
    r = pc.distance(pc.Sphere(0.1), np.eye(4), pc.Sphere(0.1), np.diag([1.0, 1, 1, 1]))
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.distance = 1.0
    p = pc.penetration(pc.Sphere(0.1), np.eye(4), pc.Sphere(0.1), np.eye(4))
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.depth = 0.0
    assert [f.name for f in dataclasses.fields(r)] == [
        "distance",
        "point_a",
        "point_b",
        "normal",
        "id",
    ]
    assert np.allclose(r.point_b - r.point_a, r.distance * r.normal)


def test_a_read_only_pose_reaches_the_compiled_query_as_the_writeable_type(monkeypatch):
    """A scene object's pose is read-only; to numba that is another array type, which made
    `distance` compile a second time (~30 s, past the wheel's shipped code): the queries
    hand the kernels writeable poses, copied only when read-only."""
    from planning_collision import queries

    seen = []

    def spy(kernel):
        def call(ia, fa, Ta, ib, fb, Tb, *rest):
            seen.append((Ta.flags.writeable, Tb.flags.writeable))
            return kernel(ia, fa, Ta, ib, fb, Tb, *rest)

        return call

    monkeypatch.setattr(queries, "checked_distance", spy(public.checked_distance))
    monkeypatch.setattr(queries, "checked_overlap", spy(public.checked_overlap))
    scene = pc.Scene()
    T = np.eye(4)
    T[0, 3] = 0.5
    ob = scene.add(pc.Box((0.2, 0.2, 0.2)), T)
    Tob = scene.get(ob).T
    assert not Tob.flags.writeable  # as the scene keeps it
    frozen = np.eye(4)
    frozen.flags.writeable = False
    for Tb in (Tob, frozen):
        a = pc.distance(pc.Sphere(0.1), np.eye(4), pc.Box((0.2, 0.2, 0.2)), Tb)
        b = pc.collide(pc.Sphere(0.1), frozen, pc.Box((0.2, 0.2, 0.2)), Tb)
        c = pc.penetration(pc.Sphere(0.1), np.eye(4), pc.Box((0.2, 0.2, 0.2)), Tb)
        assert (a.distance <= 0.0) == b and c.depth >= 0.0
    assert len(seen) == 6 and all(w == (True, True) for w in seen), seen
