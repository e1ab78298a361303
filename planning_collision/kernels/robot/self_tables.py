"""Self-pair clearance tables: a lower bound on a self pair's distance read from a grid over
the joints that move its two links relative to each other, before any geometry.

When only configuration coordinates q_u and q_v lie between two links (below their lowest
common ancestor: the Panda's link5 and hand move relative to each other only through the
wrist joints 6 and 7), the pair's distance is a function of (q_u, q_v) alone, and changing
q_u by x moves no point of either link by more than R_u |x| relative to the other (R: the
pair's motion-bound row, robot/bounds.py). A table over a grid of that plane holds, per
cell, ``d(centre) - R_u h_u - R_v h_v`` with h the cell's half-widths (a hair wider):
a lower bound on the distance anywhere in the cell (checker/self_tables.py builds it).

- A state whose cell bound clears the margin skips the pair (`table_floor`).
- An edge is a straight segment in the plane: `table_intervals` walks the cells it
  crosses and leaves uncovered only the stretches of [0, 1] in cells that do not clear, so
  the distance dichotomy (kernels/checker/edges.py) evaluates the pair only there.

A table axis may be unused (a pair moved by one joint, or none: two fingers held still);
such an axis has one cell and configuration index -1.
"""

import math
from collections import namedtuple

from .._jit import inline_kernel

_NEVER = 2.0  # a crossing time past the edge's end

# The tables' grids (CheckRobot's pt_* arrays), as the helpers below take them: an inlined
# helper given the whole robot copies all its arrays at each call site, which LLVM then
# spends seconds of a user's first call taking apart.
PairGrids = namedtuple("PairGrids", ["n", "lo", "w", "q", "lb"])


@inline_kernel
def grid(robot):
    """The `PairGrids` of the robot: cells per axis (n), origin (lo), cell width (w), the
    configuration index of each axis (q), and the cells' bounds (lb)."""
    return PairGrids(n=robot.pt_n, lo=robot.pt_lo, w=robot.pt_w, q=robot.pt_q, lb=robot.pt_lb)


@inline_kernel
def _cell(g, j, e, x):
    """Cell of pair j's table along axis e holding joint value x (clamped to the grid)."""
    n = g.n[j, e]
    c = math.floor((x - g.lo[j, e]) / g.w[j, e])
    if not c > 0.0:  # also NaN
        return 0
    return min(int(c), n - 1)


@inline_kernel
def _bound_at(g, j, s, x0, x1):
    """The bound of pair j's table (first cell s) at axis values (x0, x1)."""
    i0 = _cell(g, j, 0, x0) if g.q[j, 0] >= 0 else 0
    i1 = _cell(g, j, 1, x1) if g.q[j, 1] >= 0 else 0
    return g.lb[s + i0 * g.n[j, 1] + i1]


@inline_kernel
def table_floor(pt_start, g, j, q):
    """A lower bound on self pair j's distance at configuration q; -inf without a table
    (pt_start: the robot's; g: `grid`)."""
    s = pt_start[j]
    if s < 0:
        return -math.inf
    k0 = g.q[j, 0]
    k1 = g.q[j, 1]
    return _bound_at(g, j, s, q[k0] if k0 >= 0 else 0.0, q[k1] if k1 >= 0 else 0.0)


@inline_kernel
def _crossing(g, j, e, a, dx, m):
    """Time at which axis e's value a + t dx meets grid line m (_NEVER when it does not
    move)."""
    if dx == 0.0:
        return _NEVER
    return (g.lo[j, e] + m * g.w[j, e] - a) / dx


@inline_kernel
def table_intervals(robot, buf, b, j, q0, q1, clear):
    """Set body b's uncovered intervals (self pair j) to the stretches of q0 -> q1 whose
    cells' bounds do not exceed `clear`; returns False (nothing changed) without a table.

    The stretches between consecutive grid-line crossings lie in one cell each, looked up
    at their middle (a crossing time's round-off stays within the hair the cells are
    widened by). Adjacent stretches merge; past the interval list's capacity the last
    interval grows over the rest instead (more left uncovered, never less)."""
    s = robot.pt_start[j]
    if s < 0:
        return False
    g = grid(robot)
    K = buf.ilo.shape[1]
    buf.icount[b] = 0
    if robot.pt_min[j] > clear:
        return True
    a0 = 0.0
    a1 = 0.0
    d0 = 0.0
    d1 = 0.0
    k0 = robot.pt_q[j, 0]
    k1 = robot.pt_q[j, 1]
    if k0 >= 0:
        a0 = q0[k0]
        d0 = q1[k0] - q0[k0]
    if k1 >= 0:
        a1 = q0[k1]
        d1 = q1[k1] - q0[k1]
    # the next grid line each axis meets (lines m at lo + m w; moving up: the cell's top)
    m0 = _cell(g, j, 0, a0) + (1 if d0 > 0.0 else 0)
    m1 = _cell(g, j, 1, a1) + (1 if d1 > 0.0 else 0)
    s0 = 1 if d0 > 0.0 else -1
    s1 = 1 if d1 > 0.0 else -1
    ta = 0.0
    while ta < 1.0:
        c0 = _crossing(g, j, 0, a0, d0, m0)
        c1 = _crossing(g, j, 1, a1, d1, m1)
        tb = min(c0, c1, 1.0)
        if tb > ta:
            tm = 0.5 * (ta + tb)
            if not _bound_at(g, j, s, a0 + tm * d0, a1 + tm * d1) > clear:
                n = buf.icount[b]
                if n > 0 and (buf.ihi[b, n - 1] >= ta or n == K):
                    buf.ihi[b, n - 1] = tb
                else:
                    buf.ilo[b, n] = ta
                    buf.ihi[b, n] = tb
                    buf.icount[b] = n + 1
        if c0 <= tb:
            m0 += s0
        if c1 <= tb:
            m1 += s1
        ta = max(ta, tb)
    return True
