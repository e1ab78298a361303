"""KCD grouping: each obstacle compiled into a multi-child AABB tree, and the objects' trees
joined into one `FlatScene` (Van Geem & Siméon, IROS 2001; docs/architecture.md, "Scenes").

Per object (`compile_object`), once, when it is added to a scene:

1. its parts become a block of convex primitives (primitives.py), an AABB each;
2. primitives whose AABBs overlap (transitively) form a *group*; each group gets a binary
   BVH over its primitives (SAH, bvh.py);
3. groups whose AABBs overlap are merged under a parent node, repeated until no two nodes
   of a level overlap: a multi-child AABB tree per object;
4. with ``min_size=v`` (detail filter) a primitive whose AABB volume is below ``v**3`` is
   replaced by that AABB as a box (conservative: collisions are only ever added).

`flatten` joins compiled objects under a wide SAH tree over their top nodes (first opening
the nodes that are mostly empty space, `open_tops`) and concatenates all arrays into one
`FlatScene` that the kernels take as one argument (kernels/scene/traversal.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from .bvh import overlap_groups, sah_bvh_forest
from .geometry.poses import as_poses
from .geometry.shapes import ConvexShape, Halfspace, Shape
from .kernels.base.layout import ShapeTable
from .kernels.scene.bvh import FlatBVH, wide_tree
from .kernels.scene.one_primitive import one_node_flat as one_node_flat_kernel
from .kernels.scene.traversal import FlatScene
from .primitives import (
    Primitives,
    concat_primitives,
    convex_block,
    detail_filter,
    posed_block,
)

__all__ = [
    "FANOUT",
    "OPEN_RATIO",
    "WIDTH",
    "FlatScene",
    "ObjectBlock",
    "compile_object",
    "flatten",
    "object_parts",
    "one_node_block",
    "one_node_flat",
]

# A KCD node with more children than this gets a wide BVH over them instead (a traversal
# pushes all children of a node at once: the fan-out bounds the stack it needs).
FANOUT = 8
# Children per node of the BVHs over KCD nodes (over a large component's members, and over
# all objects' top nodes): a node's children are tested in one loop over boxes stored side
# by side, which costs less than popping each one; 4 tested fewest boxes per query on the
# factory of demos/bench/scene.py (2 and 8 more).
WIDTH = 4
# Before the top tree is built, an object's node whose box's surface area exceeds OPEN_RATIO
# times the sum of its children's is replaced by its children (repeatedly, down into the
# group BVHs): see open_tops. On the factory of demos/bench/scene.py, per capsule query,
# no opening: 41 boxes and 1.29 pairs per collide, 99 box bounds and 11.3 pairs per
# nearest distance; 2.0: 41, 1.28, 101, 12.1; 1.0: 39, 1.26, 90, 10.5; 0 (every group
# opened down to its BVH leaves): 39, 1.11, 102, 11.1.
OPEN_RATIO = 1.0

_Z32 = np.zeros(0, np.int32)


class ObjectBlock(NamedTuple):
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


# ---------------------------------------------------------------------------------------
# one object


def object_parts(shape, T, where: str) -> list:
    """The (shape, T_world_part) pairs of an object posed by ``T (4, 4)`` (validated): a
    shape, or a compound list of ``(shape, T_object_part)`` pairs. Errors name `where`."""
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
        Tl = as_poses([p[1] for p in shape], f"{where} part {{}} pose")
        return list(zip([p[0] for p in shape], T @ Tl, strict=True))
    raise TypeError(
        f"{where}: expected a shape or a non-empty list of (shape, T_object_part) pairs, "
        f"got {type(shape).__name__}"
    )


def _kt_tree(items: np.ndarray, lo: np.ndarray, hi: np.ndarray, base: int):
    """KCD nodes for a wide SAH BVH (kernels.scene.bvh.wide_tree) over the nodes `items` (two or
    more; boxes lo, hi): each node has up to WIDTH children. Node ids start at `base` (the
    root). Returns (lo, hi, ccount, child) in node order."""
    nlo, nhi, cc, ch, is_node = wide_tree(lo, hi, WIDTH)
    ch = np.where(is_node, base + ch, items[np.where(is_node, 0, ch)])
    return nlo, nhi, cc, ch


def _object_primitives(parts, min_size: float | None) -> tuple[Primitives, int]:
    """The parts as one block (detail-filtered when min_size is set), and how many
    primitives the filter replaced. Bounded convex parts go in one table (one call,
    vectorised boxes); the rest one by one."""
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
    rest = set(range(len(parts))) - set(conv)
    blocks += [posed_block(s, Tw) for k, (s, Tw) in enumerate(parts) if k in rest]
    prims = concat_primitives(blocks)
    if min_size is None:
        return prims, 0
    return detail_filter(prims, min_size)


def _group_bvhs(lo: np.ndarray, hi: np.ndarray, bidx: np.ndarray):
    """Level 1: groups are the overlap components of the bounded primitives (boxes lo, hi;
    their indices bidx in the block), one BVH each. Returns (bvh forest, roots, ngroups)."""
    ngroups, labels = overlap_groups(lo, hi)
    if bidx.size == 1:
        one = np.ones(1, np.int32)
        bvh = FlatBVH(lo.copy(), hi.copy(), -one, -one, 0 * one, one, 0 * one)
        roots = np.zeros(1, np.int32)
    else:
        bvh, roots = sah_bvh_forest(lo, hi, labels)
    return bvh._replace(order=bidx[bvh.order].astype(np.int32)), roots, ngroups


class _Levels:
    """The KCD nodes of one object as they are made, level by level."""

    def __init__(self, lo, hi, groups):
        self.lo, self.hi = [lo], [hi]
        self.ccount = [np.zeros(lo.shape[0], np.int64)]
        self.child: list[np.ndarray] = []
        self.group = [groups.astype(np.int64)]
        self.n = lo.shape[0]

    def add(self, lo, hi, ccount, child) -> int:
        """Append internal nodes; returns the id of the first."""
        base = self.n
        self.lo.append(lo)
        self.hi.append(hi)
        self.ccount.append(np.asarray(ccount, np.int64))
        self.child.append(child)
        self.group.append(np.full(lo.shape[0], -1))
        self.n += lo.shape[0]
        return base


def _merge_level(lv: _Levels, cur: np.ndarray) -> np.ndarray | None:
    """One level up: the nodes `cur` whose boxes overlap (transitively) get a common parent
    (a wide tree when there are more than FANOUT). Returns the next level's nodes, or None
    when no two boxes of this level overlap."""
    clo = np.concatenate(lv.lo)[cur]
    chi = np.concatenate(lv.hi)[cur]
    k, lab = overlap_groups(clo, chi)
    if k == cur.size:
        return None
    sizes = np.bincount(lab, minlength=k)
    node_of = np.empty(k, np.int64)
    single = sizes[lab] == 1
    node_of[lab[single]] = cur[single]  # a lone node passes up unchanged
    multi = np.flatnonzero((sizes > 1) & (sizes <= FANOUT))
    # one new node per small component; its children are the members
    mm = (sizes[lab] > 1) & (sizes[lab] <= FANOUT)
    srt = np.argsort(lab[mm], kind="stable")
    klab = lab[mm][srt]
    starts = np.flatnonzero(np.r_[True, klab[1:] != klab[:-1]])
    if multi.size:
        base = lv.add(
            np.minimum.reduceat(clo[mm][srt], starts, axis=0),
            np.maximum.reduceat(chi[mm][srt], starts, axis=0),
            sizes[multi],
            cur[mm][srt],
        )
        node_of[multi] = base + np.arange(multi.size)
    # a large component: a wide tree over its members (bounded fan-out)
    for c in np.flatnonzero(sizes > FANOUT):
        members = lab == c
        tlo, thi, tcc, tch = _kt_tree(cur[members], clo[members], chi[members], lv.n)
        node_of[c] = lv.add(tlo, thi, tcc, tch)
    return node_of


def compile_object(parts, min_size: float | None) -> ObjectBlock:
    """One object's parts (from `object_parts`) as an `ObjectBlock` (module doc)."""
    prims, nrep = _object_primitives(parts, min_size)
    bounded = np.all(np.isfinite(prims.lo), axis=1) & np.all(np.isfinite(prims.hi), axis=1)
    unb = np.flatnonzero(~bounded).astype(np.int32)
    bidx = np.flatnonzero(bounded)
    if bidx.size == 0:
        e3 = np.zeros((0, 3))
        bvh = FlatBVH(e3, e3.copy(), _Z32, _Z32, _Z32, _Z32, _Z32)
        return ObjectBlock(prims, unb, bvh, e3, e3.copy(), _Z32, _Z32, _Z32, _Z32, nrep)
    bvh, roots, ngroups = _group_bvhs(prims.lo[bidx], prims.hi[bidx], bidx)
    lv = _Levels(bvh.lo[roots], bvh.hi[roots], roots)
    cur = np.arange(ngroups)
    while cur.size > 1:
        nxt = _merge_level(lv, cur)
        if nxt is None:
            break
        cur = nxt
    return ObjectBlock(
        prims,
        unb,
        bvh,
        np.ascontiguousarray(np.concatenate(lv.lo)),
        np.ascontiguousarray(np.concatenate(lv.hi)),
        np.concatenate(lv.ccount).astype(np.int32),
        (np.concatenate(lv.child) if lv.child else np.zeros(0)).astype(np.int32),
        np.concatenate(lv.group).astype(np.int32),
        cur.astype(np.int32),
        nrep,
    )


# Arrays every one-primitive object shares. Blocks are read, never written, and these stay
# writeable like every array of a flat scene: a read-only array is another numba type, and
# the scene's compiled queries would compile again for it.
_ONE_ZERO = np.zeros(1, np.int32)
_ONE_NEG = np.full(1, -1, np.int32)
_ONE_ONE = np.ones(1, np.int32)
_NO_I32 = np.zeros(0, np.int32)
_NO_POINTS = np.zeros((0, 3))
_NO_VSOA = np.zeros(0)
_VSTART = np.zeros(2, np.int32)


def one_node_block(prims: Primitives, k: int) -> ObjectBlock:
    """Object k of a block whose primitives are each one object (`primitive_block`), as
    its own `ObjectBlock`: views of the block's rows, what `compile_object` makes of it."""
    tab = prims.tab
    lo_k, hi_k = prims.lo[k : k + 1], prims.hi[k : k + 1]
    tab_k = ShapeTable(
        kind=tab.kind[k : k + 1],
        params=tab.params[k : k + 1],
        vstart=_VSTART,
        verts=_NO_POINTS,
        adjstart=_ONE_ZERO,
        adj=_NO_I32,
        aabb=tab.aabb[k : k + 1],
        brad=tab.brad[k : k + 1],
        vsoa=_NO_VSOA,
    )
    bvh = FlatBVH(lo_k, hi_k, _ONE_NEG, _ONE_NEG, _ONE_ZERO, _ONE_ONE, _ONE_ZERO)
    return ObjectBlock(
        Primitives(tab_k, prims.poses[k : k + 1], lo_k, hi_k),
        _NO_I32,
        bvh,
        lo_k,
        hi_k,
        _ONE_ZERO,
        _NO_I32,
        _ONE_ZERO,
        _ONE_ZERO,
        0,
    )


# ---------------------------------------------------------------------------------------
# all objects


def _surface(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    d = np.maximum(hi - lo, 0.0)
    return 2.0 * (d[..., 0] * d[..., 1] + d[..., 1] * d[..., 2] + d[..., 2] * d[..., 0])


def open_tops(tops, kt_lo, kt_hi, cstart, child, group, blo, bhi, left, right, ratio):
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


def _offsets(sizes) -> np.ndarray:
    sizes = np.asarray(sizes, np.int64)
    out = np.zeros(sizes.size, np.int64)
    np.cumsum(sizes[:-1], out=out[1:])  # (np.r_ costs ~10 us a call: a scene per problem)
    return out


def _concat_bvhs(blocks: Sequence[ObjectBlock], poff: np.ndarray):
    """The objects' group BVH forests as one, renumbered. Returns (bvh, node offsets,
    per-node object slot)."""
    nbv = np.array([b.bvh.lo.shape[0] for b in blocks], np.int64)
    nord = np.array([b.bvh.order.shape[0] for b in blocks], np.int64)
    boff = _offsets(nbv)
    node_boff = np.repeat(boff, nbv)

    def cat(field):
        arrs = [getattr(b.bvh, field) for b in blocks]
        return np.concatenate(arrs).astype(np.int64) if arrs else np.zeros(0, np.int64)

    e3 = np.zeros((0, 3))
    left, right = cat("left"), cat("right")
    bvh = FlatBVH(
        np.ascontiguousarray(np.concatenate([b.bvh.lo for b in blocks]) if blocks else e3),
        np.ascontiguousarray(np.concatenate([b.bvh.hi for b in blocks]) if blocks else e3),
        np.where(left >= 0, left + node_boff, -1).astype(np.int32),
        np.where(right >= 0, right + node_boff, -1).astype(np.int32),
        (cat("first") + np.repeat(_offsets(nord), nbv)).astype(np.int32),
        cat("count").astype(np.int32),
        (cat("order") + np.repeat(poff, nord)).astype(np.int32),
    )
    return bvh, boff, np.repeat(np.arange(len(blocks)), nbv).astype(np.int32)


class _Tree(NamedTuple):
    """The scene's KCD nodes, concatenated over objects (lists of per-part arrays)."""

    lo: list
    hi: list
    ccount: list
    child: list
    group: list
    obj: list


def _concat_trees(blocks: Sequence[ObjectBlock], boff: np.ndarray) -> tuple[_Tree, np.ndarray]:
    """The objects' KCD trees as one node list, renumbered; and the objects' top nodes."""
    nkt = np.array([b.kt_lo.shape[0] for b in blocks], np.int64)
    koff = _offsets(nkt)
    nchild = np.array([b.kt_child.shape[0] for b in blocks], np.int64)
    i64 = np.zeros(0, np.int64)
    child = np.concatenate([b.kt_child for b in blocks]).astype(np.int64) if blocks else i64
    grp = np.concatenate([b.kt_group for b in blocks]).astype(np.int64) if blocks else i64
    tops = [b.top.astype(np.int64) + o for b, o in zip(blocks, koff, strict=True)]
    tree = _Tree(
        [b.kt_lo for b in blocks],
        [b.kt_hi for b in blocks],
        [b.kt_ccount.astype(np.int64) for b in blocks],
        [child + np.repeat(koff, nchild)],
        [np.where(grp >= 0, grp + np.repeat(boff, nkt), -1)],
        [np.repeat(np.arange(len(blocks)), nkt)],
    )
    return tree, (np.concatenate(tops) if tops else i64)


def _one_node(b: ObjectBlock) -> bool:
    """True when object block b is one bounded primitive: one BVH node, one KCD node (its
    group leaf, its top), as `one_node_block` makes them."""
    return (
        b.kt_lo.shape[0] == 1
        and b.bvh.lo.shape[0] == 1
        and b.prims.lo.shape[0] == 1
        and b.unbounded.shape[0] == 0
    )


def _open_into(tree: _Tree, tops, bvh: FlatBVH, bvh_obj, ratio: float) -> np.ndarray:
    """`open_tops` over the concatenated tree; the opened BVH nodes become new group leaves
    of their object (appended to `tree`). Returns the items the top tree goes over."""
    cc = np.concatenate(tree.ccount)
    cs = np.zeros(cc.size + 1, np.int64)
    np.cumsum(cc, out=cs[1:])
    items, nb = open_tops(
        tops,
        np.concatenate(tree.lo),
        np.concatenate(tree.hi),
        cs,
        tree.child[0],
        tree.group[0],
        bvh.lo,
        bvh.hi,
        bvh.left.astype(np.int64),
        bvh.right.astype(np.int64),
        ratio,
    )
    tree.lo.append(bvh.lo[nb])
    tree.hi.append(bvh.hi[nb])
    tree.ccount.append(np.zeros(nb.size, np.int64))
    tree.group.append(nb)
    tree.obj.append(bvh_obj[nb].astype(np.int64))
    return items


def _add_top(tree: _Tree, tops: np.ndarray) -> np.ndarray:
    """The root: the only top node, or a wide BVH over the tops (appended to `tree`); a top
    tree node whose children all belong to one object keeps that object (pruning by it).
    Returns kt_root ((0,) without tops)."""
    if tops.size == 0:
        return np.zeros(0, np.int32)
    if tops.size == 1:
        return np.array([tops[0]], np.int32)
    K = sum(a.shape[0] for a in tree.lo)
    allo, alhi = np.concatenate(tree.lo), np.concatenate(tree.hi)
    tlo, thi, cc, ch = _kt_tree(tops, allo[tops], alhi[tops], K)
    allobj = np.concatenate(tree.obj)
    st = _offsets(cc)
    cobj = np.where(ch < K, allobj[np.minimum(ch, K - 1)], -2)
    omin = np.minimum.reduceat(cobj, st)
    omax = np.maximum.reduceat(cobj, st)
    tree.lo.append(tlo)
    tree.hi.append(thi)
    tree.ccount.append(cc)
    tree.child.append(ch)
    tree.group.append(np.full(tlo.shape[0], -1, np.int64))
    tree.obj.append(np.where((omin == omax) & (omin >= 0), omin, -1))
    return np.array([K], np.int32)


def flatten(blocks: Sequence[ObjectBlock], open_ratio: float | None = OPEN_RATIO) -> FlatScene:
    """Concatenate compiled objects (slot = position in `blocks`) and join them under a top
    BVH, over their top nodes opened by `open_tops` (``open_ratio=None``: not opened)."""
    nobj = len(blocks)
    prims = concat_primitives(b.prims for b in blocks)
    if blocks and all(_one_node(b) for b in blocks):
        return one_node_flat(prims, open_ratio)
    npr = np.array([len(b.prims) for b in blocks], np.int64)
    poff = _offsets(npr)
    bvh, boff, bvh_obj = _concat_bvhs(blocks, poff)
    tree, tops = _concat_trees(blocks, boff)
    if tops.size and open_ratio is not None:
        tops = _open_into(tree, tops, bvh, bvh_obj, open_ratio)
    root = _add_top(tree, tops)
    cstart = np.zeros(sum(c.size for c in tree.ccount) + 1, np.int64)
    if tree.ccount:
        np.cumsum(np.concatenate(tree.ccount), out=cstart[1:])
    e3 = np.zeros((0, 3))
    kt_lo = np.ascontiguousarray(np.concatenate(tree.lo) if tree.lo else e3)
    kt_hi = np.ascontiguousarray(np.concatenate(tree.hi) if tree.hi else e3)
    kt_child = (np.concatenate(tree.child) if tree.child else np.zeros(0)).astype(np.int32)
    kt_group = (np.concatenate(tree.group) if tree.group else np.zeros(0)).astype(np.int32)
    unb = [b.unbounded.astype(np.int64) + o for b, o in zip(blocks, poff, strict=True)]
    return FlatScene(
        prims.tab,
        np.ascontiguousarray(prims.poses),
        np.ascontiguousarray(prims.lo),
        np.ascontiguousarray(prims.hi),
        np.repeat(np.arange(nobj), npr).astype(np.int32),
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
        (np.concatenate(tree.obj) if tree.obj else np.zeros(0)).astype(np.int32),
        root,
        (np.concatenate(unb) if unb else np.zeros(0)).astype(np.int32),
        np.array([nobj], np.int32),
    )


_NO_UNBOUNDED = np.zeros(0, np.int32)


def one_node_flat(prims: Primitives, open_ratio: float | None = OPEN_RATIO) -> FlatScene:
    """`flatten` of objects that are each one bounded primitive (`_one_node`), given as
    their primitives (object i is primitive i): the same flat scene, its trees written by
    one compiled loop (kernels/scene/one_primitive.py `one_node_flat`; ``open_ratio`` None or not
    as `flatten` takes it: `open_tops` keeps one-node tops whole, in stack order)."""
    n = len(prims)
    ids, none, ones, *kt = one_node_flat_kernel(prims.lo, prims.hi, open_ratio is not None, WIDTH)
    # arrays no kernel writes may serve several fields (a model's arrays are never written)
    return FlatScene(
        prims.tab,
        prims.poses,
        prims.lo,
        prims.hi,
        ids,
        FlatBVH(prims.lo, prims.hi, none, none, ids, ones, ids),
        ids,
        *kt,
        _NO_UNBOUNDED,
        np.array([n], np.int32),
    )
