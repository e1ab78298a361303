"""Box tests of the scene traversal (kernels/scene/traversal.py): a node's or primitive's world
box against the query's world box, its bounding ball and its oriented box.

The oriented box (`query_obb`) is the query shape's local box (``tab.aabb``, the sweep
radius included) posed by its pose: for a long link posed at a slant it is much tighter
than the world box around it, and a cloud's small nodes near a link are told apart by it
(a surface cloud next to a link otherwise passes the world-box test by the hundred). Its
bounds are valid lower bounds of the shape's distance because the shape lies inside it:
for any point x of a box B and y of the query, |x - y|^2 is the sum of the squares of
(x - y) . u_k over an orthonormal basis u_k (the box's axes), and each term is at least the
gap between the projections of B and of the oriented box on u_k (Ericson, *Real-Time
Collision Detection* §4.4, the separating axis test, read as a distance bound).
"""

import math

from .._jit import hot_kernel

# Hot loops index 2-D arrays by row through these helpers instead of slicing rows out (a
# slice is a new array view, and reading a namedtuple field a reference-count round trip:
# the kernels unpack the scene once and pass arrays and row numbers).


@hot_kernel
def rows_overlap(lo, hi, n, qlo, qhi, i, margin):
    """aabb_overlap of box n of (lo, hi) and box i of (qlo, qhi)."""
    for k in range(3):
        if lo[n, k] - qhi[i, k] > margin or qlo[i, k] - hi[n, k] > margin:
            return False
    return True


@hot_kernel
def rows_gaps(lo, hi, n, qlo, qhi, i, qc0, qc1, qc2):
    """Squared gaps between box n of (lo, hi) and the query, which lies in box i of (qlo,
    qhi) and in a ball centred at qc: (box-box, box-centre). `pruned` and `lower_bound`
    turn them into a test and a bound; squares spare two square roots per box tested."""
    s = 0.0
    b = 0.0
    for k in range(3):
        g = lo[n, k] - qhi[i, k]
        g2 = qlo[i, k] - hi[n, k]
        if g2 > g:
            g = g2
        if g > 0.0:
            s += g * g
        c = qc0 if k == 0 else (qc1 if k == 1 else qc2)
        h = lo[n, k] - c
        h2 = c - hi[n, k]
        if h2 > h:
            h = h2
        if h > 0.0:
            b += h * h
    return s, b


@hot_kernel
def lower_bound(s, b, qr):
    """Lower bound on the signed distance between anything in the box and the query from
    the squared gaps of `rows_gaps` and the query ball's radius qr: the larger of the
    box-box gap and the ball-box gap when positive; -inf when both are <= 0 (an overlap can
    be arbitrarily deep). The ball bound is the tighter one for a long query (a capsule
    link) whose world box is loose."""
    lb = -math.inf
    if s > 0.0:
        lb = math.sqrt(s)
    if b > qr * qr:
        sb = math.sqrt(b) - qr
        if sb > lb:
            lb = sb
    return lb


@hot_kernel
def pruned(s, b, qr, bound):
    """``lower_bound(s, b, qr) > bound``, without square roots. (The leaves' ball-ball
    test passes s = 0: with a negative bound it then prunes only balls apart, which is
    weaker than the bound allows but still conservative.)"""
    if bound < 0.0:
        return s > 0.0 or b > qr * qr
    t = bound + qr
    return s > bound * bound or b > t * t


@hot_kernel
def rows_sqdist(lo, hi, n, qlo, qhi, i):
    s = 0.0
    for k in range(3):
        g = lo[n, k] - qhi[i, k]
        g2 = qlo[i, k] - hi[n, k]
        if g2 > g:
            g = g2
        if g > 0.0:
            s += g * g
    return s


# ---------------------------------------------------------------------------------------
# the query's oriented box


@hot_kernel
def query_obb(aabb, poses, i, use):
    """The oriented box of query primitive i: 16 floats (on, centre (3), axes (9, the
    pose's R row by row: axis k is (R[0, k], R[1, k], R[2, k])), half extents (3)), from
    its local box aabb[i] and pose poses[i]. on is 0.0 (the tests pass everything) when
    `use` is False or the box is not finite (a halfspace), else 1.0."""
    h0 = 0.5 * (aabb[i, 3] - aabb[i, 0])
    h1 = 0.5 * (aabb[i, 4] - aabb[i, 1])
    h2 = 0.5 * (aabb[i, 5] - aabb[i, 2])
    ok = use and math.isfinite(h0 + h1 + h2)
    if not ok:
        h0 = h1 = h2 = 0.0
    a0 = 0.5 * (aabb[i, 0] + aabb[i, 3]) if ok else 0.0
    a1 = 0.5 * (aabb[i, 1] + aabb[i, 4]) if ok else 0.0
    a2 = 0.5 * (aabb[i, 2] + aabb[i, 5]) if ok else 0.0
    T = poses[i]
    c0 = T[0, 0] * a0 + T[0, 1] * a1 + T[0, 2] * a2 + T[0, 3]
    c1 = T[1, 0] * a0 + T[1, 1] * a1 + T[1, 2] * a2 + T[1, 3]
    c2 = T[2, 0] * a0 + T[2, 1] * a1 + T[2, 2] * a2 + T[2, 3]
    return (
        1.0 if ok else 0.0, c0, c1, c2,
        T[0, 0], T[0, 1], T[0, 2], T[1, 0], T[1, 1], T[1, 2], T[2, 0], T[2, 1], T[2, 2],
        h0, h1, h2,
    )  # fmt: skip


@hot_kernel
def _axis_gap(ob, u0, u1, u2, h, m0, m1, m2, e0, e1, e2):
    """Gap between the projections of the box (centre m, half extents e) and of the
    oriented box ob on its axis u with half extent h (negative: they overlap along it)."""
    d = (m0 - ob[1]) * u0 + (m1 - ob[2]) * u1 + (m2 - ob[3]) * u2
    return abs(d) - (abs(u0) * e0 + abs(u1) * e1 + abs(u2) * e2 + h)


@hot_kernel
def _obb_gaps(lo, hi, n, ob):
    """The gaps (`_axis_gap`) of box n of (lo, hi) along ob's three axes."""
    m0 = 0.5 * (lo[n, 0] + hi[n, 0])
    m1 = 0.5 * (lo[n, 1] + hi[n, 1])
    m2 = 0.5 * (lo[n, 2] + hi[n, 2])
    e0 = 0.5 * (hi[n, 0] - lo[n, 0])
    e1 = 0.5 * (hi[n, 1] - lo[n, 1])
    e2 = 0.5 * (hi[n, 2] - lo[n, 2])
    g0 = _axis_gap(ob, ob[4], ob[7], ob[10], ob[13], m0, m1, m2, e0, e1, e2)
    g1 = _axis_gap(ob, ob[5], ob[8], ob[11], ob[14], m0, m1, m2, e0, e1, e2)
    g2 = _axis_gap(ob, ob[6], ob[9], ob[12], ob[15], m0, m1, m2, e0, e1, e2)
    return g0, g1, g2


@hot_kernel
def obb_sqgap(lo, hi, n, ob):
    """A lower bound on the squared distance between box n of (lo, hi) and anything inside
    the oriented box ob (0 when they overlap, or ob is off)."""
    if ob[0] == 0.0:
        return 0.0
    g0, g1, g2 = _obb_gaps(lo, hi, n, ob)
    s = 0.0
    if g0 > 0.0:
        s += g0 * g0
    if g1 > 0.0:
        s += g1 * g1
    if g2 > 0.0:
        s += g2 * g2
    return s


@hot_kernel
def obb_apart(lo, hi, n, ob, margin):
    """True when box n of (lo, hi) and the oriented box ob are apart by more than margin
    along one of ob's axes (so anything inside them is: the signed distance of two convex
    sets is at least the gap along any axis; False when ob is off)."""
    if ob[0] == 0.0:
        return False
    g0, g1, g2 = _obb_gaps(lo, hi, n, ob)
    return g0 > margin or g1 > margin or g2 > margin


@hot_kernel
def sq_pruned(s, bound):
    """``sqrt(s) > bound`` for a squared lower bound s >= 0 (the oriented box's)."""
    if bound < 0.0:
        return s > 0.0
    return s > bound * bound
