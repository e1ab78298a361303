"""The collision checker's state kernels: is a configuration free, and how far is each body
from collision (docs/architecture.md, "Checker").

A *body* is what a certificate bounds: body ``b < n_links`` is collision link
``body_link[b]`` against the scene; body ``n_links + j`` is the self-collision pair
``pairs[j]``. `CheckRobot` and `CheckBuffers` come from `planning_collision.checker`.

How the code is cut into compiled functions matters as much as what it does (a first call
compiles all of it; python -m demos.dev.cold_start):

- Every compiled function here takes the model's address table ``hm`` (robot and scene)
  and the workspace's ``hw`` (Scratch and buffers) (kernels/handles.py), plus scalars, and
  rebuilds the namedtuples it needs in one step (`unpack`: one intrinsic call for the robot,
  one for the workspace; LLVM drops the arrays a function does not read; the scene is
  viewed only by the traversal's `query`). Passing the rebuilt namedtuples instead costs
  ~900 machine arguments per call (measured in the LLVM signatures).
- The parts called from several places are compiled once each and called: the scene
  traversal (`query`, with the traversal's body compiled into it), the self-pair tests
  (`self_test`), posing a configuration (`pose`), the boolean check of a posed
  configuration (`posed_collides`) and one body's distance bound (`body_distance`). Inlined
  into several callers instead (numba IR inlining), each was compiled once per caller:
  the first `is_valid` and `check_edge` took 15 + 27 s of compile, now ~22 + 10 s.
- Glue used in one place is inlined (`inline_kernel`). The compiled functions run without
  reference counting (`hot_kernel`): they allocate nothing, and counting references to
  ~110 arrays at every assignment of a rebuilt namedtuple was most of their compile time.

Every query here answers "in collision, or how far apart", never how deep: the scene
traversal runs with ``depth=False`` and pairs use `pair_separation` and `pair_overlap`, so
no EPA is compiled into the checker.
"""

import math

import numba
import numpy as np

from ._jit import hot_kernel, inline_kernel, parallel_kernel
from .capsule_capsule import posed_capsule_gap
from .check_types import CheckBuffers, CheckRobot
from .clock import monotonic_ns
from .fk import fk, piece_poses
from .handles import table_view
from .pair import APART, CORES_WITHIN, LOWER_BOUND, overlap_within, pair_separation
from .scratch import Scratch
from .self_tables import grid, table_floor
from .traversal import (
    BV,
    COLLIDE,
    DISTANCE,
    LEAVES,
    NONE,
    OVERFLOW,
    FlatScene,
    traverse_body,
    warm_keep,
    warm_start,
)

# A model table holds the robot's rows, then the scene's; each is viewed only where it is
# used: a view emits the loads and the nested tuples of all its arrays, which LLVM then
# optimises away where unused, at a cost (the scene's 33 arrays in every function that
# unpacked the model: ~25 % of the view's IR)
_robot_view = table_view(CheckRobot)
_scene_view = table_view(FlatScene)
SCENE_ROW = np.int64(_robot_view.n_rows)  # the scene's first row in a model table
_work_view = table_view(Scratch, CheckBuffers)  # (scratch, buffers) of a workspace table

# Counters in Scratch.counts after the traversal's (BV_TESTS, PAIR_TESTS)
STATES = 2  # configurations posed (FK + pieces)
DIST_QUERIES = 3  # body distance queries
FRONT_HITS = 4  # piece traversals started from a cached front
FRONT_BUILDS = 5  # fronts recorded
ENDPOINT_HITS = 6  # body distances reused from the endpoint cache
EDGES = 7  # edges checked
SELF_TESTS = 8  # self-collision piece pairs that reached a pair query
KERNEL_NS = 9  # nanoseconds inside timed entry points (state_check from Python, edges)
EDGE_T0 = 10  # the clock at the current edge check's start (kernels/edges.py)

# A bounding capsule's distance is taken as a body's bound when it gives at least this
# fraction of the coverage asked beyond the floor, or ENOUGH_BEYOND metres past it (`_enough`).
# On long edges the coverage asked is metres; a Panda link's capsule lies 3-8 cm outside
# its hull at most, so GJK on the hull refines a far bound by little, at most of an edge's
# cost. Free RRTConnect edges on MBM scenes (1,064 replayed): 135 -> 101 us median with
# 0.05 m, 99 us with 0.02, 104 with 0.1; with 0 the windows shrink: 144 us.
GOOD_ENOUGH = 0.5
ENOUGH_BEYOND = 0.05

# state check results
FREE = 0
COLLISION = 1
BAD_Q = 2  # 2 + k: q[k] is not finite; 2 + dof + k: q[k] is outside its limits;
# 2 + 2 * dof: q has not dof values


@inline_kernel
def robot_at(hm):
    """The CheckRobot of the model table hm."""
    return _robot_view(hm, ROW0)[0]


@inline_kernel
def unpack(hm, hw):
    """(robot, scratch, buffers) from the model table hm and workspace table hw (the
    scene: `_scene_view`, in `query` only)."""
    sc, buf = _work_view(hw, ROW0)
    return robot_at(hm), sc, buf


@inline_kernel
def q_code(limited, lo, hi, q):
    """FREE when q is finite and within its limits (the robot's `limited`, model.lower,
    model.upper), else BAD_Q + the joint's code (or BAD_Q + 2 * dof: q is not (dof,)).
    Takes the arrays: an inlined helper given the whole robot copies all its arrays at
    each call site, which LLVM then spends time in a user's first call taking apart."""
    dof = limited.shape[0]
    if q.shape[0] != dof:
        return BAD_Q + 2 * dof
    for k in range(dof):
        if not math.isfinite(q[k]):
            return BAD_Q + k
    for k in range(dof):
        if limited[k] and (q[k] < lo[k] or q[k] > hi[k]):
            return BAD_Q + dof + k
    return FREE


@inline_kernel
def pose_pieces(P, plo, phi, aabb, brad):
    """After FK and the pieces' poses P: a conservative world box of each piece (plo, phi:
    its local box rotated, cut down to the box of its bounding ball; both contain the
    piece). The bounding capsules' world ends are computed where a self pair needs them
    (`posed_capsule_gap`: for about one piece pair in two states, not 17 pieces each state)."""
    for p in range(P.shape[0]):
        c0 = 0.5 * (aabb[p, 0] + aabb[p, 3])
        c1 = 0.5 * (aabb[p, 1] + aabb[p, 4])
        c2 = 0.5 * (aabb[p, 2] + aabb[p, 5])
        h0 = 0.5 * (aabb[p, 3] - aabb[p, 0])
        h1 = 0.5 * (aabb[p, 4] - aabb[p, 1])
        h2 = 0.5 * (aabb[p, 5] - aabb[p, 2])
        r = brad[p]
        for k in range(3):
            R0 = P[p, k, 0]
            R1 = P[p, k, 1]
            R2 = P[p, k, 2]
            wc = R0 * c0 + R1 * c1 + R2 * c2 + P[p, k, 3]
            wh = abs(R0) * h0 + abs(R1) * h1 + abs(R2) * h2
            plo[p, k] = max(wc - wh, P[p, k, 3] - r)
            phi[p, k] = min(wc + wh, P[p, k, 3] + r)


@inline_kernel
def pose_capsules(P, cap_pose, cap_poses):
    """The world pose of every piece's bounding capsule, cap_poses (for traversals with the
    capsules as the query: the edge checks' cheap first bound)."""
    for p in range(P.shape[0]):
        B = cap_pose[p]
        T = cap_poses[p]
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
def pose(hm, hw, q, capsules):
    """Pose configuration q in the workspace: FK, the pieces' poses, `pose_pieces`, and with
    `capsules` the bounding capsules' poses (`pose_capsules`)."""
    robot, sc, buf = unpack(hm, hw)
    for k in range(q.shape[0]):
        buf.q[k] = q[k]  # for the self-pair tables (a no-op when q is buf.q)
    fk(robot.model, q, buf.link_poses)
    P = buf.piece_poses
    piece_poses(buf.link_poses, robot.piece_link, robot.piece_pose, P)
    tab = robot.tab
    pose_pieces(P, buf.plo, buf.phi, tab.aabb, tab.brad)
    sc.counts[STATES] += 1
    if capsules:
        pose_capsules(P, robot.cap_pose, buf.cap_poses)


# ---------------------------------------------------------------------------------------
# the two heavy parts, compiled once each

_traverse = inline_kernel(traverse_body)

# which rows of the robot a traversal queries with
CAPSULES = 0  # the pieces' bounding capsules (posed by buf.cap_poses)
OUTER = 1  # the pieces' outer hulls
PIECES = 2  # the pieces themselves
ENVELOPE = 3  # the pieces, with their front envelopes (buf.env_lo, env_hi) as boxes

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
AS_ENVELOPE = np.int64(ENVELOPE)
MODE_COLLIDE = np.int64(COLLIDE)
MODE_DISTANCE = np.int64(DISTANCE)
MODE_LEAVES = np.int64(LEAVES)


@hot_kernel
def query(hm, hw, mode, which, i0, i1, bound, flag):
    """One traversal of the scene by pieces [i0, i1) (as `which`: CAPSULES, OUTER, PIECES,
    or ENVELOPE: the pieces' front envelopes as the query boxes, for LEAVES), each from its
    rows of the front list (buf.ranges; none for ENVELOPE); see kernels/traversal.py for
    mode, bound and flag. Returns the traversal's result."""
    robot, sc, buf = unpack(hm, hw)
    scene = _scene_view(hm, SCENE_ROW)[0]
    poses = buf.cap_poses if which == CAPSULES else buf.piece_poses
    tab = robot.tab
    if which == CAPSULES:
        tab = robot.caps
    elif which == OUTER:
        tab = robot.outer
    lo = buf.env_lo if which == ENVELOPE else buf.plo
    hi = buf.env_hi if which == ENVELOPE else buf.phi
    seeds = buf.front[0:0] if which == ENVELOPE else buf.front
    ranges = buf.ranges[0:0] if which == ENVELOPE else buf.ranges
    # an outer hull's hit can be certain for its piece (kernels/traversal.py, qinner)
    inner = robot.tab.params[:, 0] if which == OUTER else robot.tab.params[0:0, 0]
    return _traverse(
        scene, mode, tab, poses, lo, hi, i0, i1, seeds, ranges, bound, flag, sc, inner, False
    )


@hot_kernel
def self_test(hm, hw, which, ia, ib, bound, boolean):
    """Pieces ia, ib (OUTER or PIECES) warm started from the pair's last direction: with
    `boolean`, whether they overlap under margin `bound`: APART or CORES_WITHIN (the
    pieces overlap for certain), or for OUTER also UNKNOWN (the outer hulls overlap: test
    the pieces). An outer hull's core is a subset of its piece's points, swept by more than
    the piece's radius (or the piece itself: checker/bounds.py), so the outer hulls'
    cores within the pieces' radii means the pieces overlap. Else pair_separation under
    `bound` into sc.tmp (returns its status)."""
    robot, sc, buf = unpack(hm, hw)
    tab = robot.outer if which == OUTER else robot.tab
    P = buf.piece_poses
    key = -1 - 2 * ia - which
    slot = warm_start(sc.warm, sc.pair, key, ib)
    if boolean:
        inner = robot.tab.params[ia, 0] + robot.tab.params[ib, 0] if which == OUTER else -1.0
        r = overlap_within(tab, ia, P[ia], tab, ib, P[ib], bound, inner, sc.pair)
    else:
        r = pair_separation(tab, ia, P[ia], tab, ib, P[ib], bound, sc.pair, sc.tmp)
    warm_keep(sc.warm, sc.pair, slot, key, ib)
    return r


# ---------------------------------------------------------------------------------------
# front lists: where a piece's last traversal found leaves, reused while the piece stays
# inside the box it was recorded for


@hot_kernel
def _contains(lo, hi, i, qlo, qhi, j, pad):
    for k in range(3):
        if qlo[j, k] - pad < lo[i, k] or qhi[j, k] + pad > hi[i, k]:
            return False
    return True


@inline_kernel
def _fr(sc, buf):
    """What `set_ranges` reads and writes: (front, front_n, ranges, env_lo, env_hi, plo,
    phi, counts, out). The helpers from here on take such small tuples or arrays, not the
    robot, scratch or buffers: an inlined helper given those copies all their arrays at
    each call site, which LLVM then spends seconds of a user's first call taking apart."""
    return (
        buf.front, buf.front_n, buf.ranges, buf.env_lo, buf.env_hi, buf.plo, buf.phi,
        sc.counts, sc.out,
    )  # fmt: skip


@inline_kernel
def set_ranges(hm, hw, fr, i0, i1, bound, delta):
    """For each piece i in [i0, i1), the rows ranges[i] of the front list its traversal
    under `bound` starts from (an empty range: the root); fr: `_fr`.

    Its front (the group-BVH leaves overlapping the front's envelope box) when the piece's
    box grown by `bound` lies inside that envelope: every leaf a traversal from the root
    would reach is in the front, so the answer is the same. Otherwise, when delta > 0 (how
    far the piece may move in the queries to come), a new front for the envelope "piece box
    grown by bound + delta", if it has at most F leaves; else the root."""
    front, front_n, ranges, env_lo, env_hi, plo, phi, counts, out = fr
    F = front.shape[0] // front_n.shape[0]
    for i in range(i0, i1):
        n = front_n[i]
        ranges[i, 0] = 0
        ranges[i, 1] = 0
        if n >= 0 and _contains(env_lo, env_hi, i, plo, phi, i, bound):
            counts[FRONT_HITS] += 1
            ranges[i, 0] = i * F
            ranges[i, 1] = i * F + max(n, 1)
            continue
        if delta <= 0.0:
            continue
        g = bound + delta
        for k in range(3):
            env_lo[i, k] = plo[i, k] - g
            env_hi[i, k] = phi[i, k] + g
        m = query(hm, hw, MODE_LEAVES, AS_ENVELOPE, i, i + 1, 0.0, NO)
        if m < 0 or m > F:
            front_n[i] = -1
            continue
        for j in range(m):
            front[i * F + j, 0] = BV
            front[i * F + j, 1] = out[j]
        if m == 0:  # nothing near: one entry that stands for nothing (empty means root)
            front[i * F, 0] = NONE
            front[i * F, 1] = 0
        front_n[i] = m
        counts[FRONT_BUILDS] += 1
        ranges[i, 0] = i * F
        ranges[i, 1] = i * F + max(m, 1)


# ---------------------------------------------------------------------------------------
# boolean checks


@inline_kernel
def _clear_hits(hit):
    """The scratch's contract: its `hit` all 0 between queries."""
    for o in range(hit.shape[0]):
        hit[o] = 0


@inline_kernel
def _scene_hit(hm, hw, fr, hit_flags, n_pieces, margin, delta):
    """posed_collides' scene part: outer hulls from piece i on; the first whose hull touches
    is a collision when that hit is certain for the piece (the hulls' cores within the
    pieces' radii: kernels/traversal.py), else the piece is tested exactly, and the search
    resumes after it when it does not touch (the pieces before it are clear: each lies
    inside its outer hull). fr: `_fr`; hit_flags: the scratch's `hit`."""
    set_ranges(hm, hw, fr, ROW0, n_pieces, margin, delta)
    out = fr[8]
    i = ROW0
    hit = False
    while i < n_pieces and not hit:
        r = query(hm, hw, MODE_COLLIDE, AS_OUTER, i, n_pieces, margin, YES)
        if r == 0:
            i = n_pieces
        elif r < 0:
            hit = True  # an overflow
        else:
            j = np.int64(out[0])
            _clear_hits(hit_flags)
            hit = out[1] != 0 or query(hm, hw, MODE_COLLIDE, AS_PIECES, j, j + 1, margin, YES) != 0
            i = j + 1
        _clear_hits(hit_flags)
    return hit


@inline_kernel
def _sp(robot, buf):
    """What the self-pair checks read: (piece_poses, brad, pairs, link_start, cap_p0,
    cap_p1, the capsules' params, link_poses, the links' balls' centres and radii)."""
    return (
        buf.piece_poses, robot.tab.brad, robot.pairs, robot.link_start, robot.cap_p0,
        robot.cap_p1, robot.caps.params, buf.link_poses, robot.sphere_c, robot.sphere_r,
    )  # fmt: skip


@inline_kernel
def _ball_gap(sp, a, b):
    """A lower bound on the distance between links a and b: their balls' gap (posed), or
    -inf when each is a single piece (the pieces' own balls are as cheap and tighter)."""
    link_start = sp[3]
    if link_start[a + 1] - link_start[a] == 1 and link_start[b + 1] - link_start[b] == 1:
        return -math.inf
    T, c, r = sp[7], sp[8], sp[9]
    e = 0.0
    for k in range(3):
        xa = T[a, k, 0] * c[a, 0] + T[a, k, 1] * c[a, 1] + T[a, k, 2] * c[a, 2] + T[a, k, 3]
        xb = T[b, k, 0] * c[b, 0] + T[b, k, 1] * c[b, 1] + T[b, k, 2] * c[b, 2] + T[b, k, 3]
        e += (xa - xb) * (xa - xb)
    return math.sqrt(e) - r[a] - r[b]


@inline_kernel
def _self_hit(hm, hw, sp, tables, q, counts, margin):
    """posed_collides' self part: each checked pair by its clearance table (tables: the
    robot's pt_start and `grid`; q: the posed configuration), its bodies' balls, then its
    pieces by bounding balls, capsules, outer hulls, then the pieces themselves. sp: `_sp`."""
    P, brad, pairs, link_start, cap_p0, cap_p1, cap_params = sp[:7]
    for j in range(pairs.shape[0]):
        if table_floor(tables[0], tables[1], j, q) > margin:
            continue
        a = pairs[j, 0]
        b = pairs[j, 1]
        if _ball_gap(sp, a, b) > margin:  # the hand's 10 pieces at once
            continue
        for ia in range(np.int64(link_start[a]), np.int64(link_start[a + 1])):
            for ib in range(np.int64(link_start[b]), np.int64(link_start[b + 1])):
                dx = P[ia, 0, 3] - P[ib, 0, 3]
                dy = P[ia, 1, 3] - P[ib, 1, 3]
                dz = P[ia, 2, 3] - P[ib, 2, 3]
                rr = brad[ia] + brad[ib] + margin
                if dx * dx + dy * dy + dz * dz > rr * rr:
                    continue
                if posed_capsule_gap(P, cap_p0, cap_p1, cap_params, ia, ib) > margin:
                    continue
                counts[SELF_TESTS] += 1
                r = self_test(hm, hw, AS_OUTER, ia, ib, margin, YES)
                if r == APART:
                    continue
                if r == CORES_WITHIN:  # the pieces overlap: no GJK on them needed
                    return True
                if self_test(hm, hw, AS_PIECES, ia, ib, margin, YES) == CORES_WITHIN:
                    return True
    return False


@hot_kernel
def posed_collides(hm, hw, margin, self_collision, delta):
    """True when the configuration posed in buf collides (within margin): every piece
    against the scene (each from its own front; the outer hulls first: when they touch
    nothing, neither do the pieces, and only a piece whose hull touches is tested), then
    the self pairs (bounding balls, capsules, outer hulls, pieces); returns at the first
    collision. A traversal overflow counts as a collision (what cannot be certified is not
    free). The scene goes first: the states the edge probes reject collide with it more
    often (self pairs first: colliding RRTConnect edges 10.7 -> 11.1 us median)."""
    robot, sc, buf = unpack(hm, hw)
    n_pieces = np.int64(robot.piece_link.shape[0])
    if _scene_hit(hm, hw, _fr(sc, buf), sc.hit, n_pieces, margin, delta):
        return True
    if not self_collision:
        return False
    tables = (robot.pt_start, grid(robot))
    return _self_hit(hm, hw, _sp(robot, buf), tables, buf.q, sc.counts, margin)


# ---------------------------------------------------------------------------------------
# distances


@inline_kernel
def _enough(need, floor):
    """The capsule distance taken as a body's bound (GOOD_ENOUGH, ENOUGH_BEYOND)."""
    return floor + min(GOOD_ENOUGH * (need - floor), ENOUGH_BEYOND)


@inline_kernel
def link_distance(hm, hw, fr, best, link_start, link, need, floor, delta):
    """(d, final, slot): a lower bound d on the distance from `link` to the scene.

    Cheap bounds first: the pieces' bounding capsules, then their outer hulls (both contain
    the pieces, so their distances are lower bounds), the pieces themselves only where the
    bounds come within `floor`. The capsules' bound is taken when it gives at least
    GOOD_ENOUGH of what the caller asked beyond floor, or ENOUGH_BEYOND (`_enough`: a
    looser bound means more evaluations of the edge; a tighter one costs GJK on the hulls).
    Nothing within need: (need, 0, -1), d means "farther than need". Else the first bound
    taken, or the pieces' own distance (exact); final = 1: asking again with a larger need
    would not change d; slot: the nearest object. d <= floor only comes from the pieces
    themselves; an overlap gives some d <= 0; a traversal overflow -inf (a collision: what
    cannot be certified is not free). The capsules' poses must be current (`pose_capsules`).
    fr: `_fr`; best: the scratch's; link_start: the robot's."""
    i0 = np.int64(link_start[link])
    i1 = np.int64(link_start[link + 1])
    set_ranges(hm, hw, fr, i0, i1, need, delta)
    enough = _enough(need, floor)
    d = math.inf
    slot = -1
    for which in (AS_CAPSULES, AS_OUTER, AS_PIECES):
        arg = query(hm, hw, MODE_DISTANCE, which, i0, i1, need, NO)
        if arg == OVERFLOW:
            return -math.inf, 1, -1
        if arg < 0:
            return need, 0, -1  # nothing within need, even for a bound of the pieces
        d = best[arg, 0]
        best[arg, 0] = math.inf  # the scratch's contract: inf between queries
        slot = arg
        if (which == CAPSULES and d > enough) or (which == OUTER and d > floor):
            break
    return d, 1, slot


@inline_kernel
def pair_distance_bound(hm, hw, sp, tmp, counts, j, need, floor):
    """(d, final) for self pair j, as `link_distance` for a link: bounding balls and
    capsules first (a capsule distance past `_enough` is taken as the bound), then the outer
    hulls, the pieces only where those come within floor. sp: `_sp`; tmp, counts: the
    scratch's."""
    P, brad, pairs, link_start, cap_p0, cap_p1, cap_params = sp[:7]
    a = pairs[j, 0]
    b = pairs[j, 1]
    best = need
    final = 0
    enough = _enough(need, floor)
    if _ball_gap(sp, a, b) > need:  # every piece pair's distance is at least this
        return need, 0
    for ia in range(np.int64(link_start[a]), np.int64(link_start[a + 1])):
        for ib in range(np.int64(link_start[b]), np.int64(link_start[b + 1])):
            dx = P[ia, 0, 3] - P[ib, 0, 3]
            dy = P[ia, 1, 3] - P[ib, 1, 3]
            dz = P[ia, 2, 3] - P[ib, 2, 3]
            rr = brad[ia] + brad[ib] + best
            if dx * dx + dy * dy + dz * dz > rr * rr:
                continue
            g = posed_capsule_gap(P, cap_p0, cap_p1, cap_params, ia, ib)
            if g > best:
                continue
            if g > enough:
                best = g
                final = 1
                continue
            counts[SELF_TESTS] += 1
            d = best
            for which in (AS_OUTER, AS_PIECES):
                if self_test(hm, hw, which, ia, ib, best, NO) == LOWER_BOUND:
                    d = math.inf
                    break
                d = tmp[0]
                if d > floor:
                    break
            if d <= best:
                best = d
                final = 1
    return best, final


@hot_kernel
def body_distance(hm, hw, b, need, floor, delta):
    """(d, final, slot) of body b (a link against the scene, or a self pair) in the
    configuration posed in the workspace: see `link_distance`."""
    robot, sc, buf = unpack(hm, hw)
    sc.counts[DIST_QUERIES] += 1
    nl = robot.body_link.shape[0]
    if b < nl:
        link = robot.body_link[b]
        return link_distance(
            hm, hw, _fr(sc, buf), sc.best, robot.link_start, link, need, floor, delta
        )
    d, final = pair_distance_bound(hm, hw, _sp(robot, buf), sc.tmp, sc.counts, b - nl, need, floor)
    return d, final, -1


# ---------------------------------------------------------------------------------------
# entry points for one configuration (from Python, through address tables)


@hot_kernel
def state_check(hm, hw, q, margin, self_collision, timed):
    """FREE or COLLISION for configuration q (dof,), or BAD_Q + code (see q_code). With
    `timed`, the call's time is added to the scratch's KERNEL_NS."""
    t0 = monotonic_ns() if timed else 0
    robot = robot_at(hm)
    code = q_code(robot.limited, robot.model.lower, robot.model.upper, q)
    if code == FREE:
        pose(hm, hw, q, NO)
        code = COLLISION if posed_collides(hm, hw, margin, self_collision, 0.0) else FREE
    if timed:
        _work_view(hw, ROW0)[0].counts[KERNEL_NS] += monotonic_ns() - t0
    return code


@hot_kernel
def state_distances(hm, hw, q, need, out):
    """Each body's distance at q under its cap need (n_bodies,): out (n_bodies, 3) rows
    (d, final, slot) as `body_distance` gives them with floor = need (so every d <= need
    is the pieces' own distance; final 0: the body is farther than need). Returns FREE, or
    BAD_Q + code."""
    robot = robot_at(hm)
    code = q_code(robot.limited, robot.model.lower, robot.model.upper, q)
    if code != FREE:
        return code
    pose(hm, hw, q, YES)
    for b in range(out.shape[0]):
        d, final, slot = body_distance(hm, hw, b, need[b], need[b], 0.0)
        out[b, 0] = d
        out[b, 1] = final
        out[b, 2] = slot
    return FREE


@parallel_kernel
def state_check_batch(hm, hws, Q, margin, self_collision, out):
    """`state_check` of every row of Q (m, dof) into out (m,) int64. hws (k, rows, 5): k
    workspace tables of the caller's own; the rows are cut into k chunks, chunk c checked
    with workspace c (not by thread id, which is unique only within one parallel region:
    two callers' thread 0 would share a workspace), the chunks spread over the threads."""
    m = Q.shape[0]
    k = hws.shape[0]
    for c in numba.prange(k):
        for r in range(c * m // k, (c + 1) * m // k):
            out[r] = state_check(hm, hws[c], Q[r], margin, self_collision, NO)
