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
"""

from ._jit import kernel


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
