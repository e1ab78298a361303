"""Halfspace against any convex shape, closed form through the support function.

For H = {x : n.x <= o} and a convex S = core ⊕ ball(r), the signed distance is
min_{x in S} n.x - o = n.s - r - o with s the support point of the core along -n: exact
for every kind (no iteration). Two halfspaces overlap unless their normals are opposite
and their planes apart.
"""

import math

from .._jit import hot_kernel
from ..base.codes import ONE
from ..base.layout import HALFSPACE
from ..base.tolerances import ANTIPARALLEL_TOL
from .support import support_world


@hot_kernel
def halfspace_world(tab, i, T):
    """(nx, ny, nz, offset) of halfspace i posed by T, in the world frame."""
    p = tab.params
    nx = T[0, 0] * p[i, 1] + T[0, 1] * p[i, 2] + T[0, 2] * p[i, 3]
    ny = T[1, 0] * p[i, 1] + T[1, 1] * p[i, 2] + T[1, 2] * p[i, 3]
    nz = T[2, 0] * p[i, 1] + T[2, 1] * p[i, 2] + T[2, 2] * p[i, 3]
    o = p[i, 4] + nx * T[0, 3] + ny * T[1, 3] + nz * T[2, 3]
    return nx, ny, nz, o


@hot_kernel
def convex_halfspace_distance(tab_a, ia, T_a, tab_b, ib, T_b, out):
    """Signed distance of convex shape ia (T_a) to halfspace ib (T_b); out[0:10] as in
    pair kernels (normal from the shape to the halfspace, i.e. -n)."""
    nx, ny, nz, o = halfspace_world(tab_b, ib, T_b)
    if tab_a.kind[ia] == HALFSPACE:
        mx, my, mz, oa = halfspace_world(tab_a, ia, T_a)
        # only antiparallel halfspaces can be apart: a = {m.x <= oa}, b = {-m.x <= o}
        if mx * nx + my * ny + mz * nz < -1.0 + ANTIPARALLEL_TOL:
            gap = -o - oa
            out[0] = gap
            out[1] = oa * mx
            out[2] = oa * my
            out[3] = oa * mz
            out[4] = out[1] + gap * mx
            out[5] = out[2] + gap * my
            out[6] = out[3] + gap * mz
            out[7] = mx
            out[8] = my
            out[9] = mz
        else:
            out[0] = -math.inf
            out[1] = 0.0
            out[2] = 0.0
            out[3] = 0.0
            out[4] = 0.0
            out[5] = 0.0
            out[6] = 0.0
            out[7] = -nx
            out[8] = -ny
            out[9] = -nz
        return
    r = tab_a.params[ia, 0]
    support_world(tab_a, ia, T_a, -nx, -ny, -nz, out, ONE)
    # deepest point of the swept shape
    out[1] -= r * nx
    out[2] -= r * ny
    out[3] -= r * nz
    d = nx * out[1] + ny * out[2] + nz * out[3] - o
    out[0] = d
    out[4] = out[1] - d * nx
    out[5] = out[2] - d * ny
    out[6] = out[3] - d * nz
    out[7] = -nx
    out[8] = -ny
    out[9] = -nz
