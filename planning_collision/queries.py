"""Public pair queries (DESIGN §4): `collide`, `distance`, `penetration`.

Shapes are validated at construction and carry their flat form; poses are checked inside
the same compiled call as the query (kernels/public.py), and a failed check is turned into
a ValueError naming the pose here. So a query from Python costs one dispatch.
"""

from __future__ import annotations

import threading

import numpy as np
import numpy.typing as npt

from .geometry.shapes import ConvexShape, Halfspace, Shape
from .geometry.validate import as_pose, positive_scalar
from .kernels.pair import new_workspace
from .kernels.public import checked_distance, checked_overlap
from .results import DistanceResult, PenetrationResult

__all__ = ["collide", "distance", "penetration"]


_F64 = np.dtype(np.float64)


def _pose_array(T, name: str) -> np.ndarray:
    """T as a C-contiguous float64 (4, 4) array (no copy when it is one), or ValueError.
    The numeric checks (finite, rigid) run inside the compiled query."""
    if type(T) is np.ndarray and T.dtype is _F64 and T.shape == (4, 4) and T.strides == (32, 8):
        return T  # the common case, decided in ~0.1 µs
    try:
        a = np.asarray(T, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a numeric 4x4 array, got {T!r}") from None
    if a.shape != (4, 4):
        raise ValueError(f"{name} must have shape (4, 4), got {a.shape}")
    return np.ascontiguousarray(a)


def _check_shapes(a, b) -> bool:
    """True when both shapes are convex (the compiled fast path)."""
    if isinstance(a, ConvexShape) and isinstance(b, ConvexShape):
        return True
    for name, s in (("a", a), ("b", b)):
        if not isinstance(s, Shape):
            raise TypeError(f"{name} must be a planning_collision shape, got {type(s).__name__}")
    return False


_local = threading.local()


def _workspace() -> np.ndarray:
    """This thread's pair workspace (kernels write scratch there; one per thread)."""
    ws = getattr(_local, "ws", None)
    if ws is None:
        ws = _local.ws = new_workspace()
    return ws


def _raise_bad_pose(code: int, Ta, Tb):
    """The compiled check failed (code 10 + c for Ta, 20 + c for Tb): let the Python
    validator name the problem."""
    as_pose(Ta if code < 20 else Tb, "Ta" if code < 20 else "Tb")
    raise AssertionError(f"pose check code {code} not explained by as_pose")  # unreachable


def _distance_out(a, Ta, b, Tb) -> np.ndarray:
    out = np.empty(10)
    ia, fa = a.flat
    ib, fb = b.flat
    code = checked_distance(ia, fa, Ta, ib, fb, Tb, _workspace(), out)
    if code:
        _raise_bad_pose(code, Ta, Tb)
    return out


def collide(a: Shape, Ta: npt.ArrayLike, b: Shape, Tb: npt.ArrayLike, margin: float = 0.0) -> bool:
    """True when shape `a` posed by `Ta` and `b` posed by `Tb` touch or overlap.

    Ta, Tb : (4, 4) float64, world frame, m. margin : m, >= 0; with a margin the answer is
    ``distance(a, Ta, b, Tb) <= margin`` (MoveIt's padding).
    """
    convex = _check_shapes(a, b)
    Ta = _pose_array(Ta, "Ta")
    Tb = _pose_array(Tb, "Tb")
    if margin != 0.0:
        margin = positive_scalar("margin", margin, allow_zero=True)
    if not convex:
        from .bvh import nonconvex_collide

        return bool(nonconvex_collide(a, as_pose(Ta, "Ta"), b, as_pose(Tb, "Tb"), margin))
    ia, fa = a.flat
    ib, fb = b.flat
    code = checked_overlap(ia, fa, Ta, ib, fb, Tb, float(margin), _workspace())
    if code > 1:
        _raise_bad_pose(code, Ta, Tb)
    return code == 1


def distance(a: Shape, Ta: npt.ArrayLike, b: Shape, Tb: npt.ArrayLike) -> DistanceResult:
    """Signed distance between `a` posed by `Ta` and `b` posed by `Tb` (metres).

    Returns DistanceResult(distance, point_a, point_b, normal): distance >= 0 is the
    separation, < 0 minus the penetration depth; witness points in the world frame with
    ``point_b - point_a == distance * normal``; normal from a to b.
    Two non-parallel halfspaces overlap without bound: distance is -inf.
    """
    convex = _check_shapes(a, b)
    Ta = _pose_array(Ta, "Ta")
    Tb = _pose_array(Tb, "Tb")
    if not convex:
        from .bvh import nonconvex_distance

        return nonconvex_distance(a, as_pose(Ta, "Ta"), b, as_pose(Tb, "Tb"))
    out = _distance_out(a, Ta, b, Tb)
    return DistanceResult(out.item(0), out[1:4], out[4:7], out[7:10])


def penetration(a: Shape, Ta: npt.ArrayLike, b: Shape, Tb: npt.ArrayLike) -> PenetrationResult:
    """Penetration depth of two convex shapes (EPA, or closed form where one exists).

    Returns PenetrationResult(depth, normal, point_a, point_b): depth >= 0 (0 when the
    shapes are apart or touch); translating b by ``depth * normal`` separates them.
    """
    if not _check_shapes(a, b):
        raise TypeError(
            "penetration is defined for convex shapes; a Mesh is a surface (use distance)"
        )
    Ta = _pose_array(Ta, "Ta")
    Tb = _pose_array(Tb, "Tb")
    out = _distance_out(a, Ta, b, Tb)
    if isinstance(a, Halfspace) and isinstance(b, Halfspace) and not np.isfinite(out[0]):
        raise ValueError("two non-parallel halfspaces overlap without bound: no finite depth")
    depth = max(0.0, -float(out[0]))
    return PenetrationResult(depth, out[7:10], out[1:4], out[4:7])
