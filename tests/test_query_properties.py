"""Self-consistency of the queries , with hypothesis.

- swapping a pair gives the same distance and the negated normal;
- moving both shapes by one rigid transform changes nothing (distance; normal rotates along);
- ``collide == (distance <= margin)`` away from contact;
- the batch kernels give what the single calls give;
- a primitive agrees with its point-set ``Convex`` version: exactly where the point set
  *is* the shape (box = 8 corners, sphere = 1 swept point, capsule = 2 swept points), and
  within the discretisation error where it is inscribed (cylinder, cone as n-gons).

Tolerances: 1e-9 m where both sides are exact (closed forms; GJK/EPA ending on polytope
features), otherwise the issue's 1e-6 m for separation and 1e-3 m for EPA depths (EPA on
curved shapes stops at a polytope inscribed in them; two runs from different start simplices
land on different polytopes). Contact band: 1e-5 m, as in the oracle tests.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import assume, example, given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import planning_collision as pc
from planning_collision import Box, Capsule, Cone, Convex, Cylinder, Halfspace, Sphere
from planning_collision.geometry import shape_table
from planning_collision.kernels.convex.pair import (
    new_workspace,
    pair_distance,
    pair_distance_batch,
    pair_overlap_batch,
)

CONTACT_BAND = 1e-5
DIST_TOL = 1e-6
DEPTH_TOL = 1e-3
# The normal of a separated pair: GJK stops when its distance is within ~1e-11 m of the
# optimum, and off a rounded rim (cylinder, cone) a direction error e costs only r e^2 / 2
# of distance, so the direction is known to sqrt(2e-11 / r): 4.5e-5 for r = 1 cm (found by
# hypothesis: 1.1e-5 on a cylinder of r = 12.5 cm against a box face, 0.027 m apart). Flat
# and sphere-swept cores have no such slack.
NORMAL_TOL = 1e-5
NORMAL_TOL_CURVED = 1e-4

# --- strategies: finite floats within scene bounds

size = st.floats(0.02, 0.5)
coord = st.floats(-0.6, 0.6)


def _quat_rotation(q):
    """The rotation of quaternion q = (x, y, z, w), any nonzero length."""
    x, y, z, w = np.asarray(q, float) / np.linalg.norm(q)
    R = np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
        ]
    )
    u, _, vt = np.linalg.svd(R)
    return u @ vt


@st.composite
def rotations(draw):
    q = np.array(draw(st.lists(st.floats(-1, 1), min_size=4, max_size=4)))
    assume(np.linalg.norm(q) > 0.1)
    return _quat_rotation(q)


def _pose(q, t):
    T = np.eye(4)
    T[:3, :3] = _quat_rotation(q)
    T[:3, 3] = t
    return T


@st.composite
def poses(draw):
    T = np.eye(4)
    T[:3, :3] = draw(rotations())
    T[:3, 3] = [draw(coord), draw(coord), draw(coord)]
    return T


convex_points = hnp.arrays(
    np.float64,
    st.tuples(st.integers(1, 30), st.just(3)),
    elements=st.floats(-0.25, 0.25),
)


@st.composite
def convex_shapes(draw):
    kind = draw(st.sampled_from(["sphere", "box", "capsule", "cylinder", "cone", "convex"]))
    if kind == "sphere":
        return Sphere(draw(size) / 2)
    if kind == "box":
        return Box((draw(size), draw(size), draw(size)))
    if kind == "capsule":
        return Capsule(draw(size) / 2, draw(size))
    if kind == "cylinder":
        return Cylinder(draw(size) / 2, draw(size))
    if kind == "cone":
        return Cone(draw(size) / 2, draw(size))
    r = draw(st.sampled_from([0.0, 0.0, 0.01, 0.05]))
    return Convex(draw(convex_points), r)


halfspaces = st.builds(
    lambda n, off: Halfspace(n, off),
    st.lists(st.floats(-1, 1), min_size=3, max_size=3).filter(lambda v: np.linalg.norm(v) > 0.1),
    st.floats(-0.3, 0.3),
)
any_shapes = st.one_of(convex_shapes(), convex_shapes(), halfspaces)

I4 = np.eye(4)


def _tr(x, y=0.0, z=0.0):
    T = np.eye(4)
    T[:3, 3] = (x, y, z)
    return T


def _curved(*shapes):
    return any(isinstance(s, (Cylinder, Cone)) for s in shapes)


def _close(d1, d2, curved):
    """Two signed distances of one pair that should be equal."""
    if min(d1, d2) > 0.0:
        return abs(d1 - d2) <= (DIST_TOL if curved else 1e-9)
    return abs(d1 - d2) <= (DEPTH_TOL if curved else 1e-6)


# ---------------------------------------------------------------------------------------


@given(a=any_shapes, Ta=poses(), b=convex_shapes(), Tb=poses())
@example(a=Sphere(0.1), Ta=I4, b=Sphere(0.2), Tb=_tr(0.3))  # touching
@example(a=Box((0.2, 0.2, 0.2)), Ta=I4, b=Box((0.2, 0.2, 0.2)), Tb=I4)  # coincident
@example(a=Cone(0.1, 0.2), Ta=I4, b=Cylinder(0.1, 0.2), Tb=_tr(0.0, 0.0, 0.3))  # apex-face
@example(a=Halfspace((0, 0, 1), 0.0), Ta=I4, b=Box((0.2, 0.2, 0.2)), Tb=_tr(0, 0, 0.1))
@example(a=Convex([[0, 0, 0]]), Ta=I4, b=Capsule(0.05, 0.1), Tb=_tr(0.2))  # bare point
def test_swapping_a_pair_gives_the_same_distance_and_negated_normal(a, Ta, b, Tb):
    r1 = pc.distance(a, Ta, b, Tb)
    r2 = pc.distance(b, Tb, a, Ta)
    assert _close(r1.distance, r2.distance, _curved(a, b)), (r1, r2)
    if min(r1.distance, r2.distance) > 1e-3:
        # for separated convex sets the closest-point difference vector is unique, so the
        # normal is, even where the witness points are not (parallel faces)
        tol = NORMAL_TOL_CURVED if _curved(a, b) else NORMAL_TOL
        np.testing.assert_allclose(r2.normal, -r1.normal, atol=tol)
    assert pc.collide(a, Ta, b, Tb) == pc.collide(b, Tb, a, Ta) or abs(r1.distance) < CONTACT_BAND


@given(a=any_shapes, Ta=poses(), b=convex_shapes(), Tb=poses(), G=poses())
@example(a=Box((0.2, 0.2, 0.2)), Ta=I4, b=Box((0.1, 0.3, 0.2)), Tb=_tr(0.16, 0.07), G=_tr(5, -3, 2))
@example(  # a rim against a face: the normal is known to ~1e-5 only (NORMAL_TOL_CURVED)
    a=Cylinder(0.125, 0.5),
    Ta=_pose((0, -1 / 30, 0, 1), (0, 0, 0.5)),
    b=Box((0.3125, 0.5, 0.5)),
    Tb=_pose((0, 0.125, 0.25, 1), (0, 0.4375, 0.09375)),
    G=_tr(0.125, 0.25),
)
def test_moving_both_shapes_rigidly_changes_nothing(a, Ta, b, Tb, G):
    r1 = pc.distance(a, Ta, b, Tb)
    r2 = pc.distance(a, G @ Ta, b, G @ Tb)
    assert _close(r1.distance, r2.distance, _curved(a, b)), (r1, r2)
    if min(r1.distance, r2.distance) > 1e-3:
        tol = NORMAL_TOL_CURVED if _curved(a, b) else NORMAL_TOL
        np.testing.assert_allclose(r2.normal, G[:3, :3] @ r1.normal, atol=tol)
    if abs(r1.distance) > CONTACT_BAND:
        assert pc.collide(a, G @ Ta, b, G @ Tb) == pc.collide(a, Ta, b, Tb)


@given(
    a=any_shapes,
    Ta=poses(),
    b=convex_shapes(),
    Tb=poses(),
    margin=st.sampled_from([0.0, 0.0, 1e-3, 0.05]),
)
@example(a=Sphere(0.1), Ta=I4, b=Sphere(0.1), Tb=_tr(0.25), margin=0.05 + 2e-5)
@example(a=Sphere(0.1), Ta=I4, b=Sphere(0.1), Tb=_tr(0.25), margin=0.05 - 2e-5)
def test_collide_agrees_with_distance_away_from_contact(a, Ta, b, Tb, margin):
    d = pc.distance(a, Ta, b, Tb).distance
    assume(abs(d - margin) > CONTACT_BAND)
    assert pc.collide(a, Ta, b, Tb, margin) == (d <= margin), d


def test_collide_agrees_with_distance_on_the_margin_grid(rng):
    """The same property on a dense 1-D sweep through contact: the verdict flips exactly
    once, where the distance crosses the margin (beyond the contact band)."""
    from planning_collision.testing.sampling import random_rotation

    a, b = Cone(0.1, 0.3), Box((0.1, 0.2, 0.3))
    R = np.eye(4)
    R[:3, :3] = random_rotation(rng)
    for x in np.linspace(0.0, 0.5, 400):
        Tb = R @ _tr(x, 0.01, 0.02)
        d = pc.distance(a, I4, b, Tb).distance
        if abs(d) > CONTACT_BAND:
            assert pc.collide(a, I4, b, Tb) == (d <= 0.0), (x, d)


# ---------------------------------------------------------------------------------------
# Batch kernels against single calls


@pytest.mark.parametrize("seed", [0, 1])
def test_batch_kernels_agree_with_single_calls(seed):
    from planning_collision.testing import sampling

    rng = np.random.default_rng(seed)
    pairs = [p for t in sampling.PAIR_TYPES for p in sampling.random_pairs(t, 12, rng)]
    pairs += [(b, Tb, a, Ta) for a, Ta, b, Tb in pairs[::3]]  # halfspace as b, swapped kinds
    tab_a = shape_table([p[0] for p in pairs])
    tab_b = shape_table([p[2] for p in pairs])
    n = len(pairs)
    ia = np.arange(n, dtype=np.int64)
    Ta = np.ascontiguousarray([p[1] for p in pairs])
    Tb = np.ascontiguousarray([p[3] for p in pairs])
    out = np.empty((n, 10))
    pair_distance_batch(tab_a, ia, Ta, tab_b, ia, Tb, np.inf, out)
    hits = np.zeros(n, dtype=np.bool_)
    pair_overlap_batch(tab_a, ia, Ta, tab_b, ia, Tb, 0.0, hits)
    one = np.empty(10)
    for k, (a, Ta_k, b, Tb_k) in enumerate(pairs):
        # the kernel called alone, with a fresh workspace: the batch reuses one workspace
        # (warm starts), which may change the path GJK takes but not the answer
        pair_distance(tab_a, k, Ta_k, tab_b, k, Tb_k, np.inf, new_workspace(), one)
        r = pc.distance(a, Ta_k, b, Tb_k)
        tol = 1e-9 if one[0] > 0 else 1e-6
        assert out[k, 0] == pytest.approx(one[0], abs=tol), (k, a, b)
        assert out[k, 0] == pytest.approx(r.distance, abs=tol), (k, a, b)
        if one[0] > 1e-3:
            np.testing.assert_allclose(out[k, 7:10], r.normal, atol=1e-6)
        if abs(r.distance) > CONTACT_BAND:
            assert hits[k] == pc.collide(a, Ta_k, b, Tb_k) == (r.distance <= 0.0), k


# ---------------------------------------------------------------------------------------
# A primitive against its point-set Convex version

CUBE = np.array([[x, y, z] for x in (-0.5, 0.5) for y in (-0.5, 0.5) for z in (-0.5, 0.5)])


def _ngon(r, z, n, phase=0.0):
    t = 2 * np.pi * np.arange(n) / n + phase
    return np.stack([r * np.cos(t), r * np.sin(t), np.full(n, z)], axis=1)


@given(
    e=st.tuples(size, size, size),
    Ta=poses(),
    b=st.one_of(convex_shapes(), halfspaces),
    Tb=poses(),
)
def test_box_equals_convex_of_its_corners(e, Ta, b, Tb):
    box, hull = Box(e), Convex(CUBE * np.asarray(e))
    d1 = pc.distance(box, Ta, b, Tb).distance
    d2 = pc.distance(hull, Ta, b, Tb).distance
    assert _close(d1, d2, _curved(b)), (d1, d2)


@given(
    r=size,
    length=st.one_of(st.just(0.0), size),
    Ta=poses(),
    b=st.one_of(convex_shapes(), halfspaces),
    Tb=poses(),
)
def test_sphere_and_capsule_equal_swept_point_and_segment(r, length, Ta, b, Tb):
    prim = Sphere(r) if length == 0.0 else Capsule(r, length)
    pts = [[0, 0, 0]] if length == 0.0 else [[0, 0, -length / 2], [0, 0, length / 2]]
    d1 = pc.distance(prim, Ta, b, Tb).distance
    d2 = pc.distance(Convex(pts, r), Ta, b, Tb).distance
    assert _close(d1, d2, _curved(b)), (d1, d2)


N_GON = 64


@given(
    kind=st.sampled_from(["cylinder", "cone"]),
    r=size,
    length=size,
    Ta=poses(),
    b=st.one_of(convex_shapes(), halfspaces),
    Tb=poses(),
)
def test_cylinder_and_cone_agree_with_inscribed_prisms(kind, r, length, Ta, b, Tb):
    """An n-gon prism (pyramid) inscribed in the cylinder (cone) is a subset of it, and the
    shape is within ``gap = r (1 - cos(pi/n))`` of the prism, so for every b:
    ``d_prim <= d_poly <= d_prim + gap`` (both for separation and for penetration)."""
    h = length / 2
    if kind == "cylinder":
        prim = Cylinder(r, length)
        pts = np.concatenate([_ngon(r, -h, N_GON), _ngon(r, h, N_GON)])
    else:
        prim = Cone(r, length)
        pts = np.concatenate([_ngon(r, -h, N_GON), [[0, 0, h]]])
    gap = r * (1 - math.cos(math.pi / N_GON))
    d_prim = pc.distance(prim, Ta, b, Tb).distance
    d_poly = pc.distance(Convex(pts), Ta, b, Tb).distance
    tol = DIST_TOL if min(d_prim, d_poly) > 0 else DEPTH_TOL
    assert d_prim - tol <= d_poly <= d_prim + gap + tol, (d_prim, d_poly, gap)
