"""Public queries against coal, python-fcl and closed forms (the criteria of planning_collision/testing/oracle.py).

Random pairs of every type (21 pairs of {sphere, box, capsule, cylinder, cone, convex} and
halfspace vs each), sizes 2-50 cm, about a third overlapping, plus pinned degenerate cases.
Every pair goes through `planning_collision.testing.oracle.check_pair`, whose docstring states each
criterion, its tolerance, why that tolerance, and which peer decides it. This CI sample is
seeded; `demos/dev/oracle_sweep.py` runs the same checks on >= 20,000 pairs per type.
"""

# ruff: noqa: E501  (the PINNED table is one case a line)
from __future__ import annotations

import math
import os

import numpy as np
import pytest

import planning_collision as pc
from planning_collision import (
    Box,
    Capsule,
    Cone,
    Convex,
    Cylinder,
    Halfspace,
    Sphere,
)
from planning_collision.testing import naive, oracle, peers, sampling

# Pairs per type in CI (27 types); ORACLE_PAIRS raises it locally. ~0.5 ms-3 ms per pair.
N_PER_TYPE = int(os.environ.get("ORACLE_PAIRS", "200"))
SEED = 20261121


@pytest.fixture(autouse=True)
def _peers(request):
    """Every test compares with coal and python-fcl (a skip without them) unless it is
    marked `closed_form`: those check hand-computed answers and need no peer."""
    if request.node.get_closest_marker("closed_form") is None:
        pytest.importorskip("coal")
        pytest.importorskip("fcl")


def pose(t=(0.0, 0.0, 0.0), R=None) -> np.ndarray:
    T = np.eye(4)
    if R is not None:
        T[:3, :3] = R
    T[:3, 3] = t
    return T


def rot(axis, angle) -> np.ndarray:
    a = np.asarray(axis, float) / np.linalg.norm(axis)
    K = np.array([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]])
    return np.eye(3) + math.sin(angle) * K + (1 - math.cos(angle)) * K @ K


def assert_passes(a, Ta, b, Tb, **kw) -> oracle.PairCheck:
    chk = oracle.check_pair(a, Ta, b, Tb, **kw)
    assert not chk.failures, "\n".join(chk.failures) + "\n" + oracle.describe(a, Ta, b, Tb)
    return chk


# ---------------------------------------------------------------------------------------
# The peers themselves: conventions and accuracy, so that their verdicts mean something.


def test_peer_conventions_match_ours():
    """coal's cone apex, capsule length, box extents, halfspace side and witness/normal
    conventions are ours (hand-computed values; a 1e-12 m sphere stands in for a point)."""
    I = pose()
    pt = Sphere(1e-12)
    cases = [
        (Cone(0.1, 0.4), pose((0, 0, 1.0)), 0.8),  # apex at +length/2 = 0.2
        (Cone(0.1, 0.4), pose((0.3, 0, -0.2)), 0.2),  # base disc at -0.2, rim at 0.1
        (Capsule(0.1, 0.4), pose((0, 0, 1.0)), 0.7),  # length between sphere centres
        (Cylinder(0.1, 0.4), pose((0, 0, 1.0)), 0.8),
        (Box((0.2, 0.4, 0.6)), pose((0, 1.0, 0)), 0.8),  # full side lengths
        (Halfspace((0, 0, 1), 0.5), pose((0, 0, 1.0)), 0.5),  # {x : n.x <= offset}
        (Halfspace((0, 0, 1), 0.5), pose((0, 0, 0.0)), -0.5),
        (Convex([[0, 0, 0], [0.2, 0, 0], [0, 0.2, 0], [0, 0, 0.2]]), pose((0, 0, 1.0)), 0.8),
    ]
    for shape, Tp, expected in cases:
        d, pa, pb, n = peers.coal_distance(shape, I, pt, Tp)
        assert d == pytest.approx(expected, abs=1e-9), (shape, d)
        assert naive.shape_sdf(shape, I, Tp[:3, 3]) == pytest.approx(expected, abs=1e-9)
    # normal from a to b, pb - pa = d n, for separated and penetrating pairs alike
    for x, dist in ((0.5, 0.2), (0.25, -0.05)):
        d, pa, pb, n = peers.coal_distance(Sphere(0.1), I, Sphere(0.2), pose((x, 0, 0)))
        assert d == pytest.approx(dist, abs=1e-12)
        np.testing.assert_allclose(n, [1, 0, 0], atol=1e-12)
        np.testing.assert_allclose(pb - pa, d * n, atol=1e-12)


CLOSED_FORM_TYPES = [t for t in sampling.PAIR_TYPES if "sphere" in t or "halfspace" in t] + [
    ("box", "box"),
    ("box", "convex"),
    ("capsule", "capsule"),
    ("convex", "convex"),
]


@pytest.mark.parametrize("pair_type", CLOSED_FORM_TYPES, ids="-".join)
def test_coal_separation_agrees_with_closed_forms(pair_type):
    """The oracle is trustworthy: coal's separation equals naive.py's closed forms within
    1e-9 m wherever one exists (so 1e-6 m comparisons against coal are meaningful)."""
    rng = np.random.default_rng(SEED + 1)
    n_checked = 0
    # hulls of 12 points, within naive.polytope_separation's budget
    for a, Ta, b, Tb in sampling.random_pairs(pair_type, 30, rng, n_points=12):
        d, *_ = peers.coal_distance(a, Ta, b, Tb)
        nd = oracle._naive_distance(a, Ta, b, Tb, separated=d > 1e-9)
        if nd is None or d <= 0.0:
            continue
        n_checked += 1
        assert d == pytest.approx(nd, abs=1e-9), oracle.describe(a, Ta, b, Tb)
    assert n_checked >= 5


# ---------------------------------------------------------------------------------------
# Random pairs: the seeded CI sample of the sweep.


@pytest.mark.parametrize("pair_type", sampling.PAIR_TYPES, ids="-".join)
def test_random_pairs_agree_with_coal_fcl_and_closed_forms(pair_type):
    rng = np.random.default_rng([SEED, sampling.PAIR_TYPES.index(pair_type)])
    pairs = sampling.random_pairs(pair_type, N_PER_TYPE, rng)
    failures = []
    n_overlap = n_verdicts = 0
    for a, Ta, b, Tb in pairs:
        chk = oracle.check_pair(a, Ta, b, Tb)
        n_overlap += chk.coal_d <= 0.0
        n_verdicts += chk.verdict_checked
        if chk.failures:
            failures.append("\n".join(chk.failures) + "\n" + oracle.describe(a, Ta, b, Tb))
    assert not failures, f"{len(failures)}/{len(pairs)} pairs fail; first:\n{failures[0]}"
    # the sample exercises both answers (else the verdict check could not fail)
    assert 0.1 * len(pairs) < n_overlap < 0.8 * len(pairs), n_overlap
    assert n_verdicts > 0.9 * len(pairs)


@pytest.mark.parametrize("k", [0.05, 20.0], ids=["tiny-1mm-25mm", "huge-0.4m-10m"])
def test_tiny_and_huge_random_pairs_meet_the_same_criteria(k):
    """Every pair type scaled to 1-25 mm and to 0.4-10 m passes the same absolute criteria,
    and separation distances scale exactly with the scene (1e-9 m per metre of scale)."""
    rng = np.random.default_rng(SEED + 5)
    failures = []
    for pt in sampling.PAIR_TYPES:
        for a, Ta, b, Tb in sampling.random_pairs(pt, 8, rng):
            a2, b2 = sampling.scaled(a, k), sampling.scaled(b, k)
            Ta2, Tb2 = sampling.scaled_pose(Ta, k), sampling.scaled_pose(Tb, k)
            chk = oracle.check_pair(a2, Ta2, b2, Tb2)
            d1 = pc.distance(a, Ta, b, Tb).distance
            if d1 > 0.0 and not abs(chk.ours_d - k * d1) <= 1e-9 * max(1.0, k):
                chk.failures.append(f"scaled by {k}: {chk.ours_d!r} != {k} * {d1!r}")
            if chk.failures:
                failures.append("\n".join(chk.failures) + "\n" + oracle.describe(a2, Ta2, b2, Tb2))
    assert not failures, f"{len(failures)} failures; first:\n{failures[0]}"


def test_random_sample_overlaps_about_a_third():
    rng = np.random.default_rng(SEED + 2)
    frac = []
    for pt in sampling.PAIR_TYPES:
        ds = [peers.coal_distance(*p)[0] for p in sampling.random_pairs(pt, 40, rng)]
        frac.append(np.mean(np.asarray(ds) <= 0.0))
    assert 0.25 < np.mean(frac) < 0.55, frac


# ---------------------------------------------------------------------------------------
# Pinned degenerate cases. Each runs every criterion of check_pair; where the answer is
# known by hand it is asserted too.

S2 = 1.0 / math.sqrt(2.0)
CUBE = np.array([[x, y, z] for x in (-0.1, 0.1) for y in (-0.1, 0.1) for z in (-0.1, 0.1)])
# exact rotations with the entries hypothesis found (a 3-4-5 rotation; 90 deg with a 2e-16)
ROT_68 = np.array([[-1.0, 0, 0], [0, -0.6, 0.8], [0, 0.8, 0.6]])
ROT_X90 = np.array([[-1.0, 0, 0], [0, 2.22044605e-16, 1], [0, 1, -2.22044605e-16]])
SQUARE = np.array([[-0.1, -0.1, 0], [0.1, -0.1, 0], [0.1, 0.1, 0], [-0.1, 0.1, 0]])


def _fibonacci_sphere(n, r):
    i = np.arange(n) + 0.5
    phi = np.arccos(1 - 2 * i / n)
    th = math.pi * (1 + 5**0.5) * i
    return r * np.stack([np.cos(th) * np.sin(phi), np.sin(th) * np.sin(phi), np.cos(phi)], 1)


BALL1000 = _fibonacci_sphere(1000, 0.2)

# (id, a, Ta, b, Tb, expected signed distance or None): one case a line, as a table reads.
# fmt: off
PINNED = [
    # touching: exactly zero distance, counts as collision
    ("touch-sphere-sphere", Sphere(0.1), pose(), Sphere(0.2), pose((0.3, 0, 0)), 0.0),
    ("touch-box-box-face", Box((0.2, 0.2, 0.2)), pose(), Box((0.2, 0.2, 0.2)), pose((0.2, 0.05, 0)), 0.0),
    ("touch-sphere-box-face", Sphere(0.1), pose((0, 0, 0.2)), Box((0.2, 0.2, 0.2)), pose(), 0.0),
    ("touch-capsule-capsule-crossed", Capsule(0.05, 0.4), pose(), Capsule(0.05, 0.4), pose((0.1, 0, 0), rot((1, 0, 0), math.pi / 2)), 0.0),
    ("touch-cylinder-box-base", Cylinder(0.1, 0.2), pose((0, 0, 0.2)), Box((0.2, 0.2, 0.2)), pose(), 0.0),
    ("touch-cone-apex-box", Cone(0.1, 0.2), pose((0, 0, -0.2)), Box((0.2, 0.2, 0.2)), pose(), 0.0),
    ("touch-halfspace-box", Halfspace((0, 0, 1), 0.0), pose(), Box((0.2, 0.2, 0.2)), pose((0, 0, 0.1)), 0.0),
    # coincident centres: depth known by hand
    ("coincident-sphere-sphere", Sphere(0.1), pose(), Sphere(0.2), pose(), -0.3),
    ("coincident-box-box", Box((0.2, 0.4, 0.6)), pose(), Box((0.2, 0.2, 0.2)), pose(), -0.2),
    ("coincident-capsule-capsule", Capsule(0.05, 0.4), pose(), Capsule(0.03, 0.2), pose(), -0.08),
    ("coincident-cylinder-cylinder", Cylinder(0.1, 0.4), pose(), Cylinder(0.1, 0.4), pose(), -0.2),
    # identical cones: depth = the cone's least width = the meridian triangle's altitude onto
    # its slant side, 2 * area / slant = 2 * 0.04 / sqrt(0.17) (coal's EPA: 1.3e-3 m short)
    ("coincident-cone-cone", Cone(0.1, 0.4), pose(), Cone(0.1, 0.4), pose(), -0.08 / math.sqrt(0.17)),
    ("coincident-convex-convex", Convex(CUBE), pose(), Convex(CUBE), pose(), -0.2),
    ("coincident-sphere-cylinder", Sphere(0.05), pose(), Cylinder(0.1, 0.4), pose(), -0.15),
    ("coincident-rotated-box-cylinder", Box((0.5, 0.5, 0.5)), pose(R=ROT_68), Cylinder(0.25, 0.5), pose(R=ROT_68), -0.5),
    ("coincident-rotated-convex-cylinder", Convex(CUBE * 2.5), pose(R=ROT_68), Cylinder(0.25, 0.5), pose(R=ROT_68), -0.5),
    ("coincident-rotated-sphere-cylinder", Sphere(0.25), pose(R=ROT_X90), Cylinder(0.25, 0.5), pose(R=ROT_X90), -0.5),
    ("coincident-box-convex-rotated", Box((0.2, 0.2, 0.2)), pose(), Convex(CUBE), pose(R=rot((0, 0, 1), 0.3)), None),
    # parallel faces, offset sideways: the witness points are not unique, the distance is
    ("parallel-box-box", Box((0.2, 0.2, 0.2)), pose(), Box((0.1, 0.3, 0.2)), pose((0.16, 0.07, 0.03)), 0.01),
    ("parallel-box-convex", Box((0.2, 0.2, 0.2)), pose(), Convex(CUBE), pose((0.05, 0.3, -0.02)), 0.1),
    ("parallel-cylinder-box", Cylinder(0.05, 0.2), pose((0.03, 0.02, 0.25)), Box((0.2, 0.2, 0.2)), pose(), 0.05),
    ("parallel-cylinder-cylinder-sides", Cylinder(0.05, 0.2), pose(), Cylinder(0.05, 0.2), pose((0.15, 0, 0.05)), 0.05),
    ("parallel-capsule-capsule", Capsule(0.05, 0.4), pose(), Capsule(0.05, 0.4), pose((0.2, 0, 0.1)), 0.1),
    ("parallel-halfspace-box", Halfspace((0, 0, 1), 0.0), pose(), Box((0.2, 0.2, 0.2)), pose((0.3, 0.1, 0.15)), 0.05),
    ("parallel-halfspace-cylinder-base", Halfspace((0, 0, 1), 0.0), pose(), Cylinder(0.1, 0.2), pose((0, 0, -0.05)), -0.15),
    # flat hulls
    ("flat-square-sphere-above", Convex(SQUARE), pose(), Sphere(0.05), pose((0.02, 0.03, 0.2)), 0.15),
    ("flat-square-sphere-beside", Convex(SQUARE), pose(), Sphere(0.05), pose((0.3, 0, 0)), 0.15),
    ("flat-square-box", Convex(SQUARE), pose(), Box((0.1, 0.1, 0.1)), pose((0, 0, 0.1)), 0.05),
    ("flat-square-box-through", Convex(SQUARE), pose(), Box((0.1, 0.1, 0.1)), pose((0, 0, 0.01)), None),
    ("flat-square-flat-square-edge", Convex(SQUARE), pose(), Convex(SQUARE), pose((0.3, 0, 0), rot((1, 0, 0), math.pi / 2)), 0.1),
    ("flat-swept-square-cylinder", Convex(SQUARE, 0.02), pose(), Cylinder(0.05, 0.1), pose((0, 0, 0.2)), 0.13),
    ("flat-triangle-cone", Convex([[0, 0, 0], [0.2, 0, 0], [0, 0.2, 0]]), pose(), Cone(0.05, 0.1), pose((0.05, 0.05, 0.1)), 0.05),
    # needle hulls: a segment, collinear points, a sliver
    ("needle-segment-sphere", Convex([[0, 0, -0.2], [0, 0, 0.2]]), pose(), Sphere(0.05), pose((0.1, 0, 0.1)), 0.05),
    ("needle-collinear-box", Convex([[0, 0, z] for z in np.linspace(-0.2, 0.2, 7)]), pose(), Box((0.1, 0.1, 0.1)), pose((0.2, 0, 0)), 0.15),
    ("needle-swept-segment-capsule", Convex([[0, 0, -0.2], [0, 0, 0.2]], 0.05), pose(), Capsule(0.05, 0.4), pose((0.3, 0, 0)), 0.2),
    ("needle-sliver-cone", Convex([[0, 0, -0.2], [0, 0, 0.2], [1e-4, 0, 0]]), pose(), Cone(0.05, 0.1), pose((0.15, 0.02, 0)), None),
    ("needle-crossing-box", Convex([[-0.3, 0, 0], [0.3, 0, 0]]), pose(), Box((0.1, 0.1, 0.1)), pose(), None),
    ("point-convex-box", Convex([[0.0, 0.0, 0.3]]), pose(), Box((0.2, 0.2, 0.2)), pose(), 0.2),
    ("point-swept-convex-sphere", Convex([[0.1, 0.0, 0.0]], 0.05), pose(), Sphere(0.05), pose((0.4, 0, 0)), 0.2),
    # 1000-vertex hulls (hill climbing): vertices on a 0.2 m sphere
    ("hull1000-sphere", Convex(BALL1000), pose(), Sphere(0.1), pose((0.5, 0.1, -0.2)), None),
    ("hull1000-box", Convex(BALL1000), pose(R=rot((1, 2, 3), 0.7)), Box((0.2, 0.1, 0.3)), pose((0.1, 0.4, 0.1)), None),
    ("hull1000-hull1000", Convex(BALL1000), pose(), Convex(BALL1000), pose((0.41, 0.02, 0.03), rot((0, 1, 1), 1.1)), None),
    ("hull1000-hull1000-overlap", Convex(BALL1000), pose(), Convex(BALL1000), pose((0.3, 0.02, 0.03), rot((0, 1, 1), 1.1)), None),
    ("hull1000-cone", Convex(BALL1000), pose(), Cone(0.1, 0.3), pose((0, 0.05, -0.4), rot((1, 0, 0), 0.2)), None),
    ("hull1000-halfspace", Convex(BALL1000), pose(), Halfspace((0.3, 0.2, 1.0), 0.1), pose(), None),
    # duplicate points: the same hull three times over
    ("duplicates-convex-box", Convex(np.repeat(CUBE, 3, axis=0)), pose(), Box((0.2, 0.2, 0.2)), pose((0.3, 0.02, 0)), 0.1),
    ("duplicates-convex-convex", Convex(np.concatenate([CUBE, CUBE, CUBE[:3]])), pose(R=rot((1, 1, 0), 0.4)), Convex(CUBE), pose((0.35, 0, 0)), None),
    # tiny (1 mm) and huge (10 m)
    ("tiny-sphere-box", Sphere(0.0005), pose((0.0011, 0.0002, 0)), Box((0.001, 0.001, 0.001)), pose(), 0.0001),
    ("tiny-cone-cylinder", Cone(0.0005, 0.001), pose((0.0003, 0.0002, 0.0013)), Cylinder(0.0005, 0.001), pose(R=rot((1, 0, 0), 0.3)), None),
    ("tiny-convex-capsule", Convex(CUBE * 0.005), pose(), Capsule(0.0005, 0.001), pose((0.0012, 0.0004, 0), rot((0, 1, 0), 1.0)), None),
    ("huge-box-box", Box((10, 10, 10)), pose(), Box((10, 10, 10)), pose((10.5, 2, 1), rot((0, 0, 1), 0.2)), None),
    ("huge-cylinder-sphere", Cylinder(5, 10), pose(), Sphere(0.1), pose((5.2, 0, 3)), 0.1),
    ("huge-halfspace-cone", Halfspace((0, 0, 1), 0), pose(), Cone(5, 10), pose((0, 0, 5.5), rot((1, 0, 0), math.pi)), 0.5),
    ("huge-box-tiny-sphere", Box((10, 10, 10)), pose(), Sphere(0.001), pose((5.002, 1, 1)), 0.001),
]
# fmt: on


@pytest.mark.parametrize("case", PINNED, ids=[c[0] for c in PINNED])
def test_pinned_degenerate_cases(case):
    name, a, Ta, b, Tb, expected = case
    assert_passes(a, Ta, b, Tb, exact=expected)
    # the swapped pair passes too (the reverse path through the dispatch)
    assert_passes(b, Tb, a, Ta, exact=expected)


HAND_COMPUTED = [c for c in PINNED if c[5] is not None]


@pytest.mark.closed_form
@pytest.mark.parametrize("case", HAND_COMPUTED, ids=[c[0] for c in HAND_COMPUTED])
def test_pinned_cases_give_their_hand_computed_answers_both_ways(case):
    """No peer needed: the pinned cases whose answer is known in closed form."""
    name, a, Ta, b, Tb, expected = case
    # Polytopes, spheres, capsules and halfspaces: exact up to rounding (closed forms;
    # GJK/EPA terminate on a vertex/face of a polytope), 1e-9 m. A cylinder or cone:
    # GJK converges to the 1e-6 m, EPA on their inscribed polytope to 1e-3 m.
    curved = isinstance(a, (Cylinder, Cone)) or isinstance(b, (Cylinder, Cone))
    tol = 1e-9 if not curved else (oracle.DIST_TOL if expected >= 0 else oracle.DEPTH_TOL)
    for x, Tx, y, Ty in ((a, Ta, b, Tb), (b, Tb, a, Ta)):
        assert pc.distance(x, Tx, y, Ty).distance == pytest.approx(expected, abs=tol), name
        assert pc.collide(x, Tx, y, Ty) == (expected <= 0.0), name


@pytest.mark.parametrize("pair_type", sampling.PAIR_TYPES[:21], ids="-".join)
def test_coincident_centres_at_random_rotations(pair_type):
    """Deep, symmetric overlaps (EPA's hardest start: the origin at the centre of the
    Minkowski difference), half of them between two identical shapes; EPA got these wrong
    at rotated poses before (pinned above as coincident-rotated-*)."""
    rng = np.random.default_rng([SEED + 6, sampling.PAIR_TYPES.index(pair_type)])
    failures = []
    for i in range(15):
        a, b = sampling.random_shape(pair_type[0], rng), sampling.random_shape(pair_type[1], rng)
        if pair_type[0] == pair_type[1] and i % 2:
            b = a
        Ta, Tb = sampling.random_pose(rng), sampling.random_pose(rng)
        Tb[:3, 3] = Ta[:3, 3]
        chk = oracle.check_pair(a, Ta, b, Tb)
        if chk.failures:
            failures.append("\n".join(chk.failures) + "\n" + oracle.describe(a, Ta, b, Tb))
    assert not failures, f"{len(failures)} failures; first:\n{failures[0]}"


@pytest.mark.parametrize("pair_type", sampling.PAIR_TYPES, ids="-".join)
def test_touching_pairs_at_random_poses(pair_type):
    """Separated pairs moved into contact: translating b by -d * normal (the unit
    closest-point direction) lowers the distance by exactly d, so the pair touches; moving
    it 1e-4 m back out gives exactly 1e-4 m; pushing it 1e-4 m in overlaps by a depth in
    (0, 1e-4] (another escape direction may be shorter). GJK and EPA hand over at contact
    without a jump."""
    rng = np.random.default_rng([SEED + 7, sampling.PAIR_TYPES.index(pair_type)])
    failures = []
    for a, Ta, b, Tb in sampling.random_pairs(pair_type, 30, rng):
        r = pc.distance(a, Ta, b, Tb)
        if r.distance <= 1e-3:
            continue
        for extra in (0.0, 1e-4, -1e-4):
            T = Tb.copy()
            T[:3, 3] -= (r.distance + extra) * r.normal
            d = pc.distance(a, Ta, b, T).distance
            cd = peers.coal_distance(a, Ta, b, T)[0]
            if extra <= 0.0:
                ok = abs(d - (-extra)) <= oracle.DIST_TOL
            else:
                ok = -extra - oracle.DIST_TOL <= d < 0.0
            # coal as a sanity check only: its GJK stops up to ~3e-6 m early at contact
            # (measured on box-cylinder), so it gets the contact band
            ok = ok and abs(cd - d) <= oracle.CONTACT_BAND
            if not ok:
                failures.append(
                    f"moved in by {extra} past contact: ours {d!r}, coal {cd!r}\n"
                    + oracle.describe(a, Ta, b, T)
                )
    assert not failures, f"{len(failures)} failures; first:\n{failures[0]}"


@pytest.mark.closed_form
def test_duplicate_points_do_not_change_the_answer():
    rng = np.random.default_rng(SEED + 3)
    pts = sampling.random_convex_points(rng, 20)
    dup = np.concatenate([pts, pts[::-1], pts[:5]])
    other = Box((0.1, 0.2, 0.3))
    for _ in range(20):
        Ta, Tb = sampling.place_pair(Convex(pts), other, rng)
        d0 = pc.distance(Convex(pts), Ta, other, Tb).distance
        d1 = pc.distance(Convex(dup), Ta, other, Tb).distance
        assert d1 == pytest.approx(d0, abs=1e-12)


def test_flat_and_needle_hulls_agree_with_coal_at_random_poses():
    """Degenerate hulls at random poses against every kind (coal gets the same hull as a
    fan of triangles, a Capsule or a Sphere: see peers.to_coal)."""
    rng = np.random.default_rng(SEED + 4)
    hulls = [
        Convex(SQUARE),
        Convex(SQUARE, 0.01),
        Convex(np.c_[rng.uniform(-0.1, 0.1, (30, 2)), np.zeros(30)]),  # flat random polygon
        Convex([[0, 0, -0.15], [0, 0, 0.0], [0, 0, 0.15]]),
        Convex([[0, 0, -0.15], [0, 0, 0.15]], 0.02),
        Convex([[0.05, 0.0, 0.0]], 0.03),
    ]
    failures = []
    for h in hulls:
        for kind in sampling.KINDS:
            for _ in range(6):
                other = sampling.random_shape(kind, rng)
                Ta, Tb = sampling.place_pair(other, h, rng)
                chk = oracle.check_pair(h, Tb, other, Ta)
                if chk.failures:
                    failures.append(
                        "\n".join(chk.failures) + "\n" + oracle.describe(h, Tb, other, Ta)
                    )
    assert not failures, f"{len(failures)} failures; first:\n{failures[0]}"
