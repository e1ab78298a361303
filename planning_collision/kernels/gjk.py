"""GJK on sphere-swept convex cores (Gilbert, Johnson, Keerthi 1988).

The distance between two SSCH shapes is the distance between their cores minus the two
sweep radii (DESIGN §3), so GJK runs on cores only. The closest point of the current simplex
to the origin is found with signed volumes (Montanari, Petrinic, Barbieri 2017, "Improving
the GJK algorithm for faster and more reliable distance queries between convex objects"):
barycentric coordinates from signed areas/volumes, and only the sub-faces whose opposite
vertex has a non-positive coordinate are searched. This never forms the Johnson determinants
and stays sane on degenerate (flat, collinear, repeated) simplices.

Workspace layout (float64 array ``ws``, see ``WS_SIZE``): the simplex in the Minkowski
difference D = A - B and the support points on A and B that made it::

    ws[W + 3k : W + 3k + 3]   vertex k of the simplex, k < 4
    ws[SA + 3k ...]           its support point on A's core (world)
    ws[SB + 3k ...]           its support point on B's core (world)
    ws[LAM + k]               barycentric coordinate of the closest point

GJK iterates in A's local frame on local tuples (no array stores in its loop) and writes
this simplex here once, in the world frame, when it returns: the witness points and EPA
read it from there.

Every loop ends: at most ``MAX_ITER`` iterations, and each iteration either strictly reduces
|v| or stops.
"""

import math

from ._jit import hot_kernel, inline_kernel
from .support import core_support_local_xyz, table_arrays

W = 0
SA = 12
SB = 24
LAM = 36
WS_SIZE = 40

MAX_ITER = 128

# Status codes returned by gjk_core.
SEPARATED = 0  # converged: |v| is the core distance (within tolerance), witnesses valid
OVERLAP = 1  # the cores intersect (origin in D, or |v| at round-off level)
BEYOND = 2  # stopped early: the lower bound already exceeds `stop_above`
WITHIN = 3  # stopped early: the upper bound |v| is already <= `stop_below`

# Convergence: stop when the duality gap |v| - v.w/|v| is below ABS_TOL + REL_TOL * |v|.
ABS_TOL = 1e-11
REL_TOL = 1e-10
# |v| below this (m) counts as core contact (origin on or in D).
ZERO_TOL = 1e-12


@inline_kernel
def _s1d(p, q):
    """Closest point of segment (p, q) (3-tuples) to the origin.

    Returns (mask, l0, l1): mask bit k set when vertex k is kept; l are barycentric weights.
    A zero-length segment keeps its first vertex.
    """
    tx = q[0] - p[0]
    ty = q[1] - p[1]
    tz = q[2] - p[2]
    tt = tx * tx + ty * ty + tz * tz
    if tt <= 0.0:
        return 1, 1.0, 0.0
    u = -(p[0] * tx + p[1] * ty + p[2] * tz) / tt
    if u <= 0.0:
        return 1, 1.0, 0.0
    if u >= 1.0:
        return 2, 0.0, 1.0
    return 3, 1.0 - u, u


@inline_kernel
def _sqnorm3(p, q, r, l0, l1, l2):
    x = l0 * p[0] + l1 * q[0] + l2 * r[0]
    y = l0 * p[1] + l1 * q[1] + l2 * r[1]
    z = l0 * p[2] + l1 * q[2] + l2 * r[2]
    return x * x + y * y + z * z


# The simplex solvers are inlined (numba IR) into gjk_core: as calls, every live value of
# the loop (the simplex is ~40 floats in registers) was spilled around each call, since
# SysV x86-64 has no callee-saved vector registers.
@inline_kernel
def _s2d(p, q, r):
    """Closest point of triangle (p, q, r) (3-tuples) to the origin.

    Returns (mask, l0, l1, l2) with mask bits over the vertices 0..2.
    The coordinates of the origin's projection are the signed areas of the sub-triangles
    it makes, measured along the normal n: l0 = n.(q x r) / n.n, cyclically.
    """
    abx = q[0] - p[0]
    aby = q[1] - p[1]
    abz = q[2] - p[2]
    acx = r[0] - p[0]
    acy = r[1] - p[1]
    acz = r[2] - p[2]
    nx = aby * acz - abz * acy
    ny = abz * acx - abx * acz
    nz = abx * acy - aby * acx
    nn = nx * nx + ny * ny + nz * nz
    scale = abx * abx + aby * aby + abz * abz + acx * acx + acy * acy + acz * acz
    if nn > 1e-24 * scale * scale:
        # triple products n.(q x r) etc.
        l0 = (
            nx * (q[1] * r[2] - q[2] * r[1])
            + ny * (q[2] * r[0] - q[0] * r[2])
            + nz * (q[0] * r[1] - q[1] * r[0])
        ) / nn
        l1 = (
            nx * (r[1] * p[2] - r[2] * p[1])
            + ny * (r[2] * p[0] - r[0] * p[2])
            + nz * (r[0] * p[1] - r[1] * p[0])
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
        m, u0, u1 = _s1d(p, q)
        d = _sqnorm3(p, q, r, u0, u1, 0.0)
        if d < best:
            best = d
            bm = m
            b0 = u0
            b1 = u1
            b2 = 0.0
    if test1:  # edge (0, 2), opposite vertex 1
        m, u0, u2 = _s1d(p, r)
        d = _sqnorm3(p, q, r, u0, 0.0, u2)
        if d < best:
            best = d
            bm = (m & 1) | ((m & 2) << 1)
            b0 = u0
            b1 = 0.0
            b2 = u2
    if test0:  # edge (1, 2), opposite vertex 0
        m, u1, u2 = _s1d(q, r)
        d = _sqnorm3(p, q, r, 0.0, u1, u2)
        if d < best:
            best = d
            bm = m << 1
            b0 = 0.0
            b1 = u1
            b2 = u2
    return bm, b0, b1, b2


@inline_kernel
def _vol(a, b, c, d):
    """Signed volume (times 6) of the tetrahedron (a, b, c, d) (3-tuples)."""
    bx = b[0] - a[0]
    by = b[1] - a[1]
    bz = b[2] - a[2]
    cx = c[0] - a[0]
    cy = c[1] - a[1]
    cz = c[2] - a[2]
    dx = d[0] - a[0]
    dy = d[1] - a[1]
    dz = d[2] - a[2]
    return bx * (cy * dz - cz * dy) + by * (cz * dx - cx * dz) + bz * (cx * dy - cy * dx)


@inline_kernel
def _dist2(a, b):
    x = a[0] - b[0]
    y = a[1] - b[1]
    z = a[2] - b[2]
    return x * x + y * y + z * z


@inline_kernel
def _sqnorm4(p0, p1, p2, p3, l0, l1, l2, l3):
    x = l0 * p0[0] + l1 * p1[0] + l2 * p2[0] + l3 * p3[0]
    y = l0 * p0[1] + l1 * p1[1] + l2 * p2[1] + l3 * p3[1]
    z = l0 * p0[2] + l1 * p1[2] + l2 * p2[2] + l3 * p3[2]
    return x * x + y * y + z * z


@inline_kernel
def _s3d(p0, p1, p2, p3):
    """Closest point of the tetrahedron (p0, p1, p2, p3) (3-tuples) to the origin.

    Returns (mask, l0, l1, l2, l3); mask 15 means the origin is inside.
    The origin's coordinates are the volumes of the tetrahedra with vertex k replaced by
    the origin, over the whole volume.
    """
    o = (0.0, 0.0, 0.0)
    det = _vol(p0, p1, p2, p3)
    c0 = _vol(o, p1, p2, p3)
    c1 = _vol(p0, o, p2, p3)
    c2 = _vol(p0, p1, o, p3)
    c3 = det - c0 - c1 - c2
    # scale for the degeneracy test: cube of the longest edge from p0
    e = max(_dist2(p0, p1), _dist2(p0, p2), _dist2(p0, p3))
    flat = abs(det) <= 1e-14 * e * math.sqrt(e)
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
        m, u1, u2, u3 = _s2d(p1, p2, p3)
        d = _sqnorm4(p0, p1, p2, p3, 0.0, u1, u2, u3)
        if d < best:
            best = d
            bm = m << 1
            r0, r1, r2, r3 = 0.0, u1, u2, u3
    if flat or c1 * det <= 0.0:
        m, u0, u2, u3 = _s2d(p0, p2, p3)
        d = _sqnorm4(p0, p1, p2, p3, u0, 0.0, u2, u3)
        if d < best:
            best = d
            bm = (m & 1) | ((m & 6) << 1)
            r0, r1, r2, r3 = u0, 0.0, u2, u3
    if flat or c2 * det <= 0.0:
        m, u0, u1, u3 = _s2d(p0, p1, p3)
        d = _sqnorm4(p0, p1, p2, p3, u0, u1, 0.0, u3)
        if d < best:
            best = d
            bm = (m & 3) | ((m & 4) << 1)
            r0, r1, r2, r3 = u0, u1, 0.0, u3
    if flat or c3 * det <= 0.0:
        m, u0, u1, u2 = _s2d(p0, p1, p2)
        d = _sqnorm4(p0, p1, p2, p3, u0, u1, u2, 0.0)
        if d < best:
            best = d
            bm = m
            r0, r1, r2, r3 = u0, u1, u2, 0.0
    return bm, r0, r1, r2, r3


@inline_kernel
def _pack(mask, x0, x1, x2, x3, fill):
    """The x_k whose mask bit is set, moved to the front in order; `fill` after them.

    Returns (count, y0, y1, y2, y3)."""
    y0 = fill
    y1 = fill
    y2 = fill
    y3 = fill
    m = 0
    if mask & 1:
        y0 = x0
        m = 1
    if mask & 2:
        if m == 0:
            y0 = x1
        else:
            y1 = x1
        m += 1
    if mask & 4:
        if m == 0:
            y0 = x2
        elif m == 1:
            y1 = x2
        else:
            y2 = x2
        m += 1
    if mask & 8:
        if m == 0:
            y0 = x3
        elif m == 1:
            y1 = x3
        elif m == 2:
            y2 = x3
        else:
            y3 = x3
        m += 1
    return m, y0, y1, y2, y3


@inline_kernel
def _to_world(T, p):
    return (
        T[0, 0] * p[0] + T[0, 1] * p[1] + T[0, 2] * p[2] + T[0, 3],
        T[1, 0] * p[0] + T[1, 1] * p[1] + T[1, 2] * p[2] + T[1, 3],
        T[2, 0] * p[0] + T[2, 1] * p[1] + T[2, 2] * p[2] + T[2, 3],
    )


@hot_kernel
def _store(ws, T_a, k, a, b, lam):
    """Write simplex vertex k (support points a, b in A's frame) to ws in the world frame."""
    pa = _to_world(T_a, a)
    pb = _to_world(T_a, b)
    o = 3 * k
    for r in range(3):
        ws[SA + o + r] = pa[r]
        ws[SB + o + r] = pb[r]
        ws[W + o + r] = pa[r] - pb[r]
    ws[LAM + k] = lam


@hot_kernel
def _store_simplex(ws, T_a, n, sa, sb, lam):
    """Write the n-vertex simplex (tuples of 4 points on A, on B, and weights) to ws."""
    _store(ws, T_a, 0, sa[0], sb[0], lam[0])
    if n > 1:
        _store(ws, T_a, 1, sa[1], sb[1], lam[1])
    if n > 2:
        _store(ws, T_a, 2, sa[2], sb[2], lam[2])
    if n > 3:
        _store(ws, T_a, 3, sa[3], sb[3], lam[3])


@inline_kernel
def _near(w, p, tol):
    x = w[0] - p[0]
    y = w[1] - p[1]
    z = w[2] - p[2]
    return x * x + y * y + z * z <= tol


@hot_kernel
def gjk_core(tab_a, ia, T_a, tab_b, ib, T_b, v0x, v0y, v0z, stop_above, stop_below, ws):
    """GJK between the cores of shape ia (pose T_a) and shape ib (pose T_b).

    (v0x, v0y, v0z): initial search direction estimate for v = a - b in the world frame
    (any non-zero vector; the centre difference is a good one, a cached separating
    direction a better one).
    stop_above: return BEYOND as soon as the core distance is certainly > stop_above
    (np.inf: never). stop_below: return WITHIN as soon as it is certainly <= stop_below
    (-1: never). Boolean queries pass the same threshold for both.

    Returns (status, n, dist) where n is the final simplex size (written to ws in the world
    frame, weights in ws[LAM:]) and dist is |v| (an upper bound of the core distance; for
    SEPARATED, within tolerance of it). For BEYOND, dist is the lower bound that triggered
    the stop.

    The iteration runs in A's local frame: B's pose relative to A is formed once, so each
    support of A needs no transform and each support of B one rotation each way. The
    simplex lives in local tuples, not in ws: the loop then stores nothing, and LLVM keeps
    the table loads and the relative pose out of it.
    """
    # unpack the tables once: a namedtuple field read in the loop costs a refcount pair
    a = table_arrays(tab_a)
    b = table_arrays(tab_b)
    # B in A's frame: R = Ra^T Rb, t = Ra^T (tb - ta)
    r00 = T_a[0, 0] * T_b[0, 0] + T_a[1, 0] * T_b[1, 0] + T_a[2, 0] * T_b[2, 0]
    r01 = T_a[0, 0] * T_b[0, 1] + T_a[1, 0] * T_b[1, 1] + T_a[2, 0] * T_b[2, 1]
    r02 = T_a[0, 0] * T_b[0, 2] + T_a[1, 0] * T_b[1, 2] + T_a[2, 0] * T_b[2, 2]
    r10 = T_a[0, 1] * T_b[0, 0] + T_a[1, 1] * T_b[1, 0] + T_a[2, 1] * T_b[2, 0]
    r11 = T_a[0, 1] * T_b[0, 1] + T_a[1, 1] * T_b[1, 1] + T_a[2, 1] * T_b[2, 1]
    r12 = T_a[0, 1] * T_b[0, 2] + T_a[1, 1] * T_b[1, 2] + T_a[2, 1] * T_b[2, 2]
    r20 = T_a[0, 2] * T_b[0, 0] + T_a[1, 2] * T_b[1, 0] + T_a[2, 2] * T_b[2, 0]
    r21 = T_a[0, 2] * T_b[0, 1] + T_a[1, 2] * T_b[1, 1] + T_a[2, 2] * T_b[2, 1]
    r22 = T_a[0, 2] * T_b[0, 2] + T_a[1, 2] * T_b[1, 2] + T_a[2, 2] * T_b[2, 2]
    dtx = T_b[0, 3] - T_a[0, 3]
    dty = T_b[1, 3] - T_a[1, 3]
    dtz = T_b[2, 3] - T_a[2, 3]
    t0 = T_a[0, 0] * dtx + T_a[1, 0] * dty + T_a[2, 0] * dtz
    t1 = T_a[0, 1] * dtx + T_a[1, 1] * dty + T_a[2, 1] * dtz
    t2 = T_a[0, 2] * dtx + T_a[1, 2] * dty + T_a[2, 2] * dtz
    # initial direction in A's frame
    vx = T_a[0, 0] * v0x + T_a[1, 0] * v0y + T_a[2, 0] * v0z
    vy = T_a[0, 1] * v0x + T_a[1, 1] * v0y + T_a[2, 1] * v0z
    vz = T_a[0, 2] * v0x + T_a[1, 2] * v0y + T_a[2, 2] * v0z
    if vx * vx + vy * vy + vz * vz == 0.0:
        vx = 1.0
    hint_a = 0
    hint_b = 0
    zero = (0.0, 0.0, 0.0)
    # the simplex: vertices w_k of D = A - B and their support points on A and B
    w0 = w1 = w2 = w3 = zero
    a0 = a1 = a2 = a3 = zero
    b0 = b1 = b2 = b3 = zero
    l0 = 1.0
    l1 = l2 = l3 = 0.0
    n = 0
    status = SEPARATED
    dist = 0.0
    vv = 0.0
    vn = 0.0
    above_vn = 0.0
    gap_vn = 0.0
    for it in range(MAX_ITER + 1):
        # support of D along -v: s_A(-v) - s_B(v)
        hint_a, pax, pay, paz = core_support_local_xyz(a, ia, -vx, -vy, -vz, hint_a)
        dbx = r00 * vx + r10 * vy + r20 * vz
        dby = r01 * vx + r11 * vy + r21 * vz
        dbz = r02 * vx + r12 * vy + r22 * vz
        hint_b, qx, qy, qz = core_support_local_xyz(b, ib, dbx, dby, dbz, hint_b)
        pbx = r00 * qx + r01 * qy + r02 * qz + t0
        pby = r10 * qx + r11 * qy + r12 * qz + t1
        pbz = r20 * qx + r21 * qy + r22 * qz + t2
        w = (pax - pbx, pay - pby, paz - pbz)
        pa = (pax, pay, paz)
        pb = (pbx, pby, pbz)
        if it == 0:
            # first vertex
            w0 = w
            a0 = pa
            b0 = pb
            n = 1
            vx, vy, vz = w
            vv = vx * vx + vy * vy + vz * vz
        else:
            # every point x of D has v.x >= v.w, so v.w / |v| is a lower bound. The tests
            # are multiplied through by |v| (worked out while the support was searched): a
            # division here would sit between the support and the simplex step.
            vw = vx * w[0] + vy * w[1] + vz * w[2]
            if vw > above_vn:  # lower bound > stop_above
                status = BEYOND
                dist = vw / vn
                break
            if vv - vw <= gap_vn:  # duality gap |v| - lower <= ABS_TOL + REL_TOL |v|
                dist = vn
                break
            # a repeated vertex means no progress is possible: converged at round-off
            tol = 1e-30 + 1e-24 * vv
            if _near(w, w0, tol) or (n > 1 and _near(w, w1, tol)) or (n > 2 and _near(w, w2, tol)):
                dist = vn
                break
            if n == 1:
                w1 = w
                a1 = pa
                b1 = pb
                mask, l0, l1 = _s1d(w0, w1)
                l2 = 0.0
                l3 = 0.0
            elif n == 2:
                w2 = w
                a2 = pa
                b2 = pb
                mask, l0, l1, l2 = _s2d(w0, w1, w2)
                l3 = 0.0
            else:
                w3 = w
                a3 = pa
                b3 = pb
                mask, l0, l1, l2, l3 = _s3d(w0, w1, w2, w3)
                if mask == 15:
                    n = 4
                    status = OVERLAP
                    dist = 0.0
                    break
            n, w0, w1, w2, w3 = _pack(mask, w0, w1, w2, w3, zero)
            n, a0, a1, a2, a3 = _pack(mask, a0, a1, a2, a3, zero)
            n, b0, b1, b2, b3 = _pack(mask, b0, b1, b2, b3, zero)
            n, l0, l1, l2, l3 = _pack(mask, l0, l1, l2, l3, 0.0)
            nx = l0 * w0[0] + l1 * w1[0] + l2 * w2[0] + l3 * w3[0]
            ny = l0 * w0[1] + l1 * w1[1] + l2 * w2[1] + l3 * w3[1]
            nz = l0 * w0[2] + l1 * w1[2] + l2 * w2[2] + l3 * w3[2]
            nvv = nx * nx + ny * ny + nz * nz
            if nvv >= vv:
                # round-off floor: no further progress. The reported distance is the one
                # the current simplex (and so the witness points) realises.
                dist = math.sqrt(nvv)
                break
            vx = nx
            vy = ny
            vz = nz
            vv = nvv
        vn = math.sqrt(vv)
        dist = vn
        if vn <= ZERO_TOL:
            status = OVERLAP
            break
        if vn <= stop_below:
            status = WITHIN
            break
        above_vn = stop_above * vn
        gap_vn = (ABS_TOL + REL_TOL * vn) * vn
    _store_simplex(ws, T_a, n, (a0, a1, a2, a3), (b0, b1, b2, b3), (l0, l1, l2, l3))
    return status, n, dist
