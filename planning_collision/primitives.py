"""Primitive blocks: any shape as a set of convex primitives in the world frame.

`primitives(shape, T)` turns any shape into a `Primitives` block: a `ShapeTable` (the layout
of kernels/base/layout.py) plus a world pose and a world AABB per primitive. A convex shape is one
primitive; a `Mesh` is one 3-point CONVEX per triangle (world-frame vertices, identity pose:
FCL's surface semantics); a `PointCloud` is one SPHERE per point; a `VoxelGrid` one BOX per
occupied cell. Built with numpy, no Python loop over primitives. Scenes compile their
obstacles into blocks (kcd.py), and every scene query takes its query shape as one
(`query_block`).
"""

from __future__ import annotations

import weakref
from collections import OrderedDict
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from .geometry.clouds import PointCloud, VoxelGrid
from .geometry.pack import shape_table
from .geometry.poses import as_pose
from .geometry.shapes import (
    Box,
    Capsule,
    Cone,
    ConvexShape,
    Cylinder,
    Halfspace,
    Mesh,
    Shape,
    Sphere,
)
from .geometry.validate import positive_scalar
from .kernels.base import layout as L
from .kernels.scene.bvh import shape_world_aabb
from .kernels.scene.one_primitive import primitive_rows

__all__ = [
    "Primitives",
    "primitives",
    "posed_block",
    "convex_block",
    "convex_block_from_table",
    "primitive_block",
    "primitive_sizes",
    "primitive_table",
    "concat_primitives",
    "detail_filter",
    "ShapeCache",
    "query_table",
    "query_block",
]


class Primitives(NamedTuple):
    """A block of convex primitives in the world frame.

    tab : ShapeTable (kernels/base/layout.py) of the n primitives, each in its local frame.
    poses : (n, 4, 4) float64, T_world_prim.
    lo, hi : (n, 3) float64, world AABB of each primitive, m.
    """

    tab: L.ShapeTable
    poses: npt.NDArray[np.float64]
    lo: npt.NDArray[np.float64]
    hi: npt.NDArray[np.float64]

    def __len__(self):
        return self.tab.kind.shape[0]


def _table(kind, params, vcount, verts, adjcount, adj, aabb, brad, vsoa=None) -> L.ShapeTable:
    """A ShapeTable of these rows (`vsoa` computed unless given)."""
    n = kind.shape[0]
    vstart = np.zeros(n + 1, np.int32)
    np.cumsum(vcount, out=vstart[1:])
    adjstart = np.zeros(verts.shape[0] + 1, np.int32)
    np.cumsum(adjcount, out=adjstart[1:])
    verts = np.ascontiguousarray(verts, np.float64).reshape(-1, 3)
    return L.ShapeTable(
        np.ascontiguousarray(kind, np.int32),
        np.ascontiguousarray(params, np.float64),
        vstart,
        verts,
        adjstart,
        np.ascontiguousarray(adj, np.int32),
        np.ascontiguousarray(aabb, np.float64),
        np.ascontiguousarray(brad, np.float64),
        L.soa_vertices(verts, vstart) if vsoa is None else vsoa,
    )


def _pointless_table(kind, params, aabb, brad) -> L.ShapeTable:
    """A table of primitives without points (spheres, boxes, ...): no vertices, no hull
    adjacency."""
    n = kind.shape[0]
    return _table(
        kind,
        params,
        np.zeros(n, np.int64),
        np.zeros((0, 3)),
        np.zeros(0, np.int64),
        np.zeros(0, np.int32),
        aabb,
        brad,
        np.zeros(0),
    )


def primitive_sizes(shapes) -> tuple[np.ndarray, np.ndarray]:
    """(kind (n,) int32, size (n, 3)) of spheres, boxes, capsules, cylinders and cones:
    what `primitive_block` takes (kernels/scene/one_primitive.py `primitive_rows` says what size
    holds per kind). Any other shape: TypeError."""
    n = len(shapes)
    kind = np.empty(n, np.int32)
    a = np.zeros((n, 3))
    for i, s in enumerate(shapes):
        t = type(s)
        if t is Box:
            kind[i] = L.BOX
            a[i] = s.extents
        elif t is Sphere:
            kind[i] = L.SPHERE
            a[i, 0] = s.radius
        elif t is Capsule:
            kind[i], a[i, 0], a[i, 1] = L.CAPSULE, s.radius, s.length
        elif t is Cylinder or t is Cone:
            kind[i] = L.CYLINDER if t is Cylinder else L.CONE
            a[i, 0], a[i, 1] = s.radius, s.length
        else:
            raise TypeError(f"primitive_sizes takes one-primitive shapes, got {t.__name__}")
    return kind, a


_NO_POINTS = np.zeros((0, 3))
_NO_I32 = np.zeros(0, np.int32)
_NO_F64 = np.zeros(0)


def _read_only(a: np.ndarray) -> np.ndarray:
    if not a.flags.writeable:
        return a
    v = a.view()
    v.flags.writeable = False
    return v


def primitive_block(kind, size, poses) -> Primitives:
    """One-primitive shapes given as arrays (`primitive_sizes`; validated by the caller),
    posed by ``poses (n, 4, 4)``, as one block: their table and world AABBs written by one
    compiled loop (kernels/scene/one_primitive.py `primitive_rows`), the arrays `shape_table` and
    `convex_block` would make. The block's arrays are new and writeable (a flat scene's
    arrays are: kcd.py)."""
    kind = np.ascontiguousarray(kind, np.int32)
    size = np.ascontiguousarray(size, np.float64)
    poses = np.ascontiguousarray(poses, np.float64)
    n = kind.shape[0]
    params = np.empty((n, L.N_PARAMS))
    aabb = np.empty((n, 6))
    brad = np.empty(n)
    lo = np.empty((n, 3))
    hi = np.empty((n, 3))
    # read-only inputs, always: one compiled signature whoever calls
    kind, size, poses = _read_only(kind), _read_only(size), _read_only(poses)
    primitive_rows(kind, size, poses, params, aabb, brad, lo, hi)
    tab = L.ShapeTable(
        kind=np.array(kind, np.int32),
        params=params,
        vstart=np.zeros(n + 1, np.int32),
        verts=_NO_POINTS,
        adjstart=np.zeros(1, np.int32),
        adj=_NO_I32,
        aabb=aabb,
        brad=brad,
        vsoa=_NO_F64,
    )
    return Primitives(tab, poses.copy(), lo, hi)


def primitive_table(shapes) -> L.ShapeTable:
    """`shape_table` of spheres, boxes, capsules, cylinders and cones (no core points), the
    rows written by one compiled loop (`primitive_block`): the same table. Any other shape:
    TypeError."""
    kind, size = primitive_sizes(shapes)
    return primitive_block(kind, size, np.broadcast_to(np.eye(4), (len(shapes), 4, 4))).tab


def _translations(R, t, centres) -> np.ndarray:
    """Poses (n, 4, 4) with rotation R and origins R @ centres + t."""
    n = centres.shape[0]
    P = np.zeros((n, 4, 4))
    P[:, :3, :3] = R
    P[:, :3, 3] = centres @ R.T + t
    P[:, 3, 3] = 1.0
    return P


def _box_world_aabb(R, centres_w, half):
    """World AABB of boxes with rotation R, world centres (n, 3), local half extents (n, 3)."""
    ext = half @ np.abs(R).T
    return centres_w - ext, centres_w + ext


def primitives(shape: Shape, T) -> Primitives:
    """`shape` posed by ``T (4, 4)`` as a block of convex primitives (see module doc)."""
    return posed_block(shape, as_pose(T))


def convex_block(shapes, poses) -> Primitives:
    """Bounded convex shapes (not halfspaces) posed by ``poses (k, 4, 4)`` (validated by the
    caller) as one block, with world AABBs computed per kind at once: exact for spheres,
    capsules, cylinders, boxes and point hulls; the rotated local box for cones."""
    return convex_block_from_table(shape_table(shapes), poses)


def convex_block_from_table(tab: L.ShapeTable, poses) -> Primitives:
    """`convex_block` for shapes already packed in `tab` (shape i posed by poses[i])."""
    P = np.ascontiguousarray(poses, dtype=np.float64).reshape(-1, 4, 4)
    R, t = P[:, :3, :3], P[:, :3, 3]
    kind, par = tab.kind, tab.params
    r = par[:, 0:1]
    az = np.abs(R[:, :, 2])  # |world components of local z|
    # default: the local AABB rotated (boxes exact; cones conservative)
    c_loc = 0.5 * (tab.aabb[:, :3] + tab.aabb[:, 3:])
    h_loc = 0.5 * (tab.aabb[:, 3:] - tab.aabb[:, :3])
    ext = np.einsum("kij,kj->ki", np.abs(R), h_loc)
    ctr = np.einsum("kij,kj->ki", R, c_loc) + t
    cap = kind == L.CAPSULE
    ext[cap] = (az * par[:, 1:2] + r)[cap]
    cyl = kind == L.CYLINDER
    ext[cyl] = (az * par[:, 2:3] + par[:, 1:2] * np.sqrt(np.maximum(0.0, 1.0 - az * az)))[cyl]
    sph = kind == L.SPHERE
    ext[sph] = np.repeat(r[sph], 3, axis=1)
    ctr[cap | cyl | sph] = t[cap | cyl | sph]
    lo, hi = ctr - ext, ctr + ext
    for i in np.flatnonzero(kind == L.CONVEX):  # hull vertices, posed
        w = tab.verts[tab.vstart[i] : tab.vstart[i + 1]] @ R[i].T + t[i]
        lo[i] = w.min(axis=0) - par[i, 0]
        hi[i] = w.max(axis=0) + par[i, 0]
    return Primitives(tab, P.copy(), lo, hi)


def posed_block(shape: Shape, T: np.ndarray) -> Primitives:
    """`primitives` for a pose ``T (4, 4)`` the caller has validated."""
    R, t = T[:3, :3], T[:3, 3]
    if isinstance(shape, Halfspace):
        tab = shape_table([shape])
        inf = np.full((1, 3), np.inf)
        return Primitives(tab, T[None].copy(), -inf, inf)
    if isinstance(shape, ConvexShape):
        return convex_block([shape], T[None])
    if isinstance(shape, Mesh):
        tri = (shape.vertices @ R.T + t)[shape.faces]  # (m, 3, 3) world
        m = tri.shape[0]
        lo, hi = tri.min(axis=1), tri.max(axis=1)
        aabb = np.concatenate([lo, hi], axis=1)
        brad = np.sqrt((tri * tri).sum(axis=2)).max(axis=1)
        tab = _table(
            np.full(m, L.CONVEX, np.int32),
            np.zeros((m, L.N_PARAMS)),
            np.full(m, 3),
            tri.reshape(-1, 3),
            np.zeros(3 * m, np.int64),
            np.zeros(0, np.int32),
            aabb,
            brad,
        )
        poses = np.broadcast_to(np.eye(4), (m, 4, 4)).copy()
        return Primitives(tab, poses, lo, hi)
    if isinstance(shape, PointCloud):
        c = shape.points @ R.T + t
        n = c.shape[0]
        r = shape.radius
        params = np.zeros((n, L.N_PARAMS))
        params[:, 0] = r
        aabb = np.tile(np.array([-r, -r, -r, r, r, r]), (n, 1))
        tab = _pointless_table(np.full(n, L.SPHERE, np.int32), params, aabb, np.full(n, r))
        poses = _translations(np.eye(3), np.zeros(3), c)
        poses[:, :3, :3] = R
        return Primitives(tab, poses, c - r, c + r)
    if isinstance(shape, VoxelGrid):
        centres = shape.centers
        n = centres.shape[0]
        s = 0.5 * shape.voxel_size
        params = np.zeros((n, L.N_PARAMS))
        params[:, 1:4] = s
        aabb = np.tile(np.array([-s, -s, -s, s, s, s]), (n, 1))
        poses = _translations(R, t, centres)
        lo, hi = _box_world_aabb(R, poses[:, :3, 3], np.full((n, 3), s))
        tab = _pointless_table(
            np.full(n, L.BOX, np.int32), params, aabb, np.full(n, s * np.sqrt(3.0))
        )
        return Primitives(tab, poses, lo, hi)
    raise TypeError(f"{type(shape).__name__} is not a shape (expected a planning_collision shape)")


def concat_primitives(blocks) -> Primitives:
    """One block from several (indices renumbered)."""
    blocks = list(blocks)
    if len(blocks) == 1:
        return blocks[0]
    if not blocks:
        return Primitives(
            _pointless_table(
                np.zeros(0, np.int32), np.zeros((0, L.N_PARAMS)), np.zeros((0, 6)), np.zeros(0)
            ),
            np.zeros((0, 4, 4)),
            np.zeros((0, 3)),
            np.zeros((0, 3)),
        )
    tabs = [b.tab for b in blocks]
    return Primitives(
        _table(
            np.concatenate([t.kind for t in tabs]),
            np.concatenate([t.params for t in tabs]),
            np.concatenate([t.vstart[1:] - t.vstart[:-1] for t in tabs]),
            np.concatenate([t.verts for t in tabs]),
            np.concatenate([t.adjstart[1:] - t.adjstart[:-1] for t in tabs]),
            np.concatenate([t.adj for t in tabs]),
            np.concatenate([t.aabb for t in tabs]),
            np.concatenate([t.brad for t in tabs]),
            # a shape's x.., y.., z.. blocks start at 3 * vstart: concatenation keeps them
            np.concatenate([t.vsoa for t in tabs]),
        ),
        np.concatenate([b.poses for b in blocks]),
        np.concatenate([b.lo for b in blocks]),
        np.concatenate([b.hi for b in blocks]),
    )


def detail_filter(prims: Primitives, min_size: float) -> tuple[Primitives, int]:
    """KCD's detail filter: every primitive whose world AABB volume is below ``min_size**3``
    is replaced by that AABB, as a world-aligned BOX. Conservative: the box contains the
    primitive, so collisions are only ever added. Returns (block, number replaced).
    Halfspaces (unbounded) are never replaced."""
    v = positive_scalar("min_size", min_size)
    ext = prims.hi - prims.lo
    vol = np.prod(ext, axis=1)
    rep = np.isfinite(vol) & (vol < v**3)
    nrep = int(rep.sum())
    if nrep == 0:
        return prims, 0
    tab = prims.tab
    vcount = np.diff(tab.vstart)
    keepv = np.repeat(~rep, vcount)
    adjcount = np.diff(tab.adjstart)
    keepa = np.repeat(keepv, adjcount)
    half = 0.5 * ext[rep]
    params = tab.params.copy()
    params[rep] = 0.0
    params[rep, 1:4] = half
    aabb = tab.aabb.copy()
    aabb[rep] = np.concatenate([-half, half], axis=1)
    brad = tab.brad.copy()
    brad[rep] = np.linalg.norm(half, axis=1)
    kind = tab.kind.copy()
    kind[rep] = L.BOX
    poses = prims.poses.copy()
    poses[rep] = _translations(np.eye(3), np.zeros(3), 0.5 * (prims.lo[rep] + prims.hi[rep]))
    out = _table(
        kind,
        params,
        np.where(rep, 0, vcount),
        tab.verts[keepv],
        adjcount[keepv],
        tab.adj[keepa],
        aabb,
        brad,
    )
    return Primitives(out, poses, prims.lo, prims.hi), nrep


# ---------------------------------------------------------------------------------------
# query shapes


class ShapeCache:
    """A bounded cache of something derived from a shape, keyed by the shape's identity
    (shapes are immutable; a weak reference drops a stale entry whose id was reused).
    ``get(shape, build)`` returns ``build(shape)``, computed once while cached."""

    def __init__(self, size: int):
        self._size = int(size)
        self._items: OrderedDict = OrderedDict()

    def get(self, shape, build):
        key = id(shape)
        hit = self._items.get(key)
        if hit is not None and hit[0]() is shape:
            self._items.move_to_end(key)
            return hit[1]
        value = build(shape)
        self._items[key] = (weakref.ref(shape), value)
        while len(self._items) > self._size:
            self._items.popitem(last=False)
        return value


_QUERY_TABLES = ShapeCache(256)


def query_table(shape: ConvexShape) -> L.ShapeTable:
    """The one-shape table of a (bounded) convex query shape, cached by identity: a link
    queried at many poses is packed once."""
    return _QUERY_TABLES.get(shape, lambda s: shape_table([s]))


def query_block(shape: Shape, T) -> Primitives:
    """The query shape posed by ``T (4, 4)`` as a block of primitives (what the scene
    traversal takes as its query): one primitive for a convex shape (its table cached by
    identity, see `query_table`), many for a mesh or a cloud."""
    if not isinstance(shape, Shape):
        raise TypeError(f"shape must be a planning_collision shape, got {type(shape).__name__}")
    T = as_pose(T, "T")
    if isinstance(shape, ConvexShape) and not isinstance(shape, Halfspace):
        tab = query_table(shape)
        lo = np.empty((1, 3))
        hi = np.empty((1, 3))
        shape_world_aabb(tab, 0, T, lo[0], hi[0])
        return Primitives(tab, T[None], lo, hi)
    return posed_block(shape, T)
