"""Motion bounds along straight joint-space edges (robot/bounds.py; KCD, KCCD).

For a straight edge ``q(t) = q0 + t (q1 - q0)``, no point of body ``i`` moves farther than
``mu_i * |t - s|`` between times ``s`` and ``t``, where

    mu_i = sum_d R[i, d] * |q1_d - q0_d|

and ``R[i, d]`` bounds the speed of any point of body ``i`` per unit of configuration
coordinate ``d`` (robot.py builds R: for a revolute joint the largest distance from the
joint's axis origin to the body, for a prismatic joint 1, times |mimic multiplier|, summed
over the joints ``d`` drives). The same kernel serves self-collision pairs with an ``R``
restricted to the joints below the pair's lowest common ancestor: in the LCA frame only
those joints move either body, and distances do not depend on the frame (KCCD).

**Local bounds.** R holds for every configuration, so it takes each joint's reach as if
the arm were stretched out. At a posed configuration q(s) the bound is tighter: a point p
of the body turns about joint k's axis at |dq_k| dist(p, axis_k) per unit t, and dist(p,
axis_k) <= dist(c, axis_k(s)) + r for the ball (c, r) holding the link. Over the motion that
distance changes no faster than the joints after k move p in k's frame (their R terms), so
for |t - s| <= h no point of the body moves farther than

    A(s) h + B h^2 / 2,   A(s) = sum_k w_k min(dist(c(s), axis_k(s)) + r, R_k),
                          B    = sum_k w_k sum_{k' after k} w_k' R_k'

(w_k = |mult_k| |q1 - q0|_k; a prismatic joint adds w_k to A and nothing to B; a pair
sums both links' terms below its LCA). `rate` gives A at the posed configuration, `growth`
B for an edge; `window` the largest h both bounds allow for a clearance delta. On RRTConnect
edges on MBM scenes (Panda), at the middle of the edge, the window is 1.35x the global
bound's for links and 1.45x for self pairs (median). The tables come from
robot/bounds.py (`MotionBoundTables.body_terms`).
"""

import math

from ._jit import inline_kernel, kernel


@kernel
def motion_bounds(R, q0, q1, out):
    """out[i] = sum_d R[i, d] |q1[d] - q0[d]|; R (n, dof), q0, q1 (dof,), out (n,) metres."""
    n, dof = R.shape
    for i in range(n):
        s = 0.0
        for d in range(dof):
            dq = q1[d] - q0[d]
            if dq < 0.0:
                dq = -dq
            s += R[i, d] * dq
        out[i] = s


@inline_kernel
def growth(start, term, weight, dqa, b):
    """B of body b (module doc) for joint-space steps |q1 - q0| = dqa: terms
    [start[b], start[b + 1]) of `term` (rows: sphere link, joint link or -1 for a prismatic
    joint, configuration index) and `weight` (rows: |mult|, speed), grouped by sphere link,
    each group root first."""
    s = 0.0
    tail = 0.0
    cur = -1
    for j in range(start[b + 1] - 1, start[b] - 1, -1):
        if term[j, 0] != cur:
            cur = term[j, 0]
            tail = 0.0
        w = weight[j, 0] * dqa[term[j, 2]]
        if term[j, 1] >= 0:
            s += w * tail
        tail += w * weight[j, 1]
    return s


@inline_kernel
def rate(start, term, weight, centre, radius, axis, poses, dqa, b):
    """A of body b (module doc) at the configuration whose link poses (world) are `poses`:
    centre (n_links, 3) and radius (n_links,) the links' balls (link frame), axis (n_links,
    3) the joints' axes (joint frame)."""
    s = 0.0
    for j in range(start[b], start[b + 1]):
        w = weight[j, 0] * dqa[term[j, 2]]
        k = term[j, 1]
        if w == 0.0:
            continue
        if k < 0:
            s += w
            continue
        L = term[j, 0]
        P = poses[L]
        c = centre[L]
        Q = poses[k]
        a = axis[k]
        vx = P[0, 0] * c[0] + P[0, 1] * c[1] + P[0, 2] * c[2] + P[0, 3] - Q[0, 3]
        vy = P[1, 0] * c[0] + P[1, 1] * c[1] + P[1, 2] * c[2] + P[1, 3] - Q[1, 3]
        vz = P[2, 0] * c[0] + P[2, 1] * c[1] + P[2, 2] * c[2] + P[2, 3] - Q[2, 3]
        ax = Q[0, 0] * a[0] + Q[0, 1] * a[1] + Q[0, 2] * a[2]
        ay = Q[1, 0] * a[0] + Q[1, 1] * a[1] + Q[1, 2] * a[2]
        az = Q[2, 0] * a[0] + Q[2, 1] * a[1] + Q[2, 2] * a[2]
        cx = ay * vz - az * vy
        cy = az * vx - ax * vz
        cz = ax * vy - ay * vx
        s += w * min(math.sqrt(cx * cx + cy * cy + cz * cz) + radius[L], weight[j, 1])
    return s


@inline_kernel
def window(mu, A, B, delta):
    """The largest h > 0 with min(mu h, A h + B h^2 / 2) <= delta (delta > 0): how far in t
    a body delta clear of contact stays clear (inf when it does not move)."""
    root = A + math.sqrt(A * A + 2.0 * B * delta)
    if root == 0.0:
        return math.inf  # A = B = 0: the local bound says the body does not move
    return max(math.inf if mu == 0.0 else delta / mu, 2.0 * delta / root)


@inline_kernel
def reach(mu, A, B, h):
    """How far a point of the body may move within |t - s| <= h: min(mu h, A h + B h^2 / 2)."""
    return min(mu * h, A * h + 0.5 * B * h * h)
