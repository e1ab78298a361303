"""The scene traversal: one loop that walks the KCD hierarchy with a fixed stack and
answers collide, distance and candidate queries (docs/architecture.md, "Scenes").

The flat scene (`FlatScene`, a namedtuple of arrays numba takes as one argument):

- primitives: ``tab`` (ShapeTable, kernels/layout.py), ``poses (n, 4, 4)`` T_world_prim,
  ``plo, phi (n, 3)`` world AABBs, ``pobj (n,)`` int32 object slot of each primitive;
- ``bvh``: a FlatBVH *forest*, one binary tree per KCD group (its ``order`` indexes the
  primitives); ``bvh_obj (m,)`` int32 object slot of each node (a group never mixes objects);
- the KCD multi-child tree over groups: ``kt_lo, kt_hi (K, 3)``, children of node k are
  ``kt_child[kt_cstart[k]:kt_cstart[k+1]]`` (kt node ids), and their boxes, side by side,
  ``kt_clo, kt_chi`` over the same range (``kt_clo[e] = kt_lo[kt_child[e]]``: a traversal
  tests all children of a node in one loop; ``kt_cgroup[e] = kt_group[kt_child[e]]``
  likewise, so it learns which are group leaves without a read per child); a node with
  ``kt_group[k] >= 0`` is a *group leaf* whose primitives are the BVH (sub)tree rooted at
  bvh node ``kt_group[k]`` (a group's root, or a node inside it: kcd.py opens sprawling
  groups); ``kt_obj (K,)`` the object slot of the node, or -1 when it spans several
  objects; ``kt_root (1,)`` the root node (``(0,)`` for a scene without bounded primitives);
- ``unbounded (u,)`` int32: primitives without a finite AABB (halfspaces), tested always;
- ``n_obj (1,)`` int32: number of object slots.

A query is a block of primitives too (``qtab``, ``qposes (k, 4, 4)``, ``qlo, qhi (k, 3)``):
one convex shape is a block of one, a mesh a block of triangles, a robot link a slice
``[i0, i1)`` of the robot's pieces.

`traverse` is the one loop; its `mode` says what a leaf does (COLLIDE: a boolean pair test;
DISTANCE: a pair distance under the bound so far; CANDIDATES: list the primitive). Every
node id it visits is a stable index into these arrays, and it starts from the entries in
`seeds` (the root when there are none), so a front-list cache can store where a traversal
stopped and start the next one there. Stacks are ``(S, 2)`` int32, entry = (tree, node):
KT a KCD node, BV a group BVH node, and BV_TESTED / KT_TESTED the same whose box the node
that pushed it tested already. S = kernels.bvh.STACK_SIZE suffices for the trees kcd.py
builds (SAH group BVHs and wide trees of bounded depth, at most FANOUT children a node);
kernels return OVERFLOW rather than write out of bounds.
"""

import math
from collections import namedtuple

import numpy as np
from numba import literally, types
from numba.extending import overload

from ._jit import hot_kernel
from .boxes import (
    lower_bound,
    obb_apart,
    obb_sqgap,
    pruned,
    query_obb,
    rows_gaps,
    rows_overlap,
    rows_sqdist,
    sq_pruned,
)
from .gjk import V_IN, V_OUT, V_SET
from .pair import APART, CORES_WITHIN, overlap_within, pair_distance, pair_separation

FlatScene = namedtuple(
    "FlatScene",
    [
        "tab",
        "poses",
        "plo",
        "phi",
        "pobj",
        "bvh",
        "bvh_obj",
        "kt_lo",
        "kt_hi",
        "kt_cstart",
        "kt_child",
        "kt_clo",
        "kt_chi",
        "kt_cgroup",
        "kt_group",
        "kt_obj",
        "kt_root",
        "unbounded",
        "n_obj",
    ],
)

KT = 0
BV = 1
# a stack entry that stands for nothing (a front list that found no leaf): popped, skipped
NONE = -1
# a group's BVH root pushed by its KCD group leaf: same box, already tested, not retested
BV_TESTED = 2
# a KCD node pushed by its parent, which tested its box (from kt_clo, kt_chi) already
KT_TESTED = 3
OVERFLOW = -2
_OVERFLOW = np.int64(OVERFLOW)
_ZERO = np.int64(0)
_MINUS_ONE = np.int64(-1)
_YES = np.bool_(True)
_NO = np.bool_(False)


# What a traversal's leaves do (the `mode` of `traverse`).
COLLIDE = 0
DISTANCE = 1
CANDIDATES = 2
LEAVES = 3

# Counters a traversal adds to (`Scratch.counts`): box tests, pair queries.
BV_TESTS = 0
PAIR_TESTS = 1


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
def _take(tmp):
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
            return d, o, _take(tmp)
    return gbest, arg, rec


@hot_kernel
def _finish(mode, per_object, best, arg, rec, n):
    """What `traverse` returns: DISTANCE, the nearest slot (its record written to best when
    only the nearest was kept); otherwise the count."""
    if mode != DISTANCE:
        return n
    if not per_object and arg >= 0:
        _put(best, arg, rec)
    return arg


@hot_kernel
def _tally(sc, nbv, npair, r):
    """Add a traversal's box tests and pair queries to ``sc.counts``; return r."""
    sc.counts[BV_TESTS] += nbv
    sc.counts[PAIR_TESTS] += npair
    return r


def traverse_body(
    scene, mode, qtab, qposes, qlo, qhi, i0, i1, seeds, ranges, bound, flag, sc, qinner, depth
):
    """Query primitives ``i0 <= i < i1`` of the block (qtab, qposes, qlo, qhi) against the
    scene, starting from stack entries in ``seeds (k, 2)``: for query primitive i the rows
    ``ranges[i, 0]:ranges[i, 1]`` when ``ranges (n, 2)`` has rows, else all k rows; the root
    when there are none. (A call costs ~0.1 µs of argument passing alone: the scene is ~50
    arrays. Callers query many primitives in one call rather than one per call.)

    sc : the caller's `Scratch` (kernels/scratch.py), sized for this scene; the results go
        to its ``hit``, ``best`` and ``out``, which the caller reads and resets.
    mode COLLIDE: the objects within ``bound`` (signed distance <= bound, the margin) of
        the query; ``sc.hit (n_obj,)`` uint8, all 0 on entry, gets 1 per object hit;
        ``flag``: return at the first hit, the query primitive that hit in ``sc.out[0]``
        (those before it hit nothing), and in ``sc.out[1]`` 1 when the hit is certain for
        the shapes the query stands for (below), else 0. Objects already hit are skipped.
        Returns the number of objects hit.
    qinner : (n,) or empty. When the query primitives are outer hulls (a subset of a
        piece's points swept by more than the piece's radius, or the piece itself), the
        pieces' radii: a hit is certain for a piece when the cores come within its radius
        and the obstacle's (`overlap_within`). Empty: the query shapes stand for
        themselves.
    mode DISTANCE: signed distances; ``sc.best (n_obj, 10)``, ``best[:, 0] = inf`` on
        entry. ``flag`` True: every object's distance within ``bound`` goes to its row (each
        object pruned by its own best so far); False: only the nearest, pruned by the best
        over all objects, written once to row ``best[arg]`` at the end (other rows are left
        as they were, so a batch resets one row per query). Rows hold the pair layout
        of kernels/layout.py (distance, point on the query, point on the object, normal from
        the query to the object). Returns the slot of the nearest object within bound, or -1.
    mode CANDIDATES: primitives whose AABB overlaps the query boxes within ``bound`` go to
        ``sc.out`` (unbounded ones always); returns how many.
    mode LEAVES: the group-BVH leaves whose box overlaps the query boxes within ``bound``
        go to ``sc.out`` (as node ids; unbounded primitives are not listed: every
        traversal tests them); returns how many. Started from those leaves as seeds (tree
        BV), a traversal whose query boxes lie within the listed ones gives the same answer
        as from the root: a front list.
    depth : a constant: True, DISTANCE computes penetration depths (EPA); False, an overlap
        is reported as some value <= 0 (`pair_separation`), and no EPA is compiled in.
    The box tests and pair queries made are added to ``sc.counts`` (BV_TESTS, PAIR_TESTS).
    Returns OVERFLOW when the stack is too small.
    """
    tab = scene.tab
    poses = scene.poses
    plo = scene.plo
    phi = scene.phi
    pobj = scene.pobj
    brad = scene.tab.brad
    blo = scene.bvh.lo
    bhi = scene.bvh.hi
    left = scene.bvh.left
    right = scene.bvh.right
    first = scene.bvh.first
    count = scene.bvh.count
    order = scene.bvh.order
    bvh_obj = scene.bvh_obj
    kt_lo = scene.kt_lo
    kt_hi = scene.kt_hi
    kt_cstart = scene.kt_cstart
    kt_child = scene.kt_child
    kt_clo = scene.kt_clo
    kt_chi = scene.kt_chi
    kt_cgroup = scene.kt_cgroup
    kt_group = scene.kt_group
    kt_obj = scene.kt_obj
    unbounded = scene.unbounded
    ws = sc.pair
    stack = sc.stack
    tmp = sc.tmp
    hit = sc.hit
    best = sc.best
    out = sc.out
    warm = sc.warm
    collide = mode == COLLIDE
    distance = mode == DISTANCE
    stop_first = collide and flag
    per_object = distance and flag
    # int64 values, not literals (a helper called with a literal compiles again for it)
    n = _ZERO  # COLLIDE: objects hit; CANDIDATES, LEAVES: entries written
    nbv = _ZERO
    npair = _ZERO
    gbest = math.inf
    arg = _MINUS_ONE
    rec = _take(tmp)  # DISTANCE, nearest only: the best pair so far (valid once arg >= 0)
    for u in range(unbounded.shape[0]):
        p = np.int64(unbounded[u])
        o = pobj[p]
        if mode == CANDIDATES:
            out[n] = p
            n += 1
            continue
        if mode == LEAVES:
            continue
        if collide:
            if hit[o]:
                continue
            for i in range(i0, i1):
                npair += 1
                inner = qinner[i] + tab.params[p, 0] if qinner.shape[0] > 0 else -1.0
                r = overlap_within(qtab, i, qposes[i], tab, p, poses[p], bound, inner, ws)
                if r != APART:
                    hit[o] = 1
                    n += 1
                    if stop_first:
                        out[0] = i
                        out[1] = 1 if r == CORES_WITHIN else 0
                        return _tally(sc, nbv, npair, n)
                    break
            continue
        for i in range(i0, i1):
            b = bound if per_object else min(bound, gbest)
            if per_object and best[o, 0] < b:
                b = best[o, 0]
            npair += 1
            leaf_distance(depth, qtab, i, qposes[i], tab, p, poses[p], b, ws, tmp)
            gbest, arg, rec = _keep(best, o, tmp, b, per_object, gbest, arg, rec)
    if scene.kt_root.shape[0] == 0:
        return _tally(sc, nbv, npair, _finish(mode, per_object, best, arg, rec, n))
    root = scene.kt_root[0]
    ssize = stack.shape[0]
    per_query = ranges.shape[0] > 0
    for i in range(i0, i1):
        # the query's bounding ball: its local origin, posed, and qtab.brad
        qc0 = qposes[i, 0, 3]
        qc1 = qposes[i, 1, 3]
        qc2 = qposes[i, 2, 3]
        qr = qtab.brad[i]
        # COLLIDE and DISTANCE also prune group-BVH nodes and primitives by the query's
        # oriented box (kernels/boxes.py; a cloud's small nodes near a slanted link). Not
        # KCD nodes: over primitive scenes it pruned little there and cost 3-5 % of a state
        # check. LEAVES and CANDIDATES list by boxes only (a front list must hold every leaf
        # the query's box may reach as the piece moves within it)
        ob = query_obb(qtab.aabb, qposes, i, collide or distance)
        s0 = ranges[i, 0] if per_query else 0
        s1 = ranges[i, 1] if per_query else seeds.shape[0]
        if s1 == s0:
            stack[0, 0] = KT
            stack[0, 1] = root
            sp = 1
        else:
            if s1 - s0 > ssize:
                return _tally(sc, nbv, npair, _OVERFLOW)
            for s in range(s0, s1):
                stack[s - s0, 0] = seeds[s, 0]
                stack[s - s0, 1] = seeds[s, 1]
            sp = s1 - s0
        while sp > 0:
            sp -= 1
            tree = stack[sp, 0]
            nd = np.int64(stack[sp, 1])
            if tree == NONE:
                continue
            b = bound if not distance or per_object else min(bound, gbest)
            if tree == KT or tree == KT_TESTED:
                o = kt_obj[nd]
                if collide:
                    if o >= 0 and hit[o]:
                        continue
                elif per_object and o >= 0 and best[o, 0] < b:
                    b = best[o, 0]
                if tree == KT:
                    nbv += 1
                    if distance:
                        gs, gb = rows_gaps(kt_lo, kt_hi, nd, qlo, qhi, i, qc0, qc1, qc2)
                        if pruned(gs, gb, qr, b):
                            continue
                    elif not rows_overlap(kt_lo, kt_hi, nd, qlo, qhi, i, bound):
                        continue
                g = kt_group[nd]
                if g >= 0:
                    stack[sp, 0] = BV_TESTED
                    stack[sp, 1] = g
                    sp += 1
                    continue
                e0 = np.int64(kt_cstart[nd])
                e1 = np.int64(kt_cstart[nd + 1])
                if sp + e1 - e0 > ssize:
                    return _tally(sc, nbv, npair, _OVERFLOW)
                nbv += e1 - e0
                if not distance:
                    # the children's boxes lie side by side: test them all here, push the hits
                    for e in range(e0, e1):
                        if not rows_overlap(kt_clo, kt_chi, e, qlo, qhi, i, bound):
                            continue
                        stack[sp, 0], stack[sp, 1] = _child_entry(kt_cgroup, kt_child, e, _YES)
                        sp += 1
                    continue
                # bound them all here, push the ones that may be nearer than the bound, the
                # nearest on top (popped first: an early near hit tightens the bound that
                # prunes the rest). Insertion sort; the keys of the entries pushed here sit in
                # tmp (free between pair calls; FANOUT and WIDTH in kcd.py fit in it).
                s0 = sp
                for e in range(e0, e1):
                    gs, gb = rows_gaps(kt_clo, kt_chi, e, qlo, qhi, i, qc0, qc1, qc2)
                    if pruned(gs, gb, qr, b):
                        continue
                    lb = lower_bound(gs, gb, qr)
                    j = sp
                    if sp - s0 < tmp.shape[0]:
                        while j > s0 and tmp[j - 1 - s0] < lb:
                            stack[j, 0] = stack[j - 1, 0]
                            stack[j, 1] = stack[j - 1, 1]
                            tmp[j - s0] = tmp[j - 1 - s0]
                            j -= 1
                        tmp[j - s0] = lb
                    stack[j, 0], stack[j, 1] = _child_entry(kt_cgroup, kt_child, e, _NO)
                    sp += 1
                # the others are tested again when popped (the bound may have shrunk by
                # then); the top one is popped next, under the bound it was just tested with
                if sp > s0:
                    stack[sp - 1, 0] = KT_TESTED if stack[sp - 1, 0] == KT else BV_TESTED
                continue
            o = bvh_obj[nd]
            if collide:
                if hit[o]:
                    continue
            elif per_object and best[o, 0] < b:
                b = best[o, 0]
            if tree == BV:
                nbv += 1
                if distance:
                    gs, gb = rows_gaps(blo, bhi, nd, qlo, qhi, i, qc0, qc1, qc2)
                    if pruned(gs, gb, qr, b) or sq_pruned(obb_sqgap(blo, bhi, nd, ob), b):
                        continue
                elif not rows_overlap(blo, bhi, nd, qlo, qhi, i, bound):
                    continue
                elif collide and obb_apart(blo, bhi, nd, ob, bound):
                    continue
            cnt = count[nd]
            if cnt > 0 and mode == LEAVES:
                out[n] = nd
                n += 1
                continue
            if cnt == 0:
                if sp + 2 > ssize:
                    return _tally(sc, nbv, npair, _OVERFLOW)
                l = left[nd]
                r = right[nd]
                # distance: the nearer child on top, so it is popped first (tighter bounds
                # sooner); collide: the left one
                if distance:
                    sr = max(rows_sqdist(blo, bhi, r, qlo, qhi, i), obb_sqgap(blo, bhi, r, ob))
                    if sr < max(rows_sqdist(blo, bhi, l, qlo, qhi, i), obb_sqgap(blo, bhi, l, ob)):
                        l, r = r, l
                stack[sp, 0] = BV
                stack[sp, 1] = r
                stack[sp + 1, 0] = BV
                stack[sp + 1, 1] = l
                sp += 2
                continue
            f = first[nd]
            for j in range(f, f + cnt):
                p = np.int64(order[j])
                if not distance:
                    # a one-primitive leaf's box is the primitive's box: tested already
                    if cnt > 1:
                        nbv += 1
                        if not rows_overlap(plo, phi, p, qlo, qhi, i, bound):
                            continue
                        if collide and obb_apart(plo, phi, p, ob, bound):
                            continue
                    if not collide:
                        out[n] = p
                        n += 1
                        continue
                    npair += 1
                    slot = warm_start(warm, ws, i, p)
                    inner = qinner[i] + tab.params[p, 0] if qinner.shape[0] > 0 else -1.0
                    r = overlap_within(qtab, i, qposes[i], tab, p, poses[p], bound, inner, ws)
                    warm_keep(warm, ws, slot, i, p)
                    if r != APART:
                        hit[o] = 1
                        n += 1
                        if stop_first:
                            out[0] = i  # which query primitive: callers resume after it
                            out[1] = 1 if r == CORES_WITHIN else 0
                            return _tally(sc, nbv, npair, n)
                        break  # the rest of this object is skipped
                    continue
                b = bound if per_object else min(bound, gbest)
                if per_object and best[o, 0] < b:
                    b = best[o, 0]
                if cnt > 1:
                    nbv += 1
                    gs, gb = rows_gaps(plo, phi, p, qlo, qhi, i, qc0, qc1, qc2)
                    if pruned(gs, gb, qr, b) or sq_pruned(obb_sqgap(plo, phi, p, ob), b):
                        continue
                # ball-ball: the primitive lies within brad[p] of its pose origin
                dx = poses[p, 0, 3] - qc0
                dy = poses[p, 1, 3] - qc1
                dz = poses[p, 2, 3] - qc2
                if pruned(0.0, dx * dx + dy * dy + dz * dz, qr + brad[p], b):
                    continue
                npair += 1
                slot = warm_start(warm, ws, i, p)
                leaf_distance(depth, qtab, i, qposes[i], tab, p, poses[p], b, ws, tmp)
                warm_keep(warm, ws, slot, i, p)
                gbest, arg, rec = _keep(best, o, tmp, b, per_object, gbest, arg, rec)
    return _tally(sc, nbv, npair, _finish(mode, per_object, best, arg, rec, n))


# `traverse` compiled on its own; callers that pass it many arrays per call compile the
# same body into themselves (`inline_kernel(traverse_body)`: kernels/checker.py).
traverse = hot_kernel(traverse_body)
