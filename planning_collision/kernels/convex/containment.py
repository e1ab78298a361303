"""Which convex piece holds a triangle: the scan behind surface-containing link models
(robot/convexify.py).

A convex polytope given by facet planes ``n . x + c <= 0`` contains a triangle iff it
contains its three vertices (convexity), so the violation of a triangle by a piece is the
largest ``n . x + c`` over the piece's planes and the triangle's vertices: <= 0 inside,
otherwise an upper bound on how far the piece must grow outward to hold it.
"""

import numpy as np

from .._jit import kernel


@kernel
def _piece_violation(tris, i, planes, p0, p1, bound):
    """Triangle i's violation of the piece whose planes are ``planes[p0:p1]``; the scan
    stops as soon as it reaches `bound` (then the value returned is >= bound)."""
    worst = -np.inf
    for v in range(3):
        x = tris[i, v, 0]
        y = tris[i, v, 1]
        z = tris[i, v, 2]
        for f in range(p0, p1):
            d = planes[f, 0] * x + planes[f, 1] * y + planes[f, 2] * z + planes[f, 3]
            if d > worst:
                worst = d
                if worst >= bound:
                    return worst
    return worst


@kernel
def triangle_piece_violation(tris, planes, plane_start, tol, hint, best, arg):
    """For each triangle, the piece it violates least.

    tris : (m, 3, 3) triangle vertices; planes : (F, 4) facet planes (unit normal, offset),
    inside where ``n . x + c <= 0``; piece k owns ``planes[plane_start[k]:plane_start[k+1]]``
    (a piece without planes, a flat or degenerate one, is never chosen); hint : (m,) int64,
    the piece to try first for each triangle (-1: the piece the previous triangle found,
    as neighbouring triangles of a mesh mostly lie in the same piece). Writes ``best[i]`` =
    min over pieces of the triangle's violation (inf when no piece has planes) and
    ``arg[i]`` = that piece (-1 when none). A piece's scan stops once it is worse than the
    best so far, and the search stops at the first piece within ``tol`` (the hint first:
    a piece scanned first has no best to stop at, so a good first guess saves a whole scan).
    """
    n_pieces = plane_start.shape[0] - 1
    prev = -1
    for i in range(tris.shape[0]):
        first = hint[i] if hint[i] >= 0 else prev
        b = np.inf
        a = -1
        if first >= 0 and plane_start[first + 1] > plane_start[first]:
            b = _piece_violation(tris, i, planes, plane_start[first], plane_start[first + 1], b)
            a = first
        if not b <= tol:
            for k in range(n_pieces):
                p0 = plane_start[k]
                p1 = plane_start[k + 1]
                if p1 == p0 or k == first:
                    continue
                worst = _piece_violation(tris, i, planes, p0, p1, b)
                if worst < b:
                    b = worst
                    a = k
                    if b <= tol:
                        break
        best[i] = b
        arg[i] = a
        if a >= 0:
            prev = a
