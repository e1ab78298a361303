"""Forward kinematics over a flat kinematic tree (`RobotModel`; robot/kinematics.py builds it).

A robot is compiled once into a `RobotModel` of arrays, links ordered parents before
children, so FK is one forward loop (as in pytorch_kinematics): for link ``i`` with parent
``p = parent[i]`` and joint value ``v``,

    T_world_i = T_world_p @ origin[i] @ M(jtype[i], axis[i], v)

where ``M`` is a rotation by ``v`` about ``axis`` (REVOLUTE), a translation by ``v * axis``
(PRISMATIC) or the identity (FIXED), and ``origin[i]`` is the URDF joint origin
(T_parent_joint). The root has ``parent = -1`` and ``T_world_root = origin[root]``.

Joint values come from the configuration through one affine map, which covers active,
held (fixed at a value) and mimic joints alike:

    v = offset[i] + mult[i] * q[qidx[i]]     (qidx[i] >= 0)
    v = offset[i]                            (qidx[i] == -1: held or fixed joint)
"""

import math

from .._jit import hot_kernel, inline_kernel, kernel
from ..base.records import F1, F2, F3, I1, Field, record

FIXED = 0
REVOLUTE = 1  # revolute and continuous
PRISMATIC = 2

RobotModel = record(
    "RobotModel",
    __name__,
    "A robot's kinematic tree as arrays, links parents first (module doc).",
    [
        Field("parent", I1, ("n_links",), "-1 for the root; parent[i] < i"),
        Field("jtype", I1, ("n_links",), "FIXED / REVOLUTE / PRISMATIC (joint to the parent)"),
        Field("axis", F2, ("n_links", 3), "unit joint axis, joint frame"),
        Field("origin", F3, ("n_links", 4, 4), "T_parent_joint at zero"),
        Field("qidx", I1, ("n_links",), "configuration index driving the joint, -1 if none"),
        Field("mult", F1, ("n_links",), "joint value = offset + mult * q[qidx]"),
        Field("offset", F1, ("n_links",), ""),
        Field("lower", F1, ("dof",), "joint limits of q"),
        Field("upper", F1, ("dof",), ""),
    ],
)


# FK and the pieces' poses allocate nothing and are compiled without NRT (`hot_kernel`),
# as the checker's kernels that call them are: numba mangles the NRT flag into a compiled
# function's name, and `fk` compiled first from Python with NRT (Robot.fk, which a checker
# calls as it builds its model; one compile with the checker's since its views of the model
# are read-only too, kernels/checker/handles.py) was then linked into the checker's `pose` as a
# call that LLVM did not inline, passing the model's 63 array fields: FK + pieces 0.61 ->
# 0.69 us a state (measured).
@hot_kernel
def fk_link_poses(parent, jtype, axis, origin, qidx, mult, offset, q, out):
    """World pose of every link into ``out (n_links, 4, 4)``; q: (dof,) configuration.

    Rotation about a unit axis by Rodrigues' formula (about +-z with its zero terms left
    out); the 3x4 product with the parent is written out so the loop allocates nothing.
    Links from ``parent.shape[0]`` on are not posed (a checker passes its model cut after
    the last link it needs: kernels read only those).
    """
    n = parent.shape[0]
    for i in range(n):
        k = qidx[i]
        v = offset[i]
        if k >= 0:
            v += mult[i] * q[k]
        O = origin[i]
        t = jtype[i]
        # L = origin @ M, as 3x3 rotation (l00..l22) and translation (lx, ly, lz)
        if t == REVOLUTE and axis[i, 0] == 0.0 and axis[i, 1] == 0.0:
            # about the joint frame's z axis (every Panda, xArm7 and Kinova joint, two of
            # the UR5's): the same product without the zero terms (FK 448 -> 399 ns on the
            # Panda, measured)
            s = math.sin(v) * axis[i, 2]
            c = math.cos(v)
            l00 = O[0, 0] * c + O[0, 1] * s
            l01 = O[0, 1] * c - O[0, 0] * s
            l02 = O[0, 2]
            l10 = O[1, 0] * c + O[1, 1] * s
            l11 = O[1, 1] * c - O[1, 0] * s
            l12 = O[1, 2]
            l20 = O[2, 0] * c + O[2, 1] * s
            l21 = O[2, 1] * c - O[2, 0] * s
            l22 = O[2, 2]
            lx = O[0, 3]
            ly = O[1, 3]
            lz = O[2, 3]
        elif t == REVOLUTE:
            ax = axis[i, 0]
            ay = axis[i, 1]
            az = axis[i, 2]
            c = math.cos(v)
            s = math.sin(v)
            C = 1.0 - c
            m00 = c + ax * ax * C
            m01 = ax * ay * C - az * s
            m02 = ax * az * C + ay * s
            m10 = ay * ax * C + az * s
            m11 = c + ay * ay * C
            m12 = ay * az * C - ax * s
            m20 = az * ax * C - ay * s
            m21 = az * ay * C + ax * s
            m22 = c + az * az * C
            l00 = O[0, 0] * m00 + O[0, 1] * m10 + O[0, 2] * m20
            l01 = O[0, 0] * m01 + O[0, 1] * m11 + O[0, 2] * m21
            l02 = O[0, 0] * m02 + O[0, 1] * m12 + O[0, 2] * m22
            l10 = O[1, 0] * m00 + O[1, 1] * m10 + O[1, 2] * m20
            l11 = O[1, 0] * m01 + O[1, 1] * m11 + O[1, 2] * m21
            l12 = O[1, 0] * m02 + O[1, 1] * m12 + O[1, 2] * m22
            l20 = O[2, 0] * m00 + O[2, 1] * m10 + O[2, 2] * m20
            l21 = O[2, 0] * m01 + O[2, 1] * m11 + O[2, 2] * m21
            l22 = O[2, 0] * m02 + O[2, 1] * m12 + O[2, 2] * m22
            lx = O[0, 3]
            ly = O[1, 3]
            lz = O[2, 3]
        else:
            l00 = O[0, 0]
            l01 = O[0, 1]
            l02 = O[0, 2]
            l10 = O[1, 0]
            l11 = O[1, 1]
            l12 = O[1, 2]
            l20 = O[2, 0]
            l21 = O[2, 1]
            l22 = O[2, 2]
            lx = O[0, 3]
            ly = O[1, 3]
            lz = O[2, 3]
            if t == PRISMATIC:
                dx = axis[i, 0] * v
                dy = axis[i, 1] * v
                dz = axis[i, 2] * v
                lx += l00 * dx + l01 * dy + l02 * dz
                ly += l10 * dx + l11 * dy + l12 * dz
                lz += l20 * dx + l21 * dy + l22 * dz
        p = parent[i]
        T = out[i]
        if p < 0:
            T[0, 0] = l00
            T[0, 1] = l01
            T[0, 2] = l02
            T[0, 3] = lx
            T[1, 0] = l10
            T[1, 1] = l11
            T[1, 2] = l12
            T[1, 3] = ly
            T[2, 0] = l20
            T[2, 1] = l21
            T[2, 2] = l22
            T[2, 3] = lz
        else:
            P = out[p]
            for r in range(3):
                a0 = P[r, 0]
                a1 = P[r, 1]
                a2 = P[r, 2]
                T[r, 0] = a0 * l00 + a1 * l10 + a2 * l20
                T[r, 1] = a0 * l01 + a1 * l11 + a2 * l21
                T[r, 2] = a0 * l02 + a1 * l12 + a2 * l22
                T[r, 3] = a0 * lx + a1 * ly + a2 * lz + P[r, 3]
        T[3, 0] = 0.0
        T[3, 1] = 0.0
        T[3, 2] = 0.0
        T[3, 3] = 1.0


@hot_kernel
def fk(model, q, out):
    """`fk_link_poses` on a `RobotModel`: link poses for q (dof,) into out (n_links, 4, 4)."""
    fk_link_poses(
        model.parent,
        model.jtype,
        model.axis,
        model.origin,
        model.qidx,
        model.mult,
        model.offset,
        q,
        out,
    )


@kernel
def fk_batch(model, Q, out):
    """Link poses for every row of Q (m, dof) into out (m, n_links, 4, 4)."""
    for k in range(Q.shape[0]):
        fk(model, Q[k], out[k])


@hot_kernel
def piece_poses(link_poses, piece_link, piece_pose, out):
    """World pose of every collision piece: out[p] = link_poses[piece_link[p]] @ piece_pose[p]."""
    for p in range(piece_link.shape[0]):
        A = link_poses[piece_link[p]]
        B = piece_pose[p]
        T = out[p]
        for r in range(3):
            a0 = A[r, 0]
            a1 = A[r, 1]
            a2 = A[r, 2]
            for c in range(4):
                T[r, c] = a0 * B[0, c] + a1 * B[1, c] + a2 * B[2, c]
            T[r, 3] += A[r, 3]
        T[3, 0] = 0.0
        T[3, 1] = 0.0
        T[3, 2] = 0.0
        T[3, 3] = 1.0


@inline_kernel
def balls_apart(P, brad, ia, ib, margin):
    """True when posed pieces ia and ib are farther apart than margin for certain: their
    bounding balls (radius brad about each piece's origin, posed by P) are. The first test
    of every self pair's piece pair (the checker's, and the ACM's sampling)."""
    dx = P[ia, 0, 3] - P[ib, 0, 3]
    dy = P[ia, 1, 3] - P[ib, 1, 3]
    dz = P[ia, 2, 3] - P[ib, 2, 3]
    rr = brad[ia] + brad[ib] + margin
    return dx * dx + dy * dy + dz * dz > rr * rr
