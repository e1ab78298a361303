"""Shape-vs-scene kernels: walk the KCD hierarchy with a fixed stack (DESIGN §5).

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
  bvh node ``kt_group[k]`` (a group's root, or a node inside it: scene.py's build opens
  sprawling groups);
  ``kt_obj (K,)`` the object slot of the node, or -1 when it spans several objects;
  ``kt_root (1,)`` the root node (``(0,)`` for a scene without bounded primitives);
- ``unbounded (u,)`` int32: primitives without a finite AABB (halfspaces), tested always;
- ``n_obj (1,)`` int32: number of object slots.

Queries take the query as a block of primitives too (``qtab``, ``qposes (k, 4, 4)``,
``qlo, qhi (k, 3)``): one convex shape is a block of one, a mesh a block of triangles.

Every node id the traversal visits is a stable index into these arrays, so a later front-list
cache (DESIGN §7) can store the nodes where a traversal stopped and seed the stack with them
(`_push` takes any (tree, node) pair). Stacks are ``(S, 2)`` int32, entry = (tree, node),
tree 0 = KCD tree, 1 = group BVH, 2 and 3: a group BVH node or KCD node whose box was
tested already (by the node that pushed it); S = kernels.bvh.STACK_SIZE suffices for the
trees planning_collision.scene builds (median-split group BVHs; wide SAH trees of depth <=
SAH_MAX_DEPTH + log2 n above the groups, at most FANOUT children a node); kernels return -2
on overflow rather than write out of bounds.
"""

import math
from collections import namedtuple

from ._jit import hot_kernel, kernel
from .bvh import aabb_overlap
from .pair import pair_distance, pair_overlap

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
# a group's BVH root pushed by its KCD group leaf: same box, already tested, not retested
BV_TESTED = 2
# a KCD node pushed by its parent, which tested its box (from kt_clo, kt_chi) already
KT_TESTED = 3
OVERFLOW = -2


@hot_kernel
def _push(stack, sp, tree, node):
    """Push (tree, node); returns the new stack pointer, or -1 when full."""
    if sp >= stack.shape[0]:
        return -1
    stack[sp, 0] = tree
    stack[sp, 1] = node
    return sp + 1


@kernel
def _push_children(scene, stack, sp, tree, nd):
    """Push the children of an internal node (KCD: all children; BVH: left, right)."""
    if tree == KT:
        g = scene.kt_group[nd]
        if g >= 0:
            return _push(stack, sp, BV, g)
        for e in range(scene.kt_cstart[nd], scene.kt_cstart[nd + 1]):
            sp = _push(stack, sp, KT, scene.kt_child[e])
            if sp < 0:
                return -1
        return sp
    sp = _push(stack, sp, BV, scene.bvh.right[nd])
    if sp < 0:
        return -1
    return _push(stack, sp, BV, scene.bvh.left[nd])


@hot_kernel
def _child_entry(kt_cgroup, kt_child, e, tested):
    """The stack entry (tree, node) of KCD child slot e: a group leaf enters as its BVH
    (sub)tree's root, which has the same box; other children as KCD nodes. `tested`: the
    parent tested the child's box already."""
    g = kt_cgroup[e]
    if g >= 0:
        return (BV_TESTED if tested else BV), g
    return (KT_TESTED if tested else KT), kt_child[e]


# Hot loops index 2-D arrays by row through these helpers instead of slicing rows out (a
# slice is a new array view, and reading a namedtuple field a reference-count round trip:
# the kernels unpack the scene once and pass arrays and row numbers).


@hot_kernel
def _rows_overlap(lo, hi, n, qlo, qhi, i, margin):
    """aabb_overlap of box n of (lo, hi) and box i of (qlo, qhi)."""
    for k in range(3):
        if lo[n, k] - qhi[i, k] > margin or qlo[i, k] - hi[n, k] > margin:
            return False
    return True


@hot_kernel
def _rows_gaps(lo, hi, n, qlo, qhi, i, qc0, qc1, qc2):
    """Squared gaps between box n of (lo, hi) and the query, which lies in box i of (qlo,
    qhi) and in a ball centred at qc: (box-box, box-centre). `_pruned` and `_lower_bound`
    turn them into a test and a bound; squares spare two square roots per box tested."""
    s = 0.0
    b = 0.0
    for k in range(3):
        g = lo[n, k] - qhi[i, k]
        g2 = qlo[i, k] - hi[n, k]
        if g2 > g:
            g = g2
        if g > 0.0:
            s += g * g
        c = qc0 if k == 0 else (qc1 if k == 1 else qc2)
        h = lo[n, k] - c
        h2 = c - hi[n, k]
        if h2 > h:
            h = h2
        if h > 0.0:
            b += h * h
    return s, b


@hot_kernel
def _lower_bound(s, b, qr):
    """Lower bound on the signed distance between anything in the box and the query from
    the squared gaps of `_rows_gaps` and the query ball's radius qr: the larger of the
    box-box gap and the ball-box gap when positive; -inf when both are <= 0 (an overlap can
    be arbitrarily deep). The ball bound is the tighter one for a long query (a capsule
    link) whose world box is loose."""
    lb = -math.inf
    if s > 0.0:
        lb = math.sqrt(s)
    if b > qr * qr:
        sb = math.sqrt(b) - qr
        if sb > lb:
            lb = sb
    return lb


@hot_kernel
def _pruned(s, b, qr, bound):
    """``_lower_bound(s, b, qr) > bound``, without square roots. (The leaves' ball-ball
    test passes s = 0: with a negative bound it then prunes only balls apart, which is
    weaker than the bound allows but still conservative.)"""
    if bound < 0.0:
        return s > 0.0 or b > qr * qr
    t = bound + qr
    return s > bound * bound or b > t * t


@hot_kernel
def _rows_sqdist(lo, hi, n, qlo, qhi, i):
    s = 0.0
    for k in range(3):
        g = lo[n, k] - qhi[i, k]
        g2 = qlo[i, k] - hi[n, k]
        if g2 > g:
            g = g2
        if g > 0.0:
            s += g * g
    return s


@hot_kernel
def scene_collide(scene, qtab, qposes, qlo, qhi, margin, stop_first, hit, ws, stack):
    """Objects within `margin` (signed distance <= margin) of the query block.

    hit : (n_obj,) uint8, zeroed by the caller; set to 1 for each object in collision.
    stop_first : return at the first hit (the boolean fast path).
    Returns the number of objects hit, or -2 on stack overflow. Nodes and primitives of
    objects already hit are skipped.
    """
    tab = scene.tab
    poses = scene.poses
    plo = scene.plo
    phi = scene.phi
    pobj = scene.pobj
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
    nhit = 0
    nq = qtab.kind.shape[0]
    for u in range(unbounded.shape[0]):
        p = unbounded[u]
        o = pobj[p]
        if hit[o]:
            continue
        for i in range(nq):
            if pair_overlap(qtab, i, qposes[i], tab, p, poses[p], margin, ws):
                hit[o] = 1
                nhit += 1
                break
        if nhit > 0 and stop_first:
            return nhit
    if scene.kt_root.shape[0] == 0:
        return nhit
    root = scene.kt_root[0]
    ssize = stack.shape[0]
    for i in range(nq):
        stack[0, 0] = KT
        stack[0, 1] = root
        sp = 1
        while sp > 0:
            sp -= 1
            tree = stack[sp, 0]
            nd = stack[sp, 1]
            if tree == KT or tree == KT_TESTED:
                o = kt_obj[nd]
                if o >= 0 and hit[o]:
                    continue
                if tree == KT and not _rows_overlap(kt_lo, kt_hi, nd, qlo, qhi, i, margin):
                    continue
                g = kt_group[nd]
                if g >= 0:
                    stack[sp, 0] = BV_TESTED
                    stack[sp, 1] = g
                    sp += 1
                    continue
                e0 = kt_cstart[nd]
                e1 = kt_cstart[nd + 1]
                if sp + e1 - e0 > ssize:
                    return OVERFLOW
                # the children's boxes lie side by side: test them all here, push the hits
                for e in range(e0, e1):
                    if not _rows_overlap(kt_clo, kt_chi, e, qlo, qhi, i, margin):
                        continue
                    stack[sp, 0], stack[sp, 1] = _child_entry(kt_cgroup, kt_child, e, True)
                    sp += 1
                continue
            o = bvh_obj[nd]
            if hit[o]:
                continue
            if tree == BV and not _rows_overlap(blo, bhi, nd, qlo, qhi, i, margin):
                continue
            cnt = count[nd]
            if cnt == 0:
                if sp + 2 > ssize:
                    return OVERFLOW
                stack[sp, 0] = BV
                stack[sp, 1] = right[nd]
                stack[sp + 1, 0] = BV
                stack[sp + 1, 1] = left[nd]
                sp += 2
                continue
            f = first[nd]
            for j in range(f, f + cnt):
                p = order[j]
                # a one-primitive leaf's box is the primitive's box: tested already
                if cnt > 1 and not _rows_overlap(plo, phi, p, qlo, qhi, i, margin):
                    continue
                if pair_overlap(qtab, i, qposes[i], tab, p, poses[p], margin, ws):
                    hit[o] = 1
                    nhit += 1
                    if stop_first:
                        return nhit
                    break  # the rest of this object is skipped
    return nhit


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
def scene_distance(scene, qtab, qposes, qlo, qhi, max_dist, per_object, best, ws, tmp, stack):
    """Signed distances from the query block to the scene's objects.

    best : (n_obj, 10) float64; the caller sets ``best[:, 0] = inf``. On return, for each
        object whose distance is <= max_dist, ``best[o]`` holds the pair layout of
        kernels/layout.py (distance, point on the query, point on the object, normal from
        the query to the object); other rows keep distance inf.
    per_object : True computes every object's distance (pruning each object by its own best
        so far and by max_dist); False only the nearest (pruning by the best over all
        objects): only row ``best[arg]`` is written, once, at the end; every other row is
        left as it was (a batch resets one row per query, not n_obj), and the traversal
        reads no per-object state.
    tmp : (10,) float64 scratch. Returns the slot of the nearest object (-1 if none is
    within max_dist), or -2 on stack overflow.
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
    nq = qtab.kind.shape[0]
    gbest = math.inf
    arg = -1
    rec = _take(tmp)  # nearest only: the best pair so far (valid once arg >= 0)
    for u in range(unbounded.shape[0]):
        p = unbounded[u]
        o = pobj[p]
        for i in range(nq):
            bound = max_dist if per_object else min(max_dist, gbest)
            if per_object and best[o, 0] < bound:
                bound = best[o, 0]
            pair_distance(qtab, i, qposes[i], tab, p, poses[p], bound, ws, tmp)
            gbest, arg, rec = _keep(best, o, tmp, bound, per_object, gbest, arg, rec)
    if scene.kt_root.shape[0] == 0:
        if not per_object and arg >= 0:
            _put(best, arg, rec)
        return arg
    root = scene.kt_root[0]
    ssize = stack.shape[0]
    for i in range(nq):
        # the query's bounding ball: its local origin, posed, and qtab.brad
        qc0 = qposes[i, 0, 3]
        qc1 = qposes[i, 1, 3]
        qc2 = qposes[i, 2, 3]
        qr = qtab.brad[i]
        stack[0, 0] = KT
        stack[0, 1] = root
        sp = 1
        while sp > 0:
            sp -= 1
            tree = stack[sp, 0]
            nd = stack[sp, 1]
            bound = max_dist if per_object else min(max_dist, gbest)
            if tree == KT or tree == KT_TESTED:
                if per_object:
                    o = kt_obj[nd]
                    if o >= 0 and best[o, 0] < bound:
                        bound = best[o, 0]
                if tree == KT:
                    gs, gb = _rows_gaps(kt_lo, kt_hi, nd, qlo, qhi, i, qc0, qc1, qc2)
                    if _pruned(gs, gb, qr, bound):
                        continue
                g = kt_group[nd]
                if g >= 0:
                    stack[sp, 0] = BV_TESTED
                    stack[sp, 1] = g
                    sp += 1
                    continue
                e0 = kt_cstart[nd]
                e1 = kt_cstart[nd + 1]
                if sp + e1 - e0 > ssize:
                    return OVERFLOW
                # the children's boxes lie side by side: bound them all here, push the ones
                # that may be nearer than the bound, the nearest on top (popped first: an
                # early near hit tightens the bound that prunes the rest). Insertion sort;
                # the keys of the entries pushed here sit in tmp (free between pair calls;
                # FANOUT and WIDTH in scene.py fit in it).
                s0 = sp
                for e in range(e0, e1):
                    gs, gb = _rows_gaps(kt_clo, kt_chi, e, qlo, qhi, i, qc0, qc1, qc2)
                    if _pruned(gs, gb, qr, bound):
                        continue
                    lb = _lower_bound(gs, gb, qr)
                    j = sp
                    if sp - s0 < tmp.shape[0]:
                        while j > s0 and tmp[j - 1 - s0] < lb:
                            stack[j, 0] = stack[j - 1, 0]
                            stack[j, 1] = stack[j - 1, 1]
                            tmp[j - s0] = tmp[j - 1 - s0]
                            j -= 1
                        tmp[j - s0] = lb
                    stack[j, 0], stack[j, 1] = _child_entry(kt_cgroup, kt_child, e, False)
                    sp += 1
                # the others are tested again when popped (the bound may have shrunk by
                # then); the top one is popped next, under the bound it was just tested with
                if sp > s0:
                    stack[sp - 1, 0] = KT_TESTED if stack[sp - 1, 0] == KT else BV_TESTED
                continue
            o = bvh_obj[nd]
            if per_object and best[o, 0] < bound:
                bound = best[o, 0]
            if tree == BV:
                gs, gb = _rows_gaps(blo, bhi, nd, qlo, qhi, i, qc0, qc1, qc2)
                if _pruned(gs, gb, qr, bound):
                    continue
            cnt = count[nd]
            if cnt == 0:
                if sp + 2 > ssize:
                    return OVERFLOW
                # nearer child last, so it is popped first (tighter bounds sooner)
                l = left[nd]
                r = right[nd]
                if _rows_sqdist(blo, bhi, l, qlo, qhi, i) <= _rows_sqdist(blo, bhi, r, qlo, qhi, i):
                    l, r = r, l
                stack[sp, 0] = BV
                stack[sp, 1] = l
                stack[sp + 1, 0] = BV
                stack[sp + 1, 1] = r
                sp += 2
                continue
            f = first[nd]
            for j in range(f, f + cnt):
                p = order[j]
                bound = max_dist if per_object else min(max_dist, gbest)
                if per_object and best[o, 0] < bound:
                    bound = best[o, 0]
                if cnt > 1:
                    gs, gb = _rows_gaps(plo, phi, p, qlo, qhi, i, qc0, qc1, qc2)
                    if _pruned(gs, gb, qr, bound):
                        continue
                # ball-ball: the primitive lies within brad[p] of its pose origin
                dx = poses[p, 0, 3] - qc0
                dy = poses[p, 1, 3] - qc1
                dz = poses[p, 2, 3] - qc2
                if _pruned(0.0, dx * dx + dy * dy + dz * dz, qr + brad[p], bound):
                    continue
                pair_distance(qtab, i, qposes[i], tab, p, poses[p], bound, ws, tmp)
                gbest, arg, rec = _keep(best, o, tmp, bound, per_object, gbest, arg, rec)
    if not per_object and arg >= 0:
        _put(best, arg, rec)
    return arg


@kernel
def scene_candidates(scene, qlo, qhi, margin, stack, out):
    """Broadphase only: primitives whose AABB overlaps (qlo, qhi) within margin, through
    the KCD tree and group BVHs (unbounded primitives always listed). out (n,) int32;
    returns the count or -2 on overflow."""
    nout = 0
    for u in range(scene.unbounded.shape[0]):
        out[nout] = scene.unbounded[u]
        nout += 1
    if scene.kt_root.shape[0] == 0:
        return nout
    sp = _push(stack, 0, KT, scene.kt_root[0])
    while sp > 0:
        sp -= 1
        tree = stack[sp, 0]
        nd = stack[sp, 1]
        if tree == KT:
            if aabb_overlap(scene.kt_lo[nd], scene.kt_hi[nd], qlo, qhi, margin):
                sp = _push_children(scene, stack, sp, KT, nd)
        elif aabb_overlap(scene.bvh.lo[nd], scene.bvh.hi[nd], qlo, qhi, margin):
            if scene.bvh.count[nd] == 0:
                sp = _push_children(scene, stack, sp, BV, nd)
            else:
                f = scene.bvh.first[nd]
                for j in range(f, f + scene.bvh.count[nd]):
                    p = scene.bvh.order[j]
                    if aabb_overlap(scene.plo[p], scene.phi[p], qlo, qhi, margin):
                        out[nout] = p
                        nout += 1
        if sp < 0:
            return OVERFLOW
    return nout


@hot_kernel
def scene_collide_batch(scene, qtab, qposes, qlo, qhi, margin, hit, ws, stack, out):
    """The boolean fast path for B poses of one single-primitive query (a moving link).

    qposes (B, 4, 4), qlo, qhi (B, 3): the query's pose and world AABB per step;
    hit (n_obj,) uint8 scratch, zero on entry and on return. out (B,) int32: the slot of an
    object in collision (the first found), or -1. Returns -2 on stack overflow, else 0.
    """
    n_obj = hit.shape[0]
    for b in range(qposes.shape[0]):
        n = scene_collide(
            scene,
            qtab,
            qposes[b : b + 1],
            qlo[b : b + 1],
            qhi[b : b + 1],
            margin,
            True,
            hit,
            ws,
            stack,
        )
        if n == OVERFLOW:
            return OVERFLOW
        out[b] = -1
        if n > 0:
            for o in range(n_obj):
                if hit[o]:
                    out[b] = o
                    hit[o] = 0
    return 0


@hot_kernel
def scene_min_distance_batch(scene, qtab, qposes, qlo, qhi, max_dist, best, ws, tmp, stack, out):
    """Nearest-obstacle distance for B poses of one single-primitive query.

    best (n_obj, 10) scratch with ``best[:, 0] = inf`` on entry, and again on return (a
    nearest-only query sets one row, reset here after each pose). out (B,) float64 signed
    distance (inf when nothing is within max_dist). Returns -2 on stack overflow, else 0.
    """
    for b in range(qposes.shape[0]):
        arg = scene_distance(
            scene,
            qtab,
            qposes[b : b + 1],
            qlo[b : b + 1],
            qhi[b : b + 1],
            max_dist,
            False,
            best,
            ws,
            tmp,
            stack,
        )
        if arg == OVERFLOW:
            return OVERFLOW
        out[b] = math.inf
        if arg >= 0:
            out[b] = best[arg, 0]
            best[arg, 0] = math.inf
    return 0
