"""The collision checker's state kernels: is a configuration free, and how far is each body
from collision (docs/architecture.md, "Checker").

A *body* is what a certificate bounds: body ``b < n_links`` is collision link
``body_link[b]`` against the scene; body ``n_links + j`` is the self-collision pair
``pairs[j]``. The checker's flat robot (`CheckRobot`) and per-thread buffers
(`CheckBuffers`) come from `planning_collision.checker`; entry points get them, the scene
and the thread's `Scratch` as one address table (kernels/handles.py) and rebuild them with
`unpack`.

Every query here answers "in collision, or how far apart", never how deep: the scene
traversal runs with ``depth=False`` and pairs use `pair_separation` and `pair_overlap`, so
no EPA is compiled into the checker.
"""

import math
from collections import namedtuple

import numba

from ._jit import hot_kernel, inline_kernel, kernel, parallel_kernel
from .capsule_capsule import segment_segment_closest
from .fk import fk, piece_poses
from .handles import (
    f64_1,
    f64_2,
    f64_3,
    flat_scene_at,
    i32_1,
    i32_2,
    i64_1,
    robot_model_at,
    scratch_at,
    shape_table_at,
)
from .pair import LOWER_BOUND, pair_overlap, pair_separation
from .traversal import (
    BV,
    COLLIDE,
    DISTANCE,
    LEAVES,
    NONE,
    OVERFLOW,
    traverse,
    warm_keep,
    warm_start,
)

CheckRobot = namedtuple(
    "CheckRobot",
    [
        "model",  # RobotModel
        "tab",  # ShapeTable of the collision pieces
        "piece_link",  # (n_pieces,) int32
        "piece_pose",  # (n_pieces, 4, 4) T_link_piece
        "link_start",  # (n_all_links + 1,) int32: pieces of link l
        "body_link",  # (n_links,) int32: the collision link of each link body
        "pairs",  # (n_pairs, 2) int32: the links of each self-pair body
        "R",  # (n_bodies, dof): motion-bound rows (robot/bounds.py)
        "limited",  # (dof,) int32: 1 where q must stay within [lower, upper]
        "outer",  # ShapeTable: each piece's outer hull (contains it; checker/bounds.py)
        "cap_p0",  # (n_pieces, 3) each piece's bounding capsule: segment ends (piece frame)
        "cap_p1",
        "cap_r",  # (n_pieces,) and radius
    ],
)

CheckBuffers = namedtuple(
    "CheckBuffers",
    [
        "link_poses",  # (n_all_links, 4, 4)
        "piece_poses",  # (n_pieces, 4, 4)
        "plo",  # (n_pieces, 3) conservative world boxes of the pieces
        "phi",
        "cap_w0",  # (n_pieces, 3) the bounding capsules' segment ends, world frame
        "cap_w1",
        "q",  # (dof,) the configuration being checked
        "d",  # (n_bodies,) distance lower bounds at the last evaluation
        "exact",  # (n_bodies,) int32: 1 when d is the distance, 0 when only a lower bound
        "slot",  # (n_bodies,) int32: the nearest object slot of a link body (-1: none)
        "mu",  # (n_bodies,) motion bounds of the current edge
        "ilo",  # (n_bodies, K) uncovered intervals of each body (edge checks)
        "ihi",
        "icount",  # (n_bodies,) int32
        "env_lo",  # (n_pieces, 3) front envelope of each piece (world box)
        "env_hi",
        "front_n",  # (n_pieces,) int32: entries in the piece's front (-1: none)
        "front",  # (n_pieces * F, 2) int32: front entries, F per piece
        "ranges",  # (n_pieces, 2) int32: each piece's rows of front a traversal starts from
        "ec_key",  # (C,) int64: endpoint cache, the hash of the configuration in a slot
        "ec_q",  # (C, dof): the configuration (checked on a hit)
        "ec_d",  # (C, n_bodies): distance lower bounds there
        "ec_exact",  # (C, n_bodies) int32
        "queue",  # (Qn, 2) int32: the discrete method's FIFO of index ranges
    ],
)

# Counters in Scratch.counts after the traversal's (BV_TESTS, PAIR_TESTS)
STATES = 2  # configurations posed (FK + pieces)
DIST_QUERIES = 3  # body distance queries
FRONT_HITS = 4  # piece traversals started from a cached front
FRONT_BUILDS = 5  # fronts recorded
ENDPOINT_HITS = 6  # body distances reused from the endpoint cache
EDGES = 7  # edges checked
SELF_TESTS = 8  # self-collision piece pairs that reached a pair query

# state check results
FREE = 0
COLLISION = 1
BAD_Q = 2  # 2 + k: q[k] is not finite; 2 + dof + k: q[k] is outside its limits


@inline_kernel
def unpack(hm, hw):
    """(robot, scene, scratch, buffers) from the model table hm and workspace table hw."""
    model, k = robot_model_at(hm, 0)
    tab, k = shape_table_at(hm, k)
    outer, j = shape_table_at(hm, k + 7)
    robot = CheckRobot(
        model,
        tab,
        i32_1(hm, k),
        f64_3(hm, k + 1),
        i32_1(hm, k + 2),
        i32_1(hm, k + 3),
        i32_2(hm, k + 4),
        f64_2(hm, k + 5),
        i32_1(hm, k + 6),
        outer,
        f64_2(hm, j),
        f64_2(hm, j + 1),
        f64_1(hm, j + 2),
    )
    scene, _ = flat_scene_at(hm, j + 3)
    sc, k = scratch_at(hw, 0)
    buf = CheckBuffers(
        f64_3(hw, k),
        f64_3(hw, k + 1),
        f64_2(hw, k + 2),
        f64_2(hw, k + 3),
        f64_2(hw, k + 4),
        f64_2(hw, k + 5),
        f64_1(hw, k + 6),
        f64_1(hw, k + 7),
        i32_1(hw, k + 8),
        i32_1(hw, k + 9),
        f64_1(hw, k + 10),
        f64_2(hw, k + 11),
        f64_2(hw, k + 12),
        i32_1(hw, k + 13),
        f64_2(hw, k + 14),
        f64_2(hw, k + 15),
        i32_1(hw, k + 16),
        i32_2(hw, k + 17),
        i32_2(hw, k + 18),
        i64_1(hw, k + 19),
        f64_2(hw, k + 20),
        f64_2(hw, k + 21),
        i32_2(hw, k + 22),
        i32_2(hw, k + 23),
    )
    return robot, scene, sc, buf


@kernel
def q_code(robot, q):
    """FREE when q is finite and within its limits, else BAD_Q + the joint's code."""
    dof = q.shape[0]
    for k in range(dof):
        if not math.isfinite(q[k]):
            return BAD_Q + k
    lo = robot.model.lower
    hi = robot.model.upper
    for k in range(dof):
        if robot.limited[k] and (q[k] < lo[k] or q[k] > hi[k]):
            return BAD_Q + dof + k
    return FREE


@hot_kernel
def pose_pieces(robot, sc, buf, q):
    """FK, the world pose of every piece, and a conservative world box of each: its local
    box rotated, cut down to the box of its bounding ball (both contain the piece)."""
    fk(robot.model, q, buf.link_poses)
    piece_poses(buf.link_poses, robot.piece_link, robot.piece_pose, buf.piece_poses)
    aabb = robot.tab.aabb
    brad = robot.tab.brad
    P = buf.piece_poses
    for p in range(P.shape[0]):
        c0 = 0.5 * (aabb[p, 0] + aabb[p, 3])
        c1 = 0.5 * (aabb[p, 1] + aabb[p, 4])
        c2 = 0.5 * (aabb[p, 2] + aabb[p, 5])
        h0 = 0.5 * (aabb[p, 3] - aabb[p, 0])
        h1 = 0.5 * (aabb[p, 4] - aabb[p, 1])
        h2 = 0.5 * (aabb[p, 5] - aabb[p, 2])
        r = brad[p]
        a = robot.cap_p0[p]
        b = robot.cap_p1[p]
        for k in range(3):
            wc = P[p, k, 0] * c0 + P[p, k, 1] * c1 + P[p, k, 2] * c2 + P[p, k, 3]
            wh = abs(P[p, k, 0]) * h0 + abs(P[p, k, 1]) * h1 + abs(P[p, k, 2]) * h2
            buf.plo[p, k] = max(wc - wh, P[p, k, 3] - r)
            buf.phi[p, k] = min(wc + wh, P[p, k, 3] + r)
            buf.cap_w0[p, k] = (
                P[p, k, 0] * a[0] + P[p, k, 1] * a[1] + P[p, k, 2] * a[2] + P[p, k, 3]
            )
            buf.cap_w1[p, k] = (
                P[p, k, 0] * b[0] + P[p, k, 1] * b[1] + P[p, k, 2] * b[2] + P[p, k, 3]
            )
    sc.counts[STATES] += 1


@hot_kernel
def _capsule_gap(robot, buf, ia, ib):
    """Distance between the bounding capsules of pieces ia and ib (posed in buf): a lower
    bound on the pieces' distance (<= 0 when the capsules overlap)."""
    a0 = buf.cap_w0[ia]
    a1 = buf.cap_w1[ia]
    b0 = buf.cap_w0[ib]
    b1 = buf.cap_w1[ib]
    s, t = segment_segment_closest(
        (a0[0], a0[1], a0[2]), (a1[0], a1[1], a1[2]), (b0[0], b0[1], b0[2]), (b1[0], b1[1], b1[2])
    )
    dx = a0[0] + s * (a1[0] - a0[0]) - b0[0] - t * (b1[0] - b0[0])
    dy = a0[1] + s * (a1[1] - a0[1]) - b0[1] - t * (b1[1] - b0[1])
    dz = a0[2] + s * (a1[2] - a0[2]) - b0[2] - t * (b1[2] - b0[2])
    return math.sqrt(dx * dx + dy * dy + dz * dz) - robot.cap_r[ia] - robot.cap_r[ib]


# ---------------------------------------------------------------------------------------
# front lists: where a piece's last traversal found leaves, reused while the piece stays
# inside the box it was recorded for


@hot_kernel
def _contains(lo, hi, i, qlo, qhi, j, pad):
    for k in range(3):
        if qlo[j, k] - pad < lo[i, k] or qhi[j, k] + pad > hi[i, k]:
            return False
    return True


@hot_kernel
def _build_front(robot, scene, sc, buf, i, bound, delta):
    """Record piece i's front for the envelope "piece box grown by bound + delta" (delta:
    how far the piece may move in the queries to come): the group-BVH leaves overlapping
    it, when there are at most F. Returns the rows [a, b) of buf.front (empty: root)."""
    F = buf.front.shape[0] // buf.front_n.shape[0]
    g = bound + delta
    for k in range(3):
        buf.env_lo[i, k] = buf.plo[i, k] - g
        buf.env_hi[i, k] = buf.phi[i, k] + g
    m = traverse(
        scene, LEAVES, robot.tab, buf.piece_poses, buf.env_lo, buf.env_hi, i, i + 1,
        buf.front[0:0], buf.ranges[0:0], 0.0, False, sc, False,
    )  # fmt: skip
    if m < 0 or m > F:
        buf.front_n[i] = -1
        return 0, 0
    for j in range(m):
        buf.front[i * F + j, 0] = BV
        buf.front[i * F + j, 1] = sc.out[j]
    if m == 0:  # nothing near: one entry that stands for nothing (empty would mean root)
        buf.front[i * F, 0] = NONE
        buf.front[i * F, 1] = 0
    buf.front_n[i] = m
    sc.counts[FRONT_BUILDS] += 1
    return i * F, i * F + max(m, 1)


@hot_kernel
def _set_ranges(robot, scene, sc, buf, i0, i1, bound, delta):
    """For each piece i in [i0, i1), the rows buf.ranges[i] of buf.front its traversal
    under `bound` starts from (an empty range: the root).

    Its front (the group-BVH leaves overlapping the front's envelope box) when the piece's
    box grown by `bound` lies inside that envelope: every leaf a traversal from the root
    would reach is in the front, so the answer is the same. Otherwise, when delta > 0, a new
    front (`_build_front`); else the root."""
    F = buf.front.shape[0] // buf.front_n.shape[0]
    for i in range(i0, i1):
        n = buf.front_n[i]
        if n >= 0 and _contains(buf.env_lo, buf.env_hi, i, buf.plo, buf.phi, i, bound):
            sc.counts[FRONT_HITS] += 1
            buf.ranges[i, 0] = i * F
            buf.ranges[i, 1] = i * F + max(n, 1)
        elif delta > 0.0:
            a, b = _build_front(robot, scene, sc, buf, i, bound, delta)
            buf.ranges[i, 0] = a
            buf.ranges[i, 1] = b
        else:
            buf.ranges[i, 0] = 0
            buf.ranges[i, 1] = 0


# ---------------------------------------------------------------------------------------
# boolean checks


@hot_kernel
def _clear_hits(sc):
    for o in range(sc.hit.shape[0]):
        sc.hit[o] = 0


@hot_kernel
def pieces_hit(robot, scene, sc, buf, i0, i1, margin, delta):
    """True when a piece in [i0, i1) (posed in buf) is within `margin` of the scene (or the
    traversal overflowed: an answer that cannot be certified counts as a collision). One
    traversal call for all of them, each piece from its own front."""
    _set_ranges(robot, scene, sc, buf, i0, i1, margin, delta)
    # the outer hulls first: when they touch nothing, neither do the pieces
    n = traverse(
        scene, COLLIDE, robot.outer, buf.piece_poses, buf.plo, buf.phi, i0, i1, buf.front,
        buf.ranges, margin, True, sc, False,
    )  # fmt: skip
    if n == 0:
        return False
    _clear_hits(sc)
    n = traverse(
        scene, COLLIDE, robot.tab, buf.piece_poses, buf.plo, buf.phi, i0, i1, buf.front,
        buf.ranges, margin, True, sc, False,
    )  # fmt: skip
    if n != 0:
        _clear_hits(sc)
        return True
    return False


@hot_kernel
def pair_hits(robot, sc, buf, j, margin):
    """True when self pair j's links are within `margin` of each other."""
    a = robot.pairs[j, 0]
    b = robot.pairs[j, 1]
    P = buf.piece_poses
    brad = robot.tab.brad
    for ia in range(robot.link_start[a], robot.link_start[a + 1]):
        for ib in range(robot.link_start[b], robot.link_start[b + 1]):
            dx = P[ia, 0, 3] - P[ib, 0, 3]
            dy = P[ia, 1, 3] - P[ib, 1, 3]
            dz = P[ia, 2, 3] - P[ib, 2, 3]
            rr = brad[ia] + brad[ib] + margin
            if dx * dx + dy * dy + dz * dz > rr * rr:
                continue
            if _capsule_gap(robot, buf, ia, ib) > margin:
                continue
            sc.counts[SELF_TESTS] += 1
            if not _self_overlap(robot.outer, sc, P, ia, ib, margin, 0):
                continue
            if _self_overlap(robot.tab, sc, P, ia, ib, margin, 1):
                return True
    return False


@hot_kernel
def _self_overlap(tab, sc, P, ia, ib, margin, which):
    """pair_overlap of pieces ia, ib of `tab` (outer hulls: which 0; pieces: 1), warm
    started from the pair's last direction."""
    slot = warm_start(sc.warm, sc.pair, -1 - 2 * ia - which, ib)
    touching = pair_overlap(tab, ia, P[ia], tab, ib, P[ib], margin, sc.pair)
    warm_keep(sc.warm, sc.pair, slot, -1 - 2 * ia - which, ib)
    return touching


@hot_kernel
def _self_separation(tab, sc, P, ia, ib, bound, which):
    """pair_separation of pieces ia, ib of `tab` under `bound` into sc.tmp (warm started);
    returns its status."""
    slot = warm_start(sc.warm, sc.pair, -1 - 2 * ia - which, ib)
    st = pair_separation(tab, ia, P[ia], tab, ib, P[ib], bound, sc.pair, sc.tmp)
    warm_keep(sc.warm, sc.pair, slot, -1 - 2 * ia - which, ib)
    return st


@hot_kernel
def posed_collides(robot, scene, sc, buf, margin, self_collision, delta):
    """True when the configuration posed in buf collides (within margin): every collision
    link against the scene, then the self pairs; returns at the first collision."""
    if pieces_hit(robot, scene, sc, buf, 0, robot.piece_link.shape[0], margin, delta):
        return True
    if self_collision:
        for j in range(robot.pairs.shape[0]):
            if pair_hits(robot, sc, buf, j, margin):
                return True
    return False


# ---------------------------------------------------------------------------------------
# distances


@hot_kernel
def _nearest(robot, scene, sc, buf, tab, i0, i1, need):
    """(d, slot): pieces [i0, i1) of `tab` (the pieces or their outer hulls) against the
    scene, nearest only, under `need`: d when <= need, else (inf, -1); (-inf, -1) when the
    traversal overflowed (counts as a collision)."""
    arg = traverse(
        scene, DISTANCE, tab, buf.piece_poses, buf.plo, buf.phi, i0, i1, buf.front,
        buf.ranges, need, False, sc, False,
    )  # fmt: skip
    if arg == OVERFLOW:
        return -math.inf, -1
    if arg < 0:
        return math.inf, -1
    d = sc.best[arg, 0]
    sc.best[arg, 0] = math.inf  # the scratch's contract: inf between queries
    return d, arg


@hot_kernel
def link_distance(robot, scene, sc, buf, link, need, floor, delta):
    """(d, final, slot): a lower bound d on the distance from `link` to the scene.

    Nothing within need: (need, 0, -1), d means "farther than need". Else the outer hulls'
    distance when it is above `floor` (a lower bound: they contain the pieces), or the
    pieces' own distance (exact) when the outer hulls come within floor; final = 1: asking
    again with a larger need would not change d; slot: the nearest object. d <= floor only
    comes from the pieces themselves; an overlap gives some d <= 0; a traversal overflow
    -inf (a collision: what cannot be certified is not free)."""
    i0 = robot.link_start[link]
    i1 = robot.link_start[link + 1]
    _set_ranges(robot, scene, sc, buf, i0, i1, need, delta)
    d, slot = _nearest(robot, scene, sc, buf, robot.outer, i0, i1, need)
    if d > floor:
        return (d, 1, slot) if slot >= 0 else (need, 0, -1)
    d, slot = _nearest(robot, scene, sc, buf, robot.tab, i0, i1, need)
    if slot < 0 and d == math.inf:
        return need, 0, -1
    return d, 1, slot


@hot_kernel
def pair_distance_bound(robot, sc, buf, j, need, floor):
    """(d, final) for self pair j, as `link_distance` for a link: bounding balls and
    capsules first, then the outer hulls, the pieces only where those come within floor."""
    a = robot.pairs[j, 0]
    b = robot.pairs[j, 1]
    P = buf.piece_poses
    brad = robot.tab.brad
    best = need
    final = 0
    for ia in range(robot.link_start[a], robot.link_start[a + 1]):
        for ib in range(robot.link_start[b], robot.link_start[b + 1]):
            dx = P[ia, 0, 3] - P[ib, 0, 3]
            dy = P[ia, 1, 3] - P[ib, 1, 3]
            dz = P[ia, 2, 3] - P[ib, 2, 3]
            rr = brad[ia] + brad[ib] + best
            if dx * dx + dy * dy + dz * dz > rr * rr:
                continue
            if _capsule_gap(robot, buf, ia, ib) > best:
                continue
            sc.counts[SELF_TESTS] += 1
            st = _self_separation(robot.outer, sc, P, ia, ib, best, 0)
            if st == LOWER_BOUND:
                continue
            d = sc.tmp[0]
            if d <= floor:
                st = _self_separation(robot.tab, sc, P, ia, ib, best, 1)
                if st == LOWER_BOUND:
                    continue
                d = sc.tmp[0]
            if d <= best:
                best = d
                final = 1
    return best, final


@hot_kernel
def body_distance(robot, scene, sc, buf, b, need, floor, delta):
    """(d, final, slot) of body b (a link against the scene, or a self pair): see
    `link_distance`."""
    sc.counts[DIST_QUERIES] += 1
    nl = robot.body_link.shape[0]
    if b < nl:
        return link_distance(robot, scene, sc, buf, robot.body_link[b], need, floor, delta)
    d, final = pair_distance_bound(robot, sc, buf, b - nl, need, floor)
    return d, final, -1


# ---------------------------------------------------------------------------------------
# entry points for one configuration (from Python, through address tables)


@kernel
def state_check(hm, hw, q, margin, self_collision):
    """FREE or COLLISION for configuration q (dof,), or BAD_Q + code (see q_code)."""
    robot, scene, sc, buf = unpack(hm, hw)
    code = q_code(robot, q)
    if code != FREE:
        return code
    pose_pieces(robot, sc, buf, q)
    return COLLISION if posed_collides(robot, scene, sc, buf, margin, self_collision, 0.0) else FREE


@kernel
def state_distances(hm, hw, q, need, out):
    """Each body's distance at q under its cap need (n_bodies,): out (n_bodies, 3) rows
    (d, final, slot) as `body_distance` gives them with floor = need (so every d <= need
    is the pieces' own distance; final 0: the body is farther than need). Returns FREE, or
    BAD_Q + code."""
    robot, scene, sc, buf = unpack(hm, hw)
    code = q_code(robot, q)
    if code != FREE:
        return code
    pose_pieces(robot, sc, buf, q)
    for b in range(out.shape[0]):
        d, exact, slot = body_distance(robot, scene, sc, buf, b, need[b], need[b], 0.0)
        out[b, 0] = d
        out[b, 1] = exact
        out[b, 2] = slot
    return FREE


@parallel_kernel
def state_check_batch(hm, hws, Q, margin, self_collision, out):
    """`state_check` of every row of Q (m, dof) into out (m,) int64, rows spread over numba's
    threads; hws (threads, rows, 5): one workspace table per thread."""
    for r in numba.prange(Q.shape[0]):
        out[r] = state_check(hm, hws[numba.get_thread_id()], Q[r], margin, self_collision)
