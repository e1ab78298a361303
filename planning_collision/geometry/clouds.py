"""Point clouds and voxel grids: obstacles made of many small solid cells.

Both are non-convex shapes; a `Scene` (and `planning_collision.distance` / `collide`) keeps their
cells in a BVH:

- ``PointCloud(points, radius)``: the union of balls of ``radius`` about each point (radius 0
  gives bare points, which only a query that reaches them exactly touches);
- ``VoxelGrid(cells, voxel_size, origin)``: the union of the axis-aligned cubes
  ``origin + (cells[k] + [0, 1]^3) * voxel_size`` in the grid's frame (an occupancy map, as
  OctoMap leaves or MoveIt's collision voxels).

Cells are solids (unlike a `Mesh`, which is a surface).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import numpy.typing as npt

from ..kernels.base.tolerances import WORLD_LIMIT
from .shapes import Shape
from .validate import length_array, length_scalar, real_array

__all__ = ["PointCloud", "VoxelGrid"]


def _frozen(a: np.ndarray) -> np.ndarray:
    a = np.array(a, copy=True, order="C")
    a.setflags(write=False)
    return a


@dataclasses.dataclass(frozen=True, eq=False)
class PointCloud(Shape):
    """Balls of ``radius`` (m, >= 0) about ``points (n, 3)`` (m, the cloud's frame), n >= 1."""

    points: npt.NDArray[np.float64]
    radius: float = 0.0

    def __post_init__(self):
        p = length_array("PointCloud.points", self.points, (-1, 3))
        if p.shape[0] == 0:
            raise ValueError("PointCloud.points is empty: a point cloud needs at least one point")
        object.__setattr__(self, "points", _frozen(p))
        object.__setattr__(
            self, "radius", length_scalar("PointCloud.radius", self.radius, allow_zero=True)
        )

    def __eq__(self, other):
        return (
            type(other) is PointCloud
            and self.radius == other.radius
            and bool(np.array_equal(self.points, other.points))
        )

    def __hash__(self):
        return hash((PointCloud, self.radius, self.points.tobytes()))


@dataclasses.dataclass(frozen=True, eq=False)
class VoxelGrid(Shape):
    """Occupied cubes of side ``voxel_size`` (m): cell ``(i, j, k)`` spans
    ``origin + ([i, i+1], [j, j+1], [k, k+1]) * voxel_size`` in the grid's frame.

    cells : (n, 3) integer indices of the occupied cells (duplicates are merged), n >= 1.
    voxel_size : float > 0, m.
    origin : (3,) float64, m; the corner of cell (0, 0, 0).
    """

    cells: npt.NDArray[np.int64]
    voxel_size: float
    origin: npt.NDArray[np.float64] = dataclasses.field(default_factory=lambda: np.zeros(3))

    def __post_init__(self):
        expected = "an integer array of shape (n, 3)"
        raw = np.asarray(self.cells) if isinstance(self.cells, np.ndarray) else None
        if raw is None or raw.dtype.kind not in "iu":
            raw = real_array("VoxelGrid.cells", self.cells, expected)
        if raw.ndim != 2 or raw.shape[1] != 3:
            raise ValueError(f"VoxelGrid.cells must have shape (n, 3), got {raw.shape}")
        if raw.shape[0] == 0:
            raise ValueError("VoxelGrid.cells is empty: a voxel grid needs at least one cell")
        if raw.dtype.kind == "f" and not np.all(raw == np.round(raw)):  # NaN, inf: not equal
            bad = np.argwhere(raw != np.round(raw))[0]
            raise ValueError(
                f"VoxelGrid.cells must hold integers, got {raw[tuple(bad)]!r} at index {tuple(bad)}"
            )
        size = length_scalar("VoxelGrid.voxel_size", self.voxel_size)
        origin = length_array("VoxelGrid.origin", self.origin, (3,))
        # the cells' corners, in float64, within the working range (before any integer
        # conversion: a float index of 1e19 would wrap to -2^63 in int64)
        lo = origin + raw.min(axis=0).astype(np.float64) * size
        hi = origin + (raw.max(axis=0).astype(np.float64) + 1.0) * size
        out = (np.abs(lo) > WORLD_LIMIT) | (np.abs(hi) > WORLD_LIMIT)
        if out.any():
            axis = int(np.flatnonzero(out)[0])
            k = int(np.argmax(np.abs(raw[:, axis].astype(np.float64))))
            raise ValueError(
                f"VoxelGrid.cells[{k}] = {raw[k].tolist()} puts a cell outside the working "
                f"range (+-{WORLD_LIMIT:g} m) with voxel_size {size!r} and origin "
                f"{origin.tolist()}"
            )
        cells = np.unique(raw.astype(np.int64), axis=0)
        object.__setattr__(self, "cells", _frozen(cells))
        object.__setattr__(self, "voxel_size", size)
        object.__setattr__(self, "origin", _frozen(origin))

    @classmethod
    def from_dense(cls, occupied, voxel_size: float, origin=(0.0, 0.0, 0.0)) -> VoxelGrid:
        """From a boolean occupancy array ``occupied (nx, ny, nz)``."""
        occ = np.asarray(occupied)
        if occ.ndim != 3:
            raise ValueError(f"VoxelGrid occupancy must be a 3-D array, got shape {occ.shape}")
        return cls(np.argwhere(occ.astype(bool)), voxel_size, origin)

    @classmethod
    def from_points(cls, points, voxel_size: float, origin=(0.0, 0.0, 0.0)) -> VoxelGrid:
        """The cells that contain at least one of ``points (n, 3)`` (the grid's frame)."""
        p = length_array("VoxelGrid.from_points points", points, (-1, 3))
        s = length_scalar("VoxelGrid.voxel_size", voxel_size)
        o = length_array("VoxelGrid.origin", origin, (3,))
        return cls(np.floor((p - o) / s).astype(np.int64), s, o)

    @property
    def centers(self) -> npt.NDArray[np.float64]:
        """(n, 3) cell centres in the grid's frame, m."""
        return self.origin + (self.cells + 0.5) * self.voxel_size

    def __eq__(self, other):
        return (
            type(other) is VoxelGrid
            and self.voxel_size == other.voxel_size
            and bool(np.array_equal(self.origin, other.origin))
            and bool(np.array_equal(self.cells, other.cells))
        )

    def __hash__(self):
        return hash((VoxelGrid, self.voxel_size, self.origin.tobytes(), self.cells.tobytes()))
