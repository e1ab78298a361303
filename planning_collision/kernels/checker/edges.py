"""Edge checks: is the straight joint-space motion q0 -> q1 free (docs/architecture.md,
"Checker"). One compiled call per edge, three methods:

- DISCRETE: states at a fixed spacing, the end state first, then in bisection order (OMPL's
  DiscreteMotionValidator order). Not certified: an obstacle thinner than the spacing can
  slip between two states.
- DICHOTOMY (certified; KCD's distance-based path checking, HPP's "dichotomy"): each body b
  (a collision link against the scene, or a self pair) keeps the sub-intervals of [0, 1]
  not yet certified for it. The midpoint s of the largest one is evaluated: every body with
  an uncovered interval around s gets a distance lower bound d_b(s), capped at what would
  cover that interval. Along the edge no point of body b moves farther than mu_b |t - s|,
  nor than A_b(s) |t - s| + B_b |t - s|^2 / 2 (the local bound at s;
  kernels/robot/motion_bounds.py), so b stays farther than margin from collision while both
  allow less than d_b - margin - eta/2: that window is cut from b's intervals. The edge is
  free when no body has an interval left; it collides when some d_b <= margin +
  eta (eta, the contact tolerance, makes the certificate conservative and the loop end).
  The end states come first, and their distances are kept in a small cache keyed by the
  configuration, so the edges a planner checks from one vertex reuse them. Before any
  distance, boolean checks at a few states (PROBES: the end, the middle, the quarters)
  reject most colliding edges for a few µs ("stop as soon as the answer is known", KCCD):
  a certified state costs ~30 body distances, a boolean one returns at its first contact.
  An edge from a cached end state clear enough to certify PROBE_SKIP of it skips them:
  such edges are mostly free, and a free edge gains nothing from its probes.
- CA (conservative advancement, FCL): from t = 0, advance by the smallest window of all
  bodies until t >= 1 (free) or a body is within margin + eta (collision at toc = t).

Each method is its own entry point (`ENTRY_POINTS`), so a first call compiles only the
method it uses (kernels/checker/check_core.py says how the rest is cut and why). Each takes
``(hm, hw, q0, q1, request, out)``: the model's and the workspace's address tables, the
edge's ends, its settings as one `EdgeRequest` record (`edge_request` builds it) and out
(4,); it returns FREE, or BAD_Q + code for a bad q0 or q1 (`edge_state.edge_start`), and
kernels/checker/edge_state.py holds what they share (the edge's state). Every method gives
out[0:4] = (status, last_valid_t, toc, n_queries): status FREE or COLLISION (or UNDECIDED
when the query budget ran out: treated as a collision by callers); last_valid_t: the edge is free
on [0, last_valid_t]; toc: the t where a collision was found (NaN when free): for CA the
first contact within eta, for DICHOTOMY and DISCRETE some colliding t, not necessarily
the first.
"""

import math
from collections import namedtuple

import numpy as np

from .._jit import hot_kernel, inline_kernel
from ..base.codes import CA, COLLISION, DICHOTOMY, DISCRETE, FREE, NO, UNDECIDED, YES
from ..robot.self_tables import table_intervals
from .check_core import pose, robot_at, unpack
from .edge_state import (
    body_rate,
    body_window,
    bound_body,
    cache_collision,
    cache_slot,
    cut,
    edge_motion_bounds,
    edge_start,
    endpoint_cache,
    finish,
    free_prefix,
    interval_at,
    intervals,
    largest,
    pose_at,
    rate_terms,
    same,
    set_q,
    still,
)
from .states import posed_collides

# An edge check's settings, one record (coal's DistanceRequest): what every method reads of
# it, whichever it is. The entry points take it as a float64 array (`edge_request`), read
# back by `read_request`: passing an array costs less than passing the record (numba types
# a tuple argument in Python: 1.5 us a call) or eight scalars (0.6 us; an array 0.36 us).
EdgeRequest = namedtuple(
    "EdgeRequest",
    [
        "margin",  # m, the checker's padding: this close to an obstacle or partner collides
        "eta",  # m: the contact tolerance of the certified methods
        "n_steps",  # DISCRETE: the edge's states are t = j / n_steps
        "check_start",  # also check q0 (else the planner knows it is valid)
        "use_cache",  # the endpoint cache and GJK warm starts
        "front",  # m: how far front lists reach (0: none; at most FRONT_REACH)
        "budget",  # distance queries a certified method may make before UNDECIDED
        "first",  # DISCRETE: find the first colliding state (else any)
    ],
)


N_STEPS = EdgeRequest._fields.index("n_steps")  # the field a discrete edge sets for itself


def edge_request(**settings) -> np.ndarray:
    """The float64 array of an `EdgeRequest` given by keywords (all of its fields)."""
    return np.array(EdgeRequest(**settings), dtype=np.float64)


@inline_kernel
def read_request(a):
    """The `EdgeRequest` of its array `a` (`edge_request`)."""
    return EdgeRequest(
        margin=a[0], eta=a[1], n_steps=np.int64(a[2]), check_start=a[3] != 0.0,
        use_cache=a[4] != 0.0, front=a[5], budget=np.int64(a[6]), first=a[7] != 0.0,
    )  # fmt: skip


# DICHOTOMY's boolean probes, in order, before any distance: most edges a planner rejects
# collide at one of them (RRTConnect's on MotionBenchMaker scenes, 1,936 colliding edges:
# 245 at t = 1, 923 more at 0.5, 577 at 0.75, 37 at 0.25; 154 elsewhere), found for a
# boolean check each (~2 us) instead of the ~30 body distances a certified state costs.
# A free edge pays for them (~15 % of its time): on 4,000 recorded RRTConnect edges of 5
# MBM scenes (means per edge, free / colliding, every edge probed) these four cost
# 38.6-39.5 / 9.8-10.1 us, (1.0, 0.5) 35.0 / 13.8, (0.5,) 32.5-33.4 / 14.2-14.5 (the end
# state then by distance): totals within 5 %, planners' solves the same within their noise.
PROBES = (1.0, 0.5, 0.75, 0.25)

# Unless a cached end state certifies this much of the edge for every moving link by the
# global motion bound (`_clear_ends`): such an edge is mostly free (on those 4,000 edges,
# with exact distances at the ends, 81 % of the free ones clear 0.1 and 28 % of the
# colliding ones), and it goes to distances at once. Replayed in the planner's order (the
# cache holding what it held then; best of 5 per edge, 3 alternations): all edges 93.0-95.8
# ms against 100.3-110.3, free ones 32.4-33.5 us against 35.9-39.5, colliding 8.9-9.1
# against 8.1-8.9; RRTConnect's solves on the 4 MBM sets (10 problems, best of 4 each, 3
# alternations) 322-327 ms against 337-354, every set faster. 0.05 to 0.2 measure the same.
# Only the work changes: a skipped probe's state is certified or found colliding by the
# distances like any other.
PROBE_SKIP = 0.1

# How far (m) a piece's front envelope reaches beyond its query when front lists are on
# (`front` > 0, CollisionChecker(front_lists=True)): the motion it is meant to cover, at
# most this (a farther reach lists more leaves than it saves box tests).
FRONT_REACH = 0.1


@inline_kernel
def _probe(hm, hw, q0, q1, req, nb):
    """DICHOTOMY's boolean checks: the start (when checked), then PROBES. Returns (the
    first t found colliding or -1.0, states checked). An end state the endpoint cache holds
    is known free, or known to collide (marked so here when found)."""
    _, _, buf = unpack(hm, hw)
    ec = endpoint_cache(buf)
    self_collision = robot_at(hm).pairs.shape[0] > 0
    nq = 0
    for p in range(-1, len(PROBES)):
        if p < 0 and not req.check_start:
            continue
        t = 0.0 if p < 0 else PROBES[p]  # a colliding start first, when it is checked
        nq += 1
        end = t == 0.0 or t == 1.0
        slot, hit = pose_at(hm, hw, buf.q, ec, q0, q1, t, req.use_cache, nb, end, NO)
        if hit:
            if not (ec.exact[slot, 0] == 1 and ec.d[slot, 0] == -math.inf):
                continue
        elif not posed_collides(hm, hw, req.margin + req.eta, self_collision, 0.0):
            continue
        if slot >= 0:  # an end state collides: the endpoint cache remembers it
            cache_collision(ec, slot, nb)
        return t, nq
    return -1.0, nq


@inline_kernel
def _clear_ends(buf, q0, q1, nl, req):
    """How much of the edge the endpoint cache's link distances at q0 or at q1 certify
    for every moving collision link by the global bound (buf.mu, `edge_motion_bounds`):
    the larger of the two, 0 when neither is cached. A link the cache has no distance for
    (-inf, not exact: a window from the other end of an earlier edge covered it there) is
    passed over; a colliding end (-inf, exact) gives 0. A guess at whether the edge is
    free, not a certificate: the caller only decides on it whether to probe first."""
    ec = endpoint_cache(buf)
    best = 0.0
    for e in range(2):
        slot, hit = cache_slot(ec, q0 if e == 0 else q1)
        if not hit:
            continue
        x = math.inf
        known = 0
        for b in range(nl):
            d = ec.d[slot, b]
            if buf.mu[b] == 0.0 or (d == -math.inf and ec.exact[slot, b] == 0):
                continue
            known += 1
            x = min(x, (d - req.margin - 0.5 * req.eta) / buf.mu[b])
        if known > 0:
            best = max(best, x)
    return best


@inline_kernel
def _next_t(buf, iv, nb, step):
    """DICHOTOMY's next state: the end, the start, then the midpoint of the largest
    uncovered interval of any body (bisection order: an obstacle in the middle is found
    first); when that body's interval list is nearly full (it grazes an obstacle along the
    motion), the interval's start, whose window only shortens it. -1.0: none is left.
    Tiling an interval instead (its start plus the body's last window) evaluated as many
    states on recorded RRTConnect edges (11.9 a free edge): windows change too fast along
    an edge for the last one to place the next, and a midpoint serves several bodies."""
    if step == 0:
        return 1.0  # the end state first: RRT-family planners validate it only here
    if step == 1:
        return 0.0
    bb, kk = largest(iv, nb)
    if bb < 0:
        return -1.0
    if buf.icount[bb] < buf.ilo.shape[1] - 1:
        return 0.5 * (buf.ilo[bb, kk] + buf.ihi[bb, kk])
    return buf.ilo[bb, kk]


@hot_kernel
def dichotomy(hm, hw, q0, q1, request, out):
    """The DICHOTOMY method (module doc): boolean checks at the start (check_start) and at
    PROBES (a collision there ends the check) unless a cached end clears PROBE_SKIP of
    the edge, then the end state, the start, and the midpoint of the largest uncovered
    interval of any body until none is left or a body is in contact."""
    c = edge_start(hm, hw, q0, q1)
    if c != FREE:
        return c
    req = read_request(request)
    robot, sc, buf = unpack(hm, hw)
    if same(q0, q1):
        return still(hm, hw, q1, req.margin, out)
    nb = robot.R.shape[0]
    nl = robot.body_link.shape[0]
    moves = edge_motion_bounds(robot, buf, q0, q1) > 0.0
    t, nq = -1.0, 0
    skip = req.use_cache and not req.check_start and moves
    if not (skip and _clear_ends(buf, q0, q1, nl, req) >= PROBE_SKIP):
        t, nq = _probe(hm, hw, q0, q1, req, nb)
    if t >= 0.0:
        return finish(sc, out, COLLISION, 0.0, t, nq)
    if not moves:  # no body moves: q1's state check
        return still(hm, hw, q1, req.margin, out)
    ec, iv, tm = endpoint_cache(buf), intervals(buf), rate_terms(robot, buf)
    contact = req.margin + req.eta
    for b in range(nb):
        buf.ilo[b, 0] = 0.0
        buf.ihi[b, 0] = 1.0
        buf.icount[b] = 1
    for j in range(robot.pairs.shape[0]):  # self pairs with a table: only where it is close
        table_intervals(robot, buf, nl + j, j, q0, q1, contact)
    step = 0
    while True:
        t = _next_t(buf, iv, nb, step)
        if t < 0.0:
            return finish(sc, out, FREE, 1.0, math.nan, nq)
        if step >= 2 and nq >= req.budget:
            return finish(sc, out, UNDECIDED, free_prefix(iv, nb), math.nan, nq)
        step += 1
        slot, _ = pose_at(hm, hw, buf.q, ec, q0, q1, t, req.use_cache, nb, step <= 2, YES)
        collided = False
        for b in range(nb):
            k = interval_at(iv, b, t)
            if k < 0:
                continue
            A = body_rate(tm, b)
            d, exact, queried = bound_body(
                hm, hw, sc.counts, buf.mu, buf.growth, ec, b, t, buf.ilo[b, k], buf.ihi[b, k],
                slot, req, A,
            )  # fmt: skip
            nq += queried
            buf.d[b] = d
            buf.exact[b] = exact
            # a lower bound (exact 0) means "farther than need", and need > margin + eta
            if exact == 1 and d <= contact:
                collided = True
                if t != 0.0 or req.check_start:
                    break  # the answer is known: the other bodies need not be evaluated
                continue
            r = body_window(buf, b, A, d - req.margin - 0.5 * req.eta)
            cut(iv, b, t - r, t + r)
        if collided and (t != 0.0 or req.check_start):
            if t == 0.0:
                return finish(sc, out, COLLISION, 0.0, 0.0, nq)
            return finish(sc, out, COLLISION, free_prefix(iv, nb), t, nq)


@hot_kernel
def advance(hm, hw, q0, q1, request, out):
    """Conservative advancement, per body: body b is certified free on [0, t_b]; the
    configuration at t = min_b t_b is evaluated for the bodies whose t_b is t (the others
    are certified past it), each advancing by its own window. The first t where a body is
    within margin + eta is the first contact (every body was certified free before it)."""
    c = edge_start(hm, hw, q0, q1)
    if c != FREE:
        return c
    req = read_request(request)
    robot, sc, buf = unpack(hm, hw)
    if edge_motion_bounds(robot, buf, q0, q1) == 0.0:
        return still(hm, hw, q1, req.margin, out)
    nb = robot.R.shape[0]
    ec, tm = endpoint_cache(buf), rate_terms(robot, buf)
    frontier = buf.ilo[:, 0]  # t_b, certified [0, t_b]
    for b in range(nb):
        frontier[b] = 0.0
        buf.icount[b] = 0
    t = 0.0
    last = 0.0
    nq = 0
    while True:
        slot, _ = pose_at(hm, hw, buf.q, ec, q0, q1, t, req.use_cache, nb, t == 0.0, YES)
        for b in range(nb):
            if frontier[b] > t:
                continue
            A = body_rate(tm, b)
            d, exact, queried = bound_body(
                hm, hw, sc.counts, buf.mu, buf.growth, ec, b, t, t, 1.0, slot, req, A
            )
            nq += queried
            if exact == 1 and d <= req.margin + req.eta:
                if t > 0.0 or req.check_start:
                    return finish(sc, out, COLLISION, last, t, nq)
                # a colliding start cannot be advanced from
                return finish(sc, out, COLLISION, 0.0, 0.0, nq)
            frontier[b] = t + body_window(buf, b, A, d - req.margin - 0.5 * req.eta)
        last = t
        t = 1.0
        for b in range(nb):
            t = min(t, frontier[b])
        if t >= 1.0 or last >= 1.0:
            return finish(sc, out, FREE, 1.0, math.nan, nq)
        if nq >= req.budget:
            return finish(sc, out, UNDECIDED, last, math.nan, nq)


@inline_kernel
def _pop_state(Q, n, check_start, step, head, size):
    """The discrete method's next state index and queue (head, size): step 0 the end state
    (index n), step 1 the start (0, when checked), then OMPL's bisection order over 1..n-1
    from the FIFO of index ranges in Q (the buffers' queue). Returns (index or -1 when done,
    head, size)."""
    cap = Q.shape[0]
    if step == 0:
        if n >= 2:
            Q[0, 0] = 1
            Q[0, 1] = n - 1
            size = 1
        return n, head, size
    if step == 1 and check_start:
        return 0, head, size
    if size == 0:
        return -1, head, size
    a = Q[head, 0]
    c = Q[head, 1]
    head = (head + 1) % cap
    size -= 1
    mid = (a + c) // 2
    for side in range(2):
        lo = a if side == 0 else mid + 1
        hi = mid - 1 if side == 0 else c
        if lo <= hi and size < cap:  # never full for n <= 2 cap (see `discrete`)
            tail = (head + size) % cap
            Q[tail, 0] = lo
            Q[tail, 1] = hi
            size += 1
    return mid, head, size


@hot_kernel
def discrete(hm, hw, q0, q1, request, out):
    """States t = j / n: the end state, the start (check_start), then j = 1 .. n-1 in
    OMPL's bisection order (the queue holds n / 2 ranges at most: n <= 2 * len(buf.queue),
    which the caller ensures). On a collision with `first`, last_valid_t and toc come from
    the states in order up to it (the first colliding one); without, from the one found."""
    c = edge_start(hm, hw, q0, q1)
    if c != FREE:
        return c
    req = read_request(request)
    n = req.n_steps
    check_start = req.check_start
    margin = req.margin
    self_collision = robot_at(hm).pairs.shape[0] > 0
    _, sc, buf = unpack(hm, hw)
    head = 0
    size = 0
    step = 0
    checked = 0
    found = -1
    while True:
        j, head, size = _pop_state(buf.queue, n, check_start, step, head, size)
        step += 1
        if j < 0:
            break
        checked += 1
        set_q(buf.q, q0, q1, j / n)
        pose(hm, hw, buf.q, NO)
        if posed_collides(hm, hw, margin, self_collision, 0.0):
            found = j
            break
    if found < 0:
        return finish(sc, out, FREE, 1.0, math.nan, checked)
    if found == 0:
        return finish(sc, out, COLLISION, 0.0, 0.0, checked)
    if req.first:
        # the states before it, in order: the first colliding one
        for j in range(1, found + 1):
            checked += 1
            set_q(buf.q, q0, q1, j / n)
            pose(hm, hw, buf.q, NO)
            if j == found or posed_collides(hm, hw, margin, self_collision, 0.0):
                return finish(sc, out, COLLISION, (j - 1) / n, j / n, checked)
    return finish(sc, out, COLLISION, (found - 1) / n, found / n, checked)


ENTRY_POINTS = {DISCRETE: discrete, DICHOTOMY: dichotomy, CA: advance}
