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

from ._jit import hot_kernel, kernel, parallel_kernel
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
    ],
)

CheckBuffers = namedtuple(
    "CheckBuffers",
    [
        "link_poses",  # (n_all_links, 4, 4)
        "piece_poses",  # (n_pieces, 4, 4)
        "plo",  # (n_pieces, 3) conservative world boxes of the pieces
        "phi",
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


@kernel
def unpack(hm, hw):
    """(robot, scene, scratch, buffers) from the model table hm and workspace table hw."""
    model, k = robot_model_at(hm, 0)
    tab, k = shape_table_at(hm, k)
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
    )
    scene, _ = flat_scene_at(hm, k + 7)
    sc, k = scratch_at(hw, 0)
    buf = CheckBuffers(
        f64_3(hw, k),
        f64_3(hw, k + 1),
        f64_2(hw, k + 2),
        f64_2(hw, k + 3),
        f64_1(hw, k + 4),
        f64_1(hw, k + 5),
        i32_1(hw, k + 6),
        i32_1(hw, k + 7),
        f64_1(hw, k + 8),
        f64_2(hw, k + 9),
        f64_2(hw, k + 10),
        i32_1(hw, k + 11),
        f64_2(hw, k + 12),
        f64_2(hw, k + 13),
        i32_1(hw, k + 14),
        i32_2(hw, k + 15),
        i32_2(hw, k + 16),
        i64_1(hw, k + 17),
        f64_2(hw, k + 18),
        f64_2(hw, k + 19),
        i32_2(hw, k + 20),
        i32_2(hw, k + 21),
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
        for k in range(3):
            wc = P[p, k, 0] * c0 + P[p, k, 1] * c1 + P[p, k, 2] * c2 + P[p, k, 3]
            wh = abs(P[p, k, 0]) * h0 + abs(P[p, k, 1]) * h1 + abs(P[p, k, 2]) * h2
            buf.plo[p, k] = max(wc - wh, P[p, k, 3] - r)
            buf.phi[p, k] = min(wc + wh, P[p, k, 3] + r)
    sc.counts[STATES] += 1


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
            sc.counts[SELF_TESTS] += 1
            slot = warm_start(sc.warm, sc.pair, -1 - ia, ib)
            touching = pair_overlap(robot.tab, ia, P[ia], robot.tab, ib, P[ib], margin, sc.pair)
            warm_keep(sc.warm, sc.pair, slot, -1 - ia, ib)
            if touching:
                return True
    return False


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
def link_distance(robot, scene, sc, buf, link, need, delta):
    """(d, exact, slot): the distance from `link` to the scene when it is <= need (exact=1,
    slot = the nearest object), else d = need, a lower bound (exact=0, slot=-1). An overlap
    gives some d <= 0; a traversal overflow gives -inf (counts as a collision)."""
    i0 = robot.link_start[link]
    i1 = robot.link_start[link + 1]
    _set_ranges(robot, scene, sc, buf, i0, i1, need, delta)
    arg = traverse(
        scene, DISTANCE, robot.tab, buf.piece_poses, buf.plo, buf.phi, i0, i1, buf.front,
        buf.ranges, need, False, sc, False,
    )  # fmt: skip
    if arg == OVERFLOW:
        return -math.inf, 1, -1
    if arg >= 0:
        d = sc.best[arg, 0]
        sc.best[arg, 0] = math.inf  # the scratch's contract: inf between queries
        return d, 1, arg
    return need, 0, -1


@hot_kernel
def pair_distance_bound(robot, sc, buf, j, need):
    """(d, exact) for self pair j, as `link_distance` for a link."""
    a = robot.pairs[j, 0]
    b = robot.pairs[j, 1]
    P = buf.piece_poses
    brad = robot.tab.brad
    best = need
    exact = 0
    for ia in range(robot.link_start[a], robot.link_start[a + 1]):
        for ib in range(robot.link_start[b], robot.link_start[b + 1]):
            dx = P[ia, 0, 3] - P[ib, 0, 3]
            dy = P[ia, 1, 3] - P[ib, 1, 3]
            dz = P[ia, 2, 3] - P[ib, 2, 3]
            rr = brad[ia] + brad[ib] + best
            if dx * dx + dy * dy + dz * dz > rr * rr:
                continue
            sc.counts[SELF_TESTS] += 1
            slot = warm_start(sc.warm, sc.pair, -1 - ia, ib)
            st = pair_separation(robot.tab, ia, P[ia], robot.tab, ib, P[ib], best, sc.pair, sc.tmp)
            warm_keep(sc.warm, sc.pair, slot, -1 - ia, ib)
            if st != LOWER_BOUND and sc.tmp[0] <= best:
                best = sc.tmp[0]
                exact = 1
    return best, exact


@hot_kernel
def body_distance(robot, scene, sc, buf, b, need, delta):
    """(d, exact, slot) of body b (a link against the scene, or a self pair): see
    `link_distance`."""
    sc.counts[DIST_QUERIES] += 1
    nl = robot.body_link.shape[0]
    if b < nl:
        return link_distance(robot, scene, sc, buf, robot.body_link[b], need, delta)
    d, exact = pair_distance_bound(robot, sc, buf, b - nl, need)
    return d, exact, -1


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
    (d, exact, slot) as `body_distance` gives them (exact 0: d is only a lower bound, the
    body is farther than need). Returns FREE, or BAD_Q + code."""
    robot, scene, sc, buf = unpack(hm, hw)
    code = q_code(robot, q)
    if code != FREE:
        return code
    pose_pieces(robot, sc, buf, q)
    for b in range(out.shape[0]):
        d, exact, slot = body_distance(robot, scene, sc, buf, b, need[b], 0.0)
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
