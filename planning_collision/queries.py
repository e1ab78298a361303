"""Public pair queries: `collide`, `distance`, `penetration`.

Shapes are validated at construction and carry their flat form; poses are checked inside
the same compiled call as the query (kernels/convex/public.py), and a failed check is turned into
a ValueError naming the pose here. So a convex query from Python costs one dispatch.

A non-convex shape (Mesh, PointCloud, VoxelGrid) is compiled once into a one-object scene
in its own frame (kcd.py, cached by identity); the other shape is posed in that frame and
the scene traversal (kernels/scene/traversal.py) answers, as for a scene.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from .geometry.poses import as_pose
from .geometry.shapes import ConvexShape, Halfspace, Shape
from .geometry.validate import positive_scalar
from .kcd import compile_object, flatten
from .kernels.base.codes import POSE_OK, POSE_OUT_OF_RANGE
from .kernels.base.layout import OUT_SIZE
from .kernels.convex.public import checked_distance, checked_overlap
from .kernels.scene.scene_calls import scene_traverse
from .kernels.scene.traversal import COLLIDE, DISTANCE, OVERFLOW
from .primitives import ShapeCache, posed_block
from .results import DistanceResult, PenetrationResult
from .workspace import thread_workspace

__all__ = ["collide", "distance", "penetration"]


_F64 = np.dtype(np.float64)


def _pose_array(T, name: str) -> np.ndarray:
    """T as a writeable C-contiguous float64 (4, 4) array (no copy when it is one), or
    ValueError. Read-only poses (a scene object's `T`) are copied: to numba a read-only array
    is another type, and the query would compile once more for it (~30 s, though the wheel
    ships the query compiled). The numeric checks (finite, rigid) run inside the query."""
    if (
        type(T) is np.ndarray
        and T.dtype is _F64
        and T.shape == (4, 4)
        and T.strides == (32, 8)
        and T.flags.writeable
    ):
        return T  # the common case, decided in ~0.1 µs
    try:
        a = np.asarray(T, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a numeric 4x4 array, got {T!r}") from None
    if a.shape != (4, 4):
        raise ValueError(f"{name} must have shape (4, 4), got {a.shape}")
    a = np.ascontiguousarray(a)
    return a if a.flags.writeable else a.copy()


def _check_shapes(a, b) -> bool:
    """True when both shapes are convex (the compiled fast path)."""
    if isinstance(a, ConvexShape) and isinstance(b, ConvexShape):
        return True
    for name, s in (("a", a), ("b", b)):
        if not isinstance(s, Shape):
            raise TypeError(f"{name} must be a planning_collision shape, got {type(s).__name__}")
    return False


def _raise_bad_pose(code: int, Ta, Tb):
    """The compiled check failed (a pose code, kernels/base/codes.py: Tb's past SECOND_POSE): let
    the Python validator name the problem."""
    first = code <= POSE_OUT_OF_RANGE
    as_pose(Ta if first else Tb, "Ta" if first else "Tb")
    raise AssertionError(f"pose check code {code} not explained by as_pose")  # unreachable


def _distance_out(a, Ta, b, Tb) -> np.ndarray:
    out = np.empty(10)
    ia, fa = a.flat
    ib, fb = b.flat
    code = checked_distance(ia, fa, Ta, ib, fb, Tb, thread_workspace().pair, out)
    if code != POSE_OK:
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
        return _nonconvex_collide(a, as_pose(Ta, "Ta"), b, as_pose(Tb, "Tb"), margin)
    ia, fa = a.flat
    ib, fb = b.flat
    code = checked_overlap(ia, fa, Ta, ib, fb, Tb, float(margin), thread_workspace().pair)
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
        return _nonconvex_distance(a, as_pose(Ta, "Ta"), b, as_pose(Tb, "Tb"))
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


# ---------------------------------------------------------------------------------------
# non-convex shapes: a one-object scene in the shape's own frame

_LOCAL_SCENES = ShapeCache(32)
_NO_SEEDS = np.zeros((0, 2), np.int32)


def _local_scene(shape: Shape):
    """The shape in its own frame as a one-object `FlatScene` (cached by identity)."""
    return _LOCAL_SCENES.get(
        shape, lambda s: flatten([compile_object([(s, np.eye(4))], None)], open_ratio=None)
    )


def _rel(Ta, Tb):
    """T_b_a = Tb^-1 Ta for rigid transforms, re-orthonormalised against round-off."""
    Rb, tb = Tb[:3, :3], Tb[:3, 3]
    out = np.eye(4)
    out[:3, :3] = Rb.T @ Ta[:3, :3]
    out[:3, 3] = Rb.T @ (Ta[:3, 3] - tb)
    u, _, vt = np.linalg.svd(out[:3, :3])
    out[:3, :3] = u @ vt
    return out


def _query_local(a, Ta, b, Tb, mode, bound):
    """`a` against non-convex `b`, in b's frame (b's compiled form is reused across poses).
    Returns (traversal result, scratch)."""
    flat = _local_scene(b)
    q = posed_block(a, _rel(Ta, Tb))
    sc = thread_workspace().scratch(1, flat.tab.kind.shape[0])
    n = scene_traverse(
        flat, mode, q.tab, q.poses, q.lo, q.hi, 0, len(q), _NO_SEEDS, bound, True, sc
    )
    if n == OVERFLOW:
        raise RuntimeError("BVH traversal stack overflow")
    return n, sc


def _nonconvex_distance(a: Shape, Ta, b: Shape, Tb) -> DistanceResult:
    """`distance` when either shape is non-convex (both may be): the minimum over their
    convex primitives (a Mesh is its triangles: a surface). Poses validated by the caller."""
    swap = isinstance(b, ConvexShape)  # the scene side must be non-convex: put it second
    if swap:
        a, Ta, b, Tb = b, Tb, a, Ta
    _, sc = _query_local(a, Ta, b, Tb, DISTANCE, np.inf)
    out = sc.best[0, :OUT_SIZE].copy()
    sc.best[0, 0] = np.inf  # the scratch's contract: inf between queries
    Rb, tb = Tb[:3, :3], Tb[:3, 3]
    pa = Rb @ out[1:4] + tb
    pb = Rb @ out[4:7] + tb
    n = Rb @ out[7:10]
    if swap:
        pa, pb, n = pb, pa, -n
    return DistanceResult(float(out[0]), pa, pb, n)


def _nonconvex_collide(a: Shape, Ta, b: Shape, Tb, margin: float) -> bool:
    """`collide` when either shape is non-convex: returns at the first primitive pair
    within `margin`. Poses validated by the caller."""
    if isinstance(b, ConvexShape):
        a, Ta, b, Tb = b, Tb, a, Ta
    n, sc = _query_local(a, Ta, b, Tb, COLLIDE, margin)
    sc.hit[0] = 0  # the scratch's contract: all 0 between queries
    return n > 0
