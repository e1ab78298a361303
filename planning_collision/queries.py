"""Public pair queries (DESIGN §4): `collide`, `distance`, `penetration`.

Each converts and validates once (shapes are validated at construction; poses here), packs
the two shapes into flat tables and makes one compiled call.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from .geometry.compile import shape_table
from .geometry.shapes import ConvexShape, Halfspace, Shape
from .geometry.validate import as_pose, positive_scalar
from .kernels.pair import new_workspace, pair_distance, pair_overlap
from .results import DistanceResult, PenetrationResult

__all__ = ["collide", "distance", "penetration"]


def _prepare(a, Ta, b, Tb):
    for name, s in (("a", a), ("b", b)):
        if not isinstance(s, Shape):
            raise TypeError(f"{name} must be a planning_collision shape, got {type(s).__name__}")
    Ta = as_pose(Ta, "Ta")
    Tb = as_pose(Tb, "Tb")
    return Ta, Tb


def _nonconvex(a, b) -> bool:
    return not (isinstance(a, ConvexShape) and isinstance(b, ConvexShape))


def collide(a: Shape, Ta: npt.ArrayLike, b: Shape, Tb: npt.ArrayLike, margin: float = 0.0) -> bool:
    """True when shape `a` posed by `Ta` and `b` posed by `Tb` touch or overlap.

    Ta, Tb : (4, 4) float64, world frame, m. margin : m, >= 0; with a margin the answer is
    ``distance(a, Ta, b, Tb) <= margin`` (MoveIt's padding).
    """
    Ta, Tb = _prepare(a, Ta, b, Tb)
    margin = positive_scalar("margin", margin, allow_zero=True)
    if _nonconvex(a, b):
        from .bvh import nonconvex_collide

        return bool(nonconvex_collide(a, Ta, b, Tb, margin))
    tab = shape_table((a, b))
    return bool(pair_overlap(tab, 0, Ta, tab, 1, Tb, margin, new_workspace()))


def _distance_out(a, Ta, b, Tb) -> np.ndarray:
    tab = shape_table((a, b))
    out = np.empty(10)
    pair_distance(tab, 0, Ta, tab, 1, Tb, np.inf, new_workspace(), out)
    return out


def distance(a: Shape, Ta: npt.ArrayLike, b: Shape, Tb: npt.ArrayLike) -> DistanceResult:
    """Signed distance between `a` posed by `Ta` and `b` posed by `Tb` (metres).

    Returns DistanceResult(distance, point_a, point_b, normal): distance >= 0 is the
    separation, < 0 minus the penetration depth; witness points in the world frame with
    ``point_b - point_a == distance * normal``; normal from a to b.
    Two non-parallel halfspaces overlap without bound: distance is -inf.
    """
    Ta, Tb = _prepare(a, Ta, b, Tb)
    if _nonconvex(a, b):
        from .bvh import nonconvex_distance

        return nonconvex_distance(a, Ta, b, Tb)
    out = _distance_out(a, Ta, b, Tb)
    return DistanceResult(float(out[0]), out[1:4].copy(), out[4:7].copy(), out[7:10].copy())


def penetration(a: Shape, Ta: npt.ArrayLike, b: Shape, Tb: npt.ArrayLike) -> PenetrationResult:
    """Penetration depth of two convex shapes (EPA, or closed form where one exists).

    Returns PenetrationResult(depth, normal, point_a, point_b): depth >= 0 (0 when the
    shapes are apart or touch); translating b by ``depth * normal`` separates them.
    """
    Ta, Tb = _prepare(a, Ta, b, Tb)
    if _nonconvex(a, b):
        raise TypeError(
            "penetration is defined for convex shapes; a Mesh is a surface (use distance)"
        )
    if isinstance(a, Halfspace) and isinstance(b, Halfspace):
        out = _distance_out(a, Ta, b, Tb)
        if not np.isfinite(out[0]):
            raise ValueError("two non-parallel halfspaces overlap without bound: no finite depth")
    else:
        out = _distance_out(a, Ta, b, Tb)
    depth = max(0.0, -float(out[0]))
    return PenetrationResult(depth, out[7:10].copy(), out[1:4].copy(), out[4:7].copy())
