"""Convex hulls of point sets, with the vertex adjacency hill climbing walks on.

Degenerate sets are normal input (a flat link plate, a needle, one point): a set that spans
3-D gets its 3-D hull (qhull); a flat set its 2-D hull polygon (adjacency = the ring, on which
hill climbing is just as valid); a collinear set its two extreme points; a single point
itself. Duplicate points are merged first.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from ..kernels.base.tolerances import HULL_DEDUP_REL, HULL_FLAT_REL

# Points closer than _DEDUP_REL (relative to the set's extent) are one point; a set whose
# smallest principal extent is below _FLAT_REL of its largest is flat (kernels/base/tolerances.py).
_DEDUP_REL = HULL_DEDUP_REL
_FLAT_REL = HULL_FLAT_REL


class HullData(NamedTuple):
    vertices: npt.NDArray[np.float64]  # (k, 3) extreme points, metres
    adjstart: npt.NDArray[np.int32]  # (k + 1,) CSR row starts into adj
    adj: npt.NDArray[np.int32]  # neighbour vertex indices (local)
    dim: int  # 0 point, 1 segment, 2 polygon, 3 polytope


def _csr(k: int, edges: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    if edges.size == 0:
        return np.zeros(k + 1, np.int32), np.zeros(0, np.int32)
    e = np.concatenate([edges, edges[:, ::-1]])
    e = np.unique(e, axis=0)
    order = np.lexsort((e[:, 1], e[:, 0]))
    e = e[order]
    counts = np.bincount(e[:, 0], minlength=k)
    start = np.zeros(k + 1, np.int64)
    np.cumsum(counts, out=start[1:])
    return start.astype(np.int32), e[:, 1].astype(np.int32)


def convex_hull(points: npt.ArrayLike) -> HullData:
    """Hull of `points (n, 3)`: extreme vertices and their adjacency."""
    from scipy.spatial import ConvexHull, QhullError

    p = np.ascontiguousarray(points, dtype=np.float64).reshape(-1, 3)
    scale = float(np.abs(p).max()) if p.size else 0.0
    scale = max(scale, 1e-300)
    # merge duplicates (exact after rounding to a tolerance relative to the extent)
    key = np.round(p / (scale * _DEDUP_REL)) if scale > 0 else p
    _, first = np.unique(key, axis=0, return_index=True)
    p = p[np.sort(first)]
    k = p.shape[0]
    if k == 1:
        return HullData(p.copy(), np.zeros(2, np.int32), np.zeros(0, np.int32), 0)
    c = p.mean(axis=0)
    _, s, vt = np.linalg.svd(p - c, full_matrices=False)
    if s[1] <= _FLAT_REL * s[0]:
        # collinear: the two extreme points along the principal axis
        t = (p - c) @ vt[0]
        v = p[[int(np.argmin(t)), int(np.argmax(t))]]
        start, adj = _csr(2, np.array([[0, 1]]))
        return HullData(v, start, adj, 1)
    if s[2] <= _FLAT_REL * s[0]:
        return _polygon(p, c, vt)
    try:
        h = ConvexHull(p)
    except QhullError:
        # qhull calls it flat although the SVD did not (near-flat): take the polygon
        return _polygon(p, c, vt)
    verts = h.vertices
    remap = -np.ones(k, np.int64)
    remap[verts] = np.arange(verts.size)
    tri = remap[h.simplices]
    edges = np.concatenate([tri[:, [0, 1]], tri[:, [1, 2]], tri[:, [2, 0]]])
    start, adj = _csr(verts.size, edges)
    return HullData(np.ascontiguousarray(p[verts]), start, adj, 3)


def _polygon(p, c, vt) -> HullData:
    from scipy.spatial import ConvexHull, QhullError

    uv = (p - c) @ vt[:2].T
    try:
        h = ConvexHull(uv)
        ring = h.vertices  # counter-clockwise order
    except QhullError:
        t = (p - c) @ vt[0]
        ring = np.array([int(np.argmin(t)), int(np.argmax(t))])
    n = ring.size
    edges = np.stack([np.arange(n), (np.arange(n) + 1) % n], axis=1)
    start, adj = _csr(n, edges)
    return HullData(np.ascontiguousarray(p[ring]), start, adj, 2 if n > 2 else 1)
