"""Which convex piece holds a triangle: the scan behind surface-containing link models
(robot/convexify.py).

A convex polytope given by facet planes ``n . x + c <= 0`` contains a triangle iff it
contains its three vertices (convexity), so the violation of a triangle by a piece is the
largest ``n . x + c`` over the piece's planes and the triangle's vertices: <= 0 inside,
otherwise an upper bound on how far the piece must grow outward to hold it.
"""

import numpy as np

from ._jit import kernel


@kernel
def triangle_piece_violation(tris, planes, plane_start, tol, best, arg):
    """For each triangle, the piece it violates least.

    tris : (m, 3, 3) triangle vertices; planes : (F, 4) facet planes (unit normal, offset),
    inside where ``n . x + c <= 0``; piece k owns ``planes[plane_start[k]:plane_start[k+1]]``
    (a piece without planes, a flat or degenerate one, is never chosen). Writes
    ``best[i]`` = min over pieces of the triangle's violation (inf when no piece has planes)
    and ``arg[i]`` = that piece (-1 when none). A piece's scan stops once it is worse than
    the best so far, and the search stops at the first piece within ``tol``.
    """
    n_pieces = plane_start.shape[0] - 1
    for i in range(tris.shape[0]):
        b = np.inf
        a = -1
        for k in range(n_pieces):
            p0 = plane_start[k]
            p1 = plane_start[k + 1]
            if p1 == p0:
                continue
            worst = -np.inf
            for v in range(3):
                x = tris[i, v, 0]
                y = tris[i, v, 1]
                z = tris[i, v, 2]
                for f in range(p0, p1):
                    d = planes[f, 0] * x + planes[f, 1] * y + planes[f, 2] * z + planes[f, 3]
                    if d > worst:
                        worst = d
                        if worst >= b:
                            break
                if worst >= b:
                    break
            if worst < b:
                b = worst
                a = k
                if b <= tol:
                    break
        best[i] = b
        arg[i] = a
