"""The collision checker's state kernels: is a configuration free, and how far is each body
from collision (docs/architecture.md, "Checker").

A *body* is what a certificate bounds: body ``b < n_links`` is collision link
``body_link[b]`` against the scene; body ``n_links + j`` is the self-collision pair
``pairs[j]``. The checker's flat robot (`CheckRobot`) and per-thread buffers
(`CheckBuffers`) come from `planning_collision.checker`.

Every function here takes the model's address table ``hm`` (robot and scene) and the
workspace's ``hw`` (Scratch and buffers) (kernels/handles.py) and rebuilds what it uses
with `unpack`, which is inlined, so building the fields it does not use costs nothing.
Passing the rebuilt namedtuples instead would cost a call ~900 machine arguments (measured
in the LLVM signatures): more than the work of most calls. The scene traversal is
compiled into the few functions that call it (`_traverse`, inlined) for the same reason.

Every query here answers "in collision, or how far apart", never how deep: the scene
traversal runs with ``depth=False`` and pairs use `pair_separation` and `pair_overlap`, so
no EPA is compiled into the checker.
"""

import math
from collections import namedtuple

import numba
import numpy as np

from ._jit import hot_kernel, kernel, parallel_kernel
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
        "caps",  # ShapeTable: each piece's bounding capsule (contains it)
        "cap_pose",  # (n_pieces, 4, 4) T_piece_capsule
        "cap_p0",  # (n_pieces, 3) the capsule's segment ends, piece frame
        "cap_p1",
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
        "cap_poses",  # (n_pieces, 4, 4) the bounding capsules' world poses (edge checks)
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

# A bounding capsule's distance is taken as a body's bound when it gives at least this
# fraction of the coverage asked beyond the floor (link_distance).
GOOD_ENOUGH = 0.5

# state check results
FREE = 0
COLLISION = 1
BAD_Q = 2  # 2 + k: q[k] is not finite; 2 + dof + k: q[k] is outside its limits


@kernel
def robot_at(hm):
    """The CheckRobot of the model table hm."""
    model, k = robot_model_at(hm, ROW0)
    tab, k = shape_table_at(hm, k)
    outer, j = shape_table_at(hm, k + 7)
    caps, j = shape_table_at(hm, j)
    return CheckRobot(
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
        caps,
        f64_3(hm, j),
        f64_2(hm, j + 1),
        f64_2(hm, j + 2),
    )


@kernel
def scene_rows(hm):
    """The row of hm where the scene starts (after the robot's)."""
    _, k = robot_model_at(hm, ROW0)
    _, k = shape_table_at(hm, k)
    _, j = shape_table_at(hm, k + 7)
    _, j = shape_table_at(hm, j)
    return j + 3


@kernel
def work_at(hw):
    """The (Scratch, CheckBuffers) of the workspace table hw."""
    sc, k = scratch_at(hw, ROW0)
    buf = CheckBuffers(
        f64_3(hw, k),
        f64_3(hw, k + 1),
        f64_2(hw, k + 2),
        f64_2(hw, k + 3),
        f64_2(hw, k + 4),
        f64_2(hw, k + 5),
        f64_3(hw, k + 6),
        f64_1(hw, k + 7),
        f64_1(hw, k + 8),
        i32_1(hw, k + 9),
        i32_1(hw, k + 10),
        f64_1(hw, k + 11),
        f64_2(hw, k + 12),
        f64_2(hw, k + 13),
        i32_1(hw, k + 14),
        f64_2(hw, k + 15),
        f64_2(hw, k + 16),
        i32_1(hw, k + 17),
        i32_2(hw, k + 18),
        i32_2(hw, k + 19),
        i64_1(hw, k + 20),
        f64_2(hw, k + 21),
        f64_2(hw, k + 22),
        i32_2(hw, k + 23),
        i32_2(hw, k + 24),
    )
    return sc, buf


@kernel
def unpack(hm, hw):
    """(robot, scene, scratch, buffers) from the model table hm and workspace table hw."""
    scene, _ = flat_scene_at(hm, scene_rows(hm))
    sc, buf = work_at(hw)
    return robot_at(hm), scene, sc, buf


@kernel
def q_code(hm, q):
    """FREE when q is finite and within its limits, else BAD_Q + the joint's code."""
    robot = robot_at(hm)
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


@kernel
def pose_pieces(hm, hw, q):
    """FK, the world pose of every piece, and a conservative world box of each: its local
    box rotated, cut down to the box of its bounding ball (both contain the piece); and
    the ends of each piece's bounding capsule."""
    robot, _, sc, buf = unpack(hm, hw)
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
            R0 = P[p, k, 0]
            R1 = P[p, k, 1]
            R2 = P[p, k, 2]
            wc = R0 * c0 + R1 * c1 + R2 * c2 + P[p, k, 3]
            wh = abs(R0) * h0 + abs(R1) * h1 + abs(R2) * h2
            buf.plo[p, k] = max(wc - wh, P[p, k, 3] - r)
            buf.phi[p, k] = min(wc + wh, P[p, k, 3] + r)
            buf.cap_w0[p, k] = R0 * a[0] + R1 * a[1] + R2 * a[2] + P[p, k, 3]
            buf.cap_w1[p, k] = R0 * b[0] + R1 * b[1] + R2 * b[2] + P[p, k, 3]
    sc.counts[STATES] += 1


@kernel
def pose_capsules(hm, hw):
    """The world pose of every piece's bounding capsule (for traversals with the capsules
    as the query: the edge checks' cheap first bound)."""
    robot, _, _, buf = unpack(hm, hw)
    P = buf.piece_poses
    for p in range(P.shape[0]):
        B = robot.cap_pose[p]
        T = buf.cap_poses[p]
        for r in range(3):
            a0 = P[p, r, 0]
            a1 = P[p, r, 1]
            a2 = P[p, r, 2]
            for c in range(4):
                T[r, c] = a0 * B[0, c] + a1 * B[1, c] + a2 * B[2, c]
            T[r, 3] += P[p, r, 3]
        T[3, 0] = 0.0
        T[3, 1] = 0.0
        T[3, 2] = 0.0
        T[3, 3] = 1.0


@hot_kernel
def _capsule_gap(cap_w0, cap_w1, params, ia, ib):
    """Distance between the bounding capsules of pieces ia and ib (segment ends posed in
    cap_w0, cap_w1; radii params[:, 0]): a lower bound on the pieces' distance (<= 0 when
    the capsules overlap)."""
    a0 = cap_w0[ia]
    a1 = cap_w1[ia]
    b0 = cap_w0[ib]
    b1 = cap_w1[ib]
    s, t = segment_segment_closest(
        (a0[0], a0[1], a0[2]), (a1[0], a1[1], a1[2]), (b0[0], b0[1], b0[2]), (b1[0], b1[1], b1[2])
    )
    dx = a0[0] + s * (a1[0] - a0[0]) - b0[0] - t * (b1[0] - b0[0])
    dy = a0[1] + s * (a1[1] - a0[1]) - b0[1] - t * (b1[1] - b0[1])
    dz = a0[2] + s * (a1[2] - a0[2]) - b0[2] - t * (b1[2] - b0[2])
    return math.sqrt(dx * dx + dy * dy + dz * dz) - params[ia, 0] - params[ib, 0]


# ---------------------------------------------------------------------------------------
# the scene traversal, compiled into its callers here (module doc)

_traverse = traverse  # inline_kernel(traverse_body)

# which rows of the robot a traversal queries with
CAPSULES = 0  # the pieces' bounding capsules (posed by buf.cap_poses)
OUTER = 1  # the pieces' outer hulls
PIECES = 2  # the pieces themselves

# Constants passed on as arguments go through np.int64 / np.bool_: numba compiles a callee
# once per *literal* value it is called with (a constant argument is typed as a literal),
# and a traversal compiled three times is ~10 s of a user's first call. tests/test_checker
# checks that the checker's kernels compile once each.
ROW0 = np.int64(0)
YES = np.bool_(True)
NO = np.bool_(False)
AS_CAPSULES = np.int64(CAPSULES)
AS_OUTER = np.int64(OUTER)
AS_PIECES = np.int64(PIECES)
MODE_COLLIDE = np.int64(COLLIDE)
MODE_DISTANCE = np.int64(DISTANCE)
MODE_LEAVES = np.int64(LEAVES)


@kernel
def _query(hm, hw, mode, which, i0, i1, bound, flag):
    """One traversal of the scene by pieces [i0, i1) (as `which`: CAPSULES, OUTER or
    PIECES), each from its rows of the front list (buf.ranges); see kernels/traversal.py
    for mode, bound and flag. Returns the traversal's result."""
    robot, scene, sc, buf = unpack(hm, hw)
    if which == CAPSULES:
        tab = robot.caps
        poses = buf.cap_poses
    else:
        tab = robot.outer if which == OUTER else robot.tab
        poses = buf.piece_poses
    return _traverse(
        scene, mode, tab, poses, buf.plo, buf.phi, i0, i1, buf.front, buf.ranges, bound,
        flag, sc, False,
    )  # fmt: skip


# ---------------------------------------------------------------------------------------
# front lists: where a piece's last traversal found leaves, reused while the piece stays
# inside the box it was recorded for


@hot_kernel
def _contains(lo, hi, i, qlo, qhi, j, pad):
    for k in range(3):
        if qlo[j, k] - pad < lo[i, k] or qhi[j, k] + pad > hi[i, k]:
            return False
    return True


@kernel
def _build_front(hm, hw, i, bound, delta):
    """Record piece i's front for the envelope "piece box grown by bound + delta" (delta:
    how far the piece may move in the queries to come): the group-BVH leaves overlapping
    it, when there are at most F. Returns the rows [a, b) of buf.front (empty: root)."""
    robot, scene, sc, buf = unpack(hm, hw)
    F = buf.front.shape[0] // buf.front_n.shape[0]
    g = bound + delta
    for k in range(3):
        buf.env_lo[i, k] = buf.plo[i, k] - g
        buf.env_hi[i, k] = buf.phi[i, k] + g
    m = _traverse(
        scene, MODE_LEAVES, robot.tab, buf.piece_poses, buf.env_lo, buf.env_hi, i, i + 1,
        buf.front[0:0], buf.ranges[0:0], 0.0, NO, sc, False,
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


@kernel
def _set_ranges(hm, hw, i0, i1, bound, delta):
    """For each piece i in [i0, i1), the rows buf.ranges[i] of buf.front its traversal
    under `bound` starts from (an empty range: the root).

    Its front (the group-BVH leaves overlapping the front's envelope box) when the piece's
    box grown by `bound` lies inside that envelope: every leaf a traversal from the root
    would reach is in the front, so the answer is the same. Otherwise, when delta > 0, a new
    front (`_build_front`); else the root."""
    _, _, sc, buf = unpack(hm, hw)
    F = buf.front.shape[0] // buf.front_n.shape[0]
    for i in range(i0, i1):
        n = buf.front_n[i]
        if n >= 0 and _contains(buf.env_lo, buf.env_hi, i, buf.plo, buf.phi, i, bound):
            sc.counts[FRONT_HITS] += 1
            buf.ranges[i, 0] = i * F
            buf.ranges[i, 1] = i * F + max(n, 1)
        elif delta > 0.0:
            a, b = _build_front(hm, hw, i, bound, delta)
            buf.ranges[i, 0] = a
            buf.ranges[i, 1] = b
        else:
            buf.ranges[i, 0] = 0
            buf.ranges[i, 1] = 0


# ---------------------------------------------------------------------------------------
# boolean checks


@kernel
def pieces_hit(hm, hw, i0, i1, margin, delta):
    """True when a piece in [i0, i1) (posed in buf) is within `margin` of the scene (or the
    traversal overflowed: an answer that cannot be certified counts as a collision). One
    traversal for all of them, each piece from its own front; the outer hulls first: when
    they touch nothing, neither do the pieces."""
    _, _, sc, _ = unpack(hm, hw)
    _set_ranges(hm, hw, i0, i1, margin, delta)
    for which in (OUTER, PIECES):
        n = _query(hm, hw, MODE_COLLIDE, which, i0, i1, margin, YES)
        if n == 0:
            return False
        for o in range(sc.hit.shape[0]):  # the scratch's contract: all 0 between queries
            sc.hit[o] = 0
    return True


@kernel
def _self_test(hm, hw, which, ia, ib, bound, boolean):
    """Pieces ia, ib (OUTER or PIECES) warm started from the pair's last direction: with
    `boolean`, pair_overlap under margin `bound` (returns 1 or 0); else pair_separation
    under `bound` into sc.tmp (returns its status)."""
    robot, _, sc, buf = unpack(hm, hw)
    tab = robot.outer if which == OUTER else robot.tab
    P = buf.piece_poses
    key = -1 - 2 * ia - which
    slot = warm_start(sc.warm, sc.pair, key, ib)
    if boolean:
        r = 1 if pair_overlap(tab, ia, P[ia], tab, ib, P[ib], bound, sc.pair) else 0
    else:
        r = pair_separation(tab, ia, P[ia], tab, ib, P[ib], bound, sc.pair, sc.tmp)
    warm_keep(sc.warm, sc.pair, slot, key, ib)
    return r


@kernel
def pair_hits(hm, hw, j, margin):
    """True when self pair j's links are within `margin` of each other: bounding balls,
    then capsules, then outer hulls, then the pieces."""
    robot, _, sc, buf = unpack(hm, hw)
    a = robot.pairs[j, 0]
    b = robot.pairs[j, 1]
    P = buf.piece_poses
    brad = robot.tab.brad
    for ia in range(np.int64(robot.link_start[a]), np.int64(robot.link_start[a + 1])):
        for ib in range(np.int64(robot.link_start[b]), np.int64(robot.link_start[b + 1])):
            dx = P[ia, 0, 3] - P[ib, 0, 3]
            dy = P[ia, 1, 3] - P[ib, 1, 3]
            dz = P[ia, 2, 3] - P[ib, 2, 3]
            rr = brad[ia] + brad[ib] + margin
            if dx * dx + dy * dy + dz * dz > rr * rr:
                continue
            if _capsule_gap(buf.cap_w0, buf.cap_w1, robot.caps.params, ia, ib) > margin:
                continue
            sc.counts[SELF_TESTS] += 1
            if _self_test(hm, hw, AS_OUTER, ia, ib, margin, YES) == 0:
                continue
            if _self_test(hm, hw, AS_PIECES, ia, ib, margin, YES) == 1:
                return True
    return False


@kernel
def posed_collides(hm, hw, margin, self_collision, delta):
    """True when the configuration posed in buf collides (within margin): every collision
    link against the scene, then the self pairs; returns at the first collision."""
    robot, _, _, _ = unpack(hm, hw)
    if pieces_hit(hm, hw, ROW0, np.int64(robot.piece_link.shape[0]), margin, delta):
        return True
    if self_collision:
        for j in range(robot.pairs.shape[0]):
            if pair_hits(hm, hw, j, margin):
                return True
    return False


# ---------------------------------------------------------------------------------------
# distances


@kernel
def _nearest(hm, hw, which, i0, i1, need):
    """(d, slot): pieces [i0, i1) (as `which`) against the scene, nearest only, under
    `need`: d when <= need, else (inf, -1); (-inf, -1) when the traversal overflowed (counts
    as a collision). The query boxes are the pieces': a bound of the pieces, which is what
    matters (a node pruned by them holds nothing within need of the pieces)."""
    _, _, sc, _ = unpack(hm, hw)
    arg = _query(hm, hw, MODE_DISTANCE, which, i0, i1, need, NO)
    if arg == OVERFLOW:
        return -math.inf, -1
    if arg < 0:
        return math.inf, -1
    d = sc.best[arg, 0]
    sc.best[arg, 0] = math.inf  # the scratch's contract: inf between queries
    return d, arg


@kernel
def link_distance(hm, hw, link, need, floor, delta):
    """(d, final, slot): a lower bound d on the distance from `link` to the scene.

    Cheap bounds first: the pieces' bounding capsules, then their outer hulls (both contain
    the pieces, so their distances are lower bounds), the pieces themselves only where the
    bounds come within `floor`. The capsules' bound is taken when it gives at least
    GOOD_ENOUGH of what the caller asked beyond floor (a looser bound means more
    evaluations of the edge; a tighter one costs GJK on the hulls). Nothing within need:
    (need, 0, -1), d means "farther than need". Else the first bound taken, or the pieces'
    own distance (exact); final = 1: asking again with a larger need would not change d;
    slot: the nearest object. d <= floor only comes from the pieces themselves; an overlap
    gives some d <= 0; a traversal overflow -inf (a collision: what cannot be certified is
    not free). The capsules' poses must be current (`pose_capsules`)."""
    robot, _, _, _ = unpack(hm, hw)
    i0 = np.int64(robot.link_start[link])
    i1 = np.int64(robot.link_start[link + 1])
    _set_ranges(hm, hw, i0, i1, need, delta)
    enough = floor + GOOD_ENOUGH * (need - floor)
    d, slot = _nearest(hm, hw, AS_CAPSULES, i0, i1, need)
    if d > enough:
        return (d, 1, slot) if slot >= 0 else (need, 0, -1)
    d, slot = _nearest(hm, hw, AS_OUTER, i0, i1, need)
    if d > floor:
        return (d, 1, slot) if slot >= 0 else (need, 0, -1)
    d, slot = _nearest(hm, hw, AS_PIECES, i0, i1, need)
    if slot < 0 and d == math.inf:
        return need, 0, -1
    return d, 1, slot


@kernel
def pair_distance_bound(hm, hw, j, need, floor):
    """(d, final) for self pair j, as `link_distance` for a link: bounding balls and
    capsules first (a capsule distance giving GOOD_ENOUGH is taken as the bound), then the
    outer hulls, the pieces only where those come within floor."""
    robot, _, sc, buf = unpack(hm, hw)
    a = robot.pairs[j, 0]
    b = robot.pairs[j, 1]
    P = buf.piece_poses
    brad = robot.tab.brad
    best = need
    final = 0
    enough = floor + GOOD_ENOUGH * (need - floor)
    for ia in range(np.int64(robot.link_start[a]), np.int64(robot.link_start[a + 1])):
        for ib in range(np.int64(robot.link_start[b]), np.int64(robot.link_start[b + 1])):
            dx = P[ia, 0, 3] - P[ib, 0, 3]
            dy = P[ia, 1, 3] - P[ib, 1, 3]
            dz = P[ia, 2, 3] - P[ib, 2, 3]
            rr = brad[ia] + brad[ib] + best
            if dx * dx + dy * dy + dz * dz > rr * rr:
                continue
            g = _capsule_gap(buf.cap_w0, buf.cap_w1, robot.caps.params, ia, ib)
            if g > best:
                continue
            if g > enough:
                best = g
                final = 1
                continue
            sc.counts[SELF_TESTS] += 1
            if _self_test(hm, hw, AS_OUTER, ia, ib, best, NO) == LOWER_BOUND:
                continue
            d = sc.tmp[0]
            if d <= floor:
                if _self_test(hm, hw, AS_PIECES, ia, ib, best, NO) == LOWER_BOUND:
                    continue
                d = sc.tmp[0]
            if d <= best:
                best = d
                final = 1
    return best, final


@kernel
def body_distance(hm, hw, b, need, floor, delta):
    """(d, final, slot) of body b (a link against the scene, or a self pair): see
    `link_distance`."""
    robot, _, sc, _ = unpack(hm, hw)
    sc.counts[DIST_QUERIES] += 1
    nl = robot.body_link.shape[0]
    if b < nl:
        return link_distance(hm, hw, robot.body_link[b], need, floor, delta)
    d, final = pair_distance_bound(hm, hw, b - nl, need, floor)
    return d, final, -1


# ---------------------------------------------------------------------------------------
# entry points for one configuration (from Python, through address tables)


@kernel
def state_check(hm, hw, q, margin, self_collision):
    """FREE or COLLISION for configuration q (dof,), or BAD_Q + code (see q_code)."""
    code = q_code(hm, q)
    if code != FREE:
        return code
    pose_pieces(hm, hw, q)
    return COLLISION if posed_collides(hm, hw, margin, self_collision, 0.0) else FREE


@kernel
def state_distances(hm, hw, q, need, out):
    """Each body's distance at q under its cap need (n_bodies,): out (n_bodies, 3) rows
    (d, final, slot) as `body_distance` gives them with floor = need (so every d <= need
    is the pieces' own distance; final 0: the body is farther than need). Returns FREE, or
    BAD_Q + code."""
    code = q_code(hm, q)
    if code != FREE:
        return code
    pose_pieces(hm, hw, q)
    pose_capsules(hm, hw)
    for b in range(out.shape[0]):
        d, final, slot = body_distance(hm, hw, b, need[b], need[b], 0.0)
        out[b, 0] = d
        out[b, 1] = final
        out[b, 2] = slot
    return FREE


@parallel_kernel
def state_check_batch(hm, hws, Q, margin, self_collision, out):
    """`state_check` of every row of Q (m, dof) into out (m,) int64, rows spread over numba's
    threads; hws (threads, rows, 5): one workspace table per thread."""
    for r in numba.prange(Q.shape[0]):
        out[r] = state_check(hm, hws[numba.get_thread_id()], Q[r], margin, self_collision)
