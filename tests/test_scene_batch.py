"""`Scene.add_many` (what `from_records` and the scene readers use) builds exactly the scene
that `add` builds object by object, one edit instead of many, and refuses a bad object
without adding any."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import planning_collision as pc
from planning_collision.testing.sampling import random_pose


def _objects(rng, n: int) -> list:
    makers = [
        lambda: pc.Sphere(rng.uniform(0.01, 0.3)),
        lambda: pc.Box(rng.uniform(0.01, 0.6, 3)),
        lambda: pc.Capsule(rng.uniform(0.01, 0.2), rng.uniform(0.0, 0.5)),
        lambda: pc.Cylinder(rng.uniform(0.01, 0.2), rng.uniform(0.01, 0.5)),
        lambda: pc.Cone(rng.uniform(0.01, 0.2), rng.uniform(0.01, 0.5)),
        lambda: pc.Convex(rng.normal(size=(6, 3)) * 0.1),
        lambda: pc.PointCloud(rng.normal(size=(5, 3)) * 0.1, 0.02),
        lambda: [(pc.Sphere(0.05), random_pose(rng, 0.1)), (pc.Box((0.1, 0.1, 0.1)), np.eye(4))],
    ]
    out = []
    for k in range(n):
        shape = makers[int(rng.integers(len(makers)))]()
        out.append((shape, random_pose(rng, 1.5), f"o{k}" if k % 3 else None))
    return out


@given(st.integers(0, 2**31), st.integers(1, 25))
def test_add_many_builds_the_scene_add_builds(seed, n):
    rng = np.random.default_rng(seed)
    objects = _objects(rng, n)
    one, many = pc.Scene(), pc.Scene()
    for shape, T, name in objects:
        one.add(shape, T, name=name)
    v0 = many.version
    ids = many.add_many(objects)
    assert ids == one.ids() and many.version > v0
    for a, b in zip(one, many, strict=True):
        assert (a.id, a.name) == (b.id, b.name) and np.array_equal(a.T, b.T)
    fa, fb = one.build(), many.build()
    for x, y in zip(_arrays(fa), _arrays(fb), strict=True):
        assert x.dtype == y.dtype and np.array_equal(x, y)
    for _ in range(5):
        q, T = pc.Box(rng.uniform(0.05, 0.5, 3)), random_pose(rng, 1.5)
        assert one.collide_object(q, T) == many.collide_object(q, T)
        da = [(i, r.distance) for i, r in one.distances(q, T)]
        assert da == [(i, r.distance) for i, r in many.distances(q, T)]


def _arrays(flat) -> list:
    out = []
    for f in flat:
        out += _arrays(f) if isinstance(f, tuple) else [f]
    return out


def test_a_bad_object_among_many_is_named_and_nothing_is_added(rng):
    s = pc.Scene()
    s.add(pc.Sphere(0.1), None, name="kept")
    v = s.version
    far = np.eye(4)
    far[0, 3] = 9_999.9
    bad = [
        ([(pc.Sphere(0.1), None, "a"), (pc.Box((1, 1, 1)), far, "edge of the world")], "edge"),
        ([(pc.Sphere(0.1), None, "a"), (pc.Sphere(0.1), np.zeros((4, 4)), None)], r"objects\[1\]"),
        ([(pc.Sphere(0.1), None)], r"objects\[0\] must be \(shape, T, name\)"),
        ([("not a shape", None, "x")], "obstacle 'x'"),
    ]
    for objects, match in bad:
        with pytest.raises((ValueError, TypeError), match=match):
            s.add_many(objects)
    assert s.version == v and [o.name for o in s] == ["kept"]
    assert s.add_many([]) == [] and s.version == v


def test_the_one_primitive_table_is_the_table_the_shapes_pack(rng):
    from planning_collision.geometry.pack import shape_table
    from planning_collision.primitives import primitive_table

    shapes = [
        o[0]
        for o in _objects(rng, 60)
        if type(o[0]) in (pc.Sphere, pc.Box, pc.Capsule, pc.Cylinder, pc.Cone)
    ]
    assert len({type(s) for s in shapes}) == 5
    for a, b in zip(shape_table(shapes), primitive_table(shapes), strict=True):
        assert a.dtype == b.dtype and np.array_equal(a, b)
    with pytest.raises(TypeError, match="one-primitive shapes, got Convex"):
        primitive_table([pc.Convex(np.zeros((1, 3)))])


@given(st.integers(0, 2**31), st.integers(1, 25))
def test_the_flat_form_of_one_node_objects_is_the_general_one(seed, n):
    """kcd.flatten writes the forest of objects that are each one primitive at once
    (`_one_node_forest`, taken when every object is one node, as MotionBenchMaker scenes
    are): the same flat scene, array for array, as its general concatenation."""
    from planning_collision import kcd

    rng = np.random.default_rng(seed)
    scene = pc.Scene()
    scene.add_many(_objects(rng, n))
    snap = scene.snapshot()
    blocks = [snap.blocks[i] for i in snap.blocks]
    singles = [b for b in blocks if kcd._one_node(b)]
    original = kcd._one_node
    for subset in (blocks, singles):
        for ratio in (kcd.OPEN_RATIO, None):
            if not subset:
                continue
            fast = kcd.flatten(subset, ratio)
            try:
                kcd._one_node = lambda b: False
                slow = kcd.flatten(subset, ratio)
            finally:
                kcd._one_node = original
            for x, y in zip(_arrays(fast), _arrays(slow), strict=True):
                assert x.dtype == y.dtype and x.shape == y.shape and np.array_equal(x, y)
