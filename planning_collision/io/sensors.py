"""What sensors give, as obstacles: depth images (organised clouds) and OctoMap files
(docs/clouds.md).

::

    import numpy as np
    import planning_collision as pc
    from planning_collision.io.sensors import depth_points, load_octomap

    # a depth image (h, w) in metres (or raw uint16 with depth_scale=0.001), pinhole
    # intrinsics (fx, fy, cx, cy) or a 3x3 K, the camera's optical frame in the world
    pts = depth_points(depth, (525.0, 525.0, 319.5, 239.5), T_world_camera)
    cid = scene.add(pc.PointCloud(pts, 0.01), name="camera")
    scene.update_cloud(cid, depth_points(next_depth, K, T_world_camera))  # each frame

    grid = load_octomap("map.bt")          # .bt or .ot: occupied leaves as a VoxelGrid
    scene.add(grid, name="map")

The camera frame is the optical frame of OpenCV and ROS (``*_optical_frame``): x right, y
down, z forward along the view; pixel (u, v) = (column, row) at depth z is the point
``((u - cx) z / fx, (v - cy) z / fy, z)``. Pixels with no return (0, NaN, inf) or outside
``[min_depth, max_depth]`` give no point.

OctoMap files are read by the `octomap-python` binding (``pip install -e ".[sensors]"``);
an ImportError says so when it is missing.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import numpy.typing as npt

from ..geometry.clouds import VoxelGrid
from ..geometry.poses import as_pose
from ..geometry.validate import finite_scalar, positive_scalar, real_array
from .octomap_files import check_octomap_file

__all__ = ["depth_points", "intrinsics_matrix", "load_octomap"]


def intrinsics_matrix(intrinsics) -> npt.NDArray[np.float64]:
    """A pinhole camera's 3x3 K from ``(fx, fy, cx, cy)`` (pixels) or a 3x3 K itself
    (validated: fx, fy > 0, zero skew, last row (0, 0, 1))."""
    a = real_array("intrinsics", intrinsics, "(fx, fy, cx, cy) or a 3x3 matrix")
    if a.shape == (4,):
        fx, fy, cx, cy = (float(x) for x in a)
        a = np.array([[fx, 0.0, cx], [0.0, fy, cy], [0.0, 0.0, 1.0]])
    if a.shape != (3, 3):
        raise ValueError(
            f"intrinsics must be (fx, fy, cx, cy) or a 3x3 matrix, got shape {a.shape}"
        )
    if not np.isfinite(a).all():
        raise ValueError(f"intrinsics must be finite, got {a.tolist()}")
    if not (a[0, 0] > 0 and a[1, 1] > 0):
        raise ValueError(f"intrinsics fx, fy must be > 0, got {a[0, 0]!r}, {a[1, 1]!r}")
    if a[0, 1] != 0 or a[1, 0] != 0 or not np.array_equal(a[2], [0.0, 0.0, 1.0]):
        raise ValueError(
            "intrinsics must be a pinhole matrix [[fx, 0, cx], [0, fy, cy], [0, 0, 1]], "
            f"got {a.tolist()}"
        )
    return a


def depth_points(
    depth,
    intrinsics,
    T_world_camera=None,
    *,
    depth_scale: float = 1.0,
    min_depth: float = 0.0,
    max_depth: float = math.inf,
    stride: int = 1,
) -> npt.NDArray[np.float64]:
    """The points a depth image sees, ``(n, 3)`` float64 in the world frame (m).

    depth : (h, w) depth along the optical axis (z), float or integer; times `depth_scale`
        it is metres (0.001 for a uint16 image in millimetres). 0, NaN and inf: no return.
    intrinsics : (fx, fy, cx, cy) in pixels, or a 3x3 K (`intrinsics_matrix`).
    T_world_camera : (4, 4) pose of the camera's optical frame (module doc); identity when
        None (points in the camera frame).
    min_depth, max_depth : m; returns outside them are dropped (a camera's valid range).
    stride : every stride-th row and column (a cheap first thinning: stride 2 keeps a
        quarter of the pixels).
    Points come in row-major pixel order.
    """
    d = real_array("depth", depth, "a 2-D depth image (h, w)")
    if d.ndim != 2 or d.size == 0:
        raise ValueError(f"depth must be a non-empty 2-D image (h, w), got shape {d.shape}")
    K = intrinsics_matrix(intrinsics)
    T = np.eye(4) if T_world_camera is None else as_pose(T_world_camera, "T_world_camera")
    scale = positive_scalar("depth_scale", depth_scale)
    lo = positive_scalar("min_depth", min_depth, allow_zero=True)
    hi = finite_scalar("max_depth", max_depth) if math.isfinite(max_depth) else math.inf
    if not isinstance(stride, (int, np.integer)) or isinstance(stride, bool) or stride < 1:
        raise ValueError(f"stride must be an int >= 1, got {stride!r}")
    z = d[::stride, ::stride] * scale
    v, u = np.nonzero(np.isfinite(z) & (z > 0.0) & (z >= lo) & (z <= hi))
    z = z[v, u]
    u = u * float(stride)
    v = v * float(stride)
    x = (u - K[0, 2]) * z / K[0, 0]
    y = (v - K[1, 2]) * z / K[1, 1]
    p = np.stack([x, y, z], axis=1)
    return p @ T[:3, :3].T + T[:3, 3]


def load_octomap(path) -> VoxelGrid:
    """The occupied cells of an OctoMap file (``.bt`` binary or ``.ot`` full, as OctoMap
    writes them) as a `VoxelGrid` in the map's frame: cells of the map's resolution, a
    pruned (coarser) occupied leaf as all the cells it covers. Occupied means OctoMap's own
    test (the tree's occupancy threshold). The file is checked before OctoMap reads it
    (io/octomap_files.py: a stream that is not a tree, a resolution outside
    [1e-6, 10,000] m, more than 20 million occupied cells). ValueError naming the file for
    those, for a map with no occupied cell and for one OctoMap cannot read;
    FileNotFoundError when there is no file."""
    try:
        import octomap
    except ImportError:
        raise ImportError(
            'reading OctoMap files needs octomap-python: pip install -e ".[sensors]"'
        ) from None
    p = Path(path)
    checked = check_octomap_file(p)  # before OctoMap allocates what the file asks for
    raw = str(p).encode()
    if p.suffix == ".bt":
        tree = octomap.OcTree(0.1)
        ok = tree.readBinary(raw)
    else:
        try:
            tree = octomap.OcTree.read(raw)
        except OSError:
            tree = None
        ok = tree is not None
    if not ok:
        raise ValueError(f"OctoMap could not read {str(p)!r}")
    res = float(tree.getResolution())
    if res != checked.resolution or tree.size() != checked.nodes:
        raise ValueError(f"OctoMap read {str(p)!r} as another tree than the file holds")
    occupied, _ = tree.extractPointCloud()  # cell centres, pruned leaves expanded
    occupied = np.asarray(occupied, np.float64).reshape(-1, 3)
    if occupied.shape[0] == 0:
        raise ValueError(f"OctoMap {str(p)!r} has no occupied cell")
    # a cell's centre is at (k + 1/2) * res: the cell index is its floor
    return VoxelGrid(np.floor(occupied / res).astype(np.int64), res)
