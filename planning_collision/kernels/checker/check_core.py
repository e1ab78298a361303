"""The collision checker's compiled core: its model and workspace tables viewed as records,
a configuration's check and posing, and the two heavy parts every check calls, the scene
traversal (`query`) and a self-pair test (`self_test`) (docs/architecture.md, "Checker").

A *body* is what a certificate bounds: body ``b < n_links`` is collision link
``body_link[b]`` against the scene; body ``n_links + j`` is the self-collision pair
``pairs[j]``. `CheckRobot` and `CheckBuffers` (kernels/checker/check_types.py) come from
`planning_collision.checker`. The checker's kernels, by what they do:

- here: posing (`pose`), the traversal (`query`), a self-pair test (`self_test`);
- fronts.py: FCL's front lists (where a piece's traversal starts);
- self_pairs.py: the self pairs' boolean check and distance bound;
- states.py: a state's check and its bodies' distances (the entry points for one
  configuration);
- edge_state.py, edges.py: an edge's state (intervals, motion bounds, the endpoint cache) and
  the three edge methods.

How the code is cut into compiled functions matters as much as what it does (a first call
compiles all of it; python -m planning_collision.demos.dev.cold_start):

- Every compiled function takes the model's address table ``hm`` (robot and scene) and the
  workspace's ``hw`` (Scratch and buffers) (kernels/checker/handles.py), plus scalars, and rebuilds
  the records it needs in one step (`unpack`: one intrinsic call for the robot, one for the
  workspace; LLVM drops the arrays a function does not read; the scene is viewed only by
  the traversal's `query`). Passing the rebuilt records instead costs ~900 machine
  arguments per call (measured in the LLVM signatures).
- The parts called from several places are compiled once each and called: the scene
  traversal (`query`, with the traversal's body compiled into it), the self-pair tests
  (`self_test`), posing a configuration (`pose`), the boolean check of a posed
  configuration (`posed_collides`) and one body's distance bound (`body_distance`). Inlined
  into several callers instead (numba IR inlining), each was compiled once per caller:
  the first `is_valid` and `check_edge` took 15 + 27 s of compile, now ~22 + 10 s.
- Glue used in one place is inlined (`inline_kernel`), and takes the few arrays it reads as
  a small named tuple (`FrontArrays`, `SelfArrays`, ...), never the robot, scratch or
  buffers: an inlined helper given those copies all their arrays at each call site, which
  LLVM then spends seconds of a user's first call taking apart. The compiled functions run
  without reference counting (`hot_kernel`): they allocate nothing, and counting
  references to ~110 arrays at every assignment of a rebuilt record was most of their
  compile time.

Every query of the checker answers "in collision, or how far apart", never how deep: the
scene traversal runs with ``depth=False`` and pairs use `pair_separation` and
`pair_overlap`, so no EPA is compiled into the checker.
"""

import math

import numpy as np

from .._jit import hot_kernel, inline_kernel
from ..base.codes import BAD_Q, CAPSULES, ENVELOPE, FREE, OUTER, ZERO
from ..convex.pair import overlap_within, pair_separation
from ..robot.fk import fk, piece_poses
from ..scene.scratch import STATES, Scratch
from ..scene.traversal import FlatScene, traverse_inline
from ..scene.visits import warm_keep, warm_start
from .check_types import CheckBuffers, CheckRobot
from .handles import table_view

# A model table holds the robot's rows, then the scene's; each is viewed only where it is
# used: a view emits the loads and the nested tuples of all its arrays, which LLVM then
# optimises away where unused, at a cost (the scene's 33 arrays in every function that
# unpacked the model: ~25 % of the view's IR)
_robot_view = table_view(CheckRobot)
_scene_view = table_view(FlatScene)
SCENE_ROW = np.int64(_robot_view.n_rows)  # the scene's first row in a model table
_work_view = table_view(Scratch, CheckBuffers)  # (scratch, buffers) of a workspace table


@inline_kernel
def robot_at(hm):
    """The CheckRobot of the model table hm."""
    return _robot_view(hm, ZERO)[0]


@inline_kernel
def scratch_at(hw):
    """The Scratch of the workspace table hw."""
    return _work_view(hw, ZERO)[0]


@inline_kernel
def unpack(hm, hw):
    """(robot, scratch, buffers) from the model table hm and workspace table hw (the
    scene: `_scene_view`, in `query` only)."""
    sc, buf = _work_view(hw, ZERO)
    return robot_at(hm), sc, buf


@inline_kernel
def q_code(limited, lo, hi, q):
    """FREE when q is finite and within its limits (the robot's `limited`, model.lower,
    model.upper), else BAD_Q + the joint's code (or BAD_Q + 2 * dof: q is not (dof,)).
    Takes the arrays: an inlined helper given the whole robot copies all its arrays at
    each call site, which LLVM then spends time in a user's first call taking apart."""
    dof = limited.shape[0]
    if q.shape[0] != dof:
        return BAD_Q + 2 * dof
    for k in range(dof):
        if not math.isfinite(q[k]):
            return BAD_Q + k
    for k in range(dof):
        if limited[k] and (q[k] < lo[k] or q[k] > hi[k]):
            return BAD_Q + dof + k
    return FREE


@inline_kernel
def pose_pieces(P, plo, phi, aabb, brad):
    """After FK and the pieces' poses P: a conservative world box of each piece (plo, phi:
    its local box rotated, cut down to the box of its bounding ball; both contain the
    piece). The bounding capsules' world ends are computed where a self pair needs them
    (`posed_capsule_gap`: for about one piece pair in two states, not 17 pieces each state)."""
    for p in range(P.shape[0]):
        c0 = 0.5 * (aabb[p, 0] + aabb[p, 3])
        c1 = 0.5 * (aabb[p, 1] + aabb[p, 4])
        c2 = 0.5 * (aabb[p, 2] + aabb[p, 5])
        h0 = 0.5 * (aabb[p, 3] - aabb[p, 0])
        h1 = 0.5 * (aabb[p, 4] - aabb[p, 1])
        h2 = 0.5 * (aabb[p, 5] - aabb[p, 2])
        r = brad[p]
        for k in range(3):
            R0 = P[p, k, 0]
            R1 = P[p, k, 1]
            R2 = P[p, k, 2]
            wc = R0 * c0 + R1 * c1 + R2 * c2 + P[p, k, 3]
            wh = abs(R0) * h0 + abs(R1) * h1 + abs(R2) * h2
            plo[p, k] = max(wc - wh, P[p, k, 3] - r)
            phi[p, k] = min(wc + wh, P[p, k, 3] + r)


@inline_kernel
def pose_capsules(P, cap_pose, cap_poses):
    """The world pose of every piece's bounding capsule, cap_poses (for traversals with the
    capsules as the query: the edge checks' cheap first bound)."""
    for p in range(P.shape[0]):
        B = cap_pose[p]
        T = cap_poses[p]
        for r in range(3):
            a0 = P[p, r, 0]
            a1 = P[p, r, 1]
            a2 = P[p, r, 2]
            for c in range(4):
                T[r, c] = a0 * B[0, c] + a1 * B[1, c] + a2 * B[2, c]
            T[r, 3] += P[p, r, 3]
        T[3, 0] = 0.0
        T[3, 1] = 0.0
        T[3, 2] = 0.0
        T[3, 3] = 1.0


@hot_kernel
def pose(hm, hw, q, capsules):
    """Pose configuration q in the workspace: FK, the pieces' poses, `pose_pieces`, and with
    `capsules` the bounding capsules' poses (`pose_capsules`)."""
    robot, sc, buf = unpack(hm, hw)
    for k in range(q.shape[0]):
        buf.q[k] = q[k]  # for the self-pair tables (a no-op when q is buf.q)
    fk(robot.model, q, buf.link_poses)
    P = buf.piece_poses
    piece_poses(buf.link_poses, robot.piece_link, robot.piece_pose, P)
    tab = robot.tab
    pose_pieces(P, buf.plo, buf.phi, tab.aabb, tab.brad)
    sc.counts[STATES] += 1
    if capsules:
        pose_capsules(P, robot.cap_pose, buf.cap_poses)


# ---------------------------------------------------------------------------------------
# the two heavy parts, compiled once each


@hot_kernel
def query(hm, hw, mode, which, i0, i1, bound, flag):
    """One traversal of the scene by pieces [i0, i1) (as `which`: CAPSULES, OUTER, PIECES,
    or ENVELOPE: the pieces' front envelopes as the query boxes, for LEAVES), each from its
    rows of the front list (buf.ranges; none for ENVELOPE); see kernels/scene/traversal.py for
    mode, bound and flag. Returns the traversal's result."""
    robot, sc, buf = unpack(hm, hw)
    scene = _scene_view(hm, SCENE_ROW)[0]
    poses = buf.cap_poses if which == CAPSULES else buf.piece_poses
    tab = robot.tab
    if which == CAPSULES:
        tab = robot.caps
    elif which == OUTER:
        tab = robot.outer
    lo = buf.env_lo if which == ENVELOPE else buf.plo
    hi = buf.env_hi if which == ENVELOPE else buf.phi
    seeds = buf.front[0:0] if which == ENVELOPE else buf.front
    ranges = buf.ranges[0:0] if which == ENVELOPE else buf.ranges
    # an outer hull's hit can be certain for its piece (kernels/scene/traversal.py, qinner)
    inner = robot.tab.params[:, 0] if which == OUTER else robot.tab.params[0:0, 0]
    return traverse_inline(
        scene, mode, tab, poses, lo, hi, i0, i1, seeds, ranges, bound, flag, sc, inner, False
    )


@hot_kernel
def self_test(hm, hw, which, ia, ib, bound, boolean):
    """Pieces ia, ib (OUTER or PIECES) warm started from the pair's last direction: with
    `boolean`, whether they overlap under margin `bound`: APART or CORES_WITHIN (the
    pieces overlap for certain), or for OUTER also UNKNOWN (the outer hulls overlap: test
    the pieces). An outer hull's core is a subset of its piece's points, swept by more than
    the piece's radius (or the piece itself: checker/bounds.py), so the outer hulls'
    cores within the pieces' radii means the pieces overlap. Else pair_separation under
    `bound` into sc.tmp (returns its status)."""
    robot, sc, buf = unpack(hm, hw)
    tab = robot.outer if which == OUTER else robot.tab
    P = buf.piece_poses
    key = -2 - 2 * ia - (0 if which == OUTER else 1)  # warm-start key: < 0, by kind
    slot = warm_start(sc.warm, sc.pair, key, ib)
    if boolean:
        inner = robot.tab.params[ia, 0] + robot.tab.params[ib, 0] if which == OUTER else -1.0
        r = overlap_within(tab, ia, P[ia], tab, ib, P[ib], bound, inner, sc.pair)
    else:
        r = pair_separation(tab, ia, P[ia], tab, ib, P[ib], bound, sc.pair, sc.tmp)
    warm_keep(sc.warm, sc.pair, slot, key, ib)
    return r
