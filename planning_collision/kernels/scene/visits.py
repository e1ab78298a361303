"""The scene traversal's steps (kernels/scene/traversal.py `traverse`): the pair query at a leaf,
GJK warm starts, the unbounded primitives, a stack's seeds, a KCD node's visit, a group-BVH
node's box test and children, a leaf's primitives per mode, and the kept results.

The steps are inlined into the traversal's one loop (numba IR inlining: the machine code of one
loop, as when it was written out in one function); each takes the arrays it reads (below) and
returns what it changed of the loop's state (its counts, its stack size, the nearest pair so far).
Like every inline kernel they are inlined into the function that inlines the loop's body (the
checker's `query`, `traverse`), not into the body first, whose copy would then carry them all
(kernels/_jit.py). What the cut costs, measured against the loop written out in one function (python
-m planning_collision.demos.dev.cold_start, python -m planning_collision.demos.bench.checker): the
same speed and the same first `is_valid` + `check_edge`. Compiled apart instead, the steps cost
20-25 % of every state and edge check (LLVM does not inline them back), and a step that calls the
pair kernels costs its own ~1.5 s of LLVM passes over them: the steps stay inlined.
"""

from collections import namedtuple

import numpy as np
from numba import literally, types
from numba.extending import overload

from .._jit import hot_kernel, inline_kernel
from ..base.codes import (
    APART,
    BV,
    BV_TESTED,
    COLLIDE,
    CORES_WITHIN,
    DISTANCE,
    KT,
    KT_TESTED,
    NO,
    ONE,
    OVERFLOW,
    YES,
    ZERO,
)
from ..convex.gjk import V_IN, V_OUT, V_SET
from ..convex.pair import overlap_within, pair_distance, pair_separation
from .boxes import (
    lower_bound,
    obb_apart,
    obb_sqgap,
    pruned,
    rows_gaps,
    rows_overlap,
    rows_sqdist,
    sq_pruned,
)
from .scratch import BV_TESTS, PAIR_TESTS


def leaf_distance(depth, tab_a, ia, T_a, tab_b, ib, T_b, bound, ws, out):
    """The DISTANCE mode's pair query: `pair_distance` (exact penetration depth, EPA) when
    `depth`, else `pair_separation` (no depth: no EPA compiled in). Compiled code picks one
    at typing time from the literal `depth` (the overload below), so a traversal compiled
    for the collision checker carries no EPA; this body is what runs as plain Python."""
    if depth:
        return pair_distance(tab_a, ia, T_a, tab_b, ib, T_b, bound, ws, out)
    return pair_separation(tab_a, ia, T_a, tab_b, ib, T_b, bound, ws, out)


@overload(leaf_distance, jit_options={"error_model": "numpy", "nogil": True})
def _leaf_distance_typed(depth, tab_a, ia, T_a, tab_b, ib, T_b, bound, ws, out):
    if not isinstance(depth, types.BooleanLiteral):
        return lambda depth, tab_a, ia, T_a, tab_b, ib, T_b, bound, ws, out: literally(depth)
    if depth.literal_value:
        return lambda depth, tab_a, ia, T_a, tab_b, ib, T_b, bound, ws, out: pair_distance(
            tab_a, ia, T_a, tab_b, ib, T_b, bound, ws, out
        )
    return lambda depth, tab_a, ia, T_a, tab_b, ib, T_b, bound, ws, out: pair_separation(
        tab_a, ia, T_a, tab_b, ib, T_b, bound, ws, out
    )


@hot_kernel
def warm_start(warm, ws, i, p):
    """Before the pair query of query primitive i and scene primitive p: load the last
    search direction of that pair, when the warm-start cache (`Scratch.warm`) holds it.
    Returns its slot (-1: the cache is off)."""
    W = warm.shape[0]
    if W == 0:
        return -1
    key = float(i) * 4294967296.0 + float(p)
    slot = (i * 1000003 + p) % W
    if warm[slot, 0] == key:
        ws[V_IN] = warm[slot, 1]
        ws[V_IN + 1] = warm[slot, 2]
        ws[V_IN + 2] = warm[slot, 3]
        ws[V_SET] = 1.0
    return slot


@hot_kernel
def warm_keep(warm, ws, slot, i, p):
    """After the pair query: keep its last search direction in its slot."""
    if slot < 0:
        return
    ws[V_SET] = 0.0  # a closed-form pair left the start unused
    warm[slot, 0] = float(i) * 4294967296.0 + float(p)
    warm[slot, 1] = ws[V_OUT]
    warm[slot, 2] = ws[V_OUT + 1]
    warm[slot, 3] = ws[V_OUT + 2]


@hot_kernel
def _child_entry(kt_cgroup, kt_child, e, tested):
    """The stack entry (tree, node) of KCD child slot e: a group leaf enters as its BVH
    (sub)tree's root, which has the same box; other children as KCD nodes. `tested`: the
    parent tested the child's box already."""
    g = kt_cgroup[e]
    if g >= 0:
        return (BV_TESTED if tested else BV), g
    return (KT_TESTED if tested else KT), kt_child[e]


@hot_kernel
def _record(best, o, tmp):
    for c in range(10):
        best[o, c] = tmp[c]


@hot_kernel
def take(tmp):
    """The pair result in tmp as a value (the nearest-only query keeps its best so far in a
    local: writing it to best[o] each time a nearer object turns up costs a cache miss per
    object row touched)."""
    return (tmp[0], tmp[1], tmp[2], tmp[3], tmp[4], tmp[5], tmp[6], tmp[7], tmp[8], tmp[9])


@hot_kernel
def _put(best, o, rec):
    for c in range(10):
        best[o, c] = rec[c]


@hot_kernel
def _keep(best, o, tmp, bound, per_object, gbest, arg, rec):
    """Keep the pair result in tmp for object o if it is within bound and nearer than what
    is kept: per object, in row o of best; nearest only, as the returned record. Returns
    the new (gbest, arg, rec)."""
    d = tmp[0]
    if d <= bound:
        if per_object:
            if d < best[o, 0]:
                _record(best, o, tmp)
                if d < gbest:
                    return d, o, rec
        elif d < gbest:
            return d, o, take(tmp)
    return gbest, arg, rec


@hot_kernel
def result(mode, per_object, best, arg, rec, n):
    """What `traverse` returns: DISTANCE, the nearest slot (its record written to best when
    only the nearest was kept); otherwise the count."""
    if mode != DISTANCE:
        return n
    if not per_object and arg >= 0:
        _put(best, arg, rec)
    return arg


@hot_kernel
def tally(sc, nbv, npair, r):
    """Add a traversal's box tests and pair queries to ``sc.counts``; return r."""
    sc.counts[BV_TESTS] += nbv
    sc.counts[PAIR_TESTS] += npair
    return r


# ---------------------------------------------------------------------------------------
# the loop's steps. Each takes the few arrays it reads, as arrays or small named tuples,
# never the scene or the scratch: an inlined step given those copies all their arrays at
# each call site, which LLVM then spends seconds of a user's first call taking apart (the
# steps given the scene made the checker's traversal 3 s slower to compile, measured)

# The KCD tree's arrays (FlatScene's kt_*)
KcdArrays = namedtuple(
    "KcdArrays", ["lo", "hi", "cstart", "child", "clo", "chi", "cgroup", "group"]
)
# The primitives (their shapes, a ShapeTable, apart): poses, world boxes, object slots
Prims = namedtuple("Prims", ["poses", "lo", "hi", "obj"])
# The query block (its shapes apart): poses, world boxes, the inner radii of outer hulls
Query = namedtuple("Query", ["poses", "lo", "hi", "inner"])
# What pair queries at the leaves write of the scratch: per-object records, one pair
# result, the pair kernels' scratch, GJK warm starts
LeafScratch = namedtuple("LeafScratch", ["best", "tmp", "pair", "warm"])


@inline_kernel
def query_ball(qposes, qbrad, i):
    """The query primitive's bounding ball: its local origin posed, and its brad."""
    return qposes[i, 0, 3], qposes[i, 1, 3], qposes[i, 2, 3], qbrad[i]


@inline_kernel
def _collide_unbounded(ids, tab, prims, qtab, q, i, bound, stop_first, pair, hit, out):
    """COLLIDE of query primitive i against the primitives `ids` without a box
    (halfspaces), each object once. Returns (objects hit, pair tests, stopped at a first
    hit)."""
    n = ZERO
    npair = ZERO
    for u in range(ids.shape[0]):
        p = np.int64(ids[u])
        o = prims.obj[p]
        if hit[o]:
            continue
        npair += 1
        inner = q.inner[i] + tab.params[p, 0] if q.inner.shape[0] > 0 else -1.0
        r = overlap_within(qtab, i, q.poses[i], tab, p, prims.poses[p], bound, inner, pair)
        if r != APART:
            hit[o] = 1
            n += 1
            if stop_first:
                out[0] = i
                out[1] = 1 if r == CORES_WITHIN else 0
                return n, npair, True
    return n, npair, False


@inline_kernel
def _distance_unbounded(ids, tab, prims, qtab, q, i, bound, per_object, depth, sc, gbest, arg, rec):
    """DISTANCE of query primitive i to the primitives `ids` without a box; sc:
    `LeafScratch`. Returns (pair tests, gbest, arg, rec)."""
    npair = ZERO
    best, tmp, pair = sc.best, sc.tmp, sc.pair
    for u in range(ids.shape[0]):
        p = np.int64(ids[u])
        o = prims.obj[p]
        b = bound if per_object else min(bound, gbest)
        if per_object and best[o, 0] < b:
            b = best[o, 0]
        npair += 1
        leaf_distance(depth, qtab, i, q.poses[i], tab, p, prims.poses[p], b, pair, tmp)
        gbest, arg, rec = _keep(best, o, tmp, b, per_object, gbest, arg, rec)
    return npair, gbest, arg, rec


@inline_kernel
def unbounded(ids, tab, prims, qtab, q, mode, i, bound, flag, depth, sc, hit, out, gbest, arg, rec):
    """Query primitive i against the primitives `ids` without a box (halfspaces), which
    every COLLIDE or DISTANCE query tests (`traverse`; sc: `LeafScratch`), before the
    trees. Returns (objects hit, pair tests, gbest, arg, rec, stopped at a first hit)."""
    n = ZERO
    npair = ZERO
    stopped = False
    if mode == COLLIDE:
        n, npair, stopped = _collide_unbounded(
            ids, tab, prims, qtab, q, i, bound, flag, sc.pair, hit, out
        )
    else:
        npair, gbest, arg, rec = _distance_unbounded(
            ids, tab, prims, qtab, q, i, bound, flag, depth, sc, gbest, arg, rec
        )
    return n, npair, gbest, arg, rec, stopped


@inline_kernel
def seed_stack(stack, seeds, ranges, i, root):
    """Stack entries for query primitive i: its rows of seeds (`traverse`), or the root.
    Returns the stack size, or OVERFLOW."""
    per_query = ranges.shape[0] > 0
    s0 = ranges[i, 0] if per_query else 0
    s1 = ranges[i, 1] if per_query else seeds.shape[0]
    if s1 == s0:
        stack[0, 0] = KT
        stack[0, 1] = root
        return ONE
    if s1 - s0 > stack.shape[0]:
        return OVERFLOW
    for s in range(s0, s1):
        stack[s - s0, 0] = seeds[s, 0]
        stack[s - s0, 1] = seeds[s, 1]
    return np.int64(s1 - s0)


@inline_kernel
def object_bound(hit, best, o, b, collide, per_object):
    """(skip, bound) for a node of object slot o (-1: a KCD node over several objects):
    COLLIDE skips the objects hit already; DISTANCE per object searches under o's own best
    so far when it is nearer than b."""
    if o < 0:
        return False, b
    if collide:
        return hit[o] != 0, b
    if per_object and best[o, 0] < b:
        return False, best[o, 0]
    return False, b


@inline_kernel
def visit_kt(kcd, stack, sp, tree, nd, qlo, qhi, i, ball, b, bound, distance, keys):
    """Visit KCD node nd (popped; its entry's slot sp is free): test its box unless its
    parent did (KT_TESTED), then push its group's BVH root, or its children whose boxes
    pass (DISTANCE: nearest on top, popped first, so an early near hit tightens the bound
    that prunes the rest; their lower bounds sorted in `keys`, the scratch's tmp, free
    between pair calls: FANOUT and WIDTH in kcd.py fit in it). Returns (stack size or
    OVERFLOW, box tests)."""
    qc0, qc1, qc2, qr = ball
    nbv = ZERO
    if tree == KT:
        nbv += 1
        if distance:
            gs, gb = rows_gaps(kcd.lo, kcd.hi, nd, qlo, qhi, i, qc0, qc1, qc2)
            if pruned(gs, gb, qr, b):
                return sp, nbv
        elif not rows_overlap(kcd.lo, kcd.hi, nd, qlo, qhi, i, bound):
            return sp, nbv
    g = kcd.group[nd]
    if g >= 0:
        stack[sp, 0] = BV_TESTED
        stack[sp, 1] = g
        return sp + 1, nbv
    e0 = np.int64(kcd.cstart[nd])
    e1 = np.int64(kcd.cstart[nd + 1])
    if sp + e1 - e0 > stack.shape[0]:
        return OVERFLOW, nbv
    nbv += e1 - e0
    clo = kcd.clo
    chi = kcd.chi
    if not distance:
        # the children's boxes lie side by side: test them all here, push the hits
        for e in range(e0, e1):
            if not rows_overlap(clo, chi, e, qlo, qhi, i, bound):
                continue
            stack[sp, 0], stack[sp, 1] = _child_entry(kcd.cgroup, kcd.child, e, YES)
            sp += 1
        return sp, nbv
    # bound them all here, push the ones that may be nearer than the bound, the nearest on
    # top (insertion sort by lower bound)
    s0 = sp
    for e in range(e0, e1):
        gs, gb = rows_gaps(clo, chi, e, qlo, qhi, i, qc0, qc1, qc2)
        if pruned(gs, gb, qr, b):
            continue
        lb = lower_bound(gs, gb, qr)
        j = sp
        if sp - s0 < keys.shape[0]:
            while j > s0 and keys[j - 1 - s0] < lb:
                stack[j, 0] = stack[j - 1, 0]
                stack[j, 1] = stack[j - 1, 1]
                keys[j - s0] = keys[j - 1 - s0]
                j -= 1
            keys[j - s0] = lb
        stack[j, 0], stack[j, 1] = _child_entry(kcd.cgroup, kcd.child, e, NO)
        sp += 1
    # the others are tested again when popped (the bound may have shrunk by then); the top
    # one is popped next, under the bound it was just tested with
    if sp > s0:
        stack[sp - 1, 0] = KT_TESTED if stack[sp - 1, 0] == KT else BV_TESTED
    return sp, nbv


@inline_kernel
def bv_pruned(lo, hi, nd, qlo, qhi, i, ball, ob, b, bound, collide, distance):
    """Whether group-BVH node nd's box rules it out: DISTANCE by the query's box, ball and
    oriented box under b; COLLIDE and the listing modes by the query's box within bound,
    COLLIDE by its oriented box too."""
    nd = np.int64(nd)  # as a leaf's primitive index: the box tests compile once
    if distance:
        gs, gb = rows_gaps(lo, hi, nd, qlo, qhi, i, ball[0], ball[1], ball[2])
        return pruned(gs, gb, ball[3], b) or sq_pruned(obb_sqgap(lo, hi, nd, ob), b)
    if not rows_overlap(lo, hi, nd, qlo, qhi, i, bound):
        return True
    return collide and obb_apart(lo, hi, nd, ob, bound)


@inline_kernel
def push_children(lo, hi, left, right, stack, sp, nd, qlo, qhi, i, ob, distance):
    """Push internal group-BVH node nd's two children: for DISTANCE the nearer on top, so
    it is popped first (tighter bounds sooner); else the left one. Returns the stack size,
    or OVERFLOW."""
    if sp + 2 > stack.shape[0]:
        return OVERFLOW
    l = np.int64(left[nd])  # int64, as every index the box tests take
    r = np.int64(right[nd])
    if distance:
        sr = max(rows_sqdist(lo, hi, r, qlo, qhi, i), obb_sqgap(lo, hi, r, ob))
        if sr < max(rows_sqdist(lo, hi, l, qlo, qhi, i), obb_sqgap(lo, hi, l, ob)):
            l, r = r, l
    stack[sp, 0] = BV
    stack[sp, 1] = r
    stack[sp + 1, 0] = BV
    stack[sp + 1, 1] = l
    return sp + 2


@inline_kernel
def collide_leaf(
    order, f, cnt, o, tab, prims, qtab, q, i, ob, bound, stop_first, pair, warm, hit, out
):
    """COLLIDE of query primitive i with the primitives order[f:f + cnt] of a leaf (object
    o): the first within bound marks o hit (the rest of o is skipped). Returns (hit 0 or 1,
    box tests, pair tests, stopped at a first hit)."""
    nbv = ZERO
    npair = ZERO
    for j in range(f, f + cnt):
        p = np.int64(order[j])
        # a one-primitive leaf's box is the primitive's box: tested already
        if cnt > 1:
            nbv += 1
            if not rows_overlap(prims.lo, prims.hi, p, q.lo, q.hi, i, bound):
                continue
            if obb_apart(prims.lo, prims.hi, p, ob, bound):
                continue
        npair += 1
        slot = warm_start(warm, pair, i, p)
        inner = q.inner[i] + tab.params[p, 0] if q.inner.shape[0] > 0 else -1.0
        r = overlap_within(qtab, i, q.poses[i], tab, p, prims.poses[p], bound, inner, pair)
        warm_keep(warm, pair, slot, i, p)
        if r != APART:
            hit[o] = 1
            if stop_first:
                out[0] = i  # which query primitive: callers resume after it
                out[1] = 1 if r == CORES_WITHIN else 0
                return ONE, nbv, npair, True
            return ONE, nbv, npair, False
    return ZERO, nbv, npair, False


@inline_kernel
def list_leaf(order, f, cnt, plo, phi, qlo, qhi, i, bound, out, n):
    """CANDIDATES: the primitives order[f:f + cnt] of a leaf whose boxes overlap the
    query's within bound, into out from n. Returns (n, box tests)."""
    nbv = ZERO
    for j in range(f, f + cnt):
        p = np.int64(order[j])
        if cnt > 1:
            nbv += 1
            if not rows_overlap(plo, phi, p, qlo, qhi, i, bound):
                continue
        out[n] = p
        n += 1
    return n, nbv


@inline_kernel
def distance_leaf(
    order, f, cnt, o, tab, prims, qtab, q, i, ball, ob, bound, per_object, depth, sc, gbest,
    arg, rec,
):  # fmt: skip
    """DISTANCE from query primitive i to the primitives order[f:f + cnt] of a leaf (object
    o), each pruned by its box and by the two bounding balls under the bound so far, then a
    pair distance. sc: `LeafScratch`. Returns (box tests, pair tests, gbest, arg, rec)."""
    qc0, qc1, qc2, qr = ball
    best, tmp, pair, warm = sc.best, sc.tmp, sc.pair, sc.warm
    poses = prims.poses
    nbv = ZERO
    npair = ZERO
    for j in range(f, f + cnt):
        p = np.int64(order[j])
        b = bound if per_object else min(bound, gbest)
        if per_object and best[o, 0] < b:
            b = best[o, 0]
        if cnt > 1:
            nbv += 1
            gs, gb = rows_gaps(prims.lo, prims.hi, p, q.lo, q.hi, i, qc0, qc1, qc2)
            if pruned(gs, gb, qr, b) or sq_pruned(obb_sqgap(prims.lo, prims.hi, p, ob), b):
                continue
        # ball-ball: the primitive lies within brad[p] of its pose origin
        dx = poses[p, 0, 3] - qc0
        dy = poses[p, 1, 3] - qc1
        dz = poses[p, 2, 3] - qc2
        if pruned(0.0, dx * dx + dy * dy + dz * dz, qr + tab.brad[p], b):
            continue
        npair += 1
        slot = warm_start(warm, pair, i, p)
        leaf_distance(depth, qtab, i, q.poses[i], tab, p, poses[p], b, pair, tmp)
        warm_keep(warm, pair, slot, i, p)
        gbest, arg, rec = _keep(best, o, tmp, b, per_object, gbest, arg, rec)
    return nbv, npair, gbest, arg, rec
