"""Sensed obstacles compiled for sensor rates: a `PointCloud` or a `VoxelGrid` as one KCD
group searched by a linear BVH (docs/clouds.md).

The general path (kcd.compile_object) groups convex pieces by their overlaps and builds
SAH trees: seconds for 10^5 points. A cloud needs neither: its points are one object and
one group, and their tree is built in linear time after a sort along a Morton curve
(kernels/scene/cloud.py): ~20 ms for 10^5 points. The block has the layout every object has
(`ObjectBlock`), so the scene's traversal, its per-object queries and the checker see a
cloud as any other obstacle; its primitives are stored in curve order (a node's points sit
side by side in memory).

`voxel_filter(points, spacing, radius)` thins a cloud to one point per cell of a grid of
``spacing`` (the cell's centre) and grows the radius by the cell's half diagonal, so the
thinned cloud holds every ball of the original one: what is certified free among the
thinned balls is free among the original ones (a thinned cloud only ever adds collisions).
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from .geometry.clouds import PointCloud, VoxelGrid
from .geometry.validate import length_array, length_scalar, positive_scalar
from .kcd import ObjectBlock
from .kernels.base import layout as L
from .kernels.scene.bvh import FlatBVH
from .kernels.scene.cloud import MORTON_BITS, cloud_tree, fill_cloud, morton_codes, posed_points
from .primitives import Primitives

__all__ = ["CLOUD_LEAF", "compile_cloud", "is_cloud", "voxel_filter"]

# Points per leaf of a cloud's tree. A leaf's points are tested one by one after its box
# (each a box test first when the leaf holds more than one).
CLOUD_LEAF = 4


def is_cloud(parts) -> bool:
    """Whether an object's parts (kcd.object_parts) are one point cloud or voxel grid: the
    objects `compile_cloud` builds."""
    return len(parts) == 1 and isinstance(parts[0][0], (PointCloud, VoxelGrid))


def _morton_order(c: np.ndarray, lo: np.ndarray, hi: np.ndarray):
    """(permutation, sorted codes): the points c (n, 3) in the box lo..hi sorted along a
    Morton curve over that box."""
    ext = float((hi - lo).max())
    scale = ((1 << MORTON_BITS) - 1) / ext if ext > 0.0 else 0.0
    codes = np.empty(c.shape[0], np.int64)
    morton_codes(c, lo, scale, codes)
    order = np.argsort(codes)
    return order, codes[order]


def _empty_table(n: int) -> L.ShapeTable:
    """A table of n pointless primitives (no hull points), for `fill_cloud` to fill."""
    return L.ShapeTable(
        np.empty(n, np.int32),
        np.empty((n, L.N_PARAMS)),
        np.zeros(n + 1, np.int32),
        np.zeros((0, 3)),
        np.zeros(1, np.int32),
        np.zeros(0, np.int32),
        np.empty((n, 6)),
        np.empty(n),
        np.zeros(0),
    )


def _block(shape, T: np.ndarray, min_size) -> tuple[Primitives, np.ndarray, int]:
    """The cloud's primitives in Morton order (world frame), their codes, and how many the
    detail filter (kcd.py) replaced by their world boxes: all or none, as all are alike."""
    R = np.ascontiguousarray(T[:3, :3])
    local = shape.points if isinstance(shape, PointCloud) else shape.centers
    if local.flags.writeable:  # read-only as a cloud's points: one compiled specialisation
        local = local.view()
        local.flags.writeable = False
    n = local.shape[0]
    w = np.empty((n, 3))
    lo, hi = posed_points(local, T, w)
    order, codes = _morton_order(w, lo, hi)
    row = np.zeros(L.N_PARAMS)
    if isinstance(shape, PointCloud):
        r = shape.radius
        ext = np.full(3, r)
        kind, half, brad = L.SPHERE, ext, r
        row[0] = r
    else:
        r = 0.5 * shape.voxel_size
        ext = r * np.abs(R).sum(axis=1)  # the rotated cube's world half extents
        kind, half, brad = L.BOX, np.full(3, r), r * math.sqrt(3.0)
        row[1:4] = r
    replaced = min_size is not None and float(np.prod(2.0 * ext)) < min_size**3
    if replaced:  # the detail filter: each piece becomes its world box
        row[:] = 0.0
        row[1:4] = ext
        kind, half, brad, R = L.BOX, ext, float(np.linalg.norm(ext)), np.eye(3)
    tab = _empty_table(n)
    poses = np.empty((n, 4, 4))
    plo, phi = np.empty((n, 3)), np.empty((n, 3))
    fill_cloud(w, order, R, ext, kind, row, half, brad, tab, poses, plo, phi)
    return Primitives(tab, poses, plo, phi), codes, n if replaced else 0


def compile_cloud(shape, T: np.ndarray, min_size: float | None = None) -> ObjectBlock:
    """A `PointCloud` or `VoxelGrid` posed by ``T (4, 4)`` (validated by the caller) as an
    object block: one group, one linear BVH (module doc). With `min_size` (the scene's
    detail filter), pieces whose world box is smaller than ``min_size**3`` are their boxes."""
    prims, codes, nrep = _block(shape, T, min_size)
    n = len(prims)
    m = 2 * n
    nlo, nhi = np.empty((m, 3)), np.empty((m, 3))
    left, right = np.empty(m, np.int32), np.empty(m, np.int32)
    first, count = np.empty(m, np.int32), np.empty(m, np.int32)
    k = cloud_tree(codes, prims.lo, prims.hi, CLOUD_LEAF, nlo, nhi, left, right, first, count)
    if k < 0:  # cannot happen: codes have 63 bits (kernels/scene/cloud.py)
        raise RuntimeError("cloud tree deeper than the traversal stack")
    bvh = FlatBVH(
        nlo[:k], nhi[:k], left[:k], right[:k], first[:k], count[:k], np.arange(n, dtype=np.int32)
    )
    z32 = np.zeros(0, np.int32)
    return ObjectBlock(
        prims,
        z32,
        bvh,
        nlo[:1].copy(),
        nhi[:1].copy(),
        np.zeros(1, np.int32),
        z32.copy(),
        np.zeros(1, np.int32),  # the one KCD node is a group leaf over BVH root 0
        np.zeros(1, np.int32),
        nrep,
    )


def voxel_filter(
    points, spacing: float, radius: float = 0.0
) -> tuple[npt.NDArray[np.float64], float]:
    """Thin ``points (n, 3)`` (m) to one point per occupied cell of a grid of side
    ``spacing`` (m; cells aligned to the origin of the points' frame): the cell's centre.

    Returns ``(centres (k, 3), radius + spacing * sqrt(3) / 2)``. Every original point lies
    within half a cell diagonal of its cell's centre, so each ball of ``radius`` about an
    original point lies inside the ball of the returned radius about its centre: the
    thinned cloud contains the original one, and a state or motion certified free among
    the thinned balls is free among the original ones (thinning adds collisions, never
    removes one; the price is a fatter cloud, spacing * 0.87 thicker).
    """
    p = length_array("voxel_filter points", points, (-1, 3))
    s = length_scalar("voxel_filter spacing", spacing)
    r = positive_scalar("voxel_filter radius", radius, allow_zero=True)
    cells = np.floor(p / s).astype(np.int64)
    return (_unique_rows(cells) + 0.5) * s, r + s * math.sqrt(3.0) / 2.0


def _unique_rows(cells: np.ndarray) -> np.ndarray:
    """The distinct rows of an (n, 3) int64 array: by one int64 key per row when the
    cells span fewer than 2**21 per axis (a sort of n ints), else np.unique's row sort."""
    if cells.shape[0] < 2:
        return cells
    lo = cells.min(axis=0)
    span = cells.max(axis=0) - lo + 1
    if (span >= 1 << 21).any():
        return np.unique(cells, axis=0)
    d = cells - lo
    key = (d[:, 0] * span[1] + d[:, 1]) * span[2] + d[:, 2]
    _, idx = np.unique(key, return_index=True)
    return cells[idx]
