"""BVH kernels: AABB tests, fixed-stack traversal, and overlap grouping (STYLE §3).

`FlatBVH` (STYLE §3): ``lo, hi (m, 3)`` node boxes, ``left, right, first, count (m,)`` int32,
``order (n,)`` int32. A node is a leaf when ``count > 0``; a leaf holds the primitives
``order[first:first+count]``; an internal node has two children ``left``, ``right``. A forest
(several trees in one set of arrays) is the same layout with several roots.

Traversal uses a caller-allocated int32 stack. A binary tree built by median split
(planning_collision.bvh) has depth <= ceil(log2(n)) + 1, so a stack of 2 * 64 entries never
overflows for any array numpy can hold; kernels still check and report overflow.
"""

from collections import namedtuple

import numpy as np

from ._jit import kernel
from .support import core_support_world

FlatBVH = namedtuple("FlatBVH", ["lo", "hi", "left", "right", "first", "count", "order"])

# Stack depth callers allocate (int32 entries). See the module doc.
STACK_SIZE = 256


@kernel
def aabb_overlap(alo, ahi, blo, bhi, margin):
    """True iff the boxes (lo, hi) overlap once both are inflated by margin/2 (i.e. their
    gap is <= margin on every axis). Touching boxes overlap."""
    for k in range(3):
        if alo[k] - bhi[k] > margin or blo[k] - ahi[k] > margin:
            return False
    return True


@kernel
def aabb_sqdist(alo, ahi, blo, bhi):
    """Squared Euclidean distance between two boxes (0 when they overlap). A lower bound
    on the squared distance between anything inside them."""
    s = 0.0
    for k in range(3):
        g = alo[k] - bhi[k]
        if g < blo[k] - ahi[k]:
            g = blo[k] - ahi[k]
        if g > 0.0:
            s += g * g
    return s


@kernel
def bvh_query_aabb(bvh, root, plo, phi, qlo, qhi, margin, stack, out):
    """Primitives of the tree at `root` whose own box (plo[p], phi[p]) overlaps (qlo, qhi)
    within `margin`.

    Writes primitive indices into out (caller sizes it to n); returns how many, or -1 on
    stack overflow.
    """
    nout = 0
    if bvh.lo.shape[0] == 0:
        return 0
    sp = 0
    stack[sp] = root
    sp += 1
    while sp > 0:
        sp -= 1
        nd = stack[sp]
        if not aabb_overlap(bvh.lo[nd], bvh.hi[nd], qlo, qhi, margin):
            continue
        if bvh.count[nd] > 0:
            for j in range(bvh.first[nd], bvh.first[nd] + bvh.count[nd]):
                p = bvh.order[j]
                # a leaf box bounds several primitives: test each one's own box
                if nout < out.shape[0] and aabb_overlap(plo[p], phi[p], qlo, qhi, margin):
                    out[nout] = p
                    nout += 1
        else:
            if sp + 2 > stack.shape[0]:
                return -1
            stack[sp] = bvh.left[nd]
            stack[sp + 1] = bvh.right[nd]
            sp += 2
    return nout


@kernel
def _find(parent, i):
    # union-find with path halving
    while parent[i] != i:
        parent[i] = parent[parent[i]]
        i = parent[i]
    return i


@kernel
def _component_labels(parent, labels_out):
    """Number the union-find roots 0..k-1 in order of first appearance; labels_out[i] is
    i's component. Returns k."""
    n = parent.shape[0]
    k = 0
    comp = np.full(n, -1, np.int64)
    for i in range(n):
        r = _find(parent, i)
        if comp[r] < 0:
            comp[r] = k
            k += 1
        labels_out[i] = comp[r]
    return k


@kernel
def overlap_components(bvh, root, lo, hi, label, stack, labels_out):
    """Connected components of the box-overlap graph among boxes of equal `label`.

    bvh : a FlatBVH over the boxes ``lo, hi (n, 3)`` (tree at `root`); label : (n,) int32.
    Two boxes are joined when they overlap (touching counts) and carry the same label
    (KCD groups only pieces of the same source object). Writes a component index
    0..k-1 per box into labels_out (numbered in order of first appearance) and returns k,
    or -1 on stack overflow.
    """
    n = lo.shape[0]
    parent = np.arange(n)
    for i in range(n):
        sp = 0
        stack[sp] = root
        sp += 1
        while sp > 0:
            sp -= 1
            nd = stack[sp]
            if not aabb_overlap(bvh.lo[nd], bvh.hi[nd], lo[i], hi[i], 0.0):
                continue
            if bvh.count[nd] > 0:
                for j in range(bvh.first[nd], bvh.first[nd] + bvh.count[nd]):
                    p = bvh.order[j]
                    # each unordered pair once; union is symmetric
                    if (
                        p > i
                        and label[p] == label[i]
                        and aabb_overlap(lo[p], hi[p], lo[i], hi[i], 0.0)
                    ):
                        a = _find(parent, i)
                        b = _find(parent, p)
                        if a != b:
                            parent[b] = a
            else:
                if sp + 2 > stack.shape[0]:
                    return -1
                stack[sp] = bvh.left[nd]
                stack[sp + 1] = bvh.right[nd]
                sp += 2
    return _component_labels(parent, labels_out)


@kernel
def overlap_components_brute(lo, hi, label, labels_out):
    """`overlap_components` by testing every pair: O(n^2), for the few pieces of one object
    (no tree to build). Same output."""
    n = lo.shape[0]
    parent = np.arange(n)
    for i in range(n):
        for p in range(i + 1, n):
            if label[p] == label[i] and aabb_overlap(lo[p], hi[p], lo[i], hi[i], 0.0):
                a = _find(parent, i)
                b = _find(parent, p)
                if a != b:
                    parent[b] = a
    return _component_labels(parent, labels_out)


@kernel
def shape_world_aabb(tab, i, T, lo, hi):
    """World AABB of bounded shape i of `tab` posed by T (4x4), into lo, hi (3,): exact,
    from the core's support along the six axis directions plus the sweep radius (a box's
    extent along an axis is its support there). Not for halfspaces (unbounded)."""
    buf = np.empty(3)
    r = tab.params[i, 0]
    for k in range(3):
        d = np.zeros(3)
        d[k] = 1.0
        core_support_world(tab, i, T, d[0], d[1], d[2], 0, buf, 0)
        hi[k] = buf[k] + r
        core_support_world(tab, i, T, -d[0], -d[1], -d[2], 0, buf, 0)
        lo[k] = buf[k] - r
