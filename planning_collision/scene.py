"""Scene: static obstacles, KCD grouping, and the collision-world API (DESIGN §5).

::

    import numpy as np
    import planning_collision as pc

    scene = pc.Scene()
    table = scene.add(pc.Box((1.0, 1.0, 0.05)), np.eye(4), name="table")
    T = np.eye(4); T[2, 3] = 0.1
    scene.collide_object(pc.Sphere(0.08), T)          # [table]: sorted ids in collision
    scene.min_distance(pc.Sphere(0.05), T)            # DistanceResult(..., id=table)
    scene.distances(pc.Sphere(0.05), T, max_distance=0.5)  # [(id, DistanceResult), ...]

**Objects.** ``add(shape, T, name)`` takes any shape (convex shapes, ``Halfspace``, ``Mesh``,
``PointCloud``, ``VoxelGrid``) or a *compound*: a list of ``(shape, T_object_part)`` pairs
posed together by ``T`` (a MoveIt collision object with several shapes). Each object is
compiled into convex primitives when it is added (so a bad object raises there and leaves
the scene unchanged): one per convex shape, one 3-point convex per mesh triangle, one ball
per cloud point, one box per voxel.

**KCD grouping** (Van Geem & Siméon, IROS 2001), done per object when it is added:

1. an AABB per primitive;
2. primitives of the object whose AABBs overlap (transitively) form a *group*; each group gets
   a binary BVH over its primitives (median split);
3. groups of the object whose AABBs overlap are merged under a parent node, repeated until
   no two nodes of a level overlap: a multi-child AABB tree per object;
4. ``min_size=v`` (detail filter): a primitive whose AABB volume is below ``v**3`` is replaced
   by that AABB as a box (conservative: collisions are only ever added).

On ``build()`` (implied by the first query) the objects' trees are joined under a wide BVH
(SAH, up to WIDTH children a node) over their top nodes, and all arrays are concatenated
into one `FlatScene` that numba kernels take as one argument. A top node that is mostly
empty space (a frame bay, pipes far apart) is first opened into its children, down into
its groups' BVHs if need be (`_open_tops`), so the top tree can sort them among their
neighbours. ``add``/``remove`` never regroup other objects: the touched object is
compiled alone, and only the top tree (over group boxes, a few ms) and the concatenation
are redone at the next query. Halfspaces are unbounded and kept in a separate list every
query tests.

A scene holds one scratch workspace: use one Scene per thread.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from .bvh import (
    LEAF_SIZE,
    Primitives,
    _primitives,
    build_bvh,
    concat_primitives,
    convex_block,
    detail_filter,
    query_table,
)
from .geometry.shapes import ConvexShape, Halfspace, Shape
from .geometry.validate import ROTATION_TOL, as_pose, finite_scalar, positive_scalar
from .kernels.bvh import (
    STACK_SIZE,
    FlatBVH,
    overlap_components,
    overlap_components_brute,
    sah_forest,
    shape_world_aabb,
    wide_tree,
)
from .kernels.layout import OUT_SIZE
from .kernels.pair import new_workspace
from .kernels.scene_query import FlatScene, scene_candidates, scene_collide, scene_distance
from .results import DistanceResult

__all__ = ["Scene", "Obstacle", "FlatScene", "query_block", "flat_bvh_scene"]

log = logging.getLogger(__name__)


class Obstacle(NamedTuple):
    """What `Scene.get` returns: the object as it was added."""

    id: int
    name: str | None
    shape: object  # a Shape, or a list of (Shape, T_object_part) pairs
    T: npt.NDArray[np.float64]


class _Block(NamedTuple):
    """One object compiled alone, in object-local numbering."""

    prims: Primitives
    unbounded: np.ndarray  # local primitive indices without finite AABB
    bvh: FlatBVH  # forest, one tree per group; order = local primitive indices
    kt_lo: np.ndarray
    kt_hi: np.ndarray
    kt_ccount: np.ndarray  # children per node
    kt_child: np.ndarray  # local kt ids
    kt_group: np.ndarray  # local bvh root, or -1
    top: np.ndarray  # local kt ids of the object's top level
    n_replaced: int  # primitives the detail filter replaced


# Below this many boxes, grouping tests all pairs instead of building a tree first.
_BRUTE_GROUPING = 64


def _components(lo: np.ndarray, hi: np.ndarray) -> tuple[int, np.ndarray]:
    """Connected components of the AABB-overlap graph of boxes (lo, hi)."""
    n = lo.shape[0]
    if n == 1:
        return 1, np.zeros(1, np.int64)
    labels = np.empty(n, np.int64)
    if n <= _BRUTE_GROUPING:
        k = overlap_components_brute(lo, hi, np.zeros(n, np.int32), labels)
        return int(k), labels
    tree = build_bvh(lo, hi)
    k = overlap_components(
        tree, 0, lo, hi, np.zeros(n, np.int32), np.empty(STACK_SIZE, np.int32), labels
    )
    if k < 0:  # cannot happen for a median-split tree; guard the kernel's contract
        raise RuntimeError("BVH traversal stack overflow while grouping")
    return int(k), labels


def _parts(shape, T, where: str):
    """The (shape, T_world_part) pairs of an object, validated."""
    if isinstance(shape, Shape):
        return [(shape, T)]
    if (
        isinstance(shape, (list, tuple))
        and shape
        and all(isinstance(p, (list, tuple)) and len(p) == 2 for p in shape)
    ):
        for k, (s, _) in enumerate(shape):
            if not isinstance(s, Shape):
                raise TypeError(f"{where} part {k}: expected a shape, got {type(s).__name__}")
        Tl = _as_poses([p[1] for p in shape], where)
        return list(zip([p[0] for p in shape], T @ Tl, strict=False))
    raise TypeError(
        f"{where}: expected a shape or a non-empty list of (shape, T_object_part) pairs, "
        f"got {type(shape).__name__}"
    )


def _as_poses(poses, where: str) -> np.ndarray:
    """(k, 4, 4) rigid transforms, checked at once; on failure, the first bad one is named
    with as_pose's message."""
    try:
        P = np.asarray(poses, dtype=np.float64)
        ok = P.ndim == 3 and P.shape[1:] == (4, 4) and bool(np.all(np.isfinite(P)))
    except (TypeError, ValueError):
        ok = False
    if ok:
        R = P[:, :3, :3]
        err = np.abs(np.einsum("kji,kjl->kil", R, R) - np.eye(3)).max(axis=(1, 2))
        ok = (
            bool(np.all(np.abs(P[:, 3] - (0.0, 0.0, 0.0, 1.0)) <= 1e-12))
            and bool(np.all(err <= ROTATION_TOL))
            and bool(np.all(np.linalg.det(R) > 0.0))
        )
    if ok:
        return P
    for k, Tl in enumerate(poses):
        as_pose(Tl, f"{where} part {k} pose")
    raise AssertionError("unreachable: a pose failed the batch check but not as_pose")


# A KCD node with more children than this gets a wide BVH over them instead (a traversal
# pushes all children of a node at once: the fan-out bounds the stack it needs).
FANOUT = 8
# Children per node of the BVHs over KCD nodes (over a large component's members, and over
# all objects' top nodes): a node's children are tested in one loop over boxes stored side
# by side, which costs less than popping each one; 4 tested fewest boxes per query on the
# factory of demos/bench_scene.py (2 and 8 more).
WIDTH = 4
# Before the top tree is built, an object's node whose box's surface area exceeds OPEN_RATIO
# times the sum of its children's is replaced by its children (repeatedly, down into the
# group BVHs): see _open_tops. On the factory of demos/bench_scene.py, per capsule query,
# no opening: 41 boxes and 1.29 pairs per collide, 99 box bounds and 11.3 pairs per
# nearest distance; 2.0: 41, 1.28, 101, 12.1; 1.0: 39, 1.26, 90, 10.5; 0 (every group
# opened down to its BVH leaves): 39, 1.11, 102, 11.1.
OPEN_RATIO = 1.0


def _surface(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    d = np.maximum(hi - lo, 0.0)
    return 2.0 * (d[..., 0] * d[..., 1] + d[..., 1] * d[..., 2] + d[..., 2] * d[..., 0])


def _open_tops(tops, kt_lo, kt_hi, cstart, child, group, blo, bhi, left, right, ratio):
    """The items the top tree is built over: each object's top nodes, with sprawling nodes
    opened. A node's box is the union of its children's; when its surface area exceeds
    `ratio` times the sum of theirs (a frame bay's beams, pipes far apart joined by one
    long pipe), most of the box is empty, and kept whole it overlaps every query in that
    space. Replacing it by its children lets the top tree's SAH place them among other
    objects' nodes near them. A KCD group leaf opens into its BVH's children, which become
    new group leaves (a group leaf may stand for any subtree of its group's BVH).

    Returns (items, new_bvh_nodes): the items as ints, ``i < K`` an existing KCD node and
    ``K + j`` a new group leaf over BVH node ``new_bvh_nodes[j]``."""
    K = kt_lo.shape[0]
    sa_k = _surface(kt_lo, kt_hi)
    sa_b = _surface(blo, bhi)
    items = []
    new_b = []
    todo = [(0, int(t)) for t in tops]  # (0, KCD node) or (1, BVH node)
    while todo:
        kind, n = todo.pop()
        if kind == 0 and group[n] < 0:
            kids = child[cstart[n] : cstart[n + 1]]
            if sa_k[n] > ratio * sa_k[kids].sum():
                todo.extend((0, int(c)) for c in kids)
            else:
                items.append(n)
            continue
        b = int(group[n]) if kind == 0 else n  # a group leaf's box is its BVH root's
        l, r = left[b], right[b]
        if l >= 0 and sa_b[b] > ratio * (sa_b[l] + sa_b[r]):
            todo.append((1, int(l)))
            todo.append((1, int(r)))
        elif kind == 0:
            items.append(n)  # a group leaf kept whole: itself
        else:
            new_b.append(b)
            items.append(K + len(new_b) - 1)
    return np.array(items, np.int64), np.array(new_b, np.int64)


def _kt_tree(items: np.ndarray, lo: np.ndarray, hi: np.ndarray, base: int):
    """KCD nodes for a wide SAH BVH (kernels.bvh.wide_tree) over the nodes `items` (two or
    more; boxes lo, hi): each node has up to WIDTH children. Node ids start at `base` (the
    root). Returns (lo, hi, ccount, child) in node order."""
    nlo, nhi, cc, ch, is_node = wide_tree(lo, hi, WIDTH)
    ch = np.where(is_node, base + ch, items[np.where(is_node, 0, ch)])
    return nlo, nhi, cc, ch


def _group_forest(lo: np.ndarray, hi: np.ndarray, labels: np.ndarray):
    """The groups' binary BVHs (one per label), built by the SAH (kernels.bvh.sah_forest):
    a group's primitives differ in shape and size (a frame bay's columns and beams span the
    whole bay), and a median split of their centres can leave every node as large as the
    group. Returns (FlatBVH, roots) like planning_collision.bvh.build_bvh_forest."""
    lo = np.ascontiguousarray(lo, np.float64)
    hi = np.ascontiguousarray(hi, np.float64)
    order = np.argsort(labels, kind="stable")
    _, first0, count0 = np.unique(labels[order], return_index=True, return_counts=True)
    left, right, first, count, blo, bhi = sah_forest(
        lo, hi, order, first0.astype(np.int64), count0.astype(np.int64), LEAF_SIZE
    )
    leaf = left < 0
    i32 = np.int32
    bvh = FlatBVH(
        blo,
        bhi,
        left.astype(i32),
        right.astype(i32),
        np.where(leaf, first, 0).astype(i32),
        np.where(leaf, count, 0).astype(i32),
        order.astype(i32),
    )
    return bvh, np.arange(first0.size, dtype=i32)


def _compile(parts, min_size: float | None) -> _Block:
    # bounded convex parts in one table (one call, vectorised boxes); the rest one by one
    conv = [
        k
        for k, (s, _) in enumerate(parts)
        if isinstance(s, ConvexShape) and not isinstance(s, Halfspace)
    ]
    blocks = []
    if conv:
        blocks.append(
            convex_block([parts[k][0] for k in conv], np.stack([parts[k][1] for k in conv]))
        )
    blocks += [_primitives(s, Tw) for k, (s, Tw) in enumerate(parts) if k not in set(conv)]
    prims = concat_primitives(blocks)
    nrep = 0
    if min_size is not None:
        prims, nrep = detail_filter(prims, min_size)
    bounded = np.all(np.isfinite(prims.lo), axis=1) & np.all(np.isfinite(prims.hi), axis=1)
    unb = np.flatnonzero(~bounded).astype(np.int32)
    bidx = np.flatnonzero(bounded)
    nb = bidx.size
    z32 = np.zeros(0, np.int32)
    if nb == 0:
        e3 = np.zeros((0, 3))
        bvh = FlatBVH(e3, e3.copy(), z32, z32, z32, z32, z32)
        return _Block(prims, unb, bvh, e3, e3.copy(), z32, z32, z32, z32, nrep)
    lo, hi = prims.lo[bidx], prims.hi[bidx]
    # level 1: groups = overlap components; a BVH per group (one forest)
    ngroups, labels = _components(lo, hi)
    if nb == 1:
        bvh = FlatBVH(
            lo.copy(),
            hi.copy(),
            np.full(1, -1, np.int32),
            np.full(1, -1, np.int32),
            np.zeros(1, np.int32),
            np.ones(1, np.int32),
            np.zeros(1, np.int32),
        )
        roots = np.zeros(1, np.int32)
    else:
        bvh, roots = _group_forest(lo, hi, labels)
    bvh = bvh._replace(order=bidx[bvh.order].astype(np.int32))
    kt_lo = [bvh.lo[roots]]
    kt_hi = [bvh.hi[roots]]
    kt_ccount = [np.zeros(ngroups, np.int64)]
    kt_child = []
    kt_group = [roots.astype(np.int64)]
    cur = np.arange(ngroups)
    nkt = ngroups
    # higher levels: merge overlapping node boxes until a level has no overlaps
    while cur.size > 1:
        clo = np.concatenate(kt_lo)[cur]
        chi = np.concatenate(kt_hi)[cur]
        k, lab = _components(clo, chi)
        if k == cur.size:
            break
        sizes = np.bincount(lab, minlength=k)
        node_of = np.empty(k, np.int64)
        single = sizes[lab] == 1
        node_of[lab[single]] = cur[single]  # a lone node passes up unchanged
        multi = np.flatnonzero((sizes > 1) & (sizes <= FANOUT))
        node_of[multi] = nkt + np.arange(multi.size)
        # one new node per small component; its children are the members
        mm = (sizes[lab] > 1) & (sizes[lab] <= FANOUT)
        srt = np.argsort(lab[mm], kind="stable")
        kids = cur[mm][srt]
        klab = lab[mm][srt]
        starts = np.flatnonzero(np.r_[True, klab[1:] != klab[:-1]])
        if multi.size:
            kt_lo.append(np.minimum.reduceat(clo[mm][srt], starts, axis=0))
            kt_hi.append(np.maximum.reduceat(chi[mm][srt], starts, axis=0))
            kt_ccount.append(sizes[multi])
            kt_child.append(kids)
            kt_group.append(np.full(multi.size, -1))
            nkt += multi.size
        # a large component: a binary tree over its members (bounded fan-out)
        for c in np.flatnonzero(sizes > FANOUT):
            members = lab == c
            tlo, thi, tcc, tch = _kt_tree(cur[members], clo[members], chi[members], nkt)
            kt_lo.append(tlo)
            kt_hi.append(thi)
            kt_ccount.append(tcc)
            kt_child.append(tch)
            kt_group.append(np.full(tlo.shape[0], -1))
            node_of[c] = nkt
            nkt += tlo.shape[0]
        cur = node_of
    return _Block(
        prims,
        unb,
        bvh,
        np.ascontiguousarray(np.concatenate(kt_lo)),
        np.ascontiguousarray(np.concatenate(kt_hi)),
        np.concatenate(kt_ccount).astype(np.int32),
        (np.concatenate(kt_child) if kt_child else np.zeros(0)).astype(np.int32),
        np.concatenate(kt_group).astype(np.int32),
        cur.astype(np.int32),
        nrep,
    )


def _flatten(blocks: Sequence[_Block], open_ratio: float | None = None) -> FlatScene:
    """Concatenate compiled objects (slot = position) and join them under a top BVH, over
    their top nodes opened by `_open_tops` (``open_ratio=None``: not opened)."""
    nobj = len(blocks)
    prims = concat_primitives(b.prims for b in blocks)
    npr = np.array([len(b.prims) for b in blocks], np.int64)
    nbv = np.array([b.bvh.lo.shape[0] for b in blocks], np.int64)
    nord = np.array([b.bvh.order.shape[0] for b in blocks], np.int64)
    nkt = np.array([b.kt_lo.shape[0] for b in blocks], np.int64)
    poff = np.r_[0, np.cumsum(npr)][:-1]
    boff = np.r_[0, np.cumsum(nbv)][:-1]
    ooff = np.r_[0, np.cumsum(nord)][:-1]
    koff = np.r_[0, np.cumsum(nkt)][:-1]
    slots = np.arange(nobj)

    def cat(field, dtype=None, shape=(0,)):
        arrs = [getattr(b.bvh, field) for b in blocks]
        return np.concatenate(arrs) if arrs else np.zeros(shape, dtype)

    e3 = np.zeros((0, 3))
    blo = np.ascontiguousarray(np.concatenate([b.bvh.lo for b in blocks]) if blocks else e3)
    bhi = np.ascontiguousarray(np.concatenate([b.bvh.hi for b in blocks]) if blocks else e3)
    node_boff = np.repeat(boff, nbv)
    left = cat("left", np.int32).astype(np.int64)
    right = cat("right", np.int32).astype(np.int64)
    left = np.where(left >= 0, left + node_boff, -1)
    right = np.where(right >= 0, right + node_boff, -1)
    first = cat("first", np.int32) + np.repeat(ooff, nbv)
    count = cat("count", np.int32)
    order = cat("order", np.int32) + np.repeat(poff, nord)
    bvh = FlatBVH(
        blo,
        bhi,
        left.astype(np.int32),
        right.astype(np.int32),
        first.astype(np.int32),
        count.astype(np.int32),
        order.astype(np.int32),
    )
    bvh_obj = np.repeat(slots, nbv).astype(np.int32)

    K = int(nkt.sum())
    kt_lo = [b.kt_lo for b in blocks]
    kt_hi = [b.kt_hi for b in blocks]
    ccount = [b.kt_ccount.astype(np.int64) for b in blocks]
    nchild = np.array([b.kt_child.shape[0] for b in blocks], np.int64)
    child = (
        [np.concatenate([b.kt_child for b in blocks]).astype(np.int64) + np.repeat(koff, nchild)]
        if blocks
        else []
    )
    grp = (
        np.concatenate([b.kt_group for b in blocks]).astype(np.int64)
        if blocks
        else np.zeros(0, np.int64)
    )
    group = [np.where(grp >= 0, grp + np.repeat(boff, nkt), -1)]
    kobj = [np.repeat(slots, nkt)]
    tops = (
        np.concatenate([b.top.astype(np.int64) + o for b, o in zip(blocks, koff, strict=False)])
        if blocks
        else np.zeros(0, np.int64)
    )
    root = np.zeros(0, np.int32)
    if tops.size and open_ratio is not None:
        cs = np.r_[0, np.cumsum(np.concatenate(ccount))]
        tops, nb = _open_tops(
            tops,
            np.concatenate(kt_lo),
            np.concatenate(kt_hi),
            cs,
            child[0] if child else np.zeros(0, np.int64),
            group[0],
            blo,
            bhi,
            left,
            right,
            open_ratio,
        )
        # the opened BVH nodes as new group leaves of their object
        kt_lo.append(blo[nb])
        kt_hi.append(bhi[nb])
        ccount.append(np.zeros(nb.size, np.int64))
        group.append(nb)
        kobj.append(bvh_obj[nb].astype(np.int64))
        K += nb.size
    if tops.size == 1:
        root = np.array([tops[0]], np.int32)
    elif tops.size > 1:
        # the top of the hierarchy: a wide BVH over the (opened) objects' top nodes
        allo = np.concatenate(kt_lo)
        alhi = np.concatenate(kt_hi)
        tlo, thi, cc, ch = _kt_tree(tops, allo[tops], alhi[tops], K)
        m = tlo.shape[0]
        # a node whose children are all one object's keeps that object (pruning by it)
        allobj = np.concatenate(kobj)
        st = np.r_[0, np.cumsum(cc)][:-1]
        is_obj_child = ch < K
        cobj = np.where(is_obj_child, allobj[np.minimum(ch, K - 1)], -2)
        omin = np.minimum.reduceat(cobj, st)
        omax = np.maximum.reduceat(cobj, st)
        tobj = np.where((omin == omax) & (omin >= 0), omin, -1)
        kt_lo.append(tlo)
        kt_hi.append(thi)
        ccount.append(cc)
        child.append(ch)
        group.append(np.full(m, -1, np.int64))
        kobj.append(tobj)
        root = np.array([K], np.int32)
    cstart = np.zeros(sum(c.size for c in ccount) + 1, np.int64)
    if ccount:
        np.cumsum(np.concatenate(ccount), out=cstart[1:])
    unb = [b.unbounded.astype(np.int64) + o for b, o in zip(blocks, poff, strict=False)]
    kt_lo = np.ascontiguousarray(np.concatenate(kt_lo) if kt_lo else e3)
    kt_hi = np.ascontiguousarray(np.concatenate(kt_hi) if kt_hi else e3)
    kt_child = (np.concatenate(child) if child else np.zeros(0)).astype(np.int32)
    kt_group = (np.concatenate(group) if group else np.zeros(0)).astype(np.int32)
    return FlatScene(
        prims.tab,
        np.ascontiguousarray(prims.poses),
        np.ascontiguousarray(prims.lo),
        np.ascontiguousarray(prims.hi),
        np.repeat(slots, npr).astype(np.int32),
        bvh,
        bvh_obj,
        kt_lo,
        kt_hi,
        cstart.astype(np.int32),
        kt_child,
        # each node's children's boxes side by side (a traversal tests them in one loop)
        kt_lo[kt_child],
        kt_hi[kt_child],
        kt_group[kt_child],
        kt_group,
        (np.concatenate(kobj) if kobj else np.zeros(0)).astype(np.int32),
        root,
        (np.concatenate(unb) if unb else np.zeros(0)).astype(np.int32),
        np.array([nobj], np.int32),
    )


def flat_bvh_scene(scene: Scene, sah: bool = False) -> FlatScene:
    """All of `scene`'s primitives under ONE binary BVH, as one object, without KCD
    grouping: the "one flat BVH" baseline of demos/bench_scene.py. Answers boolean and
    nearest-distance queries like the scene (object slot 0 stands for "some obstacle").
    The BVH is median-split (planning_collision.bvh.build_bvh), or with ``sah=True`` built
    by the SAH builder of the KCD groups (kernels.bvh.sah_forest)."""
    blocks = [scene._blocks[i] for i in scene._blocks]
    prims = concat_primitives(b.prims for b in blocks)
    bounded = np.all(np.isfinite(prims.lo), axis=1) & np.all(np.isfinite(prims.hi), axis=1)
    bidx = np.flatnonzero(bounded)
    z32 = np.zeros(0, np.int32)
    if bidx.size == 0:
        e3 = np.zeros((0, 3))
        bvh = FlatBVH(e3, e3.copy(), z32, z32, z32, z32, z32)
        blk = _Block(
            prims,
            np.flatnonzero(~bounded).astype(np.int32),
            bvh,
            e3,
            e3.copy(),
            z32,
            z32,
            z32,
            z32,
            0,
        )
        return _flatten([blk])
    if sah:
        bvh = _group_forest(prims.lo[bidx], prims.hi[bidx], np.zeros(bidx.size, np.int64))[0]
    else:
        bvh = build_bvh(prims.lo[bidx], prims.hi[bidx])
    bvh = bvh._replace(order=bidx[bvh.order].astype(np.int32))
    blk = _Block(
        prims,
        np.flatnonzero(~bounded).astype(np.int32),
        bvh,
        bvh.lo[:1].copy(),
        bvh.hi[:1].copy(),
        np.zeros(1, np.int32),
        z32,
        np.zeros(1, np.int32),
        np.zeros(1, np.int32),
        0,
    )
    return _flatten([blk])


def query_block(shape: Shape, T) -> Primitives:
    """The query shape posed by ``T (4, 4)`` as a block of primitives (what the scene
    kernels take as their query): one primitive for a convex shape, many for a mesh or a
    cloud."""
    if not isinstance(shape, Shape):
        raise TypeError(f"shape must be a planning_collision shape, got {type(shape).__name__}")
    T = as_pose(T, "T")
    if isinstance(shape, ConvexShape) and not isinstance(shape, Halfspace):
        tab = query_table(shape)
        lo = np.empty((1, 3))
        hi = np.empty((1, 3))
        shape_world_aabb(tab, 0, T, lo[0], hi[0])
        return Primitives(tab, T[None], lo, hi)
    return _primitives(shape, T)


class Scene:
    """Static obstacles with KCD grouping and shape-vs-scene queries (module doc).

    min_size : float or None, m; the detail filter (primitives with AABB volume below
        ``min_size**3`` become their AABB). None keeps every primitive exact.
    """

    def __init__(self, min_size: float | None = None):
        self.min_size = None if min_size is None else positive_scalar("min_size", min_size)
        self._objects: dict[int, Obstacle] = {}
        self._blocks: dict[int, _Block] = {}
        self._next_id = 0
        self._flat: FlatScene | None = None
        self._version = 0
        self._slot_ids = np.zeros(0, np.int64)
        self._ws = new_workspace()
        self._stack = np.zeros((STACK_SIZE, 2), np.int32)
        self._tmp = np.zeros(OUT_SIZE)

    # ------------------------------------------------------------------ objects
    def add(self, shape, T=None, name: str | None = None) -> int:
        """Add an obstacle; returns its id (ints, never reused).

        shape : a Shape, or a list of ``(Shape, T_object_part)`` pairs (one compound object).
        T : (4, 4) float64, T_world_object (identity when None).
        Raises ValueError/TypeError naming the problem; the scene is then unchanged.
        """
        where = f"obstacle {name!r}" if name is not None else f"obstacle #{self._next_id}"
        T = np.eye(4) if T is None else as_pose(T, f"{where} pose T")
        if name is not None and not isinstance(name, str):
            raise TypeError(f"{where}: name must be a str, got {type(name).__name__}")
        block = _compile(_parts(shape, T, where), self.min_size)
        oid = self._next_id
        self._next_id += 1
        self._objects[oid] = Obstacle(oid, name, shape, T)
        self._blocks[oid] = block
        self._flat = None
        self._version += 1
        return oid

    def remove(self, id: int) -> None:
        """Remove the obstacle `id`; KeyError if there is none."""
        self._check_id(id)
        del self._objects[id]
        del self._blocks[id]
        self._flat = None
        self._version += 1

    def contains(self, id: int) -> bool:
        return isinstance(id, (int, np.integer)) and int(id) in self._objects

    __contains__ = contains

    def get(self, id: int) -> Obstacle:
        """The obstacle `id` as added: Obstacle(id, name, shape, T); KeyError if none."""
        self._check_id(id)
        return self._objects[id]

    def ids(self) -> list[int]:
        return list(self._objects)

    def find(self, name: str) -> list[int]:
        """Ids of the obstacles called `name`."""
        return [i for i, o in self._objects.items() if o.name == name]

    def __len__(self) -> int:
        return len(self._objects)

    def __iter__(self):
        return iter(self._objects.values())

    def __repr__(self):
        n = sum(len(b.prims) for b in self._blocks.values())
        return f"Scene({len(self)} obstacles, {n} primitives, min_size={self.min_size})"

    def _check_id(self, id):
        if not isinstance(id, (int, np.integer)) or isinstance(id, bool):
            raise TypeError(f"obstacle id must be an int, got {type(id).__name__}")
        if int(id) not in self._objects:
            raise KeyError(f"no obstacle with id {id} in the scene ({len(self)} obstacles)")

    # ------------------------------------------------------------------ flat form
    def build(self) -> FlatScene:
        """Compile the scene into its flat form (done by the first query after a change)."""
        if self._flat is None:
            ids = list(self._blocks)
            self._flat = _flatten([self._blocks[i] for i in ids], OPEN_RATIO)
            self._slot_ids = np.array(ids, np.int64)
        return self._flat

    @property
    def flat(self) -> FlatScene:
        """The `FlatScene` (kernels/scene_query.py) a CollisionChecker passes to numba."""
        return self.build()

    @property
    def version(self) -> int:
        """Changes on every add/remove: the flat form (and any node ids a cache holds, e.g.
        a traversal front list) is valid for one version only."""
        return self._version

    @property
    def slot_ids(self) -> npt.NDArray[np.int64]:
        """Obstacle id of each object slot of the flat form."""
        self.build()
        return self._slot_ids

    def stats(self) -> dict:
        """Sizes of the compiled scene: objects, primitives, groups, nodes, bytes."""
        f = self.build()
        nbytes = (
            sum(a.nbytes for a in f.tab)
            + sum(
                a.nbytes
                for a in (
                    f.poses,
                    f.plo,
                    f.phi,
                    f.pobj,
                    f.bvh_obj,
                    f.kt_lo,
                    f.kt_hi,
                    f.kt_cstart,
                    f.kt_child,
                    f.kt_clo,
                    f.kt_chi,
                    f.kt_cgroup,
                    f.kt_group,
                    f.kt_obj,
                    f.unbounded,
                )
            )
            + sum(a.nbytes for a in f.bvh)
        )
        return {
            "objects": len(self),
            "primitives": int(f.tab.kind.shape[0]),
            # as grouped per object (the top tree's opened BVH nodes are leaves, not groups)
            "groups": int(sum((b.kt_group >= 0).sum() for b in self._blocks.values())),
            "kcd_nodes": int(f.kt_lo.shape[0]),
            "bvh_nodes": int(f.bvh.lo.shape[0]),
            "unbounded": int(f.unbounded.shape[0]),
            "replaced_by_detail_filter": int(sum(b.n_replaced for b in self._blocks.values())),
            "bytes": int(nbytes),
        }

    # ------------------------------------------------------------------ queries
    def collide_object(self, shape: Shape, T, margin: float = 0.0) -> list[int]:
        """Sorted ids of the obstacles within `margin` (m, signed distance <= margin) of
        `shape` posed by ``T (4, 4)``; touching counts."""
        margin = finite_scalar("margin", margin)
        q = query_block(shape, T)
        f = self.build()
        hit = np.zeros(max(len(self), 1), np.uint8)
        n = scene_collide(f, q.tab, q.poses, q.lo, q.hi, margin, False, hit, self._ws, self._stack)
        self._check(n)
        return sorted(int(i) for i in self._slot_ids[np.flatnonzero(hit[: len(self)])])

    def in_collision(self, shape: Shape, T, margin: float = 0.0) -> bool:
        """True iff `shape` posed by `T` is within `margin` of any obstacle (returns at the
        first hit)."""
        margin = finite_scalar("margin", margin)
        q = query_block(shape, T)
        f = self.build()
        hit = np.zeros(max(len(self), 1), np.uint8)
        n = scene_collide(f, q.tab, q.poses, q.lo, q.hi, margin, True, hit, self._ws, self._stack)
        self._check(n)
        return n > 0

    def _distance_rows(self, shape, T, max_distance, per_object):
        md = np.inf if max_distance is None else finite_scalar("max_distance", max_distance)
        q = query_block(shape, T)
        f = self.build()
        best = np.full((max(len(self), 1), OUT_SIZE), np.nan)
        best[:, 0] = np.inf
        arg = scene_distance(
            f, q.tab, q.poses, q.lo, q.hi, md, per_object, best, self._ws, self._tmp, self._stack
        )
        self._check(arg)
        return best, arg

    def distances(self, shape: Shape, T, max_distance: float | None = None):
        """``[(id, DistanceResult), ...]`` in id order: the signed distance from `shape`
        posed by `T` to every obstacle (DistanceResult.point_a on the shape, point_b on the
        obstacle, normal from shape to obstacle). With `max_distance`, obstacles farther
        than it are left out (and not computed exactly)."""
        best, _ = self._distance_rows(shape, T, max_distance, True)
        out = []
        for s in np.flatnonzero(best[: len(self), 0] < np.inf):
            r = best[s]
            oid = int(self._slot_ids[s])
            out.append(
                (
                    oid,
                    DistanceResult(float(r[0]), r[1:4].copy(), r[4:7].copy(), r[7:10].copy(), oid),
                )
            )
        out.sort(key=lambda x: x[0])
        return out

    def min_distance(self, shape: Shape, T, max_distance: float | None = None) -> DistanceResult:
        """The nearest obstacle: DistanceResult with ``.id``. When the scene is empty or
        nothing is within `max_distance`: distance inf, NaN points and normal, id None."""
        best, arg = self._distance_rows(shape, T, max_distance, False)
        if arg < 0:
            nan = np.full(3, np.nan)
            return DistanceResult(np.inf, nan, nan.copy(), nan.copy(), None)
        r = best[arg]
        oid = int(self._slot_ids[arg])
        return DistanceResult(float(r[0]), r[1:4].copy(), r[4:7].copy(), r[7:10].copy(), oid)

    def candidates(self, shape: Shape, T, margin: float = 0.0) -> npt.NDArray[np.int32]:
        """Broadphase only: indices (into the flat form's primitives) whose AABB overlaps
        the query's AABB within `margin`."""
        q = query_block(shape, T)
        f = self.build()
        lo, hi = q.lo.min(axis=0), q.hi.max(axis=0)
        out = np.empty(max(f.tab.kind.shape[0], 1), np.int32)
        n = scene_candidates(f, lo, hi, finite_scalar("margin", margin), self._stack, out)
        self._check(n)
        return np.sort(out[:n])

    @staticmethod
    def _check(n):
        if n == -2:
            raise RuntimeError("scene traversal stack overflow (a bug: trees are median-split)")

    # ------------------------------------------------------------------ files
    @classmethod
    def from_file(cls, path, **kwargs) -> Scene:
        """Load a scene: ``.json`` (the project's format, docs/scene_format.md), ``.scene``
        (MoveIt's text format), or any mesh file trimesh loads (one Mesh obstacle)."""
        from .io.scene_files import load_scene

        return load_scene(path, **kwargs)

    def to_file(self, path) -> None:
        """Write the scene as ``.json`` (every shape kind) or ``.scene`` (MoveIt; convex
        shapes and meshes)."""
        from .io.scene_files import save_scene

        save_scene(self, path)
