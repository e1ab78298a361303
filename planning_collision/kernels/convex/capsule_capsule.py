"""Closed form for point/segment cores: sphere-sphere, sphere-capsule, capsule-capsule.

A sphere is a capsule of zero length, so one routine serves all three: the closest points
of two segments (Ericson, *Real-Time Collision Detection* §5.1.9), then the sweep radii.
Degenerate cases handled: zero-length segments (points), parallel segments (any pair of
closest points on the overlap), intersecting cores (depth = sum of radii, normal
perpendicular to both segments, or to the one with length).
"""

import math

from .._jit import hot_kernel, inline_kernel
from ..base.tolerances import DIVISION_GUARD, PARALLEL_REL, PARALLEL_SIN, WITNESS_MIN_NORM

_EPS = DIVISION_GUARD  # a segment this short (squared) is a point


@hot_kernel
def _clamp01(x):
    return 0.0 if x < 0.0 else (1.0 if x > 1.0 else x)


@hot_kernel
def segment_segment_closest(p1, q1, p2, q2):
    """Parameters (s, t) in [0, 1] of the closest points p1 + s(q1-p1), p2 + t(q2-p2).

    p1..q2 are 3-tuples. Ericson §5.1.9; parallel segments pick s from the clamped
    projection of p2 and t accordingly (one of the closest pairs).
    """
    d1x = q1[0] - p1[0]
    d1y = q1[1] - p1[1]
    d1z = q1[2] - p1[2]
    d2x = q2[0] - p2[0]
    d2y = q2[1] - p2[1]
    d2z = q2[2] - p2[2]
    rx = p1[0] - p2[0]
    ry = p1[1] - p2[1]
    rz = p1[2] - p2[2]
    a = d1x * d1x + d1y * d1y + d1z * d1z
    e = d2x * d2x + d2y * d2y + d2z * d2z
    f = d2x * rx + d2y * ry + d2z * rz
    if a <= _EPS and e <= _EPS:
        return 0.0, 0.0
    if a <= _EPS:
        return 0.0, _clamp01(f / e)
    c = d1x * rx + d1y * ry + d1z * rz
    if e <= _EPS:
        return _clamp01(-c / a), 0.0
    b = d1x * d2x + d1y * d2y + d1z * d2z
    denom = a * e - b * b
    if denom > PARALLEL_REL * a * e:
        s = _clamp01((b * f - c * e) / denom)
    else:
        s = 0.0  # parallel: any s works; t below makes the pair closest
    t = (b * s + f) / e
    if t < 0.0:
        t = 0.0
        s = _clamp01(-c / a)
    elif t > 1.0:
        t = 1.0
        s = _clamp01((b - c) / a)
    return s, t


@hot_kernel
def capsule_capsule_distance(ca, ua, ha, ra, cb, ub, hb, rb, out):
    """Signed distance of capsule (centre ca, unit axis ua, half length ha, radius ra) and
    capsule (cb, ub, hb, rb), all 3-tuples/floats in the world frame. ha = 0 is a sphere.

    Writes out[0] distance, out[1:4] point on a, out[4:7] point on b, out[7:10] normal a->b.
    """
    p1 = (ca[0] - ha * ua[0], ca[1] - ha * ua[1], ca[2] - ha * ua[2])
    q1 = (ca[0] + ha * ua[0], ca[1] + ha * ua[1], ca[2] + ha * ua[2])
    p2 = (cb[0] - hb * ub[0], cb[1] - hb * ub[1], cb[2] - hb * ub[2])
    q2 = (cb[0] + hb * ub[0], cb[1] + hb * ub[1], cb[2] + hb * ub[2])
    s, t = segment_segment_closest(p1, q1, p2, q2)
    ax = p1[0] + s * (q1[0] - p1[0])
    ay = p1[1] + s * (q1[1] - p1[1])
    az = p1[2] + s * (q1[2] - p1[2])
    bx = p2[0] + t * (q2[0] - p2[0])
    by = p2[1] + t * (q2[1] - p2[1])
    bz = p2[2] + t * (q2[2] - p2[2])
    nx = bx - ax
    ny = by - ay
    nz = bz - az
    dc = math.sqrt(nx * nx + ny * ny + nz * nz)
    if dc > WITNESS_MIN_NORM:
        nx /= dc
        ny /= dc
        nz /= dc
    else:
        # cores touch: depth = ra + rb along any direction perpendicular to both cores
        dc = 0.0
        nx, ny, nz = _contact_normal(ua, ha, ub, hb, ca, cb)
    out[0] = dc - ra - rb
    out[1] = ax + ra * nx
    out[2] = ay + ra * ny
    out[3] = az + ra * nz
    out[4] = bx - rb * nx
    out[5] = by - rb * ny
    out[6] = bz - rb * nz
    out[7] = nx
    out[8] = ny
    out[9] = nz


@hot_kernel
def _contact_normal(ua, ha, ub, hb, ca, cb):
    """A unit normal for touching point/segment cores, perpendicular to each segment that
    has length, preferring the side of b's centre."""
    if ha > 0.0 and hb > 0.0:
        cx = ua[1] * ub[2] - ua[2] * ub[1]
        cy = ua[2] * ub[0] - ua[0] * ub[2]
        cz = ua[0] * ub[1] - ua[1] * ub[0]
        cl = math.sqrt(cx * cx + cy * cy + cz * cz)
        if cl > PARALLEL_SIN:
            cx /= cl
            cy /= cl
            cz /= cl
            if cx * (cb[0] - ca[0]) + cy * (cb[1] - ca[1]) + cz * (cb[2] - ca[2]) < 0.0:
                return -cx, -cy, -cz
            return cx, cy, cz
    if ha > 0.0 or hb > 0.0:
        u = ua if ha > 0.0 else ub
        # component of the centre offset perpendicular to the segment
        dx = cb[0] - ca[0]
        dy = cb[1] - ca[1]
        dz = cb[2] - ca[2]
        k = dx * u[0] + dy * u[1] + dz * u[2]
        px = dx - k * u[0]
        py = dy - k * u[1]
        pz = dz - k * u[2]
        pl = math.sqrt(px * px + py * py + pz * pz)
        if pl > WITNESS_MIN_NORM:
            return px / pl, py / pl, pz / pl
        ax = abs(u[0])
        ay = abs(u[1])
        az = abs(u[2])
        if ax <= ay and ax <= az:
            px, py, pz = 0.0, u[2], -u[1]
        elif ay <= az:
            px, py, pz = -u[2], 0.0, u[0]
        else:
            px, py, pz = u[1], -u[0], 0.0
        pl = math.sqrt(px * px + py * py + pz * pz)
        return px / pl, py / pl, pz / pl
    dx = cb[0] - ca[0]
    dy = cb[1] - ca[1]
    dz = cb[2] - ca[2]
    dl = math.sqrt(dx * dx + dy * dy + dz * dz)
    if dl > WITNESS_MIN_NORM:
        return dx / dl, dy / dl, dz / dl
    return 1.0, 0.0, 0.0


@inline_kernel
def _posed(P, i, x):
    """Point x (3,) of frame i in the world (poses P (n, 4, 4))."""
    return (
        P[i, 0, 0] * x[0] + P[i, 0, 1] * x[1] + P[i, 0, 2] * x[2] + P[i, 0, 3],
        P[i, 1, 0] * x[0] + P[i, 1, 1] * x[1] + P[i, 1, 2] * x[2] + P[i, 1, 3],
        P[i, 2, 0] * x[0] + P[i, 2, 1] * x[1] + P[i, 2, 2] * x[2] + P[i, 2, 3],
    )


@hot_kernel
def posed_capsule_gap(P, cap_p0, cap_p1, params, ia, ib):
    """Distance between capsules ia and ib given by their segment ends cap_p0, cap_p1 in
    frames posed by P and radii params[:, 0] (the checker's bounding capsules of robot
    pieces: a lower bound on the pieces' distance; <= 0 when the capsules overlap)."""
    a0 = _posed(P, ia, cap_p0[ia])
    a1 = _posed(P, ia, cap_p1[ia])
    b0 = _posed(P, ib, cap_p0[ib])
    b1 = _posed(P, ib, cap_p1[ib])
    s, t = segment_segment_closest(a0, a1, b0, b1)
    dx = a0[0] + s * (a1[0] - a0[0]) - b0[0] - t * (b1[0] - b0[0])
    dy = a0[1] + s * (a1[1] - a0[1]) - b0[1] - t * (b1[1] - b0[1])
    dz = a0[2] + s * (a1[2] - a0[2]) - b0[2] - t * (b1[2] - b0[2])
    return math.sqrt(dx * dx + dy * dy + dz * dz) - params[ia, 0] - params[ib, 0]
