"""BVH builders: binary trees over boxes, as `FlatBVH` arrays (kernels/scene/bvh.py).

- `build_bvh_forest(lo, hi, segment)` / `build_bvh(lo, hi)`: median split of the box centres
  along the widest axis, built level by level with vectorised numpy (all nodes of a level
  are split by one segmented sort). Cheap; used where a tree is only a search aid (KCD's
  grouping of overlapping boxes).
- `sah_bvh_forest(lo, hi, labels)`: the surface area heuristic (kernels.scene.bvh.sah_forest), one
  tree per label: the trees the scene traversal walks.
- `overlap_groups(lo, hi)`: KCD's groups, the connected components of the boxes' overlap
  graph, in work bounded by the number of boxes (below).
"""

from __future__ import annotations

import numpy as np

from .kernels.scene.bvh import (
    STACK_SIZE,
    FlatBVH,
    overlap_components,
    overlap_components_brute,
    sah_forest,
)

__all__ = [
    "FlatBVH",
    "LEAF_SIZE",
    "build_bvh",
    "build_bvh_forest",
    "overlap_groups",
    "sah_bvh_forest",
]

# Leaves hold at most this many primitives: a leaf test is one GJK per primitive, a node
# test one AABB check; 4 keeps trees shallow without many wasted narrowphase calls.
LEAF_SIZE = 4
# Below this many boxes, grouping tests all pairs instead of building a tree first.
_BRUTE_GROUPING = 64
# Exact grouping tests every overlapping pair, so boxes that all overlap (a mesh of one
# triangle repeated 64k times: 29 s; a 16k-triangle fan around one point: 4.3 s) cost
# n^2 tests. When the pairs overlapping along the best-separated axis, a bound on those,
# exceed this many per box (and 2 million in all), groups come from the axes instead.
_PAIRS_PER_BOX = 64
_PAIRS_MIN = 2_000_000


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


def sah_bvh_forest(lo: np.ndarray, hi: np.ndarray, labels: np.ndarray):
    """The groups' binary BVHs (one per label), built by the SAH (kernels.scene.bvh.sah_forest):
    a group's primitives differ in shape and size (a frame bay's columns and beams span the
    whole bay), and a median split of their centres can leave every node as large as the
    group. Returns (FlatBVH, roots) like `build_bvh_forest`."""
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


def _axis_pairs(lo: np.ndarray, hi: np.ndarray, axis: int) -> int:
    """How many pairs of boxes overlap (or touch) along `axis`: all pairs but those whose
    intervals are apart, counted by a sort."""
    n = lo.shape[0]
    apart = n - np.searchsorted(np.sort(lo[:, axis]), hi[:, axis], side="right")
    return n * (n - 1) // 2 - int(apart.sum())


def _axis_groups(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """(n,) group labels: boxes split where their intervals along an axis are apart, axis
    after axis until no split is left (each pass a sort). Boxes that overlap always share a
    group; boxes that do not may too (a group of a KCD scene need not be connected: it is
    where its primitives' tree starts, for queries as for the exact grouping)."""
    n = lo.shape[0]
    label = np.zeros(n, np.int64)
    count, still = 1, 0
    while still < 3:
        for axis in range(3):
            # ranks of the interval ends along the axis (ties equal): exact integer keys
            rank = np.unique(np.concatenate([lo[:, axis], hi[:, axis]]), return_inverse=True)[1]
            m = 2 * n + 1
            order = np.lexsort((rank[:n], label))
            first = label[order] * m + rank[:n][order]
            last = np.maximum.accumulate(label[order] * m + rank[n:][order])
            start = np.ones(n, bool)
            start[1:] = first[1:] > last[:-1]
            label[order] = np.cumsum(start) - 1
            new = int(label.max()) + 1
            still = still + 1 if new == count else 0
            count = new
            if still >= 3:
                break
    return label


def overlap_groups(lo: np.ndarray, hi: np.ndarray) -> tuple[int, np.ndarray]:
    """(k, labels (n,) int64 in 0..k-1, numbered by first appearance): KCD's groups of boxes
    ``lo, hi (n, 3)``, the connected components of their overlap graph (touching counts),
    found exactly unless that would test more than `_PAIRS_PER_BOX` pairs per box (see
    there); then `_axis_groups`, which keeps every overlapping pair in one group."""
    n = lo.shape[0]
    if n == 1:
        return 1, np.zeros(1, np.int64)
    labels = np.empty(n, np.int64)
    if n <= _BRUTE_GROUPING:
        k = overlap_components_brute(lo, hi, np.zeros(n, np.int32), labels)
        return int(k), labels
    pairs = min(_axis_pairs(lo, hi, axis) for axis in range(3))
    if pairs > max(_PAIRS_PER_BOX * n, _PAIRS_MIN):
        _, first, inverse = np.unique(_axis_groups(lo, hi), return_index=True, return_inverse=True)
        rank = np.empty(len(first), np.int64)
        rank[np.argsort(first)] = np.arange(len(first))
        return len(first), rank[inverse]
    tree = build_bvh(lo, hi)
    k = overlap_components(
        tree, 0, lo, hi, np.zeros(n, np.int32), np.empty(STACK_SIZE, np.int32), labels
    )
    if k < 0:  # cannot happen for a median-split tree; guard the kernel's contract
        raise RuntimeError("BVH traversal stack overflow while grouping")
    return int(k), labels
