"""Whole-path checks: OMPL's ``PathGeometric::check()`` for a joint-space path, certified.

`check_path(checker, Q, method)` checks the path through the rows of Q (n, dof): its first
state, then each straight segment Q[k] -> Q[k + 1] with its end state, in order, by the
checker's edge method ("dichotomy", certified, by default), and stops at the first segment
not shown free. That segment is checked again by "ca" (conservative advancement, also
certified) for its first contact: the path is free up to `last_valid_t` of that segment, the
valid prefix a planner or an executor can use (OMPL's ``checkMotion(s1, s2, lastValid)``
for a whole path). "dichotomy" alone often certifies none of a colliding segment (its
boolean probes find the collision first); the "ca" pass costs one more edge check, once.

The path's first state is checked by `is_valid`, as a path of one state and a planner's start
are (free when its clearance exceeds the padding); every segment then starts at a state
known free, its own end checked with it (an edge's start check is stricter: it calls a state
within the certificate's contact tolerance eta of an obstacle a collision, and a planner's
path may begin at such a start). Continuous joints are taken as given: a segment is the
straight joint-space motion between two rows (unwrap angles first for the short way round,
as the OMPL plugin's `solution_path` does).
"""

from __future__ import annotations

import numpy as np

from ..geometry.validate import real_array
from ..results import PathResult

__all__ = ["check_path", "path_array"]


def path_array(robot, Q, name: str = "Q") -> np.ndarray:
    """Q as a C-contiguous float64 (n, dof) array, n >= 1, every value finite and every
    limited joint within its limits (continuous joints may be unwrapped past +-pi), else a
    ValueError naming the row, the joint and the value."""
    a = np.ascontiguousarray(real_array(name, Q, f"an (n, {robot.dof}) array of configurations"))
    if a.ndim != 2 or a.shape[1] != robot.dof or a.shape[0] == 0:
        raise ValueError(
            f"{name} must have shape (n, {robot.dof}) with n >= 1 (one configuration of "
            f"{robot.name!r}'s joints {robot.joint_names} per row), got {a.shape}"
        )
    if not a.flags.writeable:  # another numba type: the kernels would compile again
        a = a.copy()
    limited = ~np.asarray(robot.continuous, bool)
    bad = ~np.isfinite(a) | (limited & ((a < robot.lower) | (a > robot.upper)))
    if bad.any():
        k, d = (int(i) for i in np.argwhere(bad)[0])
        v = float(a[k, d])
        what = "must be finite" if not np.isfinite(v) else (
            f"is outside the joint limits [{float(robot.lower[d])!r}, {float(robot.upper[d])!r}]"
        )  # fmt: skip
        raise ValueError(f"{name}[{k}][{d}] ({robot.joint_names[d]}) = {v!r} {what}")
    return a


def check_path(checker, Q, method: str = "dichotomy") -> PathResult:
    """The check of the path through the rows of Q (module doc) by `checker`'s edge
    `method`: a `PathResult` with the first segment not shown free and the configuration
    where the path's free prefix ends."""
    Q = path_array(checker.robot, Q)
    if not checker.is_valid(Q[0]):
        return PathResult(False, 0, 0.0, Q[0].copy(), 0, method, True)
    if len(Q) == 1:
        return PathResult(True, -1, 1.0, Q[0].copy(), 0, method, True)
    queries = 0
    for k in range(len(Q) - 1):
        r = checker.check_edge(Q[k], Q[k + 1], method, check_start=False)
        queries += r.n_queries
        if r.valid:
            continue
        t, certified = r.last_valid_t, r.certified
        if method != "discrete":  # its first contact, certified (module doc)
            ca = checker.check_edge(Q[k], Q[k + 1], "ca", check_start=False)
            queries += ca.n_queries
            if not ca.valid:
                t = max(t, ca.last_valid_t)
        last = Q[k] + t * (Q[k + 1] - Q[k])
        return PathResult(False, k, float(t), last, queries, method, certified)
    return PathResult(True, -1, 1.0, Q[-1].copy(), queries, method, method != "discrete")
