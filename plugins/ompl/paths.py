"""`check_path`: OMPL's ``path.check()`` through the plugin's checker, certified, with where
the path stops being free.

    r = check_path(ss)                      # the setup's solution path
    r = check_path(ss, og_path)             # any og.PathGeometric of the setup's space
    r = check_path(ss, Q)                   # or (n, dof) configurations
    if not r:
        print(r.segment, r.last_valid_t, r.last_valid)

OMPL's ``PathGeometric::check()`` says only true or false, through the validators, and
the binding's motion validator never fills a last valid state (docs/ompl.md). This reads
the path's states through the setup's codec (continuous joints unwrapped along it, the
joint-space polyline the motion validator certified) and checks it with
`CollisionChecker.check_path` by the motion validator's method: a `PathResult` with the
first segment not shown free, its last valid time and configuration.
"""

from __future__ import annotations

from ompl import geometric as og

from planning_collision import PathResult
from planning_collision.checker.paths import path_array

from .setup import validators

__all__ = ["check_path"]


def check_path(ss, path=None, method: str | None = None) -> PathResult:
    """The certified check of `path` on the setup `ss` made by `make_setup` (module doc).

    path : None (the setup's solution path), an `og.PathGeometric` of the setup's space,
        or (n, dof) configurations in the robot's joint order.
    method : the edge method ("dichotomy", "ca", "discrete"); default the setup's motion
        validator's."""
    svc, mv = validators(ss)
    if path is None:
        path = ss.getSolutionPath()
    if isinstance(path, og.PathGeometric):
        Q = svc.codec.path(path.getStates())
    else:
        Q = path_array(svc.checker.robot, path, "path").copy()
        for k in range(1, len(Q)):  # the short way round, as OMPL interpolates SO2
            svc.codec.unwrap(Q[k - 1], Q[k])
    return svc.checker.check_path(Q, mv.method if method is None else method)
