"""Convex hulls of point sets, with the vertex adjacency hill climbing walks on.

Degenerate sets are normal input (a flat link plate, a needle, one point): a set that spans
3-D gets its 3-D hull (qhull); a flat set its 2-D hull polygon (adjacency = the ring, on which
hill climbing is just as valid); a collinear set its two extreme points; a single point
itself. Duplicate points are merged first.

A hull qhull computed can be stored and rebuilt without qhull (a cached robot model loads
without importing scipy.spatial): `hull_with_faces` gives the hull and its `HullFaces`, the
hull vertices' indices and the outward triangles (a polygon: its ring), and
`hull_from_faces` rebuilds the same `HullData` from them after checking that they are the
hull: a closed, consistently oriented triangle surface (a convex ring) with every point of
the set on the inner side of every face, within `_FLAT_REL` times its largest coordinate
(qhull's facets hold the points to 1.3e-13 of it on the registry's robots).
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
# Points tested against the faces at a time: bounds the (points, faces) array.
_CHUNK = 256


class HullData(NamedTuple):
    vertices: npt.NDArray[np.float64]  # (k, 3) extreme points, metres
    adjstart: npt.NDArray[np.int32]  # (k + 1,) CSR row starts into adj
    adj: npt.NDArray[np.int32]  # neighbour vertex indices (local)
    dim: int  # 0 point, 1 segment, 2 polygon, 3 polytope


class HullFaces(NamedTuple):
    """What `hull_from_faces` rebuilds a hull from without qhull. order: the hull vertices
    as indices into the set's distinct points (duplicates merged, first kept); faces: its
    triangles as positions in order, counter-clockwise seen from outside. A polygon has no
    faces ((0, 3)) and order is its counter-clockwise ring."""

    order: npt.NDArray[np.int32]  # (k,)
    faces: npt.NDArray[np.int32]  # (m, 3), m = 2k - 4; (0, 3) for a polygon


def _csr(k: int, edges: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    if edges.size == 0:
        return np.zeros(k + 1, np.int32), np.zeros(0, np.int32)
    e = np.concatenate([edges, edges[:, ::-1]]).astype(np.int64)
    # each directed edge once, sorted by (from, to): one integer code per edge
    code = np.unique(e[:, 0] * k + e[:, 1])
    counts = np.bincount(code // k, minlength=k)
    start = np.zeros(k + 1, np.int64)
    np.cumsum(counts, out=start[1:])
    return start.astype(np.int32), (code % k).astype(np.int32)


def convex_hull(points: npt.ArrayLike) -> HullData:
    """Hull of `points (n, 3)`: extreme vertices and their adjacency."""
    return _hull(points, None, False)[0]


def hull_with_faces(points: npt.ArrayLike) -> tuple[HullData, HullFaces | None]:
    """(`convex_hull(points)`, the `HullFaces` it is rebuilt from), the faces None when the
    hull needs no qhull (a point, a segment) or qhull failed on the set."""
    return _hull(points, None, True)


def hull_from_faces(points: npt.ArrayLike, faces: HullFaces) -> tuple[HullData, HullFaces | None]:
    """(`convex_hull(points)`, `faces`): the hull rebuilt from `faces` (`hull_with_faces` of
    the same points) without qhull, once they are proved to be the hull (module doc).
    (hull, None) when a polygon's ring is given for a set that is not flat here (its
    flatness decided on another machine's round-off): the hull computed anew. ValueError
    when they are not its hull."""
    return _hull(points, faces, False)


def _hull(points, given: HullFaces | None, want: bool) -> tuple[HullData, HullFaces | None]:
    """The hull of `points`, from `given` when given; with its faces when `want`."""
    p = np.ascontiguousarray(points, dtype=np.float64).reshape(-1, 3)
    scale = float(np.abs(p).max()) if p.size else 0.0
    scale = max(scale, 1e-300)
    # merge duplicates (exact after rounding to a tolerance relative to the extent)
    key = np.round(p / (scale * _DEDUP_REL)) if scale > 0 else p
    _, first = np.unique(key, axis=0, return_index=True)
    p = p[np.sort(first)]
    k = p.shape[0]
    tol = _FLAT_REL * scale
    if given is not None and len(given.faces) > 0:
        # proved faces bound a solid: no flatness test needed (nor its SVD, which a
        # multi-threaded BLAS can make take milliseconds)
        return _solid_hull(p, *_checked_solid(p, given, tol)), given
    if k == 1:
        return HullData(p.copy(), np.zeros(2, np.int32), np.zeros(0, np.int32), 0), None
    c = p.mean(axis=0)
    _, s, vt = np.linalg.svd(p - c, full_matrices=False)
    if s[1] <= _FLAT_REL * s[0]:
        # collinear: the two extreme points along the principal axis
        t = (p - c) @ vt[0]
        v = p[[int(np.argmin(t)), int(np.argmax(t))]]
        start, adj = _csr(2, np.array([[0, 1]]))
        return HullData(v, start, adj, 1), None
    if s[2] <= _FLAT_REL * s[0]:
        uv = (p - c) @ vt[:2].T
        if given is not None and len(given.faces) == 0:
            return _ring_hull(p, _checked_ring(uv, given, tol)), given
        return _polygon(p, uv, want, tol)
    from scipy.spatial import ConvexHull, QhullError

    try:
        h = ConvexHull(p)
    except QhullError:
        # qhull calls it flat although the SVD did not (near-flat): take the polygon
        return _polygon(p, (p - c) @ vt[:2].T, False, tol)
    verts = h.vertices
    remap = -np.ones(k, np.int64)
    remap[verts] = np.arange(verts.size)
    tri = remap[h.simplices]
    faces = None
    if want:
        # outward: qhull's simplices come in either orientation; its facet normals point out
        n = np.cross(p[h.simplices[:, 1]] - p[h.simplices[:, 0]],
                     p[h.simplices[:, 2]] - p[h.simplices[:, 0]])  # fmt: skip
        inward = (n * h.equations[:, :3]).sum(axis=1) < 0.0
        f = np.where(inward[:, None], tri[:, [0, 2, 1]], tri).astype(np.int32)
        faces = _proved(p, HullFaces(verts.astype(np.int32), f), tol, _checked_solid)
    return _solid_hull(p, verts, tri), faces


def _solid_hull(p, order, tri) -> HullData:
    edges = np.concatenate([tri[:, [0, 1]], tri[:, [1, 2]], tri[:, [2, 0]]])
    start, adj = _csr(order.size, edges)
    return HullData(np.ascontiguousarray(p[order]), start, adj, 3)


def _polygon(p, uv, want: bool, tol: float) -> tuple[HullData, HullFaces | None]:
    from scipy.spatial import ConvexHull, QhullError

    try:
        ring = ConvexHull(uv).vertices  # counter-clockwise order
    except QhullError:
        t = uv[:, 0]
        return _ring_hull(p, np.array([int(np.argmin(t)), int(np.argmax(t))])), None
    faces = None
    if want:
        given = HullFaces(ring.astype(np.int32), np.zeros((0, 3), np.int32))
        faces = _proved(uv, given, tol, _checked_ring)
    return _ring_hull(p, ring), faces


def _ring_hull(p, ring) -> HullData:
    n = ring.size
    edges = np.stack([np.arange(n), (np.arange(n) + 1) % n], axis=1)
    start, adj = _csr(n, edges)
    return HullData(np.ascontiguousarray(p[ring]), start, adj, 2 if n > 2 else 1)


def _proved(p, faces: HullFaces, tol: float, check) -> HullFaces | None:
    """`faces` when `check` proves them (as `hull_from_faces` will), else None: a hull that
    round-off keeps from proving (a sliver face) is computed again on load, never refused."""
    try:
        check(p, faces, tol)
    except ValueError:
        return None
    return faces


def _order(given: HullFaces, n: int, least: int) -> np.ndarray:
    """`given.order` as int64 after checking it indexes `least` or more distinct points."""
    o = np.asarray(given.order)
    if o.ndim != 1 or o.dtype.kind not in "iu" or o.size < least:
        raise ValueError(f"its hull order is not {least} or more indices")
    if o.min() < 0 or o.max() >= n or np.unique(o).size != o.size:
        raise ValueError(f"its hull order does not index distinct points of the {n}")
    return o.astype(np.int64)


def _checked_solid(p, given: HullFaces, tol: float) -> tuple[np.ndarray, np.ndarray]:
    """(order, faces) of `given` once proved to be conv(p): faces on the order's vertices,
    2k - 4 of them (Euler: a closed surface of genus 0), each directed edge once and its
    reverse once (closed and consistently oriented), every vertex on one, every point of p
    within `tol` inside every face's plane and some point farther than `tol` inside it (a
    solid, not a flat set's two sides). ValueError otherwise."""
    order = _order(given, len(p), 4)
    k = order.size
    f = np.asarray(given.faces)
    if f.ndim != 2 or f.shape != (2 * k - 4, 3) or f.dtype.kind not in "iu":
        raise ValueError(f"its hull faces are not {2 * k - 4} triangles on {k} vertices")
    f = f.astype(np.int64)
    if f.min() < 0 or f.max() >= k or np.unique(f).size != k:
        raise ValueError("its hull faces do not use each hull vertex")
    e = np.concatenate([f[:, [0, 1]], f[:, [1, 2]], f[:, [2, 0]]])
    code, back = e[:, 0] * k + e[:, 1], e[:, 1] * k + e[:, 0]
    if np.any(e[:, 0] == e[:, 1]) or np.unique(code).size != code.size:
        raise ValueError("its hull faces repeat an edge")
    if not np.array_equal(np.sort(code), np.sort(back)):
        raise ValueError("its hull faces are not a closed, consistently oriented surface")
    n, off = face_planes(p[order], f)
    deepest = np.zeros(len(f))
    for i in range(0, len(p), _CHUNK):
        d = p[i : i + _CHUNK] @ n.T - off
        if d.max() > tol:
            raise ValueError("a point lies outside its hull faces")
        deepest = np.minimum(deepest, d.min(axis=0))
    if np.any(deepest >= -tol):
        raise ValueError("its hull faces enclose no solid")
    return order, f


def face_planes(v: np.ndarray, faces: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(unit normals (m, 3), offsets (m,)) of the triangles `faces` (m, 3) on vertices v:
    a point x is on a face's outer side by ``x @ n - off`` (outward for `HullFaces`).
    ValueError when a face has no area."""
    a = v[faces[:, 0]]
    n = np.cross(v[faces[:, 1]] - a, v[faces[:, 2]] - a)
    norm = np.linalg.norm(n, axis=1)
    if not np.all(norm > 0.0):
        raise ValueError("a hull face has no area")
    n /= norm[:, None]
    return n, (n * a).sum(axis=1)


def _checked_ring(uv, given: HullFaces, tol: float) -> np.ndarray:
    """The ring of `given` once proved to be the hull of the plane points uv (n, 2):
    distinct points, every point within `tol` to the left of (inside) every edge, so the
    ring is convex and counter-clockwise. ValueError otherwise."""
    if np.asarray(given.faces).size:
        raise ValueError("its hull is a polygon given with faces")
    ring = _order(given, len(uv), 3)
    r = uv[ring]
    e = np.roll(r, -1, axis=0) - r
    norm = np.linalg.norm(e, axis=1)
    if not np.all(norm > 0.0):
        raise ValueError("its hull ring has an edge of no length")
    for i in range(0, len(uv), _CHUNK):
        q = uv[i : i + _CHUNK, None, :] - r[None]
        if (-(e[:, 0] * q[..., 1] - e[:, 1] * q[..., 0]) / norm).max() > tol:
            raise ValueError("a point lies outside its hull ring")
    return ring


# ---- in a cache entry --------------------------------------------------------------------

FACES_ARRAYS = ("hull_order", "hull_order_start", "hull_faces", "hull_faces_start")


def faces_arrays(faces: list) -> dict:
    """The arrays a cache entry stores a list of `HullFaces` (or None) in, `FACES_ARRAYS`:
    the orders and faces concatenated, with (n + 1,) starts; None is an empty order."""
    fs = [f if f is not None else HullFaces(np.zeros(0, np.int32), np.zeros((0, 3), np.int32))
          for f in faces]  # fmt: skip
    ostart = np.zeros(len(fs) + 1, np.int64)
    fstart = np.zeros(len(fs) + 1, np.int64)
    np.cumsum([len(f.order) for f in fs], out=ostart[1:])
    np.cumsum([len(f.faces) for f in fs], out=fstart[1:])
    return {
        "hull_order": np.concatenate([np.zeros(0, np.int32)] + [f.order for f in fs]),
        "hull_order_start": ostart,
        "hull_faces": np.concatenate([np.zeros((0, 3), np.int32)] + [f.faces for f in fs]),
        "hull_faces_start": fstart,
    }


def faces_from_arrays(z: dict, n: int) -> list:
    """The n `HullFaces` (or None) of a cache entry's `faces_arrays`; ValueError when they are
    missing (an older version wrote it) or their ranges do not cover them."""
    if not set(FACES_ARRAYS) <= set(z):
        raise ValueError("it holds no hull faces (an older version wrote it)")
    order, faces = z["hull_order"], z["hull_faces"]
    ostart, fstart = z["hull_order_start"], z["hull_faces_start"]
    if order.ndim != 1 or faces.ndim != 2 or faces.shape[1] != 3:
        raise ValueError("its hull faces have the wrong shapes")
    for start, total in ((ostart, len(order)), (fstart, len(faces))):
        if start.shape != (n + 1,) or start[0] != 0 or start[-1] != total:
            raise ValueError("its hull face ranges do not cover its hull faces")
    no, nf = np.diff(ostart), np.diff(fstart)
    if np.any(no < 0) or np.any(nf < 0) or np.any((no == 0) & (nf > 0)):
        raise ValueError("its hull face ranges do not cover its hull faces")
    return [
        HullFaces(order[ostart[i] : ostart[i + 1]], faces[fstart[i] : fstart[i + 1]])
        if no[i]
        else None
        for i in range(n)
    ]
