"""The joint space as the compiled planner sees it (kernels/planner/rrt_connect.py): joints
limited or continuous (angles, their differences taken the short way round), nodes stored
one column per node (`x[k, node]`) for the nearest-neighbour scan, which LLVM vectorises."""

import math

from .._jit import inline_kernel

TWO_PI = 2.0 * math.pi
INV_TWO_PI = 1.0 / TWO_PI


@inline_kernel
def wrap(d):
    """An angle difference the short way round, in [-pi, pi)."""
    return d - TWO_PI * math.floor(d * INV_TWO_PI + 0.5)


@inline_kernel
def nearest(X, n, q, cont, d2):
    """(index, distance) of the node of X (dof, capacity), first n columns, nearest to q:
    Euclidean over the joints, continuous ones the short way round. Ties go to the
    lowest index."""
    for i in range(n):
        d2[i] = 0.0
    for k in range(X.shape[0]):
        row = X[k]
        qk = q[k]
        if cont[k]:
            for i in range(n):
                d = row[i] - qk
                d -= TWO_PI * math.floor(d * INV_TWO_PI + 0.5)
                d2[i] += d * d
        else:
            for i in range(n):
                d = row[i] - qk
                d2[i] += d * d
    best = 0
    bd = d2[0]
    for i in range(1, n):
        if d2[i] < bd:
            bd = d2[i]
            best = i
    return best, math.sqrt(bd)


@inline_kernel
def diff(a, b, cont, dq):
    """dq <- b - a (continuous joints the short way); returns |dq|."""
    s = 0.0
    for k in range(a.shape[0]):
        d = b[k] - a[k]
        if cont[k]:
            d = wrap(d)
        dq[k] = d
        s += d * d
    return math.sqrt(s)


@inline_kernel
def unwrap_end(q0, q1, cont):
    """q1's continuous joints moved by whole turns to within pi of q0's (the short way);
    its other joints left exactly as they are (a goal stays that goal)."""
    for k in range(q0.shape[0]):
        if cont[k]:
            q1[k] = q0[k] + wrap(q1[k] - q0[k])


@inline_kernel
def column(X, i, q):
    """q <- node i of X (dof, capacity)."""
    for k in range(q.shape[0]):
        q[k] = X[k, i]


@inline_kernel
def step_end(x, dq, s, q1, lower, upper, cont):
    """q1 <- x + s dq, limited joints clamped to their limits (round-off): the end of a
    motion from node x, in x's unwrapped frame."""
    for k in range(x.shape[0]):
        v = x[k] + s * dq[k]
        if not cont[k]:
            v = min(max(v, lower[k]), upper[k])
        q1[k] = v


@inline_kernel
def most_steps(lower, upper, cont, step):
    """The most steps of at most `step` a straight motion across the joint space takes
    (its diameter: each limited joint's range, pi for a continuous one)."""
    s = 0.0
    for k in range(lower.shape[0]):
        w = math.pi if cont[k] else upper[k] - lower[k]
        s += w * w
    return int(math.ceil(math.sqrt(s) / step)) + 1
