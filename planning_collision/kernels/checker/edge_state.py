"""An edge check's state (kernels/checker/edges.py): the endpoint cache, each body's uncovered
intervals of [0, 1], the edge's motion bounds and the bodies' windows, and the glue every
edge method starts and ends with. The methods themselves are in kernels/checker/edges.py."""

import math
from collections import namedtuple

import numpy as np

from .._jit import hot_kernel, inline_kernel, with_python_twin
from ..base.clock import monotonic_ns
from ..base.codes import COLLISION, FREE, NO
from ..robot.motion_bounds import growth, rate, reach, window
from ..scene.scratch import EDGE_T0, EDGES, ENDPOINT_HITS, KERNEL_NS
from .check_core import pose, q_code, unpack
from .states import body_distance, posed_collides

# How far past contact (m) a body's distance is ever needed: a distance query must resolve
# every obstacle within its cap, so a cap of a metre (an end state's whole motion) costs
# more than the longer window it could prove saves; the interval is then covered over
# more states. On the motions RRTConnect checked solving 39 MBM problems (Panda), free
# edges took 53.5 us (mean, no cap), 48.2 (0.3 m), 47.6-48.2 (0.4), 47.2 (0.45), 48.9
# (0.6): flat around 0.3-0.6 m, with as many states (161,998 -> 160,899 at 0.4) and 13 %
# more, cheaper, queries.
NEED_CAP = 0.4

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


# The helpers below take the few arrays they use, as small named tuples (`EndpointCache`,
# `Intervals`, `RateTerms`), not the buffers: an inlined helper given the buffers (or the
# robot) copies all their arrays at every call site, which LLVM then spends seconds of a
# user's first call taking apart.

# The buffers' endpoint cache: per slot, a configuration's hash (key) and the
# configuration (q), its bodies' distance bounds (d) and whether each is exact (exact)
EndpointCache = namedtuple("EndpointCache", ["key", "q", "d", "exact"])


@inline_kernel
def endpoint_cache(buf):
    """The buffers' `EndpointCache`."""
    return EndpointCache(key=buf.ec_key, q=buf.ec_q, d=buf.ec_d, exact=buf.ec_exact)


@inline_kernel
def cache_slot(ec, q):
    """(slot, hit): the cache slot of configuration q and whether it holds q."""
    h = _q_hash(q)
    C = ec.key.shape[0]
    slot = (h & 0x7FFFFFFFFFFFFFFF) % C
    if ec.key[slot] != h:
        return slot, False
    for k in range(q.shape[0]):
        if ec.q[slot, k] != q[k]:
            return slot, False
    return slot, True


@inline_kernel
def cache_claim(ec, slot, q, nb):
    """Make `slot` hold q, with nothing known yet."""
    ec.key[slot] = _q_hash(q)
    for k in range(q.shape[0]):
        ec.q[slot, k] = q[k]
    for b in range(nb):
        ec.d[slot, b] = -math.inf
        ec.exact[slot, b] = 0


@inline_kernel
def cache_collision(ec, slot, nb):
    """Mark the configuration in `slot` as colliding (every body at -inf, exact)."""
    for b in range(nb):
        ec.d[slot, b] = -math.inf
        ec.exact[slot, b] = 1


# ---------------------------------------------------------------------------------------
# per-body uncovered intervals


# The buffers' uncovered intervals: body b's are [lo[b, k], hi[b, k]] for k < count[b]
Intervals = namedtuple("Intervals", ["lo", "hi", "count"])


@inline_kernel
def intervals(buf):
    """The buffers' `Intervals`."""
    return Intervals(lo=buf.ilo, hi=buf.ihi, count=buf.icount)


@inline_kernel
def interval_at(iv, b, t):
    """Index of body b's uncovered interval containing t, or -1."""
    ilo, ihi, icount = iv.lo, iv.hi, iv.count
    for k in range(icount[b]):
        if ilo[b, k] <= t <= ihi[b, k]:
            return k
    return -1


@inline_kernel
def cut(iv, b, lo, hi):
    """Remove [lo, hi] from body b's uncovered intervals. A window inside an interval splits
    it in two; when the list is full that window is dropped instead (nothing is certified
    that was not, and the caller then evaluates b at the ends of its intervals, which
    never splits)."""
    ilo, ihi, icount = iv.lo, iv.hi, iv.count
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
def largest(iv, nb):
    """(body, interval) of the largest uncovered interval, or (-1, -1) when none is left."""
    ilo, ihi, icount = iv.lo, iv.hi, iv.count
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
def free_prefix(iv, nb):
    """The largest x with [0, x] certified for every body."""
    ilo, icount = iv.lo, iv.count
    x = 1.0
    for b in range(nb):
        for k in range(icount[b]):
            if ilo[b, k] < x:
                x = ilo[b, k]
    return x


@inline_kernel
def set_q(q, q0, q1, t):
    """q = the configuration at t; exactly q0 at t = 0 and q1 at t = 1 (the endpoint
    cache is keyed by them, and they are the planner's states)."""
    for k in range(q0.shape[0]):
        if t == 1.0:
            q[k] = q1[k]
        else:
            q[k] = q0[k] + t * (q1[k] - q0[k])


# ---------------------------------------------------------------------------------------
# evaluating the bodies at one t


# What `body_rate` reads: the robot's local-bound terms (kernels/robot/motion_bounds.py), the
# links' balls, the joints' axes, the posed links and the edge's |q1 - q0|, q1 - q0
RateTerms = namedtuple(
    "RateTerms", ["start", "term", "weight", "centre", "radius", "axis", "poses", "dqa", "dq"]
)


@inline_kernel
def rate_terms(robot, buf):
    """The `RateTerms` of the robot and the buffers."""
    return RateTerms(
        start=robot.term_start, term=robot.term, weight=robot.term_w, centre=robot.sphere_c,
        radius=robot.sphere_r, axis=robot.model.axis, poses=buf.link_poses, dqa=buf.dqa[0],
        dq=buf.dqa[1],
    )  # fmt: skip


@inline_kernel
def body_rate(tm, b):
    """Body b's local motion rates (A, S) at the posed configuration
    (kernels/robot/motion_bounds.py); tm: `RateTerms`."""
    return rate(
        tm.start, tm.term, tm.weight, tm.centre, tm.radius, tm.axis, tm.poses, tm.dqa, tm.dq, b
    )


@inline_kernel
def body_window(buf, b, A, delta):
    """Body b's window for clearance delta (motion_bounds.window); A: `body_rate`'s pair."""
    return window(buf.mu[b], A[0], buf.growth[b, 0], A[1], buf.growth[b, 1], delta)


@inline_kernel
def bound_body(hm, hw, counts, mu, growth, ec, b, t, lo, hi, slot, req, A):
    """(d, exact, queried): body b's distance bound at the posed t, capped at what covers
    its interval [lo, hi] around t, and at most NEED_CAP past contact (A: its local rates
    there, `body_rate`; mu, growth: the edge's motion bounds); through the endpoint cache
    (`EndpointCache`) when slot >= 0. req: the `EdgeRequest`."""
    h = max(t - lo, hi - t)
    move = min(reach(mu[b], A[0], growth[b, 0], A[1], growth[b, 1], h), NEED_CAP)
    floor = req.margin + req.eta
    need = floor + move
    if slot >= 0 and (ec.exact[slot, b] == 1 or ec.d[slot, b] >= need):
        counts[ENDPOINT_HITS] += 1
        return ec.d[slot, b], ec.exact[slot, b], 0
    delta = min(move, req.front) if req.use_cache else 0.0
    d, exact, _ = body_distance(hm, hw, b, need, floor, delta)
    if slot >= 0:
        ec.d[slot, b] = d
        ec.exact[slot, b] = exact
    return d, exact, 1


@inline_kernel
def pose_at(hm, hw, q, ec, q0, q1, t, use_cache, nb, endpoints, capsules):
    """Pose the configuration at t (pieces, and with `capsules` the bounding capsules'
    poses, which only distances use); returns its endpoint-cache slot (-1 when t is not an
    end of the edge, `endpoints` says it may be, or caching is off) and whether the cache
    held it. q: the buffers' q (set here); ec: `EndpointCache`."""
    set_q(q, q0, q1, t)
    pose(hm, hw, q, capsules)
    if not (use_cache and endpoints and (t == 0.0 or t == 1.0)):
        return -1, False
    slot, hit = cache_slot(ec, q)
    if not hit:
        cache_claim(ec, slot, q, nb)
    return slot, hit


@inline_kernel
def edge_motion_bounds(robot, buf, q0, q1):
    """buf.mu = R |q1 - q0|, buf.dqa = (|q1 - q0|, q1 - q0) and buf.growth the local
    bounds' (B, alpha) (kernels/robot/motion_bounds.py); returns the largest mu."""
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
def same(q0, q1):
    """q0 == q1 (an edge that does not move)."""
    for k in range(q0.shape[0]):
        if q0[k] != q1[k]:
            return False
    return True


@inline_kernel
def finish(sc, out, status, last_valid_t, toc, n_queries):
    """An entry point's result into out[0:4], its time since `edge_start` into the
    scratch's KERNEL_NS; returns FREE (the arguments were good)."""
    sc.counts[KERNEL_NS] += monotonic_ns() - sc.counts[EDGE_T0]
    out[0] = status
    out[1] = last_valid_t
    out[2] = toc
    out[3] = n_queries
    return FREE


@inline_kernel
def edge_start(hm, hw, q0, q1):
    """What every entry point starts with: FREE, or BAD_Q + code for a bad q0 (code) or q1
    (code + 2 * dof + 2). Counts the edge and starts its clock (`finish` reads it)."""
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
def still(hm, hw, q1, margin, out):
    """An edge along which nothing moves: the state check of its end."""
    robot, sc, _ = unpack(hm, hw)
    pose(hm, hw, q1, NO)
    if posed_collides(hm, hw, margin, robot.pairs.shape[0] > 0, 0.0):
        return finish(sc, out, COLLISION, 0.0, 0.0, 1)
    return finish(sc, out, FREE, 1.0, math.nan, 1)
