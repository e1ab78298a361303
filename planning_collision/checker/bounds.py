"""Bounding volumes of a robot's collision pieces, for the checker's cheap tests first.

Each piece (in its own frame) gets, besides its bounding ball (``ShapeTable.brad``):

- a **capsule** (segment p0-p1 swept by r) that contains it: along the principal axis of its
  points, the segment's ends and radius chosen for the least capsule volume. Capsule-capsule
  distances are a closed form: a lower bound on the pieces' distance for a few ns;
- an **outer hull**: a sphere-swept hull of at most `OUTER_POINTS` of its hull vertices,
  ``conv(S) ⊕ ball(r)`` with r the largest distance of any hull vertex to conv(S), so it
  contains the piece (every vertex lies within r of conv(S), and the sweep is convex). GJK
  on 32 points costs about a third of GJK on a Panda link's 100-150 (measured on the
  Panda's self pairs: 219 vs 731 ns per boolean query). Because S is a subset of the
  piece's own points, conv(S) swept by the piece's radius lies inside the piece: when the
  outer hulls' cores come within the pieces' radii the pieces overlap, which the same GJK
  proves (kernels/convex/pair.py `overlap_within`). Only pairs whose outer hulls touch without
  that need the exact one; tests/test_self_tables.py checks the subset on two robots.

Pieces that are primitives, or hulls with few vertices, are their own outer hull.
"""

from __future__ import annotations

import logging

import numpy as np

from ..geometry import Box, Capsule, Cone, Convex, Cylinder, Sphere, shape_table
from ..geometry.hull import face_planes, faces_arrays, faces_from_arrays
from ..kernels.base.tolerances import CONTAIN_TOL
from ..robot.cache import read_entry, write_entry
from ..robot.progress import Progress

log = logging.getLogger(__name__)

__all__ = ["OUTER_POINTS", "core_points", "piece_bounds", "sweep_radius"]

OUTER_POINTS = 32


def core_points(shape) -> np.ndarray:
    """Points whose hull contains the shape's core (the sweep radius is added apart)."""
    if isinstance(shape, Convex):
        return np.asarray(shape.hull.vertices, float)
    if isinstance(shape, Box):
        e = 0.5 * np.asarray(shape.extents)
        return np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)]) * e
    if isinstance(shape, Cylinder):
        a = np.linspace(0.0, 2.0 * np.pi, 48, endpoint=False)
        # a circumscribed 48-gon: the circle lies inside it
        rr = shape.radius / np.cos(np.pi / 48)
        ring = np.stack([rr * np.cos(a), rr * np.sin(a)], axis=1)
        h = 0.5 * shape.length
        return np.concatenate([np.c_[ring, np.full(48, -h)], np.c_[ring, np.full(48, h)]])
    if isinstance(shape, Cone):  # the apex and a circumscribed 48-gon round the base
        a = np.linspace(0.0, 2.0 * np.pi, 48, endpoint=False)
        rr = shape.radius / np.cos(np.pi / 48)
        h = 0.5 * shape.length
        ring = np.c_[rr * np.cos(a), rr * np.sin(a), np.full(48, -h)]
        return np.concatenate([ring, [[0.0, 0.0, h]]])
    if isinstance(shape, (Sphere, Capsule)):
        h = 0.5 * shape.length if isinstance(shape, Capsule) else 0.0
        return np.array([[0.0, 0.0, -h], [0.0, 0.0, h]])
    raise TypeError(f"no bounding capsule for a {type(shape).__name__} piece")


def sweep_radius(shape) -> float:
    """The radius swept around `core_points` (0 for a shape that is its points' hull)."""
    return (
        float(getattr(shape, "radius", 0.0))
        if isinstance(shape, (Convex, Sphere, Capsule))
        else 0.0
    )


def bounding_capsule(shape) -> tuple[np.ndarray, np.ndarray, float]:
    """(p0, p1, r) of a capsule containing `shape` (its frame): along the principal axis of
    its points, the segment shortened from both ends while that lowers the volume."""
    v = core_points(shape)
    sweep = sweep_radius(shape)
    c = 0.5 * (v.min(axis=0) + v.max(axis=0))
    # the principal axis: V's first row (U of the points' size, N x N by default, is not needed)
    axis = (
        np.linalg.svd(v - c, full_matrices=False)[2][0] if len(v) > 1 else np.array([0.0, 0.0, 1.0])
    )
    t = (v - c) @ axis
    lo, hi = float(t.min()), float(t.max())
    s = np.linspace(0.0, 0.5, 51)[:, None]  # the 51 candidate segments at once
    a, b = lo + s * (hi - lo), hi - s * (hi - lo)
    r = np.linalg.norm((v - c) - np.clip(t, a, b)[..., None] * axis, axis=2).max(axis=1)
    vol = np.pi * r * r * (b[:, 0] - a[:, 0]) + 4.0 / 3.0 * np.pi * r**3
    i = int(np.argmin(vol))  # the first of equal volumes, as a scan would keep
    return c + float(a[i, 0]) * axis, c + float(b[i, 0]) * axis, float(r[i]) + sweep


def _segment_distances(p, a, b):
    """Distance of each point p (n, 1, 3) to segments a-b (m, 3): (n, m)."""
    ab = b - a
    den = np.maximum((ab * ab).sum(-1), 1e-300)
    t = np.clip(((p - a) * ab).sum(-1) / den, 0.0, 1.0)
    return np.linalg.norm(p - (a + t[..., None] * ab), axis=-1)


def _triangle_distances(v, tri):
    """Distance of each point of v (n, 3) to the nearest of the triangles tri (m, 3, 3)."""
    p = v[:, None, :]
    a, b, c = tri[:, 0], tri[:, 1], tri[:, 2]
    d = np.minimum(
        np.minimum(_segment_distances(p, a, b), _segment_distances(p, b, c)),
        _segment_distances(p, c, a),
    )
    n = np.cross(b - a, c - a)
    nn = np.linalg.norm(n, axis=-1)
    ok = nn > 1e-300
    n = n / np.where(ok, nn, 1.0)[:, None]
    h = ((p - a) * n).sum(-1)  # (n_points, m) signed plane distance
    q = p - h[..., None] * n  # projections on the planes
    # inside the triangle: on the inner side of its three edges
    inside = (
        ok
        & ((np.cross(b - a, q - a) * n).sum(-1) >= 0.0)
        & ((np.cross(c - b, q - b) * n).sum(-1) >= 0.0)
        & ((np.cross(a - c, q - c) * n).sum(-1) >= 0.0)
    )
    d = np.where(inside, np.minimum(d, np.abs(h)), d)
    return d.min(axis=1)


def _distances_to_hull(S: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Distance of each point of v to conv(S) (0 inside): to the nearest triangle of the
    hull's surface for points outside (of the polygon's fan when S is flat)."""
    from scipy.spatial import ConvexHull, QhullError

    try:
        h = ConvexHull(S)
    except QhullError:  # flat: the polygon in its plane, as a fan of triangles
        c = S.mean(axis=0)
        u, w = np.linalg.svd(S - c)[2][:2]
        ring = ConvexHull(np.stack([(S - c) @ u, (S - c) @ w], axis=1)).vertices
        tri = np.stack([S[np.full(len(ring) - 2, ring[0])], S[ring[1:-1]], S[ring[2:]]], axis=1)
        return _triangle_distances(v, tri)
    d = _triangle_distances(v, S[h.simplices])
    inside = (v @ h.equations[:, :3].T + h.equations[:, 3] <= 0.0).all(axis=1)
    return np.where(inside, 0.0, d)


def _distances_to_faces(V: np.ndarray, faces: np.ndarray, v: np.ndarray) -> np.ndarray:
    """`_distances_to_hull` of conv(V) given its outward triangles `faces` (m, 3) (a proved
    `HullFaces`, geometry/hull.py), without qhull."""
    n, off = face_planes(V, faces)
    inside = (v @ n.T - off <= 0.0).all(axis=1)
    return np.where(inside, 0.0, _triangle_distances(v, V[faces]))


def _farther_after_adding(S: np.ndarray, v: np.ndarray, d: np.ndarray) -> np.ndarray:
    """Each point's distance to conv(S) (v (n, 3), S's last point just added), from `d`, its
    distance to the hull before: the hull of more points holds the old one, so a point
    outside the new hull has its nearest point on a face kept from the old hull (at the old
    distance) or on a new face, all of which touch the added point; a point inside is at 0.
    Only the new faces are measured (a few, where `_distances_to_hull` measured all)."""
    from scipy.spatial import ConvexHull, QhullError

    try:
        h = ConvexHull(S)
    except QhullError:  # still flat: measure it whole
        return _distances_to_hull(S, v)
    new = h.simplices[(h.simplices == len(S) - 1).any(axis=1)]
    out = np.minimum(d, _triangle_distances(v, S[new])) if len(new) else d.copy()
    inside = (v @ h.equations[:, :3].T + h.equations[:, 3] <= 0.0).all(axis=1)
    return np.where(inside, 0.0, out)


def outer_hull(shape, k: int = OUTER_POINTS):
    """A shape containing `shape` with a hull of at most k points (module doc): greedy, from
    the extreme points along the principal axes, each step adding the hull vertex farthest
    from the hull so far."""
    if not isinstance(shape, Convex) or len(shape.hull.vertices) <= k:
        return shape
    v = np.asarray(shape.hull.vertices, float)
    c = v.mean(axis=0)
    idx = []
    for ax in np.linalg.svd(v - c)[2]:
        t = (v - c) @ ax
        for j in (int(t.argmax()), int(t.argmin())):
            if j not in idx:
                idx.append(j)
    d = _distances_to_hull(v[idx], v)
    while len(idx) < k:
        idx.append(int(d.argmax()))
        d = _farther_after_adding(v[idx], v, d)
    return Convex(v[idx], float(d.max()) + shape.radius)


def _capsule_pose(p0, p1) -> np.ndarray:
    """T_piece_capsule: the capsule's frame (origin at the segment's middle, z along it)."""
    T = np.eye(4)
    z = p1 - p0
    n = float(np.linalg.norm(z))
    z = z / n if n > 0.0 else np.array([0.0, 0.0, 1.0])
    x = np.cross(z, [1.0, 0.0, 0.0])
    if np.linalg.norm(x) < 0.5:
        x = np.cross(z, [0.0, 1.0, 0.0])
    x /= np.linalg.norm(x)
    T[:3, :3] = np.stack([x, np.cross(z, x), z], axis=1)
    T[:3, 3] = 0.5 * (p0 + p1)
    return T


_OUTER: dict = {}  # {shape: its outer hull}: a robot with an object attached shares the rest
_CAPSULES: dict = {}  # {shape: (its bounding Capsule, T_piece_capsule)}, the same way


def _known_outer(shape):
    """`outer_hull(shape)` when known without computing it, else None."""
    if not isinstance(shape, Convex) or len(shape.hull.vertices) <= OUTER_POINTS:
        return shape
    return _OUTER.get(shape)


def _compute_outer_hulls(pieces, label: str) -> list:
    """`outer_hull` of each piece, reported as a one-time build, a step per link
    (robot/progress.py: announced on stderr when it runs over 2 s; a dense robot's
    pieces of ~1,000 vertices take ~0.1 s each)."""
    links: dict[str, list[int]] = {}
    for i, p in enumerate(pieces):
        links.setdefault(p.link, []).append(i)
    outer = [_known_outer(p.shape) for p in pieces]
    todo = {k: [i for i in idx if outer[i] is None] for k, idx in links.items()}
    todo = {k: idx for k, idx in todo.items() if idx}
    if not todo:
        return outer
    desc = f"outer hulls of {label!r} ({sum(map(len, todo.values()))} pieces)"
    with Progress(None, len(todo), desc, log) as prog:
        for link, idx in todo.items():
            prog.step(f"link {link!r}: {len(idx)} pieces")
            for i in idx:
                outer[i] = _OUTER[pieces[i].shape] = outer_hull(pieces[i].shape)
    return outer


def _hull_arrays(outer, pieces) -> dict:
    """The cache entry's arrays of the outer hulls `outer` of `pieces` (count 0 for a piece
    that is its own)."""
    counts, points, radii = [], [np.zeros((0, 3))], []
    for o, p in zip(outer, pieces, strict=True):
        own = o is p.shape
        counts.append(0 if own else len(o.points))
        radii.append(0.0 if own else float(o.radius))
        if not own:
            points.append(np.asarray(o.points, float))
    faces = [None if o is p.shape else o.hull_faces for o, p in zip(outer, pieces, strict=True)]
    return {"counts": np.array(counts, np.int64), "points": np.concatenate(points),
            "radii": np.array(radii, float), **faces_arrays(faces)}  # fmt: skip


def _hulls_from(z: dict, pieces) -> list:
    """The outer hulls of a cache entry's arrays, each proved to hold its piece as
    `outer_hull` makes it (a subset of the piece's hull vertices, swept by a radius that
    reaches every other vertex: one distance pass, a tenth of building them), its own hull
    rebuilt from its stored faces (geometry/hull.py); ValueError otherwise."""
    counts, points, radii = z["counts"], z["points"], z["radii"]
    n = len(pieces)
    if len(counts) != n or len(radii) != n or counts.sum() != len(points):
        raise ValueError("its arrays do not match the robot's pieces")
    faces = faces_from_arrays(z, n)
    ends = np.concatenate([[0], np.cumsum(counts)])
    out = []
    for i, p in enumerate(pieces):
        own = _known_outer(p.shape) is p.shape
        if own != (counts[i] == 0):
            raise ValueError(f"piece {i} has an outer hull of {counts[i]} points")
        if own:
            if faces[i] is not None:
                raise ValueError(f"piece {i} is its own outer hull but has hull faces")
            out.append(p.shape)
            continue
        S, r = points[ends[i] : ends[i + 1]], float(radii[i])
        v = np.asarray(p.shape.hull.vertices, float)
        if counts[i] > OUTER_POINTS or not np.isin(_rows(S), _rows(v)).all():
            raise ValueError(f"piece {i}'s outer hull is not made of its vertices")
        o = Convex.with_hull_faces(S, r, faces[i])
        if o.hull.dim == 3 and o.hull_faces is not None:  # faces proved to bound its hull
            d = _distances_to_faces(o.hull.vertices, np.asarray(o.hull_faces.faces), v)
        else:  # a flat outer hull, or one its faces did not give: measured by qhull
            d = _distances_to_hull(S, v)
        if not d.max() + p.shape.radius <= r + CONTAIN_TOL:
            raise ValueError(f"piece {i}'s outer hull does not hold it")
        out.append(o)
    return out


def _rows(a: np.ndarray) -> np.ndarray:
    """Each row of a (k, 3) float64 array as one comparable item (its bytes)."""
    a = np.ascontiguousarray(a, np.float64)
    return a.view(np.dtype((np.void, 24))).ravel()


def _outer_hulls(pieces, cache_file, label: str = "robot"):
    """`outer_hull` of each piece, read from the cache entry `cache_file` (robot/cache.py;
    its key is its name, which holds the robot's geometry key) when it holds them, else
    computed (0.5 s for the Panda) and written there."""
    key = None if cache_file is None else cache_file.stem
    got: list = []
    if read_entry(cache_file, key, "outer hulls", lambda z: got.append(_hulls_from(z, pieces))):
        for p, o in zip(pieces, got[0], strict=True):
            if o is not p.shape:
                _OUTER[p.shape] = o
        return got[0]
    outer = _compute_outer_hulls(pieces, label)
    if cache_file is not None:
        write_entry(cache_file, key, _hull_arrays(outer, pieces))
    return outer


def piece_bounds(pieces, cache_file=None, label: str = "robot") -> tuple:
    """(outer ShapeTable, capsule ShapeTable, T_piece_capsule (n, 4, 4)) of a robot's pieces:
    shape i of each table bounds piece i. The outer hulls go through `cache_file` (None: no
    cache); `label` names the robot when their build is announced."""
    caps = []
    for p in pieces:  # each shape's capsule once per process (as its outer hull)
        if p.shape not in _CAPSULES:
            a, b, r = bounding_capsule(p.shape)
            _CAPSULES[p.shape] = (Capsule(r, float(np.linalg.norm(b - a))), _capsule_pose(a, b))
        caps.append(_CAPSULES[p.shape])
    outer = shape_table(_outer_hulls(pieces, cache_file, label))
    capsules = shape_table([c for c, _ in caps])
    poses = np.ascontiguousarray([T for _, T in caps], np.float64)
    return outer, capsules, poses.reshape(-1, 4, 4)
