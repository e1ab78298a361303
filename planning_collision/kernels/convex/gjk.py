"""GJK on sphere-swept convex cores (Gilbert, Johnson, Keerthi 1988).

The distance between two SSCH shapes is the distance between their cores minus the two
sweep radii (kernels/base/layout.py), so GJK runs on cores only. The closest point of the
current simplex to the origin is found with signed volumes (Montanari, Petrinic, Barbieri
2017, "Improving the GJK algorithm for faster and more reliable distance queries between
convex objects"): barycentric coordinates from signed areas/volumes, and only the sub-faces
whose opposite vertex has a non-positive coordinate are searched. This never forms the
Johnson determinants and stays sane on degenerate (flat, collinear, repeated) simplices.

Workspace layout (float64 array ``ws``, see ``WS_SIZE``): the simplex in the Minkowski
difference D = A - B and the support points on A and B that made it::

    ws[W + 3k : W + 3k + 3]   vertex k of the simplex, k < 4
    ws[SA + 3k ...]           its support point on A's core (world)
    ws[SB + 3k ...]           its support point on B's core (world)
    ws[LAM + k]               barycentric coordinate of the closest point
    ws[TMP:TMP+3]             scratch (the origin, for the signed volumes of _s3d)
    ws[HINT_A], ws[HINT_B]    hill-climbing warm starts (vertex indices, as floats)
    ws[V_OUT : V_OUT + 3]     the last search direction v (world): where a caller caching
                              separating directions reads it after a call
    ws[V_IN : V_IN + 3]       a caller's initial direction for the next pair query, used
                              (and consumed) when ws[V_SET] != 0: a warm start

Every loop ends: at most ``MAX_ITER`` iterations, and each iteration either strictly reduces
|v| or stops.
"""

import math

from .._jit import hot_kernel, inline_kernel
from ..base.codes import BEYOND, FOUR, ONE, OVERLAP, SEPARATED, THREE, TWO, WITHIN, ZERO
from ..base.tolerances import (
    GJK_ABS_TOL,
    GJK_FLAT_TETRA_REL,
    GJK_FLAT_TRIANGLE_REL2,
    GJK_REL_TOL,
    GJK_REPEAT_ABS2,
    GJK_REPEAT_REL2,
    GJK_ZERO_TOL,
)
from .support import core_support_xyz, table_arrays

W = 0
SA = 12
SB = 24
LAM = 36
TMP = 40
HINT_A = 46
HINT_B = 47
V_OUT = 48
V_IN = 51
V_SET = 54
WS_SIZE = 56

MAX_ITER = 128

# Simplex indices go to the sub-simplex solvers as np.int64 (ZERO .. FOUR), not literals:
# numba compiles a helper once per literal argument it is called with (21 compiles of the
# sub-simplex solvers, seconds of a user's first call). gjk_core's status: SEPARATED,
# OVERLAP, BEYOND, WITHIN (kernels/base/codes.py).

# Convergence: stop when the duality gap |v| - v.w/|v| is below ABS_TOL + REL_TOL * |v|;
# |v| below ZERO_TOL counts as core contact (kernels/base/tolerances.py).
ABS_TOL = GJK_ABS_TOL
REL_TOL = GJK_REL_TOL
ZERO_TOL = GJK_ZERO_TOL


@hot_kernel
def _s1d(ws, i0, i1):
    """Closest point of segment (W[i0], W[i1]) to the origin.

    Returns (mask, l0, l1): mask bit k set when W[ik] is kept; l are barycentric weights.
    A zero-length segment keeps its first vertex.
    """
    a = W + 3 * i0
    b = W + 3 * i1
    tx = ws[b] - ws[a]
    ty = ws[b + 1] - ws[a + 1]
    tz = ws[b + 2] - ws[a + 2]
    tt = tx * tx + ty * ty + tz * tz
    if tt <= 0.0:
        return 1, 1.0, 0.0
    u = -(ws[a] * tx + ws[a + 1] * ty + ws[a + 2] * tz) / tt
    if u <= 0.0:
        return 1, 1.0, 0.0
    if u >= 1.0:
        return 2, 0.0, 1.0
    return 3, 1.0 - u, u


@hot_kernel
def _sqnorm_comb(ws, i0, i1, i2, l0, l1, l2):
    a = W + 3 * i0
    b = W + 3 * i1
    c = W + 3 * i2
    x = l0 * ws[a] + l1 * ws[b] + l2 * ws[c]
    y = l0 * ws[a + 1] + l1 * ws[b + 1] + l2 * ws[c + 1]
    z = l0 * ws[a + 2] + l1 * ws[b + 2] + l2 * ws[c + 2]
    return x * x + y * y + z * z


@hot_kernel
def _s2d(ws, i0, i1, i2):
    """Closest point of triangle (W[i0], W[i1], W[i2]) to the origin.

    Returns (mask, l0, l1, l2) with mask bits over (i0, i1, i2) positions 0..2.
    The coordinates of the origin's projection are the signed areas of the sub-triangles
    it makes, measured along the normal n: l0 = n.(p1 x p2) / n.n, cyclically.
    """
    a = W + 3 * i0
    b = W + 3 * i1
    c = W + 3 * i2
    abx = ws[b] - ws[a]
    aby = ws[b + 1] - ws[a + 1]
    abz = ws[b + 2] - ws[a + 2]
    acx = ws[c] - ws[a]
    acy = ws[c + 1] - ws[a + 1]
    acz = ws[c + 2] - ws[a + 2]
    nx = aby * acz - abz * acy
    ny = abz * acx - abx * acz
    nz = abx * acy - aby * acx
    nn = nx * nx + ny * ny + nz * nz
    scale = abx * abx + aby * aby + abz * abz + acx * acx + acy * acy + acz * acz
    if nn > GJK_FLAT_TRIANGLE_REL2 * scale * scale:
        # triple products n.(p1 x p2) etc.
        l0 = (
            nx * (ws[b + 1] * ws[c + 2] - ws[b + 2] * ws[c + 1])
            + ny * (ws[b + 2] * ws[c] - ws[b] * ws[c + 2])
            + nz * (ws[b] * ws[c + 1] - ws[b + 1] * ws[c])
        ) / nn
        l1 = (
            nx * (ws[c + 1] * ws[a + 2] - ws[c + 2] * ws[a + 1])
            + ny * (ws[c + 2] * ws[a] - ws[c] * ws[a + 2])
            + nz * (ws[c] * ws[a + 1] - ws[c + 1] * ws[a])
        ) / nn
        l2 = 1.0 - l0 - l1
        if l0 > 0.0 and l1 > 0.0 and l2 > 0.0:
            return 7, l0, l1, l2
        test0 = l0 <= 0.0
        test1 = l1 <= 0.0
        test2 = l2 <= 0.0
    else:
        # degenerate (collinear or repeated vertices): search every edge
        test0 = True
        test1 = True
        test2 = True
    best = 1e300
    bm = 1
    b0 = 1.0
    b1 = 0.0
    b2 = 0.0
    if test2:  # edge (0, 1), opposite vertex 2
        m, u0, u1 = _s1d(ws, i0, i1)
        d = _sqnorm_comb(ws, i0, i1, i2, u0, u1, 0.0)
        if d < best:
            best = d
            bm = m
            b0 = u0
            b1 = u1
            b2 = 0.0
    if test1:  # edge (0, 2), opposite vertex 1
        m, u0, u2 = _s1d(ws, i0, i2)
        d = _sqnorm_comb(ws, i0, i1, i2, u0, 0.0, u2)
        if d < best:
            best = d
            bm = (m & 1) | ((m & 2) << 1)
            b0 = u0
            b1 = 0.0
            b2 = u2
    if test0:  # edge (1, 2), opposite vertex 0
        m, u1, u2 = _s1d(ws, i1, i2)
        d = _sqnorm_comb(ws, i0, i1, i2, 0.0, u1, u2)
        if d < best:
            best = d
            bm = m << 1
            b0 = 0.0
            b1 = u1
            b2 = u2
    return bm, b0, b1, b2


@hot_kernel
def _vol(ws, a, b, c, d):
    """Signed volume (times 6) of the tetrahedron of ws points at offsets a, b, c, d."""
    bx = ws[b] - ws[a]
    by = ws[b + 1] - ws[a + 1]
    bz = ws[b + 2] - ws[a + 2]
    cx = ws[c] - ws[a]
    cy = ws[c + 1] - ws[a + 1]
    cz = ws[c + 2] - ws[a + 2]
    dx = ws[d] - ws[a]
    dy = ws[d + 1] - ws[a + 1]
    dz = ws[d + 2] - ws[a + 2]
    return bx * (cy * dz - cz * dy) + by * (cz * dx - cx * dz) + bz * (cx * dy - cy * dx)


@hot_kernel
def _s3d(ws):
    """Closest point of the tetrahedron W[0..3] to the origin.

    Returns (mask, l0, l1, l2, l3); mask 15 means the origin is inside.
    The origin's coordinates are the volumes of the tetrahedra with vertex k replaced by
    the origin, over the whole volume. The origin's slot is ws[TMP:TMP+3] set to zero.
    """
    o = ZERO + TMP
    ws[o] = 0.0
    ws[o + 1] = 0.0
    ws[o + 2] = 0.0
    p0 = ZERO + W
    p1 = ZERO + W + 3
    p2 = ZERO + W + 6
    p3 = ZERO + W + 9
    det = _vol(ws, p0, p1, p2, p3)
    c0 = _vol(ws, o, p1, p2, p3)
    c1 = _vol(ws, p0, o, p2, p3)
    c2 = _vol(ws, p0, p1, o, p3)
    c3 = det - c0 - c1 - c2
    # scale for the degeneracy test: cube of the longest edge from p0
    e = max(_dist2(ws, p0, p1), _dist2(ws, p0, p2), _dist2(ws, p0, p3))
    flat = abs(det) <= GJK_FLAT_TETRA_REL * e * math.sqrt(e)
    if not flat:
        if det > 0.0:
            inside = c0 > 0.0 and c1 > 0.0 and c2 > 0.0 and c3 > 0.0
        else:
            inside = c0 < 0.0 and c1 < 0.0 and c2 < 0.0 and c3 < 0.0
        if inside:
            return 15, c0 / det, c1 / det, c2 / det, c3 / det
    best = 1e300
    bm = 1
    r0 = 1.0
    r1 = 0.0
    r2 = 0.0
    r3 = 0.0
    # face opposite vertex k is searched when k's coordinate disagrees in sign with det
    if flat or c0 * det <= 0.0:
        m, u1, u2, u3 = _s2d(ws, ONE, TWO, THREE)
        d = _sqnorm4(ws, 0.0, u1, u2, u3)
        if d < best:
            best = d
            bm = m << 1
            r0, r1, r2, r3 = 0.0, u1, u2, u3
    if flat or c1 * det <= 0.0:
        m, u0, u2, u3 = _s2d(ws, ZERO, TWO, THREE)
        d = _sqnorm4(ws, u0, 0.0, u2, u3)
        if d < best:
            best = d
            bm = (m & 1) | ((m & 6) << 1)
            r0, r1, r2, r3 = u0, 0.0, u2, u3
    if flat or c2 * det <= 0.0:
        m, u0, u1, u3 = _s2d(ws, ZERO, ONE, THREE)
        d = _sqnorm4(ws, u0, u1, 0.0, u3)
        if d < best:
            best = d
            bm = (m & 3) | ((m & 4) << 1)
            r0, r1, r2, r3 = u0, u1, 0.0, u3
    if flat or c3 * det <= 0.0:
        m, u0, u1, u2 = _s2d(ws, ZERO, ONE, TWO)
        d = _sqnorm4(ws, u0, u1, u2, 0.0)
        if d < best:
            best = d
            bm = m
            r0, r1, r2, r3 = u0, u1, u2, 0.0
    return bm, r0, r1, r2, r3


@hot_kernel
def _dist2(ws, a, b):
    x = ws[a] - ws[b]
    y = ws[a + 1] - ws[b + 1]
    z = ws[a + 2] - ws[b + 2]
    return x * x + y * y + z * z


@hot_kernel
def _sqnorm4(ws, l0, l1, l2, l3):
    x = l0 * ws[W] + l1 * ws[W + 3] + l2 * ws[W + 6] + l3 * ws[W + 9]
    y = l0 * ws[W + 1] + l1 * ws[W + 4] + l2 * ws[W + 7] + l3 * ws[W + 10]
    z = l0 * ws[W + 2] + l1 * ws[W + 5] + l2 * ws[W + 8] + l3 * ws[W + 11]
    return x * x + y * y + z * z


@hot_kernel
def _compact(ws, n, mask, l0, l1, l2, l3):
    """Keep the simplex vertices whose mask bit is set, in order; store their weights.

    Returns the new vertex count.
    """
    m = 0
    for k in range(n):
        if mask & (1 << k):
            if k == 0:
                lam = l0
            elif k == 1:
                lam = l1
            elif k == 2:
                lam = l2
            else:
                lam = l3
            if m != k:
                for r in range(3):
                    ws[W + 3 * m + r] = ws[W + 3 * k + r]
                    ws[SA + 3 * m + r] = ws[SA + 3 * k + r]
                    ws[SB + 3 * m + r] = ws[SB + 3 * k + r]
            ws[LAM + m] = lam
            m += 1
    return m


@hot_kernel
def simplex_closest(ws, n):
    """Reduce the n-point simplex in ws to the sub-simplex nearest the origin.

    Returns the new count; ws[LAM:LAM+count] hold the weights. A count of 4 means the
    origin is inside the tetrahedron.
    """
    if n == 1:
        ws[LAM] = 1.0
        return 1
    if n == 2:
        m, l0, l1 = _s1d(ws, ZERO, ONE)
        return _compact(ws, TWO, m, l0, l1, 0.0, 0.0)
    if n == 3:
        m, l0, l1, l2 = _s2d(ws, ZERO, ONE, TWO)
        return _compact(ws, THREE, m, l0, l1, l2, 0.0)
    m, l0, l1, l2, l3 = _s3d(ws)
    return _compact(ws, FOUR, m, l0, l1, l2, l3)


@inline_kernel
def _support_pair(a, ia, T_a, b, ib, T_b, dx, dy, dz, ws):
    """Support of D = A - B along (dx, dy, dz): s_A(d) and s_B(-d), as two points.

    a, b: the tables' `table_arrays`, unpacked once by the caller."""
    ha, ax, ay, az = core_support_xyz(a, ia, T_a, dx, dy, dz, int(ws[HINT_A]))
    hb, bx, by, bz = core_support_xyz(b, ib, T_b, -dx, -dy, -dz, int(ws[HINT_B]))
    ws[HINT_A] = ha
    ws[HINT_B] = hb
    return ax, ay, az, bx, by, bz


@hot_kernel
def gjk_core(tab_a, ia, T_a, tab_b, ib, T_b, v0x, v0y, v0z, stop_above, stop_below, ws):
    """GJK between the cores of shape ia (pose T_a) and shape ib (pose T_b).

    (v0x, v0y, v0z): initial search direction estimate for v = a - b (any non-zero vector;
    the centre difference is a good one, a cached separating direction a better one).
    stop_above: return BEYOND as soon as the core distance is certainly > stop_above
    (np.inf: never). stop_below: return WITHIN as soon as it is certainly <= stop_below
    (-1: never). Boolean queries pass the same threshold for both.

    Returns (status, n, dist) where n is the final simplex size (weights in ws[LAM:]) and
    dist is |v| (an upper bound of the core distance; for SEPARATED, within tolerance of
    it). For BEYOND, dist is the lower bound that triggered the stop.
    """
    # unpack the tables once: a namedtuple field read in the loop costs a refcount pair
    a = table_arrays(tab_a)
    b = table_arrays(tab_b)
    ws[HINT_A] = 0.0
    ws[HINT_B] = 0.0
    vx = v0x
    vy = v0y
    vz = v0z
    if vx * vx + vy * vy + vz * vz == 0.0:
        vx = 1.0
    # one support site for the first vertex and the loop (each site inlines both shapes'
    # whole support switch: a second one cost seconds of compile); n = 0: no vertex yet
    n = 0
    vv = 0.0
    vn = 0.0
    for _ in range(MAX_ITER + 1):
        if n > 0:
            ws[V_OUT] = vx
            ws[V_OUT + 1] = vy
            ws[V_OUT + 2] = vz
            vn = math.sqrt(vv)
            if vn <= ZERO_TOL:
                return OVERLAP, n, vn
            if vn <= stop_below:
                return WITHIN, n, vn
        ax, ay, az, bx, by, bz = _support_pair(a, ia, T_a, b, ib, T_b, -vx, -vy, -vz, ws)
        if n == 0:  # the first vertex: support of D along -v0
            ws[SA] = ax
            ws[SA + 1] = ay
            ws[SA + 2] = az
            ws[SB] = bx
            ws[SB + 1] = by
            ws[SB + 2] = bz
            vx = ax - bx
            vy = ay - by
            vz = az - bz
            ws[W] = vx
            ws[W + 1] = vy
            ws[W + 2] = vz
            ws[LAM] = 1.0
            n = 1
            vv = vx * vx + vy * vy + vz * vz
            continue
        wx = ax - bx
        wy = ay - by
        wz = az - bz
        vw = vx * wx + vy * wy + vz * wz
        lower = vw / vn  # every point x of D has v.x >= v.w
        if lower > stop_above:
            return BEYOND, n, lower
        if vn - lower <= ABS_TOL + REL_TOL * vn:
            return SEPARATED, n, vn
        # a repeated vertex means no progress is possible: converged at round-off
        for k in range(n):
            dx = wx - ws[W + 3 * k]
            dy = wy - ws[W + 3 * k + 1]
            dz = wz - ws[W + 3 * k + 2]
            if dx * dx + dy * dy + dz * dz <= GJK_REPEAT_ABS2 + GJK_REPEAT_REL2 * vv:
                return SEPARATED, n, vn
        o = 3 * n
        ws[SA + o] = ax
        ws[SA + o + 1] = ay
        ws[SA + o + 2] = az
        ws[SB + o] = bx
        ws[SB + o + 1] = by
        ws[SB + o + 2] = bz
        ws[W + o] = wx
        ws[W + o + 1] = wy
        ws[W + o + 2] = wz
        n = simplex_closest(ws, n + 1)
        if n == 4:
            return OVERLAP, n, 0.0
        nx = 0.0
        ny = 0.0
        nz = 0.0
        for k in range(n):
            lam = ws[LAM + k]
            nx += lam * ws[W + 3 * k]
            ny += lam * ws[W + 3 * k + 1]
            nz += lam * ws[W + 3 * k + 2]
        nvv = nx * nx + ny * ny + nz * nz
        if nvv >= vv:
            # round-off floor: no further progress. The reported distance is the one the
            # current simplex (and so the witness points) realises.
            return SEPARATED, n, math.sqrt(nvv)
        vx = nx
        vy = ny
        vz = nz
        vv = nvv
    return SEPARATED, n, math.sqrt(vv)
