"""Pair queries between two shapes of `ShapeTable`s: the entry points every caller uses.

`pair_distance` and `pair_overlap` dispatch on the two kinds: halfspaces and the closed
forms (point/segment cores: sphere, capsule; sphere-box) first, GJK (+ EPA when the cores
overlap) for everything else. A reversed pair is answered by swapping the arguments and
flipping the result (as coal does), so each closed form is written once, in canonical order.

Output layout (``out``, 10 floats, world frame): out[0] signed distance, out[1:4] point on a,
out[4:7] point on b, out[7:10] unit normal from a to b, with pb - pa = distance * normal.
"""

import math

import numpy as np

from .._jit import hot_kernel, inline_kernel, kernel
from ..base.codes import (
    APART,
    BEYOND,
    CORES_OVERLAP,
    CORES_WITHIN,
    EXACT,
    LOWER_BOUND,
    OVERLAP,
    PENETRATING,
    UNKNOWN,
    WITHIN,
)
from ..base.layout import BOX, CAPSULE, HALFSPACE, OUT_SIZE, SPHERE
from ..base.tolerances import WITNESS_MIN_NORM
from .capsule_capsule import capsule_capsule_distance
from .epa import EPA_WS_END, epa_core
from .gjk import LAM, SA, SB, V_IN, V_SET, WS_SIZE, gjk_core
from .halfspace import convex_halfspace_distance
from .sphere_box import sphere_box_distance

# pair_distance's and pair_separation's status: EXACT, PENETRATING or LOWER_BOUND;
# overlap_within's: APART, CORES_WITHIN or UNKNOWN (kernels/base/codes.py)

# scratch beyond GJK's: a 10-float result buffer for flips and EPA, then EPA's polytope
_EPA_OUT = WS_SIZE
WORKSPACE_SIZE = EPA_WS_END


def new_workspace():
    """Scratch array for pair kernels (~100 KB: EPA's polytope lives there, since pair
    kernels compile without numba's allocator). Allocate once per thread, reuse for every
    pair; never share one between threads."""
    return np.zeros(WORKSPACE_SIZE)


@hot_kernel
def _flip(out):
    """Turn an (a, b) result into the (b, a) result in place."""
    for r in range(3):
        t = out[1 + r]
        out[1 + r] = out[4 + r]
        out[4 + r] = t
        out[7 + r] = -out[7 + r]


@hot_kernel
def _axis_z(T):
    return T[0, 2], T[1, 2], T[2, 2]


@hot_kernel
def _origin(T):
    return T[0, 3], T[1, 3], T[2, 3]


@hot_kernel
def _closed_form(tab_a, ia, T_a, tab_b, ib, T_b, out):
    """Closed forms for canonical-order kinds (ka <= kb). Returns False when none applies."""
    ka = tab_a.kind[ia]
    kb = tab_b.kind[ib]
    if kb <= CAPSULE:  # sphere/capsule vs sphere/capsule
        ha = tab_a.params[ia, 1] if ka == CAPSULE else 0.0
        hb = tab_b.params[ib, 1] if kb == CAPSULE else 0.0
        capsule_capsule_distance(
            _origin(T_a),
            _axis_z(T_a),
            ha,
            tab_a.params[ia, 0],
            _origin(T_b),
            _axis_z(T_b),
            hb,
            tab_b.params[ib, 0],
            out,
        )
        return True
    if ka == SPHERE and kb == BOX:
        p = tab_b.params
        sphere_box_distance(
            _origin(T_a), tab_a.params[ia, 0], T_b, p[ib, 1], p[ib, 2], p[ib, 3], out
        )
        return True
    return False


@hot_kernel
def _start_direction(T_a, T_b, ws):
    """GJK's first search direction: a caller's warm start (ws[V_IN], when ws[V_SET] is
    set; consumed here), else the centre difference."""
    if ws[V_SET] != 0.0:
        ws[V_SET] = 0.0
        return ws[V_IN], ws[V_IN + 1], ws[V_IN + 2]
    return T_a[0, 3] - T_b[0, 3], T_a[1, 3] - T_b[1, 3], T_a[2, 3] - T_b[2, 3]


# The two steps every pair query goes through are inlined into their callers: a call that passes two
# shape tables costs ~0.1 us, and a scene distance query makes several (inlined:
# planning_collision.demos.bench.scene distance queries 7-10 % faster, the checker's certified edges
# 15 %, no slower to compile).
@inline_kernel
def _gjk_separation(tab_a, ia, T_a, tab_b, ib, T_b, max_dist, ws, out):
    """GJK on the cores. Returns (status, n): EXACT or PENETRATING (the cores apart: out
    holds the exact signed distance, witnesses and normal), LOWER_BOUND (out[0] a lower
    bound > max_dist), or CORES_OVERLAP (out[0] = -(ra + rb), the most the pair can be
    apart: the depth is at least the sweep radii; n is GJK's simplex size for EPA)."""
    ra = tab_a.params[ia, 0]
    rb = tab_b.params[ib, 0]
    R = ra + rb
    v0x, v0y, v0z = _start_direction(T_a, T_b, ws)
    status, n, dc = gjk_core(tab_a, ia, T_a, tab_b, ib, T_b, v0x, v0y, v0z, max_dist + R, -1.0, ws)
    if status == BEYOND:
        out[0] = dc - R
        return LOWER_BOUND, n
    if status != OVERLAP:
        pax = 0.0
        pay = 0.0
        paz = 0.0
        pbx = 0.0
        pby = 0.0
        pbz = 0.0
        for k in range(n):
            lam = ws[LAM + k]
            pax += lam * ws[SA + 3 * k]
            pay += lam * ws[SA + 3 * k + 1]
            paz += lam * ws[SA + 3 * k + 2]
            pbx += lam * ws[SB + 3 * k]
            pby += lam * ws[SB + 3 * k + 1]
            pbz += lam * ws[SB + 3 * k + 2]
        nx = pbx - pax
        ny = pby - pay
        nz = pbz - paz
        dl = math.sqrt(nx * nx + ny * ny + nz * nz)
        if dl > WITNESS_MIN_NORM:
            nx /= dl
            ny /= dl
            nz /= dl
            out[0] = dl - R
            out[1] = pax + ra * nx
            out[2] = pay + ra * ny
            out[3] = paz + ra * nz
            out[4] = pbx - rb * nx
            out[5] = pby - rb * ny
            out[6] = pbz - rb * nz
            out[7] = nx
            out[8] = ny
            out[9] = nz
            return (EXACT if out[0] > 0.0 else PENETRATING), n
    out[0] = -R
    return CORES_OVERLAP, n


@hot_kernel
def _gjk_distance(tab_a, ia, T_a, tab_b, ib, T_b, max_dist, ws, out):
    status, n = _gjk_separation(tab_a, ia, T_a, tab_b, ib, T_b, max_dist, ws, out)
    if status != CORES_OVERLAP:
        return status
    # the cores touch or overlap: EPA on the cores, then add the radii
    ra = tab_a.params[ia, 0]
    rb = tab_b.params[ib, 0]
    e = ws[_EPA_OUT : _EPA_OUT + OUT_SIZE]
    epa_core(tab_a, ia, T_a, tab_b, ib, T_b, ws, n, e)
    depth = e[0] + ra + rb
    nx = e[7]
    ny = e[8]
    nz = e[9]
    out[0] = -depth
    out[1] = e[1] + ra * nx
    out[2] = e[2] + ra * ny
    out[3] = e[3] + ra * nz
    out[4] = e[4] - rb * nx
    out[5] = e[5] - rb * ny
    out[6] = e[6] - rb * nz
    out[7] = nx
    out[8] = ny
    out[9] = nz
    return PENETRATING


@inline_kernel
def _non_gjk(tab_a, ia, T_a, tab_b, ib, T_b, out):
    """Halfspaces and closed forms, in either order, into out. Returns False when the pair
    needs GJK."""
    ka = tab_a.kind[ia]
    kb = tab_b.kind[ib]
    if kb == HALFSPACE:
        convex_halfspace_distance(tab_a, ia, T_a, tab_b, ib, T_b, out)
    elif ka == HALFSPACE:
        convex_halfspace_distance(tab_b, ib, T_b, tab_a, ia, T_a, out)
        _flip(out)
    elif ka <= kb:
        return _closed_form(tab_a, ia, T_a, tab_b, ib, T_b, out)
    else:
        if not _closed_form(tab_b, ib, T_b, tab_a, ia, T_a, out):
            return False
        _flip(out)
    return True


@hot_kernel
def pair_distance(tab_a, ia, T_a, tab_b, ib, T_b, max_dist, ws, out):
    """Signed distance between shape ia of tab_a posed by T_a and shape ib of tab_b posed
    by T_b (4x4). Writes out[0:10] (see module docstring).

    max_dist: when the distance is certainly greater, stop early and return LOWER_BOUND
    with out[0] a lower bound (> max_dist); np.inf for an exact answer.
    Returns EXACT, PENETRATING or LOWER_BOUND.
    """
    if _non_gjk(tab_a, ia, T_a, tab_b, ib, T_b, out):
        return EXACT if out[0] > 0.0 else PENETRATING
    return _gjk_distance(tab_a, ia, T_a, tab_b, ib, T_b, max_dist, ws, out)


@hot_kernel
def pair_separation(tab_a, ia, T_a, tab_b, ib, T_b, max_dist, ws, out):
    """`pair_distance` without penetration depth (no EPA compiled in): the same answer
    when the pair is apart, or overlaps only within the sweep radii; when the cores
    overlap, out[0] = -(ra + rb) (a value the true signed distance is at most) with
    witnesses unset, status PENETRATING. For callers that need only "in collision or how
    far apart" (the collision checker)."""
    if _non_gjk(tab_a, ia, T_a, tab_b, ib, T_b, out):
        return EXACT if out[0] > 0.0 else PENETRATING
    status, _ = _gjk_separation(tab_a, ia, T_a, tab_b, ib, T_b, max_dist, ws, out)
    return PENETRATING if status == CORES_OVERLAP else status


@inline_kernel
def closed_form_pair(ka, kb):
    """True when the pair of kinds ka, kb is answered by a closed form, not GJK."""
    lo = min(ka, kb)
    hi = max(ka, kb)
    return hi == HALFSPACE or hi <= CAPSULE or (lo == SPHERE and hi == BOX)


# overlap_within's answers


@hot_kernel
def overlap_within(tab_a, ia, T_a, tab_b, ib, T_b, margin, inner, ws):
    """Whether the pair's signed distance is <= margin, told three ways: APART (it is
    not); CORES_WITHIN when also the shapes made of the same two cores swept by radii
    summing to `inner` overlap within margin (inner < 0: the shapes' own radii, so this
    is just "they overlap"); else UNKNOWN (the shapes overlap, the thinner ones maybe
    not). A robot piece's outer hull has a subset of the piece's points as its core and a
    larger radius (or is the piece: checker/bounds.py), so an outer hull's CORES_WITHIN
    with the pieces' radii proves the pieces overlap, in the same GJK that found the hull
    touching.

    GJK stops at the first direction that proves an answer (KCCD's rule: stop as soon as
    the answer is known); sweeping by radii adds to a convex pair's signed distance, so
    the closed forms answer the thinner shapes by a shift.
    """
    ra_rb = tab_a.params[ia, 0] + tab_b.params[ib, 0]
    thin = ra_rb if (inner < 0.0 or inner > ra_rb) else inner
    if closed_form_pair(tab_a.kind[ia], tab_b.kind[ib]):
        # closed forms are as cheap as a boolean test (and keep EPA out of this kernel)
        out = ws[_EPA_OUT : _EPA_OUT + OUT_SIZE]
        _non_gjk(tab_a, ia, T_a, tab_b, ib, T_b, out)
        if out[0] + (ra_rb - thin) <= margin:
            return CORES_WITHIN
        return UNKNOWN if out[0] <= margin else APART
    R = ra_rb + margin
    R_in = thin + margin
    v0x, v0y, v0z = _start_direction(T_a, T_b, ws)
    status, n, dc = gjk_core(tab_a, ia, T_a, tab_b, ib, T_b, v0x, v0y, v0z, R, R_in, ws)
    if status == OVERLAP or status == WITHIN:
        return CORES_WITHIN
    if status == BEYOND:
        return APART
    if dc <= R_in:  # |v| bounds the cores' distance from above
        return CORES_WITHIN
    return UNKNOWN if dc <= R else APART


@inline_kernel
def pair_overlap(tab_a, ia, T_a, tab_b, ib, T_b, margin, ws):
    """True iff the signed distance is <= margin (margin 0: touching counts as collision):
    `overlap_within` with the shapes' own radii."""
    return overlap_within(tab_a, ia, T_a, tab_b, ib, T_b, margin, -1.0, ws) != APART


@kernel
def pair_distance_batch(tab_a, ia, T_a, tab_b, ib, T_b, max_dist, out):
    """pair_distance over arrays: ia, ib (n,) int, T_a, T_b (n, 4, 4), out (n, 10)."""
    ws = np.zeros(WORKSPACE_SIZE)
    for k in range(ia.shape[0]):
        pair_distance(tab_a, ia[k], T_a[k], tab_b, ib[k], T_b[k], max_dist, ws, out[k])


@kernel
def pair_overlap_batch(tab_a, ia, T_a, tab_b, ib, T_b, margin, out):
    """pair_overlap over arrays; out (n,) bool."""
    ws = np.zeros(WORKSPACE_SIZE)
    for k in range(ia.shape[0]):
        out[k] = pair_overlap(tab_a, ia[k], T_a[k], tab_b, ib[k], T_b[k], margin, ws)
