"""The scene traversal: one loop that walks the KCD hierarchy with a fixed stack and
answers collide, distance and candidate queries (docs/architecture.md, "Scenes").

The flat scene (`FlatScene`, a namedtuple of arrays numba takes as one argument):

- primitives: ``tab`` (ShapeTable, kernels/base/layout.py), ``poses (n, 4, 4)`` T_world_prim,
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
that pushed it tested already. S = kernels.scene.bvh.STACK_SIZE suffices for the trees kcd.py
builds (SAH group BVHs and wide trees of bounded depth, at most FANOUT children a node);
kernels return OVERFLOW rather than write out of bounds.

COLLIDE and DISTANCE also prune group-BVH nodes and primitives by the query's oriented box
(kernels/scene/boxes.py; a cloud's small nodes near a slanted link). Not KCD nodes: over
primitive scenes it pruned little there and cost 3-5 % of a state check. LEAVES and
CANDIDATES list by boxes only (a front list must hold every leaf the query's box may reach
as the piece moves within it). The loop's steps are in kernels/scene/visits.py.

The call, ``traverse(scene, mode, qtab, qposes, qlo, qhi, i0, i1, seeds, ranges, bound,
flag, sc, qinner, depth)``: query primitives ``i0 <= i < i1`` of the block (qtab, qposes,
qlo, qhi) against the scene, starting from stack entries in ``seeds (k, 2)``: for query
primitive i the rows ``ranges[i, 0]:ranges[i, 1]`` when ``ranges (n, 2)`` has rows, else all
k rows; the root when there are none. (A call costs ~0.1 µs of argument passing alone: the
scene is ~50 arrays. Callers query many primitives in one call rather than one per call.)

sc : the caller's `Scratch` (kernels/scene/scratch.py), sized for this scene; the results go
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
    of kernels/base/layout.py (distance, point on the query, point on the object, normal from
    the query to the object). Returns the slot of the nearest object within bound, or
    MISSING (-1).
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

import math

import numpy as np

from .._jit import hot_kernel, inline_kernel
from ..base.codes import (
    BV,
    CANDIDATES,
    COLLIDE,
    DISTANCE,
    KT,
    KT_TESTED,
    LEAVES,
    MISSING,
    NONE,
    OVERFLOW,
    ZERO,
)
from ..base.layout import ShapeTable
from ..base.records import F2, F3, I1, Field, record
from .boxes import query_obb
from .bvh import FlatBVH
from .visits import (
    KcdArrays,
    LeafScratch,
    Prims,
    Query,
    bv_pruned,
    collide_leaf,
    distance_leaf,
    list_leaf,
    object_bound,
    push_children,
    query_ball,
    result,
    seed_stack,
    take,
    tally,
    unbounded,
    visit_kt,
)

FlatScene = record(
    "FlatScene",
    __name__,
    "A scene as the traversal reads it (module doc): its primitives, their KCD tree and "
    "group BVHs. n primitives, m group-BVH nodes, K KCD nodes, E KCD child slots.",
    [
        Field("tab", ShapeTable, (), "the primitives' shapes"),
        Field("poses", F3, ("n", 4, 4), "T_world_prim"),
        Field("plo", F2, ("n", 3), "world AABBs of the primitives: low corners"),
        Field("phi", F2, ("n", 3), "and high corners"),
        Field("pobj", I1, ("n",), "the object slot of each primitive"),
        Field("bvh", FlatBVH, (), "a forest: one binary BVH per KCD group"),
        Field("bvh_obj", I1, ("m",), "the object slot of each group-BVH node"),
        Field("kt_lo", F2, ("K", 3), "KCD node boxes: low corners"),
        Field("kt_hi", F2, ("K", 3), "and high corners"),
        Field("kt_cstart", I1, ("K + 1",), "children of node k: slots kt_cstart[k]:[k + 1]"),
        Field("kt_child", I1, ("E",), "each child slot's KCD node"),
        Field("kt_clo", F2, ("E", 3), "each child slot's box (its node's), side by side"),
        Field("kt_chi", F2, ("E", 3), "and high corners"),
        Field("kt_cgroup", I1, ("E",), "each child slot's kt_group"),
        Field("kt_group", I1, ("K",), "a group leaf's BVH (sub)tree root, else -1"),
        Field("kt_obj", I1, ("K",), "the node's object slot, -1 when it spans several"),
        Field("kt_root", I1, ("n_roots",), "the root node ((0,): no bounded primitive)"),
        Field("unbounded", I1, ("u",), "primitives without a finite AABB (halfspaces)"),
        Field("n_obj", I1, (1,), "the number of object slots"),
    ],
)


def traverse_body(
    scene, mode, qtab, qposes, qlo, qhi, i0, i1, seeds, ranges, bound, flag, sc, qinner, depth
):
    """The body of `traverse`: its arguments, modes and returns are in the module doc."""
    collide = mode == COLLIDE
    distance = mode == DISTANCE
    stop_first = collide and flag
    per_object = distance and flag
    # the arrays the loop's steps read, in small named tuples (kernels/scene/visits.py)
    bvh, tab = scene.bvh, scene.tab
    kcd = KcdArrays(
        lo=scene.kt_lo, hi=scene.kt_hi, cstart=scene.kt_cstart, child=scene.kt_child,
        clo=scene.kt_clo, chi=scene.kt_chi, cgroup=scene.kt_cgroup, group=scene.kt_group,
    )  # fmt: skip
    prims = Prims(poses=scene.poses, lo=scene.plo, hi=scene.phi, obj=scene.pobj)
    q = Query(poses=qposes, lo=qlo, hi=qhi, inner=qinner)
    lsc = LeafScratch(best=sc.best, tmp=sc.tmp, pair=sc.pair, warm=sc.warm)
    stack, hit, best, out = sc.stack, sc.hit, sc.best, sc.out
    # box tests, pair tests, and n: COLLIDE objects hit, CANDIDATES and LEAVES entries
    n, nbv, npair = ZERO, ZERO, ZERO
    # DISTANCE, nearest only: the best pair so far (valid once arg >= 0)
    gbest, arg, rec = math.inf, MISSING, take(sc.tmp)
    ids = scene.unbounded
    if mode == CANDIDATES:  # the primitives without a box, listed once
        for u in range(ids.shape[0]):
            out[n] = ids[u]
            n += 1
    trees = scene.kt_root.shape[0] > 0
    root = scene.kt_root[0] if trees else ZERO
    for i in range(i0, i1):
        # query primitive i meets the primitives without a box, then the trees, before
        # i + 1 meets anything: a first hit names the lowest query primitive that hits
        # (the checker resumes after it, so the ones before must be clear of everything)
        if ids.shape[0] > 0 and (collide or distance):
            dn, dpair, gbest, arg, rec, stopped = unbounded(
                ids, tab, prims, qtab, q, mode, i, bound, flag, depth, lsc, hit, out, gbest,
                arg, rec,
            )  # fmt: skip
            n += dn
            npair += dpair
            if stopped:
                return tally(sc, nbv, npair, n)
        if not trees:
            continue
        ball = query_ball(qposes, qtab.brad, i)
        # COLLIDE and DISTANCE also prune by the query's oriented box (module doc)
        ob = query_obb(qtab.aabb, qposes, i, collide or distance)
        sp = seed_stack(stack, seeds, ranges, i, root)
        if sp == OVERFLOW:
            return tally(sc, nbv, npair, OVERFLOW)
        while sp > 0:
            sp -= 1
            tree = stack[sp, 0]
            nd = np.int64(stack[sp, 1])
            if tree == NONE:
                continue
            b = bound if not distance or per_object else min(bound, gbest)
            kt = tree == KT or tree == KT_TESTED
            o = scene.kt_obj[nd] if kt else scene.bvh_obj[nd]
            skip, b = object_bound(hit, best, o, b, collide, per_object)
            if skip:
                continue
            if kt:
                sp, dbv = visit_kt(
                    kcd, stack, sp, tree, nd, qlo, qhi, i, ball, b, bound, distance, sc.tmp
                )
                nbv += dbv
                if sp == OVERFLOW:
                    return tally(sc, nbv, npair, OVERFLOW)
                continue
            if tree == BV:
                nbv += 1
                if bv_pruned(
                    bvh.lo, bvh.hi, nd, qlo, qhi, i, ball, ob, b, bound, collide, distance
                ):
                    continue
            f = bvh.first[nd]
            cnt = bvh.count[nd]
            if cnt > 0 and mode == LEAVES:
                out[n] = nd
                n += 1
            elif cnt == 0:
                sp = push_children(
                    bvh.lo, bvh.hi, bvh.left, bvh.right, stack, sp, nd, qlo, qhi, i, ob, distance
                )
                if sp == OVERFLOW:
                    return tally(sc, nbv, npair, OVERFLOW)
            elif collide:
                h, dbv, dpair, stopped = collide_leaf(
                    bvh.order, f, cnt, o, tab, prims, qtab, q, i, ob, bound, stop_first, sc.pair,
                    sc.warm, hit, out,
                )  # fmt: skip
                n += h
                nbv += dbv
                npair += dpair
                if stopped:
                    return tally(sc, nbv, npair, n)
            elif distance:
                dbv, dpair, gbest, arg, rec = distance_leaf(
                    bvh.order, f, cnt, o, tab, prims, qtab, q, i, ball, ob, bound, per_object,
                    depth, lsc, gbest, arg, rec,
                )  # fmt: skip
                nbv += dbv
                npair += dpair
            else:
                n, dbv = list_leaf(
                    bvh.order, f, cnt, prims.lo, prims.hi, qlo, qhi, i, bound, out, n
                )
                nbv += dbv
    return tally(sc, nbv, npair, result(mode, per_object, best, arg, rec, n))


# The body inlined: into `traverse` below, and into callers that pass it many arrays per
# call (the checker's `query`: kernels/checker/check_core.py). Its steps are inlined into those
# functions, not into the body first (kernels/_jit.py `inline_kernel`).
traverse_inline = inline_kernel(traverse_body)


@hot_kernel
def traverse(
    scene, mode, qtab, qposes, qlo, qhi, i0, i1, seeds, ranges, bound, flag, sc, qinner, depth
):
    """The traversal compiled on its own (arguments, modes and returns: module doc)."""
    return traverse_inline(
        scene, mode, qtab, qposes, qlo, qhi, i0, i1, seeds, ranges, bound, flag, sc, qinner, depth
    )
