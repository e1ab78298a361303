"""Closed form sphere-box (Ericson, *Real-Time Collision Detection* §5.1.3, plus the inside
case): clamp the centre into the box; if it is inside, the sphere leaves through the nearest
face. Degenerate case: a centre equidistant from several faces picks the lowest axis."""

import math

from .._jit import hot_kernel


@hot_kernel
def sphere_box_distance(c, r, T, h0, h1, h2, out):
    """Signed distance of sphere (centre c (3-tuple), radius r) to box (pose T 4x4, half
    extents h0, h1, h2). Writes out[0:10] (distance, point on sphere, point on box, normal
    sphere->box), world frame."""
    dx = c[0] - T[0, 3]
    dy = c[1] - T[1, 3]
    dz = c[2] - T[2, 3]
    # centre in the box frame
    x0 = T[0, 0] * dx + T[1, 0] * dy + T[2, 0] * dz
    x1 = T[0, 1] * dx + T[1, 1] * dy + T[2, 1] * dz
    x2 = T[0, 2] * dx + T[1, 2] * dy + T[2, 2] * dz
    q0 = min(max(x0, -h0), h0)
    q1 = min(max(x1, -h1), h1)
    q2 = min(max(x2, -h2), h2)
    e0 = q0 - x0
    e1 = q1 - x1
    e2 = q2 - x2
    dc = math.sqrt(e0 * e0 + e1 * e1 + e2 * e2)
    if dc > 0.0:
        n0 = e0 / dc
        n1 = e1 / dc
        n2 = e2 / dc
        dist = dc - r
    else:
        # inside: the nearest face; box moves along -sign(x_k) e_k to let the sphere out
        g0 = h0 - abs(x0)
        g1 = h1 - abs(x1)
        g2 = h2 - abs(x2)
        n0 = 0.0
        n1 = 0.0
        n2 = 0.0
        if g0 <= g1 and g0 <= g2:
            s = 1.0 if x0 >= 0.0 else -1.0
            q0 = s * h0
            n0 = -s
            dist = -g0 - r
        elif g1 <= g2:
            s = 1.0 if x1 >= 0.0 else -1.0
            q1 = s * h1
            n1 = -s
            dist = -g1 - r
        else:
            s = 1.0 if x2 >= 0.0 else -1.0
            q2 = s * h2
            n2 = -s
            dist = -g2 - r
    # back to world
    wn0 = T[0, 0] * n0 + T[0, 1] * n1 + T[0, 2] * n2
    wn1 = T[1, 0] * n0 + T[1, 1] * n1 + T[1, 2] * n2
    wn2 = T[2, 0] * n0 + T[2, 1] * n1 + T[2, 2] * n2
    out[0] = dist
    out[1] = c[0] + r * wn0
    out[2] = c[1] + r * wn1
    out[3] = c[2] + r * wn2
    out[4] = T[0, 0] * q0 + T[0, 1] * q1 + T[0, 2] * q2 + T[0, 3]
    out[5] = T[1, 0] * q0 + T[1, 1] * q1 + T[1, 2] * q2 + T[1, 3]
    out[6] = T[2, 0] * q0 + T[2, 1] * q1 + T[2, 2] * q2 + T[2, 3]
    out[7] = wn0
    out[8] = wn1
    out[9] = wn2
