"""Every code the kernels pass between them or back to Python, each an `np.int64` defined
once, in a range of its own.

An `np.int64` global is a constant of type int64 to numba: the same value passed from one
compiled kernel to another is one type, where a literal (`0`, `True`) is a type per value,
and the callee compiles once more for each (tests/test_jit.py checks none does). Ranges do
not overlap, so a code read where another kind of code was meant (an edge status taken for
a state code, a method for a mode) is a value no comparison accepts, not a silent match:
tests/test_codes.py checks that every code below is unique.

| range | codes | where (kernels/) |
|---|---|---|
| 100-103 | GJK's status | convex/gjk.py |
| 110-113 | a pair query's status | convex/pair.py |
| 120-122 | a boolean pair test's answer | convex/pair.py |
| 130-134, 140-144 | a pose check's answer (140s: the second pose) | convex/public.py |
| 200-203 | what a traversal's leaves do (its `mode`) | scene/traversal.py |
| 210-214 | a traversal stack entry's tree (also stored in front lists) | scene/traversal.py |
| 220-223 | which rows of the robot a checker traversal queries with | checker/check_core.py |
| 300-302 | a state's or an edge's verdict | checker/states.py, edges.py |
| 310-312 | an edge method | checker/edges.py |
| 1000- | a configuration the kernels refuse (`BAD_Q` + which joint and why) | |

Not codes but data, stored in tables and in cached model files, so their values stay: shape
kinds (kernels/base/layout.py, 0-6) and joint types (kernels/robot/fk.py, 0-2). Nor are the
traversal's returns, which are counts or object slots (`OVERFLOW` = -2 is the one negative it gives
beyond "none", -1).
"""

import numpy as np

# ---- GJK (kernels/convex/gjk.py `gjk_core`)
SEPARATED = np.int64(100)  # converged: |v| is the core distance (within tolerance)
OVERLAP = np.int64(101)  # the cores intersect (origin in D, or |v| at round-off level)
BEYOND = np.int64(102)  # stopped early: the lower bound already exceeds `stop_above`
WITHIN = np.int64(103)  # stopped early: the upper bound |v| is already <= `stop_below`

# ---- a pair query (kernels/convex/pair.py `pair_distance`, `pair_separation`)
EXACT = np.int64(110)  # separated, exact distance and witnesses
PENETRATING = np.int64(111)  # overlapping, depth from a closed form or EPA
LOWER_BOUND = np.int64(112)  # stopped early: out[0] is a lower bound > max_dist
CORES_OVERLAP = np.int64(113)  # inside pair.py: the cores overlap, depth not computed

# ---- a boolean pair test (kernels/convex/pair.py `overlap_within`)
APART = np.int64(120)  # farther apart than the margin
CORES_WITHIN = np.int64(121)  # within the margin for certain (the cores within the radii)
UNKNOWN = np.int64(122)  # outer hulls within the margin: the pieces must be tested

# ---- a pose check (kernels/convex/public.py `pose_check`); the second pose's codes + SECOND_POSE
POSE_OK = np.int64(130)
POSE_NOT_FINITE = np.int64(131)
POSE_LAST_ROW = np.int64(132)
POSE_NOT_RIGID = np.int64(133)
POSE_OUT_OF_RANGE = np.int64(134)
SECOND_POSE = np.int64(10)  # offset of the second pose's codes (141-144)

# ---- what a traversal's leaves do (kernels/scene/traversal.py `traverse`, its `mode`)
COLLIDE = np.int64(200)  # a boolean pair test, objects within the bound
DISTANCE = np.int64(201)  # a pair distance under the bound so far
CANDIDATES = np.int64(202)  # list the primitives whose boxes overlap
LEAVES = np.int64(203)  # list the group-BVH leaves whose boxes overlap (a front list)

# ---- a traversal stack entry's tree (stack and front-list rows: (tree, node))
KT = np.int64(210)  # a KCD node
BV = np.int64(211)  # a group-BVH node
BV_TESTED = np.int64(212)  # a group-BVH node whose box was tested already (a group leaf's root)
KT_TESTED = np.int64(213)  # a KCD node whose box its parent tested already
NONE = np.int64(214)  # stands for nothing (a front list that found no leaf): skipped

# ---- which rows of the robot a checker traversal queries with (kernels/checker/check_core.py)
CAPSULES = np.int64(220)  # the pieces' bounding capsules (posed in buf.cap_poses)
OUTER = np.int64(221)  # the pieces' outer hulls
PIECES = np.int64(222)  # the pieces themselves
ENVELOPE = np.int64(223)  # the pieces' front envelopes (buf.env_lo, env_hi) as boxes

# ---- a state's or an edge's verdict
FREE = np.int64(300)
COLLISION = np.int64(301)
UNDECIDED = np.int64(302)  # an edge whose query budget ran out (callers: not valid)

# ---- edge methods (kernels/checker/edges.py)
DISCRETE = np.int64(310)
DICHOTOMY = np.int64(311)
CA = np.int64(312)

# ---- a compiled planner's run (kernels/planner/rrt_connect.py)
SOLVED = np.int64(400)  # a path joins a start and a goal, every edge certified
SEARCHING = np.int64(401)  # its time slice is over: call again to go on
FULL = np.int64(402)  # a tree has no room for another node

# ---- a configuration refused: BAD_Q + k, q[k] not finite; BAD_Q + dof + k, q[k] outside
# its limits; BAD_Q + 2 dof, q has not dof values (kernels/checker/check_core.py `q_code`)
BAD_Q = np.int64(1000)

# ---- what a traversal returns beyond counts and object slots
MISSING = np.int64(-1)  # no object within the bound (DISTANCE)
OVERFLOW = np.int64(-2)  # the stack was too small: no answer (callers: not free)

# ---- small numbers passed between kernels (np.int64 / np.bool_: see the module doc)
ZERO, ONE, TWO, THREE, FOUR = (np.int64(k) for k in range(5))
YES = np.bool_(True)
NO = np.bool_(False)
