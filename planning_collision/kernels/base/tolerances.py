"""Every tolerance of the project, in one place (re-exported by `planning_collision.conventions`).

This module lives beside the kernels because kernels read these values (numba freezes them
at compile time: they are constants, never reassigned) and kernels import nothing from the
package but other kernels. Python code imports them from here or from `conventions`.

Lengths are metres, areas square metres; ``*_REL`` values are relative to a scale the user
of the tolerance states.
"""

# ---- working range -----------------------------------------------------------------------
# Every length the engine takes is within this (m): a pose's translation, a coordinate of a
# shape's points or vertices in its own frame, a size (a side, a radius, a length), and every
# obstacle of a scene, posed, within the world box [-WORLD_LIMIT, WORLD_LIMIT]^3 (a
# halfspace's plane included; its solid side is unbounded). Larger values are refused with
# a ValueError where a shape, pose, robot or scene is built. 10 km holds any robot's world
# (a factory hall, a campus map) with margin. Measured without the limit (the Panda's
# is_valid against a mesh or box wall through its workspace, 1,000 configurations, against
# the answers for a 4 m wall): no wrong verdict up to walls of half-size 1e5 m, 1 at 1e6 m,
# 16-40 at 1e7-1e12 m, ~180 at 1e15 m, and a 1e300 m box ignored (its AABB overflows).
# Inside the range, tests/test_working_range.py holds the answers to those of small walls.
WORLD_LIMIT = 1e4

# ---- poses --------------------------------------------------------------------------------
# A rotation is accepted when R^T R is within this of the identity (float32-made poses from
# ROS messages are good to ~1e-7; a sheared or scaled matrix is off by far more).
ROTATION_TOL = 1e-6
# A pose's last row must be (0, 0, 0, 1) to within this.
LAST_ROW_TOL = 1e-12
# A quaternion shorter than this is not a rotation (it is normalised otherwise).
QUATERNION_MIN_NORM = 1e-9
# A direction (a halfspace normal, a joint axis) shorter than this has none.
MIN_DIRECTION_NORM = 1e-12

# ---- shapes -------------------------------------------------------------------------------
# A triangle whose area is below this (m^2) is degenerate: its normal is undefined and GJK
# on it is a segment query in disguise. 1e-12 m^2 is a 1 um x 2 um triangle.
DEGENERATE_AREA = 1e-12
# Hull points closer than this, relative to the set's extent, are one point.
HULL_DEDUP_REL = 1e-12
# A point set whose smallest principal extent is below this fraction of its largest is flat.
HULL_FLAT_REL = 1e-9
# A mesh point within this of a convex piece (m) counts as inside it: qhull facet planes are
# good to ~1e-15 relative, so 1e-9 m is far above round-off and far below any feature.
CONTAIN_TOL = 1e-9

# ---- GJK / EPA ----------------------------------------------------------------------------
# GJK converges when the duality gap |v| - v.w/|v| is below GJK_ABS_TOL + GJK_REL_TOL * |v|.
GJK_ABS_TOL = 1e-11
GJK_REL_TOL = 1e-10
# |v| below this (m) counts as core contact (the origin on or in the Minkowski difference).
GJK_ZERO_TOL = 1e-12
# EPA converges when the new support point is within this of the nearest face (m, plus
# relative). Well above round-off on purpose: support points that land on a flat region
# within round-off of the nearest face only add sliver faces with unstable normals.
EPA_ABS_TOL = 1e-8
EPA_REL_TOL = 1e-8
# A face is visible from a new point farther out than this (m, times 1 + |D|). Below the
# convergence tolerance, so the face being split is always visible.
EPA_VISIBLE_TOL = 1e-10
# A witness direction shorter than this (m) is no direction: the pair is in contact.
WITNESS_MIN_NORM = 1e-12

# ---- round-off guards of GJK, EPA and the closed forms ------------------------------------
# Relative tests compare squares with squares where the code does (no square root taken).
# GJK's triangle sub-simplex is flat (its normal undefined) when |n|^2 <= this * s^2, s the
# sum of its two edges' squared lengths: |n| below 1e-12 of the edges' size.
GJK_FLAT_TRIANGLE_REL2 = 1e-24
# GJK's tetrahedron is flat when |det| <= this * e^(3/2), e its longest edge squared.
GJK_FLAT_TETRA_REL = 1e-14
# A support point within sqrt(GJK_REPEAT_ABS2 + GJK_REPEAT_REL2 |v|^2) of a simplex vertex
# repeats it: GJK can make no progress, and stops converged at round-off.
GJK_REPEAT_ABS2 = 1e-30
GJK_REPEAT_REL2 = 1e-24
# EPA's polytope: a face whose edges' cross product is shorter than this is degenerate.
EPA_FACE_MIN_CROSS = 1e-30
# EPA's start: the Minkowski difference has no extent along a direction when the support
# reaches less than EPA_FLAT_ABS + EPA_FLAT_REL * scale past the simplex (scale: its size):
# then it is a point, a segment or flat, and the depth is 0 (epa.py's module doc).
EPA_FLAT_ABS = 1e-12
EPA_FLAT_REL = 1e-9
# A length or squared length below this is zero: it guards a division, and is no tolerance
# of any answer.
DIVISION_GUARD = 1e-300
# Two segments are parallel when a e - b^2 <= this * a e (sin^2 of their angle; Ericson
# §5.1.9: their closest points are then any pair on the overlap).
PARALLEL_REL = 1e-14
# Two unit directions are parallel when their cross product is shorter than this (sin).
PARALLEL_SIN = 1e-9
# Two halfspaces face each other when their unit normals' dot product is below -1 + this.
ANTIPARALLEL_TOL = 1e-12

# ---- edge checking ------------------------------------------------------------------------
# The default contact tolerance of certified edge checks (m): closer than this counts as a
# collision, so a certificate is conservative and its loop always ends.
DEFAULT_ETA = 1e-4
