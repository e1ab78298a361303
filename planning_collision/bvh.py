"""Primitives and BVHs: non-convex shapes as sets of convex primitives, and binary BVHs over
their AABBs (DESIGN §3, §5; FlatBVH layout in STYLE §3).

- `primitives(shape, T)` turns any shape into a `Primitives` block: a `ShapeTable` (the layout
  of kernels/layout.py) plus a world pose and a world AABB per primitive. A convex shape is
  one primitive; a `Mesh` is one 3-point CONVEX per triangle (world-frame vertices, identity
  pose: FCL's surface semantics); a `PointCloud` is one SPHERE per point; a `VoxelGrid` one
  BOX per occupied cell. Built with numpy, no Python loop over primitives.
- `build_bvh(lo, hi)` / `build_bvh_forest(lo, hi, segment)`: binary BVHs by median split of
  the centroids along the widest axis, built level by level with vectorised numpy (all nodes
  of a level are split by one segmented sort).
- `nonconvex_distance` / `nonconvex_collide`: the public queries of a non-convex shape (Mesh,
  PointCloud, VoxelGrid) against a convex shape, or of two meshes, through the same kernels a
  `Scene` uses.
"""

from __future__ import annotations

import weakref
from collections import OrderedDict
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from .geometry.clouds import PointCloud, VoxelGrid
from .geometry.compile import shape_table
from .geometry.shapes import ConvexShape, Halfspace, Mesh, Shape
from .geometry.validate import as_pose, positive_scalar
from .kernels import layout as L
from .kernels.bvh import FlatBVH

__all__ = [
    "FlatBVH",
    "Primitives",
    "primitives",
    "concat_primitives",
    "detail_filter",
    "build_bvh",
    "build_bvh_forest",
    "nonconvex_distance",
    "nonconvex_collide",
]

# Leaves hold at most this many primitives: a leaf test is one GJK per primitive, a node
# test one AABB check; 4 keeps trees shallow without many wasted narrowphase calls.
LEAF_SIZE = 4


class Primitives(NamedTuple):
    """A block of convex primitives in the world frame.

    tab : ShapeTable (kernels/layout.py) of the n primitives, each in its local frame.
    poses : (n, 4, 4) float64, T_world_prim.
    lo, hi : (n, 3) float64, world AABB of each primitive, m.
    """

    tab: L.ShapeTable
    poses: npt.NDArray[np.float64]
    lo: npt.NDArray[np.float64]
    hi: npt.NDArray[np.float64]

    def __len__(self):
        return self.tab.kind.shape[0]


def _table(kind, params, vcount, verts, adjcount, adj, aabb, brad) -> L.ShapeTable:
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
        L.soa_vertices(verts, vstart),
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
    )


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
    return _primitives(shape, as_pose(T))


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


def _primitives(shape: Shape, T: np.ndarray) -> Primitives:
    """`primitives` for a pose the caller has validated."""
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
            np.concatenate([np.diff(t.vstart) for t in tabs]),
            np.concatenate([t.verts for t in tabs]),
            np.concatenate([np.diff(t.adjstart) for t in tabs]),
            np.concatenate([t.adj for t in tabs]),
            np.concatenate([t.aabb for t in tabs]),
            np.concatenate([t.brad for t in tabs]),
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
# BVH build


def build_bvh_forest(lo, hi, segment=None, leaf_size: int = LEAF_SIZE):
    """Binary BVHs over boxes ``lo, hi (n, 3)``, one tree per value of ``segment (n,)``.

    Median split of the box centres along the widest axis of their spread, every level of
    every tree in one segmented sort (vectorised numpy; O(n log^2 n)). Returns
    ``(FlatBVH, roots)`` where ``roots[s]`` is the root node of segment ``s`` (segments are
    numbered 0..S-1 by their sorted labels; ``order`` lists primitive indices, each leaf
    holds ``order[first:first+count]``).
    """
    lo = np.ascontiguousarray(lo, np.float64).reshape(-1, 3)
    hi = np.ascontiguousarray(hi, np.float64).reshape(-1, 3)
    n = lo.shape[0]
    if segment is None:
        segment = np.zeros(n, np.int64)
    segment = np.asarray(segment)
    if n == 0:
        z = np.zeros(0, np.int32)
        return FlatBVH(
            np.zeros((0, 3)), np.zeros((0, 3)), z, z.copy(), z.copy(), z.copy(), z.copy()
        ), z.copy()
    c = 0.5 * (np.where(np.isfinite(lo), lo, 0.0) + np.where(np.isfinite(hi), hi, 0.0))
    order = np.argsort(segment, kind="stable")
    _, starts, counts = np.unique(segment[order], return_index=True, return_counts=True)
    roots = np.arange(starts.size, dtype=np.int64)
    # node records (grown per level)
    first = [starts.astype(np.int64)]
    count = [counts.astype(np.int64)]
    level_nodes = [np.arange(starts.size)]  # global ids of the nodes of each level
    nnodes = starts.size
    cur_ids = np.arange(starts.size)
    cur_first, cur_count = starts.astype(np.int64), counts.astype(np.int64)
    left = {}
    while True:
        split = cur_count > leaf_size
        if not split.any():
            break
        ids, f, k = cur_ids[split], cur_first[split], cur_count[split]
        # the primitives of the nodes being split, labelled by node
        lab = np.repeat(np.arange(ids.size), k)
        pos = np.repeat(f, k) + (np.arange(lab.size) - np.repeat(np.cumsum(k) - k, k))
        prim = order[pos]
        cc = c[prim]
        seg_starts = np.cumsum(k) - k
        cmin = np.minimum.reduceat(cc, seg_starts, axis=0)
        cmax = np.maximum.reduceat(cc, seg_starts, axis=0)
        axis = np.argmax(cmax - cmin, axis=1)
        key = cc[np.arange(lab.size), axis[lab]]
        srt = np.lexsort((key, lab))
        order[pos] = prim[srt]
        half = k // 2
        lid = nnodes + 2 * np.arange(ids.size)
        rid = lid + 1
        nnodes += 2 * ids.size
        left[len(left)] = (ids, lid, rid)
        new_first = np.empty(2 * ids.size, np.int64)
        new_count = np.empty(2 * ids.size, np.int64)
        new_first[0::2], new_first[1::2] = f, f + half
        new_count[0::2], new_count[1::2] = half, k - half
        new_ids = np.empty(2 * ids.size, np.int64)
        new_ids[0::2], new_ids[1::2] = lid, rid
        first.append(new_first)
        count.append(new_count)
        level_nodes.append(new_ids)
        cur_ids, cur_first, cur_count = new_ids, new_first, new_count
    # node ids are assigned level by level, so concatenation is in id order
    first = np.concatenate(first)
    count = np.concatenate(count)
    L_ = np.full(nnodes, -1, np.int64)
    R_ = np.full(nnodes, -1, np.int64)
    for ids, lid, rid in left.values():
        L_[ids], R_[ids] = lid, rid
    leaf = L_ < 0
    blo = np.empty((nnodes, 3))
    bhi = np.empty((nnodes, 3))
    lf = np.flatnonzero(leaf)
    # leaf boxes: reduce the primitive boxes over each leaf's contiguous run of `order`
    srt = np.argsort(first[lf], kind="stable")
    lf = lf[srt]
    olo, ohi = lo[order], hi[order]
    blo[lf] = np.minimum.reduceat(olo, first[lf], axis=0)
    bhi[lf] = np.maximum.reduceat(ohi, first[lf], axis=0)
    # internal boxes bottom-up, one level at a time (children live on the next level)
    for ids, lid, rid in reversed(list(left.values())):
        blo[ids] = np.minimum(blo[lid], blo[rid])
        bhi[ids] = np.maximum(bhi[lid], bhi[rid])
    cnt = np.where(leaf, count, 0)
    fst = np.where(leaf, first, 0)
    bvh = FlatBVH(
        np.ascontiguousarray(blo),
        np.ascontiguousarray(bhi),
        L_.astype(np.int32),
        R_.astype(np.int32),
        fst.astype(np.int32),
        cnt.astype(np.int32),
        order.astype(np.int32),
    )
    return bvh, roots.astype(np.int32)


def build_bvh(lo, hi, leaf_size: int = LEAF_SIZE) -> FlatBVH:
    """One binary BVH over boxes ``lo, hi (n, 3)``; the root is node 0."""
    return build_bvh_forest(lo, hi, None, leaf_size)[0]


# ---------------------------------------------------------------------------------------
# Public queries with non-convex shapes

# Compiled local-frame forms of recently queried non-convex shapes, keyed by object identity
# (shapes are immutable; a weak reference drops the entry with the shape).
_LOCAL_CACHE: OrderedDict = OrderedDict()
_LOCAL_CACHE_SIZE = 32


_QUERY_TABLES: OrderedDict = OrderedDict()


def query_table(shape: ConvexShape) -> L.ShapeTable:
    """The one-shape table of a (bounded) convex query shape, cached by identity: a link
    queried at many poses is packed once."""
    key = id(shape)
    hit = _QUERY_TABLES.get(key)
    if hit is not None and hit[0]() is shape:
        _QUERY_TABLES.move_to_end(key)
        return hit[1]
    tab = shape_table([shape])
    _QUERY_TABLES[key] = (weakref.ref(shape), tab)
    while len(_QUERY_TABLES) > 256:
        _QUERY_TABLES.popitem(last=False)
    return tab


def _local_flat(shape: Shape):
    """The shape in its own frame as a one-object `FlatScene` (cached)."""
    key = id(shape)
    hit = _LOCAL_CACHE.get(key)
    if hit is not None and hit[0]() is shape:
        _LOCAL_CACHE.move_to_end(key)
        return hit[1]
    from .scene import _compile, _flatten

    flat = _flatten([_compile([(shape, np.eye(4))], None)])
    _LOCAL_CACHE[key] = (weakref.ref(shape), flat)
    while len(_LOCAL_CACHE) > _LOCAL_CACHE_SIZE:
        _LOCAL_CACHE.popitem(last=False)
    return flat


def _is_convex(s) -> bool:
    return isinstance(s, ConvexShape)


def _rel(Ta, Tb):
    """T_b_a = Tb^-1 Ta for rigid transforms, re-orthonormalised against round-off."""
    Rb, tb = Tb[:3, :3], Tb[:3, 3]
    out = np.eye(4)
    out[:3, :3] = Rb.T @ Ta[:3, :3]
    out[:3, 3] = Rb.T @ (Ta[:3, 3] - tb)
    u, _, vt = np.linalg.svd(out[:3, :3])
    out[:3, :3] = u @ vt
    return out


def _check_pair(a, Ta, b, Tb):
    for name, s in (("a", a), ("b", b)):
        if not isinstance(s, Shape):
            raise TypeError(f"{name} must be a planning_collision shape, got {type(s).__name__}")
    return as_pose(Ta, "Ta"), as_pose(Tb, "Tb")


def nonconvex_distance(a: Shape, Ta, b: Shape, Tb):
    """Signed distance between `a` posed by ``Ta (4, 4)`` and `b` posed by ``Tb (4, 4)`` when
    either is non-convex (Mesh, PointCloud, VoxelGrid; both may be). The minimum over their
    convex primitives (a Mesh is its triangles: a surface). Returns
    DistanceResult(distance, point_a, point_b, normal) in the world frame, normal a -> b."""
    from .results import DistanceResult

    Ta, Tb = _check_pair(a, Ta, b, Tb)
    swap = _is_convex(b)  # the BVH side must be non-convex: put it second
    if swap:
        a, Ta, b, Tb = b, Tb, a, Ta
    out = _query_local(a, Ta, b, Tb, distance=True)
    Rb, tb = Tb[:3, :3], Tb[:3, 3]
    pa = Rb @ out[1:4] + tb
    pb = Rb @ out[4:7] + tb
    n = Rb @ out[7:10]
    if swap:
        pa, pb, n = pb, pa, -n
    return DistanceResult(float(out[0]), pa, pb, n)


def nonconvex_collide(a: Shape, Ta, b: Shape, Tb, margin: float = 0.0) -> bool:
    """True iff the signed distance between `a` posed by `Ta` and `b` posed by `Tb` is
    <= margin (m), when either is non-convex. Returns at the first primitive pair found."""
    Ta, Tb = _check_pair(a, Ta, b, Tb)
    margin = positive_scalar("margin", margin, allow_zero=True)
    if _is_convex(b):
        a, Ta, b, Tb = b, Tb, a, Ta
    return bool(_query_local(a, Ta, b, Tb, distance=False, margin=margin))


def _query_local(a, Ta, b, Tb, distance: bool, margin: float = 0.0):
    """`a` against non-convex `b`, in b's frame (b's compiled form is reused across poses)."""
    from .kernels.bvh import STACK_SIZE
    from .kernels.pair import new_workspace
    from .kernels.scene_query import scene_collide, scene_distance

    flat = _local_flat(b)
    q = _primitives(a, _rel(Ta, Tb))
    ws = new_workspace()
    stack = np.zeros((STACK_SIZE, 2), np.int32)
    if distance:
        best = np.full((1, L.OUT_SIZE), np.nan)
        best[0, 0] = np.inf
        arg = scene_distance(
            flat, q.tab, q.poses, q.lo, q.hi, np.inf, False, best, ws, np.zeros(L.OUT_SIZE), stack
        )
        if arg == -2:
            raise RuntimeError("BVH traversal stack overflow")
        return best[0]
    hit = np.zeros(1, np.uint8)
    n = scene_collide(flat, q.tab, q.poses, q.lo, q.hi, margin, True, hit, ws, stack)
    if n == -2:
        raise RuntimeError("BVH traversal stack overflow")
    return n > 0
