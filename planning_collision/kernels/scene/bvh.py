"""BVH kernels: AABB tests, fixed-stack traversal, and overlap grouping.

`FlatBVH`: ``lo, hi (m, 3)`` node boxes, ``left, right, first, count (m,)`` int32,
``order (n,)`` int32. A node is a leaf when ``count > 0``; a leaf holds the primitives
``order[first:first+count]``; an internal node has two children ``left``, ``right``. A forest
(several trees in one set of arrays) is the same layout with several roots.

Traversals use a caller-allocated int32 stack of STACK_SIZE entries. A binary tree built
by median split has depth <= ceil(log2(n)) + 1, and the SAH builder here bounds depth by
SAH_MAX_DEPTH + ceil(log2(n)), so the stack never overflows for any array numpy can hold;
kernels still check and report overflow.
"""

import numpy as np

from .._jit import kernel
from ..base.codes import ZERO
from ..base.records import F2, I1, Field, record
from ..convex.support import support_world

FlatBVH = record(
    "FlatBVH",
    __name__,
    "A binary BVH (or a forest of them) of m nodes over n primitives (module doc).",
    [
        Field("lo", F2, ("m", 3), "node boxes: low corners"),
        Field("hi", F2, ("m", 3), "and high corners"),
        Field("left", I1, ("m",), "an internal node's children"),
        Field("right", I1, ("m",), ""),
        Field("first", I1, ("m",), "a leaf's primitives: order[first:first + count]"),
        Field("count", I1, ("m",), "> 0: a leaf"),
        Field("order", I1, ("n",), "primitive indices, leaf by leaf"),
    ],
)

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
                    p = np.int64(bvh.order[j])  # as i: `_find` compiles once
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
        support_world(tab, i, T, d[0], d[1], d[2], buf, ZERO)
        hi[k] = buf[k] + r
        support_world(tab, i, T, -d[0], -d[1], -d[2], buf, ZERO)
        lo[k] = buf[k] - r


@kernel
def _half_area(lo, hi):
    """Half the surface area of box (lo, hi) (3,): the SAH's measure of how likely a query
    reaches a box."""
    dx = hi[0] - lo[0]
    dy = hi[1] - lo[1]
    dz = hi[2] - lo[2]
    return dx * dy + dy * dz + dz * dx


# Below this many keys, a stable insertion sort instead of numpy's merge sort (which
# allocates its result): the same order, without an allocation per node and axis.
_INSERTION_SORT = 32


@kernel
def _stable_argsort(key, c, out):
    """out[:c] = the indices that sort key[:c] (finite), equal keys in index order: what
    ``np.argsort(key[:c], kind="mergesort")`` gives."""
    if c > _INSERTION_SORT:
        out[:c] = np.argsort(key[:c], kind="mergesort")
        return
    for j in range(c):
        x = key[j]
        i = j
        while i > 0 and key[out[i - 1]] > x:
            out[i] = out[i - 1]
            i -= 1
        out[i] = j


# SAH nodes deeper than this are split at the median instead (bounded depth whatever the
# boxes: the traversal stack stays within STACK_SIZE; see wide_tree).
SAH_MAX_DEPTH = 16


@kernel
def sah_forest(lo, hi, order, first0, count0, leaf_size):
    """Binary BVHs over boxes ``lo, hi (n, 3)`` by the surface area heuristic (full sweep
    over the centres along each axis; MacDonald & Booth 1990, Wald 2007): one tree per run
    ``order[first0[s]:first0[s] + count0[s]]`` (each run non-empty; `order` is permuted in
    place, each leaf then holds ``order[first:first+count]``).

    Cost model of the scene traversal: reaching an internal node tests its two children's
    boxes, reaching a leaf tests its primitives' boxes; so a split costs 2 + (A_L N_L + A_R
    N_R) / A (A: half surface area, N: boxes), a leaf N. A node becomes a leaf when it has
    at most `leaf_size` boxes and the best split costs no less. Nodes at depth >=
    SAH_MAX_DEPTH split at the median (depth <= SAH_MAX_DEPTH + ceil(log2 n)).

    Returns (left, right, first, count, nlo, nhi) per node (roots 0..S-1, then level by
    level; a leaf has left = right = -1).
    """
    n = lo.shape[0]
    S = first0.shape[0]
    m = 2 * n - S
    left = np.full(m, -1, np.int64)
    right = np.full(m, -1, np.int64)
    first = np.zeros(m, np.int64)
    count = np.zeros(m, np.int64)
    depth = np.zeros(m, np.int64)
    nlo = np.empty((m, 3))
    nhi = np.empty((m, 3))
    cen = 0.5 * (lo + hi)
    key = np.empty(n)
    suf = np.empty(n)
    # scratch reused by every node (a node allocated ~10 small arrays: most of the time of
    # a scene of tens of boxes, built per planning problem)
    srt = np.empty(n, np.int64)
    seg = np.empty(n, np.int64)
    slo = np.empty(3)
    shi = np.empty(3)
    plo = np.empty(3)
    phi = np.empty(3)
    first[:S] = first0
    count[:S] = count0
    nn = S
    k = 0
    while k < nn:
        f = first[k]
        c = count[k]
        for a in range(3):
            nlo[k, a] = np.inf
            nhi[k, a] = -np.inf
        for j in range(f, f + c):
            p = order[j]
            for a in range(3):
                nlo[k, a] = min(nlo[k, a], lo[p, a])
                nhi[k, a] = max(nhi[k, a], hi[p, a])
        if c == 1:
            k += 1
            continue
        best = np.inf
        best_axis = -1
        best_split = c // 2
        for a in range(3):
            if depth[k] >= SAH_MAX_DEPTH:
                break
            for j in range(c):
                key[j] = cen[order[f + j], a]
            _stable_argsort(key, c, srt)
            # suffix areas: boxes srt[j:] for j >= 1
            slo[:] = np.inf
            shi[:] = -np.inf
            for j in range(c - 1, 0, -1):
                p = order[f + srt[j]]
                for b in range(3):
                    slo[b] = min(slo[b], lo[p, b])
                    shi[b] = max(shi[b], hi[p, b])
                suf[j] = _half_area(slo, shi)
            plo[:] = np.inf
            phi[:] = -np.inf
            for j in range(c - 1):
                p = order[f + srt[j]]
                for b in range(3):
                    plo[b] = min(plo[b], lo[p, b])
                    phi[b] = max(phi[b], hi[p, b])
                cost = _half_area(plo, phi) * (j + 1) + suf[j + 1] * (c - j - 1)
                # equal costs (e.g. boxes of zero area): the more even split
                if cost < best or (cost == best and abs(2 * (j + 1) - c) < abs(2 * best_split - c)):
                    best = cost
                    best_axis = a
                    best_split = j + 1
        if c <= leaf_size:
            area = _half_area(nlo[k], nhi[k])
            if best_axis < 0 or area <= 0.0 or 2.0 + best / area >= c:
                k += 1
                continue
        if best_axis < 0:  # deep node: median of the centres along the widest spread
            spread = -1.0
            for a in range(3):
                cmin = np.inf
                cmax = -np.inf
                for j in range(f, f + c):
                    cmin = min(cmin, cen[order[j], a])
                    cmax = max(cmax, cen[order[j], a])
                if cmax - cmin > spread:
                    spread = cmax - cmin
                    best_axis = a
            best_split = c // 2
        for j in range(c):
            key[j] = cen[order[f + j], best_axis]
        _stable_argsort(key, c, srt)
        for j in range(c):
            seg[j] = order[f + j]
        for j in range(c):
            order[f + j] = seg[srt[j]]
        left[k] = nn
        right[k] = nn + 1
        first[nn] = f
        count[nn] = best_split
        first[nn + 1] = f + best_split
        count[nn + 1] = c - best_split
        depth[nn] = depth[k] + 1
        depth[nn + 1] = depth[k] + 1
        nn += 2
        k += 1
    return left[:nn], right[:nn], first[:nn], count[:nn], nlo[:nn], nhi[:nn]


@kernel
def wide_tree(lo, hi, width):
    """A wide BVH over boxes ``lo, hi (n, 3)``, n >= 2: the SAH binary tree of `sah_forest`
    (one box a leaf) collapsed so each node has up to `width` children (2 <= width):
    starting from a node's two children, the child with the largest surface area is
    replaced by its own two children while there is room (the usual BVH4/BVH8 collapse;
    Wald et al. 2008).

    Returns (nlo, nhi, ccount, child, is_node) in node order, root 0, nodes numbered level
    by level: node k's children are ``child[cstart[k]:cstart[k] + ccount[k]]`` with cstart
    the running sum of ccount; a child is wide node ``child[e]`` when ``is_node[e]``, else
    box ``child[e]`` of the input. Depth <= SAH_MAX_DEPTH + ceil(log2 n)."""
    n = lo.shape[0]
    order = np.arange(n)
    left, right, first, count, blo, bhi = sah_forest(
        lo, hi, order, np.zeros(1, np.int64), np.full(1, n, np.int64), np.int64(1)
    )  # not 1: a literal compiles sah_forest again (kernels/base/codes.py)
    item = order[first]
    m = left.shape[0]
    src = np.empty(m, np.int64)  # binary node of each wide node
    ccount = np.zeros(m, np.int64)
    child = np.empty(m, np.int64)
    is_node = np.zeros(m, np.bool_)
    front = np.empty(width, np.int64)
    src[0] = 0
    nw = 1
    ne = 0
    k = 0
    while k < nw:
        b = src[k]
        front[0] = left[b]
        front[1] = right[b]
        nf = 2
        while nf < width:
            big = -1
            area = -1.0
            for j in range(nf):
                x = front[j]
                if left[x] >= 0 and _half_area(blo[x], bhi[x]) > area:
                    area = _half_area(blo[x], bhi[x])
                    big = j
            if big < 0:
                break
            x = front[big]
            front[big] = left[x]
            front[nf] = right[x]
            nf += 1
        ccount[k] = nf
        for j in range(nf):
            x = front[j]
            if left[x] >= 0:
                src[nw] = x
                child[ne] = nw
                is_node[ne] = True
                nw += 1
            else:
                child[ne] = item[x]
            ne += 1
        k += 1
    nlo = np.empty((nw, 3))
    nhi = np.empty((nw, 3))
    for k in range(nw):
        for a in range(3):
            nlo[k, a] = blo[src[k], a]
            nhi[k, a] = bhi[src[k], a]
    return nlo, nhi, ccount[:nw].copy(), child[:ne].copy(), is_node[:ne].copy()
