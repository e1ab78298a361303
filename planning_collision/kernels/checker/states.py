"""The checker's state kernels: is a configuration free, and how far is each body from
collision; the entry points for one configuration (docs/architecture.md, "Checker";
kernels/checker/check_core.py says how the checker's kernels are cut and why).

The entry points' codes (kernels/base/codes.py): FREE, COLLISION, or BAD_Q + a code naming the
joint (`check_core.q_code`). The scratch's counters (kernels/scene/scratch.py) are re-exported
here for the checker's `stats`.
"""

import math

import numba
import numpy as np

from .._jit import hot_kernel, inline_kernel, parallel_kernel
from ..base.clock import monotonic_ns
from ..base.codes import (
    BAD_Q,  # noqa: F401  (the entry points' codes, for the checker)
    CAPSULES,
    COLLIDE,
    COLLISION,
    DISTANCE,
    FREE,
    NO,
    OUTER,
    OVERFLOW,
    PIECES,
    YES,
    ZERO,
)
from ..robot.self_tables import grid
from ..scene.scratch import (  # noqa: F401  (the checker's stats read them from here)
    BV_TESTS,
    DIST_QUERIES,
    EDGE_T0,
    EDGES,
    ENDPOINT_HITS,
    FRONT_BUILDS,
    FRONT_HITS,
    KERNEL_NS,
    PAIR_TESTS,
    SELF_TESTS,
    STATES,
)
from .check_core import pose, q_code, query, robot_at, scratch_at, unpack
from .fronts import front_arrays, set_ranges
from .self_pairs import pair_distance_bound, self_arrays, self_hit

# A bounding capsule's distance is taken as a body's bound when it gives at least this
# fraction of the coverage asked beyond the floor, or ENOUGH_BEYOND metres past it (`enough`).
# On long edges the coverage asked is metres; a Panda link's capsule lies 3-8 cm outside
# its hull at most, so GJK on the hull refines a far bound by little, at most of an edge's
# cost. Free RRTConnect edges on MBM scenes (1,064 replayed): 135 -> 101 us median with
# 0.05 m, 99 us with 0.02, 104 with 0.1; with 0 the windows shrink: 144 us.
GOOD_ENOUGH = 0.5
ENOUGH_BEYOND = 0.05


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
    pieces' radii: kernels/scene/traversal.py), else the piece is tested exactly, and the search
    resumes after it when it does not touch (the pieces before it are clear: each lies
    inside its outer hull). fr: `FrontArrays`; hit_flags: the scratch's `hit`."""
    set_ranges(hm, hw, fr, ZERO, n_pieces, margin, delta)
    out = fr.out
    i = ZERO
    hit = False
    while i < n_pieces and not hit:
        r = query(hm, hw, COLLIDE, OUTER, i, n_pieces, margin, YES)
        if r == 0:
            i = n_pieces
        elif r < 0:
            hit = True  # an overflow
        else:
            j = np.int64(out[0])
            _clear_hits(hit_flags)
            hit = out[1] != 0 or query(hm, hw, COLLIDE, PIECES, j, j + 1, margin, YES) != 0
            i = j + 1
        _clear_hits(hit_flags)
    return hit


@hot_kernel
def posed_collides(hm, hw, margin, self_collision, delta):
    """True when the configuration posed in buf collides (within margin): every piece
    against the scene (each from its own front; the outer hulls first: when they touch
    nothing, neither do the pieces, and only a piece whose hull touches is tested), then
    the self pairs (kernels/checker/self_pairs.py); returns at the first collision. A traversal
    overflow counts as a collision (what cannot be certified is not free). The scene goes
    first: the states the edge probes reject collide with it more often (self pairs first:
    colliding RRTConnect edges 10.7 -> 11.1 us median)."""
    robot, sc, buf = unpack(hm, hw)
    n_pieces = np.int64(robot.piece_link.shape[0])
    if _scene_hit(hm, hw, front_arrays(sc, buf), sc.hit, n_pieces, margin, delta):
        return True
    if not self_collision:
        return False
    tables = (robot.pt_start, grid(robot))
    return self_hit(hm, hw, self_arrays(robot, buf), tables, buf.q, sc.counts, margin)


# ---------------------------------------------------------------------------------------
# distances


@inline_kernel
def enough(need, floor):
    """The capsule distance taken as a body's bound (GOOD_ENOUGH, ENOUGH_BEYOND)."""
    return floor + min(GOOD_ENOUGH * (need - floor), ENOUGH_BEYOND)


@inline_kernel
def link_distance(hm, hw, fr, best, link_start, link, need, floor, delta):
    """(d, final, slot): a lower bound d on the distance from `link` to the scene.

    Cheap bounds first: the pieces' bounding capsules, then their outer hulls (both contain
    the pieces, so their distances are lower bounds), the pieces themselves only where the
    bounds come within `floor`. The capsules' bound is taken when it gives at least
    GOOD_ENOUGH of what the caller asked beyond floor, or ENOUGH_BEYOND (`enough`: a
    looser bound means more evaluations of the edge; a tighter one costs GJK on the hulls).
    Nothing within need: (need, 0, -1), d means "farther than need". Else the first bound
    taken, or the pieces' own distance (exact); final = 1: asking again with a larger need
    would not change d; slot: the nearest object. d <= floor only comes from the pieces
    themselves; an overlap gives some d <= 0; a traversal overflow -inf (a collision: what
    cannot be certified is not free). The capsules' poses must be current (`pose_capsules`).
    fr: `FrontArrays`; best: the scratch's; link_start: the robot's."""
    i0 = np.int64(link_start[link])
    i1 = np.int64(link_start[link + 1])
    set_ranges(hm, hw, fr, i0, i1, need, delta)
    bar = enough(need, floor)
    d = math.inf
    slot = -1
    for which in (CAPSULES, OUTER, PIECES):
        arg = query(hm, hw, DISTANCE, which, i0, i1, need, NO)
        if arg == OVERFLOW:
            return -math.inf, 1, -1
        if arg < 0:
            return need, 0, -1  # nothing within need, even for a bound of the pieces
        d = best[arg, 0]
        best[arg, 0] = math.inf  # the scratch's contract: inf between queries
        slot = arg
        if (which == CAPSULES and d > bar) or (which == OUTER and d > floor):
            break
    return d, 1, slot


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
            hm, hw, front_arrays(sc, buf), sc.best, robot.link_start, link, need, floor, delta
        )
    d, final = pair_distance_bound(
        hm, hw, self_arrays(robot, buf), sc.tmp, sc.counts, b - nl, need, floor,
        enough(need, floor),
    )  # fmt: skip
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
        scratch_at(hw).counts[KERNEL_NS] += monotonic_ns() - t0
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
