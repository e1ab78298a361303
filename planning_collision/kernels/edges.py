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
  nor than A_b(s) |t - s| + B_b |t - s|^2 / 2 (the local bound at s; kernels/motion_bounds.py),
  so b stays farther than padding from collision while both allow less than
  d_b - padding - eta/2: that window is cut from b's intervals. The
  edge is free when no body has an interval left; it collides when some d_b <= padding +
  eta (eta, the contact tolerance, makes the certificate conservative and the loop end).
  The end states come first, and their distances are kept in a small cache keyed by the
  configuration, so the edges a planner checks from one vertex reuse them. Before any
  distance, boolean checks at a few states (PROBES: the end, the middle, the quarters)
  reject most colliding edges for a few µs ("stop as soon as the answer is known", KCCD):
  a certified state costs ~30 body distances, a boolean one returns at its first contact.
- CA (conservative advancement, FCL): from t = 0, advance by the smallest window of all
  bodies until t >= 1 (free) or a body is within padding + eta (collision at toc = t).

Each method is its own entry point (`ENTRY_POINTS`), so a first call compiles only the
method it uses (kernels/checker.py says how the rest is cut and why). Every method gives
(status, last_valid_t, toc, n_queries): status FREE or COLLISION (or UNDECIDED when the
query budget ran out: treated as a collision by callers); last_valid_t: the edge is free
on [0, last_valid_t]; toc: the t where a collision was found (NaN when free): for CA the
first contact within eta, for DICHOTOMY and DISCRETE some colliding t, not necessarily
the first.
"""

import math

import numpy as np

from ._jit import hot_kernel, inline_kernel, with_python_twin
from .checker import (
    COLLISION,
    EDGE_T0,
    EDGES,
    ENDPOINT_HITS,
    FREE,
    KERNEL_NS,
    NO,
    YES,
    body_distance,
    pose,
    posed_collides,
    q_code,
    robot_at,
    unpack,
)
from .clock import monotonic_ns
from .motion_bounds import growth, rate, reach, window
from .self_tables import table_intervals

DISCRETE = 0
DICHOTOMY = 1
CA = 2

UNDECIDED = 2

# How far past contact (m) a body's distance is ever needed: a distance query must resolve
# every obstacle within its cap, so a cap of a metre (an end state's whole motion) costs
# more than the longer window it could prove saves; the interval is then covered over
# more states. On the motions RRTConnect checked solving 39 MBM problems (Panda), free
# edges took 53.5 us (mean, no cap), 48.2 (0.3 m), 47.6-48.2 (0.4), 47.2 (0.45), 48.9
# (0.6): flat around 0.3-0.6 m, with as many states (161,998 -> 160,899 at 0.4) and 13 %
# more, cheaper, queries.
NEED_CAP = 0.4

# DICHOTOMY's boolean probes, in order, before any distance: most edges a planner rejects
# collide at one of them (RRTConnect's on MotionBenchMaker scenes, 1,936 colliding edges:
# 245 at t = 1, 923 more at 0.5, 577 at 0.75, 37 at 0.25; 154 elsewhere), found for a
# boolean check each (~2 us) instead of the ~30 body distances a certified state costs.
PROBES = (1.0, 0.5, 0.75, 0.25)

# How far (m) a piece's front envelope reaches beyond its query when front lists are on
# (`front` > 0, CollisionChecker(front_lists=True)): the motion it is meant to cover, at
# most this (a farther reach lists more leaves than it saves box tests).
FRONT_REACH = 0.1

_FNV_OFFSET = -3750763034362895579  # 14695981039346656037 as int64
_FNV_PRIME = 1099511628211


# ---------------------------------------------------------------------------------------
# the endpoint cache: distances at configurations, keyed by the configuration's bits


def _python_q_hash(q):
    """`_q_hash` as plain Python (NUMBA_DISABLE_JIT): the same hash, wrapped to int64 by
    hand (Python integers grow instead)."""
    h = _FNV_OFFSET
    for b in q.view(np.int64):
        h = ((h ^ int(b)) * _FNV_PRIME + 2**63) % 2**64 - 2**63
    return h


@with_python_twin(_python_q_hash)
@hot_kernel
def _q_hash(q):
    """FNV-1a over the float64 bits of q (wrapping int64 arithmetic)."""
    h = _FNV_OFFSET
    bits = q.view(np.int64)
    for k in range(bits.shape[0]):
        h = (h ^ int(bits[k])) * _FNV_PRIME
    return h


# The helpers below take the few arrays they use, as small tuples (`_ec`, `_iv`), not the
# buffers: an inlined helper given the buffers (or the robot) copies all their arrays at
# every call site, which LLVM then spends seconds of a user's first call taking apart.


@inline_kernel
def _ec(buf):
    """The endpoint cache's arrays: (ec_key, ec_q, ec_d, ec_exact)."""
    return buf.ec_key, buf.ec_q, buf.ec_d, buf.ec_exact


@inline_kernel
def _cache_slot(ec, q):
    """(slot, hit): the cache slot of configuration q and whether it holds q."""
    h = _q_hash(q)
    C = ec[0].shape[0]
    slot = (h & 0x7FFFFFFFFFFFFFFF) % C
    if ec[0][slot] != h:
        return slot, False
    for k in range(q.shape[0]):
        if ec[1][slot, k] != q[k]:
            return slot, False
    return slot, True


@inline_kernel
def _cache_claim(ec, slot, q, nb):
    """Make `slot` hold q, with nothing known yet."""
    ec[0][slot] = _q_hash(q)
    for k in range(q.shape[0]):
        ec[1][slot, k] = q[k]
    for b in range(nb):
        ec[2][slot, b] = -math.inf
        ec[3][slot, b] = 0


# ---------------------------------------------------------------------------------------
# per-body uncovered intervals


@inline_kernel
def _iv(buf):
    """The uncovered intervals' arrays: (ilo, ihi, icount)."""
    return buf.ilo, buf.ihi, buf.icount


@inline_kernel
def _interval_at(iv, b, t):
    """Index of body b's uncovered interval containing t, or -1."""
    ilo, ihi, icount = iv
    for k in range(icount[b]):
        if ilo[b, k] <= t <= ihi[b, k]:
            return k
    return -1


@inline_kernel
def _cut(iv, b, lo, hi):
    """Remove [lo, hi] from body b's uncovered intervals. A window inside an interval splits
    it in two; when the list is full that window is dropped instead (nothing is certified
    that was not, and the caller then evaluates b at the ends of its intervals, which
    never splits)."""
    ilo, ihi, icount = iv
    k = 0
    while k < icount[b]:
        a = ilo[b, k]
        c = ihi[b, k]
        if c < lo or a > hi:
            k += 1
            continue
        if a >= lo and c <= hi:  # covered: remove (the last one takes its place)
            n = icount[b] - 1
            ilo[b, k] = ilo[b, n]
            ihi[b, k] = ihi[b, n]
            icount[b] = n
            continue
        if a >= lo:  # the left part is covered
            ilo[b, k] = hi
        elif c <= hi:  # the right part
            ihi[b, k] = lo
        else:  # the window lies inside: split
            n = icount[b]
            if n >= ilo.shape[1]:
                k += 1
                continue
            ilo[b, n] = hi
            ihi[b, n] = c
            ihi[b, k] = lo
            icount[b] = n + 1
        k += 1


@inline_kernel
def _largest(iv, nb):
    """(body, interval) of the largest uncovered interval, or (-1, -1) when none is left."""
    ilo, ihi, icount = iv
    best = -1.0
    bb = -1
    bk = -1
    for b in range(nb):
        for k in range(icount[b]):
            w = ihi[b, k] - ilo[b, k]
            if w > best:
                best = w
                bb = b
                bk = k
    return bb, bk


@inline_kernel
def _free_prefix(iv, nb):
    """The largest x with [0, x] certified for every body."""
    ilo, ihi, icount = iv
    x = 1.0
    for b in range(nb):
        for k in range(icount[b]):
            if ilo[b, k] < x:
                x = ilo[b, k]
    return x


@inline_kernel
def _set_q(q, q0, q1, t):
    """q = the configuration at t; exactly q0 at t = 0 and q1 at t = 1 (the endpoint
    cache is keyed by them, and they are the planner's states)."""
    for k in range(q0.shape[0]):
        if t == 1.0:
            q[k] = q1[k]
        else:
            q[k] = q0[k] + t * (q1[k] - q0[k])


# ---------------------------------------------------------------------------------------
# evaluating the bodies at one t


@inline_kernel
def _terms(robot, buf):
    """What `_rate` reads: the robot's local-bound terms and the posed links."""
    return (
        robot.term_start, robot.term, robot.term_w, robot.sphere_c, robot.sphere_r,
        robot.model.axis, buf.link_poses, buf.dqa[0], buf.dqa[1],
    )  # fmt: skip


@inline_kernel
def _rate(tm, b):
    """Body b's local motion rates (A, S) at the posed configuration
    (kernels/motion_bounds.py); tm: `_terms`."""
    return rate(tm[0], tm[1], tm[2], tm[3], tm[4], tm[5], tm[6], tm[7], tm[8], b)


@inline_kernel
def _window(buf, b, A, delta):
    """Body b's window for clearance delta (motion_bounds.window); A: `_rate`'s pair."""
    return window(buf.mu[b], A[0], buf.growth[b, 0], A[1], buf.growth[b, 1], delta)


@inline_kernel
def _bound_body(hm, hw, counts, mu, growth, ec, b, t, lo, hi, slot, pad, eta, use_cache, front, A):
    """(d, exact, queried): body b's distance bound at the posed t, capped at what covers
    its interval [lo, hi] around t, and at most NEED_CAP past contact (A: its local rates
    there, `_rate`; mu, growth: the edge's motion bounds); through the endpoint cache
    (`_ec`) when slot >= 0."""
    h = max(t - lo, hi - t)
    move = min(reach(mu[b], A[0], growth[b, 0], A[1], growth[b, 1], h), NEED_CAP)
    need = pad + eta + move
    if slot >= 0 and (ec[3][slot, b] == 1 or ec[2][slot, b] >= need):
        counts[ENDPOINT_HITS] += 1
        return ec[2][slot, b], ec[3][slot, b], 0
    delta = min(move, front) if use_cache else 0.0
    d, exact, _ = body_distance(hm, hw, b, need, pad + eta, delta)
    if slot >= 0:
        ec[2][slot, b] = d
        ec[3][slot, b] = exact
    return d, exact, 1


@inline_kernel
def _pose_at(hm, hw, q, ec, q0, q1, t, use_cache, nb, endpoints, capsules):
    """Pose the configuration at t (pieces, and with `capsules` the bounding capsules'
    poses, which only distances use); returns its endpoint-cache slot (-1 when t is not an
    end of the edge, `endpoints` says it may be, or caching is off) and whether the cache
    held it. q: the buffers' q (set here); ec: `_ec`."""
    _set_q(q, q0, q1, t)
    pose(hm, hw, q, capsules)
    if not (use_cache and endpoints and (t == 0.0 or t == 1.0)):
        return -1, False
    slot, hit = _cache_slot(ec, q)
    if not hit:
        _cache_claim(ec, slot, q, nb)
    return slot, hit


@inline_kernel
def _motion_bounds(robot, buf, q0, q1):
    """buf.mu = R |q1 - q0|, buf.dqa = (|q1 - q0|, q1 - q0) and buf.growth the local
    bounds' (B, alpha) (kernels/motion_bounds.py); returns the largest mu."""
    R = robot.R
    dqa = buf.dqa[0]
    for k in range(R.shape[1]):
        buf.dqa[1, k] = q1[k] - q0[k]
        dqa[k] = abs(q1[k] - q0[k])
    top = 0.0
    for b in range(R.shape[0]):
        s = 0.0
        for k in range(R.shape[1]):
            s += R[b, k] * dqa[k]
        buf.mu[b] = s
        B, alpha = growth(robot.term_start, robot.term, robot.term_w, dqa, b)
        buf.growth[b, 0] = B
        buf.growth[b, 1] = alpha
        top = max(top, s)
    return top


@inline_kernel
def _same(q0, q1):
    """q0 == q1 (an edge that does not move)."""
    for k in range(q0.shape[0]):
        if q0[k] != q1[k]:
            return False
    return True


@inline_kernel
def _finish(sc, out, status, last_valid_t, toc, n_queries):
    """An entry point's result into out[0:4], its time since `_edge_start` into the
    scratch's KERNEL_NS; returns FREE (the arguments were good)."""
    sc.counts[KERNEL_NS] += monotonic_ns() - sc.counts[EDGE_T0]
    out[0] = status
    out[1] = last_valid_t
    out[2] = toc
    out[3] = n_queries
    return FREE


@inline_kernel
def _edge_start(hm, hw, q0, q1):
    """What every entry point starts with: FREE, or BAD_Q + code for a bad q0 (code) or q1
    (code + 2 * dof + 2). Counts the edge and starts its clock (`_finish` reads it)."""
    robot, sc, _ = unpack(hm, hw)
    sc.counts[EDGE_T0] = monotonic_ns()
    c = q_code(robot.limited, robot.model.lower, robot.model.upper, q0)
    if c != FREE:
        return c
    c = q_code(robot.limited, robot.model.lower, robot.model.upper, q1)
    if c != FREE:
        return c + 2 * robot.limited.shape[0] + 2
    sc.counts[EDGES] += 1
    return FREE


@inline_kernel
def _still(hm, hw, q1, pad, out):
    """An edge along which nothing moves: the state check of its end."""
    robot, sc, _ = unpack(hm, hw)
    pose(hm, hw, q1, NO)
    if posed_collides(hm, hw, pad, robot.pairs.shape[0] > 0, 0.0):
        return _finish(sc, out, COLLISION, 0.0, 0.0, 1)
    return _finish(sc, out, FREE, 1.0, math.nan, 1)


# ---------------------------------------------------------------------------------------
# the methods, each its own entry point with the same arguments, so that a first call
# compiles only the method it uses (one entry point over all three compiled all three, and
# re-optimised them in a dispatcher above: ~8 s of a user's first check_edge):
# (hm, hw, q0, q1, pad, eta, n_steps, check_start, use_cache, front, budget, first, out).
# out[0:4] = (status, last_valid_t, toc, n_queries); use_cache: the endpoint cache (and GJK
# warm starts); front: how far front lists reach (0: none; at most FRONT_REACH); n_steps:
# DISCRETE's states; first: DISCRETE looks for the first colliding state (else any). Each
# returns FREE, or BAD_Q + code (`_edge_start`).


@hot_kernel
def dichotomy(hm, hw, q0, q1, pad, eta, n_steps, check_start, use_cache, front, budget, first, out):
    """The DICHOTOMY method (module doc): boolean checks at the start (check_start) and at
    PROBES (a collision there ends the check), then the end state, the start, and the
    midpoint of the largest uncovered interval of any body until none is left or a body is
    in contact."""
    c = _edge_start(hm, hw, q0, q1)
    if c != FREE:
        return c
    robot, sc, buf = unpack(hm, hw)
    if _same(q0, q1):
        return _still(hm, hw, q1, pad, out)
    nb = robot.R.shape[0]
    self_collision = robot.pairs.shape[0] > 0
    ec, iv, tm = _ec(buf), _iv(buf), _terms(robot, buf)
    nq = 0
    for p in range(-1, len(PROBES)):
        if p < 0 and not check_start:
            continue
        t = 0.0 if p < 0 else PROBES[p]  # a colliding start first, when it is checked
        nq += 1
        slot, hit = _pose_at(hm, hw, buf.q, ec, q0, q1, t, use_cache, nb, t == 0.0 or t == 1.0, NO)
        if hit:  # an end state seen before: free, or known to collide (marked below)
            if not (buf.ec_exact[slot, 0] == 1 and buf.ec_d[slot, 0] == -math.inf):
                continue
        elif not posed_collides(hm, hw, pad + eta, self_collision, 0.0):
            continue
        if slot >= 0:  # an end state collides: the endpoint cache remembers it
            for b in range(nb):
                buf.ec_d[slot, b] = -math.inf
                buf.ec_exact[slot, b] = 1
        return _finish(sc, out, COLLISION, 0.0, t, nq)
    # the motion bounds only now: most edges a planner rejects end at a probe
    if _motion_bounds(robot, buf, q0, q1) == 0.0:  # no body moves: the state check of q1
        return _still(hm, hw, q1, pad, out)
    for b in range(nb):
        buf.ilo[b, 0] = 0.0
        buf.ihi[b, 0] = 1.0
        buf.icount[b] = 1
    nl = robot.body_link.shape[0]
    for j in range(robot.pairs.shape[0]):  # self pairs with a table: only where it is close
        table_intervals(robot, buf, nl + j, j, q0, q1, pad + eta)
    step = 0
    while True:
        if step == 0:
            t = 1.0  # the end state first: RRT-family planners validate it only here
        elif step == 1:
            t = 0.0
        else:
            bb, kk = _largest(iv, nb)
            if bb < 0:
                return _finish(sc, out, FREE, 1.0, math.nan, nq)
            if nq >= budget:
                return _finish(sc, out, UNDECIDED, _free_prefix(iv, nb), math.nan, nq)
            # the midpoint (bisection order: an obstacle in the middle is found first); when
            # b's interval list is nearly full (a body grazing an obstacle along the motion),
            # the interval's start, whose window only shortens it
            if buf.icount[bb] < buf.ilo.shape[1] - 1:
                t = 0.5 * (buf.ilo[bb, kk] + buf.ihi[bb, kk])
            else:
                t = buf.ilo[bb, kk]
        step += 1
        slot, _ = _pose_at(hm, hw, buf.q, ec, q0, q1, t, use_cache, nb, step <= 2, YES)
        collided = False
        for b in range(nb):
            k = _interval_at(iv, b, t)
            if k < 0:
                continue
            A = _rate(tm, b)
            d, exact, queried = _bound_body(
                hm, hw, sc.counts, buf.mu, buf.growth, ec, b, t, buf.ilo[b, k], buf.ihi[b, k],
                slot, pad, eta, use_cache, front, A,
            )  # fmt: skip
            nq += queried
            buf.d[b] = d
            buf.exact[b] = exact
            # a lower bound (exact 0) means "farther than need", and need > pad + eta
            if exact == 1 and d <= pad + eta:
                collided = True
                if t != 0.0 or check_start:
                    break  # the answer is known: the other bodies need not be evaluated
                continue
            r = _window(buf, b, A, d - pad - 0.5 * eta)
            _cut(iv, b, t - r, t + r)
        if collided and (t != 0.0 or check_start):
            if t == 0.0:
                return _finish(sc, out, COLLISION, 0.0, 0.0, nq)
            return _finish(sc, out, COLLISION, _free_prefix(iv, nb), t, nq)


@hot_kernel
def advance(hm, hw, q0, q1, pad, eta, n_steps, check_start, use_cache, front, budget, first, out):
    """Conservative advancement, per body: body b is certified free on [0, t_b]; the
    configuration at t = min_b t_b is evaluated for the bodies whose t_b is t (the others
    are certified past it), each advancing by its own window. The first t where a body is
    within pad + eta is the first contact (every body was certified free before it)."""
    c = _edge_start(hm, hw, q0, q1)
    if c != FREE:
        return c
    robot, sc, buf = unpack(hm, hw)
    if _motion_bounds(robot, buf, q0, q1) == 0.0:
        return _still(hm, hw, q1, pad, out)
    nb = robot.R.shape[0]
    ec, tm = _ec(buf), _terms(robot, buf)
    frontier = buf.ilo[:, 0]  # t_b, certified [0, t_b]
    for b in range(nb):
        frontier[b] = 0.0
        buf.icount[b] = 0
    t = 0.0
    last = 0.0
    nq = 0
    while True:
        slot, _ = _pose_at(hm, hw, buf.q, ec, q0, q1, t, use_cache, nb, t == 0.0, YES)
        for b in range(nb):
            if frontier[b] > t:
                continue
            A = _rate(tm, b)
            d, exact, queried = _bound_body(
                hm, hw, sc.counts, buf.mu, buf.growth, ec, b, t, t, 1.0, slot, pad, eta,
                use_cache, front, A,
            )  # fmt: skip
            nq += queried
            if exact == 1 and d <= pad + eta:
                if t > 0.0 or check_start:
                    return _finish(sc, out, COLLISION, last, t, nq)
                # a colliding start cannot be advanced from
                return _finish(sc, out, COLLISION, 0.0, 0.0, nq)
            frontier[b] = t + _window(buf, b, A, d - pad - 0.5 * eta)
        last = t
        t = 1.0
        for b in range(nb):
            t = min(t, frontier[b])
        if t >= 1.0 or last >= 1.0:
            return _finish(sc, out, FREE, 1.0, math.nan, nq)
        if nq >= budget:
            return _finish(sc, out, UNDECIDED, last, math.nan, nq)


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
def discrete(hm, hw, q0, q1, pad, eta, n_steps, check_start, use_cache, front, budget, first, out):
    """States t = j / n: the end state, the start (check_start), then j = 1 .. n-1 in
    OMPL's bisection order (the queue holds n / 2 ranges at most: n <= 2 * len(buf.queue),
    which the caller ensures). On a collision with `first`, last_valid_t and toc come from
    the states in order up to it (the first colliding one); without, from the one found."""
    c = _edge_start(hm, hw, q0, q1)
    if c != FREE:
        return c
    n = n_steps
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
        _set_q(buf.q, q0, q1, j / n)
        pose(hm, hw, buf.q, NO)
        if posed_collides(hm, hw, pad, self_collision, 0.0):
            found = j
            break
    if found < 0:
        return _finish(sc, out, FREE, 1.0, math.nan, checked)
    if found == 0:
        return _finish(sc, out, COLLISION, 0.0, 0.0, checked)
    if first:
        # the states before it, in order: the first colliding one
        for j in range(1, found + 1):
            checked += 1
            _set_q(buf.q, q0, q1, j / n)
            pose(hm, hw, buf.q, NO)
            if j == found or posed_collides(hm, hw, pad, self_collision, 0.0):
                return _finish(sc, out, COLLISION, (j - 1) / n, j / n, checked)
    return _finish(sc, out, COLLISION, (found - 1) / n, found / n, checked)


ENTRY_POINTS = {DISCRETE: discrete, DICHOTOMY: dichotomy, CA: advance}
