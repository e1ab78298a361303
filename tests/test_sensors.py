"""Sensor inputs: depth images (organised clouds) and OctoMap files, on images and files
the tests make."""

import math
import re
import subprocess
import sys

import numpy as np
import pytest

import planning_collision as pc
from planning_collision.io.sensors import depth_points, intrinsics_matrix, load_octomap
from planning_collision.testing.sampling import random_rotation

K = (100.0, 110.0, 31.5, 23.5)  # fx, fy, cx, cy of a 64 x 48 image


def _plane_depth(n, d, shape=(48, 64)):
    """Depth (z) of the plane n . x = d (camera frame) seen through K at every pixel."""
    fx, fy, cx, cy = K
    v, u = np.mgrid[0 : shape[0], 0 : shape[1]].astype(float)
    ray = np.stack([(u - cx) / fx, (v - cy) / fy, np.ones_like(u)], axis=-1)
    return d / (ray @ n)


def test_depth_points_lie_on_the_plane_the_image_shows(rng):
    n = np.array([0.2, -0.1, 1.0])
    n /= np.linalg.norm(n)
    depth = _plane_depth(n, 1.5)
    T = np.eye(4)
    T[:3, :3] = random_rotation(rng)
    T[:3, 3] = (0.3, -0.2, 1.0)
    p = depth_points(depth, K, T)
    assert p.shape == (48 * 64, 3)
    cam = (p - T[:3, 3]) @ T[:3, :3]  # back to the camera frame
    assert np.allclose(cam @ n, 1.5)
    # each point projects back to its own pixel (row-major order)
    fx, fy, cx, cy = K
    v, u = np.divmod(np.arange(48 * 64), 64)
    assert np.allclose(fx * cam[:, 0] / cam[:, 2] + cx, u)
    assert np.allclose(fy * cam[:, 1] / cam[:, 2] + cy, v)


def test_depth_points_drop_pixels_without_a_return_and_outside_the_range():
    depth = np.full((48, 64), 2.0)
    depth[0, 0] = 0.0
    depth[1, 1] = np.nan
    depth[2, 2] = np.inf
    depth[3, 3] = 9.0
    assert depth_points(depth, K).shape[0] == 48 * 64 - 3
    assert depth_points(depth, K, max_depth=5.0).shape[0] == 48 * 64 - 4
    assert depth_points(depth, K, min_depth=2.5).shape[0] == 1
    raw = np.full((48, 64), 1500, np.uint16)  # millimetres
    p = depth_points(raw, intrinsics_matrix(K), depth_scale=0.001, stride=2)
    assert p.shape == (24 * 32, 3) and np.allclose(p[:, 2], 1.5)
    fx, _, cx, _ = K
    assert np.isclose(p[1, 0], (2 - cx) * 1.5 / fx)  # stride 2: pixel column 2


def test_a_depth_image_of_a_wall_becomes_an_obstacle_where_the_wall_is():
    depth = _plane_depth(np.array([0.0, 0.0, 1.0]), 1.0, (120, 160))
    T = np.eye(4)  # camera at the origin looking along +z: a wall at z = 1
    s = pc.Scene()
    s.add(pc.PointCloud(depth_points(depth, (100.0, 100.0, 79.5, 59.5), T), 0.01))
    at = np.eye(4)
    at[:3, 3] = (0.0, 0.0, 1.0)
    assert s.in_collision(pc.Sphere(0.02), at)
    at[2, 3] = 0.9
    assert s.min_distance(pc.Sphere(0.02), at).distance == pytest.approx(0.07, abs=1e-3)


@pytest.mark.parametrize(
    ("kw", "match"),
    [
        ({"depth": np.zeros(5)}, "depth must be a non-empty 2-D image"),
        ({"depth": [["a"]]}, "depth must be"),
        ({"intrinsics": (0.0, 1.0, 1.0, 1.0)}, "fx, fy must be > 0"),
        ({"intrinsics": (1.0, 1.0, 1.0)}, "intrinsics must be"),
        ({"intrinsics": np.ones((3, 3))}, "pinhole"),
        ({"T_world_camera": np.zeros((4, 4))}, "T_world_camera"),
        ({"depth_scale": -1.0}, "depth_scale"),
        ({"stride": 0}, "stride"),
        ({"min_depth": math.nan}, "min_depth"),
    ],
)
def test_depth_points_refuse_bad_input_by_name(kw, match):
    args = {"depth": np.ones((4, 4)), "intrinsics": K, "T_world_camera": None}
    args.update(kw)
    with pytest.raises(ValueError, match=match):
        depth_points(args.pop("depth"), args.pop("intrinsics"), args.pop("T_world_camera"), **args)


def _octree(cells, res):
    octomap = pytest.importorskip("octomap")
    tree = octomap.OcTree(res)
    for c in cells:
        for _ in range(4):
            tree.updateNode((np.asarray(c, float) + 0.5) * res, True)
    tree.updateInnerOccupancy()
    return tree


@pytest.mark.parametrize("suffix", [".bt", ".ot"])
def test_octomap_files_load_as_the_voxel_grid_of_their_occupied_cells(tmp_path, rng, suffix):
    res = 0.05
    cells = {tuple(c) for c in rng.integers(-30, 30, (200, 3))}
    block = {(10 + i, 10 + j, 10 + k) for i in (0, 1) for j in (0, 1) for k in (0, 1)}
    tree = _octree(sorted(cells | block), res)  # the 2x2x2 block prunes to one coarse leaf
    f = tmp_path / f"map{suffix}"
    assert (tree.writeBinary if suffix == ".bt" else tree.write)(str(f).encode())
    grid = load_octomap(f)
    assert grid.voxel_size == res and np.array_equal(grid.origin, np.zeros(3))
    assert {tuple(c) for c in grid.cells} == cells | block
    s = pc.Scene()
    s.add(grid)
    T = np.eye(4)
    T[:3, 3] = (np.array(next(iter(cells))) + 0.5) * res
    assert s.in_collision(pc.Sphere(0.001), T)


def test_octomap_loading_refuses_missing_and_unreadable_files(tmp_path):
    pytest.importorskip("octomap")
    with pytest.raises(FileNotFoundError, match="no OctoMap file"):
        load_octomap(tmp_path / "missing.bt")
    for suffix in (".bt", ".ot"):
        bad = tmp_path / f"bad{suffix}"
        bad.write_bytes(b"not a map")
        with pytest.raises(ValueError, match=f"{bad}.*not an OctoMap"):
            load_octomap(bad)
    other = tmp_path / "map.txt"
    other.write_text("x")
    with pytest.raises(ValueError, match=r"must end in \.bt"):
        load_octomap(other)
    empty = _octree([], 0.1)
    f = tmp_path / "empty.bt"
    empty.writeBinary(str(f).encode())
    with pytest.raises(ValueError, match="no occupied cell"):
        load_octomap(f)


# Each hostile file in a fresh interpreter whose memory is capped at 2 GB (OctoMap itself
# grew past 8 GB on the first one until the kernel killed it): prints the exception's type
# and whether its message names the file.
_HOSTILE = """
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))
from planning_collision.io.sensors import load_octomap
for f in sys.argv[1:]:
    try:
        load_octomap(f)
        print("loaded", flush=True)
    except Exception as e:
        print(type(e).__name__, int(f in str(e)), flush=True)
"""


def _octomap_bytes(tmp_path, suffix):
    tree = _octree([(0, 0, 0), (5, -3, 2), (40, 40, 40)], 0.05)
    f = tmp_path / f"real{suffix}"
    (tree.writeBinary if suffix == ".bt" else tree.write)(str(f).encode())
    data = f.read_bytes()
    start = data.index(b"data\n") + 5
    return data[:start], data[start:]


def _with_header(head: bytes, **fields) -> bytes:
    for k, v in fields.items():
        head = re.sub(rb"\n" + k.encode() + rb" [^\n]*\n", f"\n{k} {v}\n".encode(), head)
    return head


@pytest.mark.parametrize("suffix", [".bt", ".ot"])
def test_octomap_files_that_lie_are_refused_by_name_before_anything_is_allocated(tmp_path, suffix):
    """A valid header and 3 kB of random bytes made OctoMap grow past 8 GB; a truncated real
    file and a resolution of 1e-300 gave MemoryError and ZeroDivisionError; an occupied leaf
    near the root asks for 8^15 cells."""
    pytest.importorskip("octomap")
    head, body = _octomap_bytes(tmp_path, suffix)
    rng = np.random.default_rng(3)
    root_leaf = b"\x0a\x00" if suffix == ".bt" else b"\x00\x00\x80\x3f\x00"  # occupied
    files = {
        "random": head + rng.integers(0, 256, 3000, dtype=np.uint8).tobytes(),
        "truncated": head + body[: len(body) // 2 + 1],
        "tiny resolution": _with_header(head, res="1e-300") + body,
        "node count": _with_header(head, size="7") + body,
        "trailing bytes": head + body + b"\x00" * 10,
        "near the root": _with_header(head, size=("5" if suffix == ".bt" else "1")) + root_leaf,
        "header only": head,
    }
    paths = []
    for name, data in files.items():
        f = tmp_path / f"{name.replace(' ', '_')}{suffix}"
        f.write_bytes(data)
        paths.append(str(f))
    r = subprocess.run(
        [sys.executable, "-c", _HOSTILE, *paths], capture_output=True, text=True, timeout=600
    )
    got = r.stdout.splitlines()
    assert r.returncode == 0 and len(got) == len(files), (got, r.stderr[-2000:])
    assert got == ["ValueError 1"] * len(files), dict(zip(files, got, strict=False))


def test_octomap_checks_pass_every_real_map(tmp_path, rng):
    from planning_collision.io.octomap_files import check_octomap_file

    cells = {tuple(c) for c in rng.integers(-200, 200, (3000, 3))}
    block = {(i, j, k) for i in range(8) for j in range(8) for k in range(8)}  # prunes twice
    tree = _octree(sorted(cells | block), 0.02)
    for suffix in (".bt", ".ot"):
        f = tmp_path / f"map{suffix}"
        (tree.writeBinary if suffix == ".bt" else tree.write)(str(f).encode())
        got = check_octomap_file(f)
        assert got.nodes == tree.size() and got.resolution == 0.02
        assert got.cells == len(cells | block) == len(load_octomap(f).cells)
