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
sums both links' terms below its LCA).

**Velocity bound.** A adds each joint's share of the speed as if all of them pushed the
same way; they rarely do. The link moves as a rigid body: at q(s) its ball's centre moves
at v_c = sum_k th_k a_k x (c - o_k) and it turns at omega = sum_k th_k a_k (th_k = mult_k
(q1 - q0)_k, a_k and o_k joint k's world axis and origin), so no point of it moves faster
than S(s) = |v_c| + |omega| r (a prismatic joint adds w_k). How fast that speed can change
bounds how far it holds: a point p's acceleration is sum_k th_k d/dt (a_k x (p - o_k)), and
in the frame of joint k (turning at sum_{j before k} th_j a_j) a_k and o_k stand still while
p moves at sum_{j >= k} th_j a_j x (p - o_j), so

    S(s) h + alpha h^2 / 2,   alpha = sum_k w_k (W_k R_k + sum_{j >= k} w_j R_j)

with W_k the sum of w_j over the revolute joints j before k (a prismatic joint k adds w_k W_k). On
the motions RRTConnect asks about (Panda, MBM scenes), at their middle, S is 2.0-2.1x below mu where
A is 1.3-1.4x (median over the rigid bodies and over the pairs; `python -m
planning_collision.demos.bench.checker` prints it); over long intervals alpha dominates, and the
bound stays well above the true displacement.

`rate` gives (A, S) at the posed configuration, `growth` (B, alpha) for an edge;
`window` the largest h the three bounds allow for a clearance delta, `reach` how far they
let a body move. On RRTConnect edges on MBM scenes (Panda), at the middle of the edge, A's
window is 1.35x the global bound's for links and 1.45x for self pairs (median). S cut the
states evaluated on the 26,587 motions RRTConnect checked solving 39 MBM problems by 15 %
(191,210 -> 161,998) and the time of the free ones by 17 % (65 -> 54 us mean). The
tables come from robot/bounds.py (`MotionBoundTables.body_terms`); tests/
test_robot_motion_bounds.py checks both local bounds against every vertex's motion.
"""

import math

from .._jit import inline_kernel, kernel


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
    """(B, alpha) of body b (module doc) for joint-space steps |q1 - q0| = dqa: terms
    [start[b], start[b + 1]) of `term` (rows: sphere link, joint link or -1 for a prismatic
    joint, configuration index) and `weight` (rows: |mult|, speed, mult), grouped by sphere
    link, each group root first. One pass over each group, root first, with W_j the sum of
    w over its revolute joints before j: B = sum_j w_j R_j W_j, and alpha = B + sum over
    revolute j of w_j R_j (W_j + w_j) + sum over prismatic j of w_j W_j (the module doc's
    sums, reordered)."""
    B = 0.0
    extra = 0.0
    W = 0.0
    cur = -1
    for j in range(start[b], start[b + 1]):
        if term[j, 0] != cur:
            cur = term[j, 0]
            W = 0.0
        w = weight[j, 0] * dqa[term[j, 2]]
        R = weight[j, 1]
        B += w * R * W
        if term[j, 1] >= 0:
            extra += w * R * (W + w)
            W += w
        else:
            extra += w * W
    return B, B + extra


@inline_kernel
def rate(start, term, weight, centre, radius, axis, poses, dqa, dq, b):
    """(A, S) of body b (module doc) at the configuration whose link poses (world) are
    `poses`: centre (n_links, 3) and radius (n_links,) the links' balls (link frame), axis
    (n_links, 3) the joints' axes (joint frame); dqa = |q1 - q0|, dq = q1 - q0."""
    s = 0.0
    vec = 0.0
    cur = -1
    cx = cy = cz = 0.0  # the current link's ball centre (world)
    vx = vy = vz = 0.0  # its centre's velocity, and the link's angular velocity
    wx = wy = wz = 0.0
    for j in range(start[b], start[b + 1] + 1):
        L = term[j, 0] if j < start[b + 1] else -2
        if L != cur:
            if cur >= 0:  # the group just ended: |v_c| + |omega| r
                vec += math.sqrt(vx * vx + vy * vy + vz * vz)
                vec += math.sqrt(wx * wx + wy * wy + wz * wz) * radius[cur]
            if L == -2:
                break
            cur = L
            P = poses[L]
            c = centre[L]
            cx = P[0, 0] * c[0] + P[0, 1] * c[1] + P[0, 2] * c[2] + P[0, 3]
            cy = P[1, 0] * c[0] + P[1, 1] * c[1] + P[1, 2] * c[2] + P[1, 3]
            cz = P[2, 0] * c[0] + P[2, 1] * c[1] + P[2, 2] * c[2] + P[2, 3]
            vx = vy = vz = wx = wy = wz = 0.0
        w = weight[j, 0] * dqa[term[j, 2]]
        k = term[j, 1]
        if w == 0.0:
            continue
        if k < 0:
            s += w
            vec += w
            continue
        Q = poses[k]
        a = axis[k]
        ox = cx - Q[0, 3]
        oy = cy - Q[1, 3]
        oz = cz - Q[2, 3]
        ax = Q[0, 0] * a[0] + Q[0, 1] * a[1] + Q[0, 2] * a[2]
        ay = Q[1, 0] * a[0] + Q[1, 1] * a[1] + Q[1, 2] * a[2]
        az = Q[2, 0] * a[0] + Q[2, 1] * a[1] + Q[2, 2] * a[2]
        ux = ay * oz - az * oy
        uy = az * ox - ax * oz
        uz = ax * oy - ay * ox
        s += w * min(math.sqrt(ux * ux + uy * uy + uz * uz) + radius[L], weight[j, 1])
        th = weight[j, 2] * dq[term[j, 2]]  # the joint's signed rate
        vx += th * ux
        vy += th * uy
        vz += th * uz
        wx += th * ax
        wy += th * ay
        wz += th * az
    return s, vec


@inline_kernel
def _root(A, B, delta):
    """The largest h >= 0 with A h + B h^2 / 2 <= delta (inf when A = B = 0)."""
    root = A + math.sqrt(A * A + 2.0 * B * delta)
    if root == 0.0:
        return math.inf
    return 2.0 * delta / root


@inline_kernel
def window(mu, A, B, S, alpha, delta):
    """The largest h > 0 with min(mu h, A h + B h^2 / 2, S h + alpha h^2 / 2) <= delta
    (delta > 0): how far in t a body delta clear of contact stays clear (inf when it does
    not move)."""
    h = max(_root(A, B, delta), _root(S, alpha, delta))
    return max(math.inf if mu == 0.0 else delta / mu, h)


@inline_kernel
def reach(mu, A, B, S, alpha, h):
    """How far a point of the body may move within |t - s| <= h: the least of the three
    bounds (module doc)."""
    return min(mu * h, A * h + 0.5 * B * h * h, S * h + 0.5 * alpha * h * h)
