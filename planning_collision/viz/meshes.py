"""Triangles (and points) for drawing the project's shapes, in glTF files and the browser.

**Tessellation.** A curved convex shape (sphere, capsule, cylinder, cone, sphere-swept
hull) is drawn as the convex hull of points on its surface: a fixed sample (an icosphere
of 162 directions for round parts, 32-gons for circles) *plus the shape's six extreme
points along the world axes* (its support points in -x, +x, -y, +y, -z, +z, computed in
closed form for the pose it is drawn at). Every vertex lies in the shape (on its surface,
except for a sphere-swept hull, sampled as hull vertex + radius x direction for every
vertex and direction, some of which are inside), so the mesh is inscribed in it (never
fatter than the model the checker uses), and it reaches the six extremes, so its world
bounding box *is* the shape's exact world bounding box. A box is
its 8 corners, a polytope (``Convex`` with radius 0) its hull vertices: exact. Because the
extremes depend on the orientation, a mesh made for one pose has exact bounds at that pose
only (`shape_mesh` takes the pose). A flat convex set is a two-sided polygon, a segment or
a point a degenerate triangle, so its bounds stay exact.

Non-convex shapes: a ``Mesh`` is drawn as it is (its triangles, posed; vertices no face
uses are dropped, as the engine ignores them); a ``VoxelGrid`` as one box per occupied
cell; a ``PointCloud`` with radius 0 as points, with radius r > 0 as one octahedron per
point with its six vertices at +-r along the world axes (inscribed in the ball, same box).
A ``Halfspace`` is unbounded: it is drawn as a square patch of its boundary plane
(`HALFSPACE_SIZE` wide, centred at the plane's point nearest the origin of its frame).

All functions return plain arrays: ``vertices (n, 3) float64`` (m) and ``faces (m, 3)
int64`` with outward (counter-clockwise) winding.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import numpy as np
import numpy.typing as npt
import trimesh

from ..geometry.clouds import PointCloud, VoxelGrid
from ..geometry.shapes import Box, Capsule, Cone, Convex, Cylinder, Halfspace, Mesh, Shape, Sphere

__all__ = [
    "HALFSPACE_SIZE",
    "Drawable",
    "shape_mesh",
    "obstacle_drawable",
    "link_meshes",
    "merge_meshes",
]

# Side of the square drawn for a halfspace, m: larger than a robot cell, small enough that
# a viewer's default camera still frames the scene.
HALFSPACE_SIZE = 4.0
CIRCLE_SEGMENTS = 32
# The six world directions whose extreme points every curved mesh includes.
_AXES = np.array([[-1, 0, 0], [1, 0, 0], [0, -1, 0], [0, 1, 0], [0, 0, -1], [0, 0, 1]], float)
# Relative size below which a point set's extent along a principal axis counts as zero.
_FLAT = 1e-9

# a cube of side 2 centred at the origin (trimesh's, outward winding): corners are +-1
_CUBE = trimesh.creation.box(extents=(2.0, 2.0, 2.0))
_BOX_SIGNS = np.asarray(_CUBE.vertices, float)
_BOX_FACES = np.asarray(_CUBE.faces, np.int64)
# octahedron over _AXES (vertex k at _AXES[k]), outward winding
_OCTA_FACES = np.array(
    [[4, 2, 0], [4, 1, 2], [4, 3, 1], [4, 0, 3], [5, 0, 2], [5, 2, 1], [5, 1, 3], [5, 3, 0]],
    np.int64,
)


class Drawable(NamedTuple):
    """What one obstacle is drawn as, in the world frame: a triangle mesh and/or points
    (either may be None; a compound object can have both)."""

    vertices: npt.NDArray[np.float64] | None
    faces: npt.NDArray[np.int64] | None
    points: npt.NDArray[np.float64] | None


@functools.cache
def _sphere_dirs(subdivisions: int) -> np.ndarray:
    return np.asarray(trimesh.creation.icosphere(subdivisions=subdivisions).vertices, float)


def _circle(n: int = CIRCLE_SEGMENTS) -> np.ndarray:
    a = np.linspace(0.0, 2.0 * np.pi, n, endpoint=False)
    return np.stack([np.cos(a), np.sin(a), np.zeros(n)], axis=1)


def _radial(d: np.ndarray) -> np.ndarray:
    """Unit xy-parts of directions d (k, 3), zero where d is along z."""
    r = d.copy()
    r[:, 2] = 0.0
    n = np.linalg.norm(r, axis=1, keepdims=True)
    return np.divide(r, n, out=np.zeros_like(r), where=n > 1e-15)


def _local_support(shape: Shape, d: np.ndarray) -> np.ndarray:
    """Points of `shape` (its frame) farthest along each local direction d (k, 3)."""
    if isinstance(shape, Sphere):
        return shape.radius * d
    if isinstance(shape, Capsule):
        return np.outer(np.sign(d[:, 2]), (0, 0, shape.length / 2)) + shape.radius * d
    if isinstance(shape, Cylinder):
        return np.outer(np.sign(d[:, 2]), (0, 0, shape.length / 2)) + shape.radius * _radial(d)
    if isinstance(shape, Cone):
        h = shape.length / 2
        rim = shape.radius * _radial(d) - (0, 0, h)
        apex = np.broadcast_to((0.0, 0.0, h), d.shape)
        take_apex = np.einsum("ij,ij->i", apex, d) > np.einsum("ij,ij->i", rim, d)
        return np.where(take_apex[:, None], apex, rim)
    if isinstance(shape, Convex):
        v = shape.hull.vertices
        return v[np.argmax(d @ v.T, axis=1)] + shape.radius * d
    raise TypeError(f"no support function for {type(shape).__name__}")


def _surface_sample(shape: Shape) -> np.ndarray:
    """Points on the surface of a curved convex shape, in its frame."""
    if isinstance(shape, Sphere):
        return shape.radius * _sphere_dirs(2)
    if isinstance(shape, Capsule):
        s = shape.radius * _sphere_dirs(2)
        h = np.array([0.0, 0.0, shape.length / 2])
        return np.concatenate([s + h, s - h])
    if isinstance(shape, Cylinder):
        c = shape.radius * _circle()
        h = np.array([0.0, 0.0, shape.length / 2])
        return np.concatenate([c + h, c - h])
    if isinstance(shape, Cone):
        h = shape.length / 2
        return np.concatenate([shape.radius * _circle() - (0, 0, h), [[0.0, 0.0, h]]])
    if isinstance(shape, Convex):
        v = shape.hull.vertices
        if shape.radius == 0.0:
            return v
        return (v[:, None, :] + shape.radius * _sphere_dirs(1)[None]).reshape(-1, 3)
    raise TypeError(f"no surface sample for {type(shape).__name__}")


def _hull(points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Convex hull of points (n, 3) as a triangle mesh, degenerate sets included: a point
    or a segment gives one degenerate triangle, a flat set a two-sided polygon."""
    c = points.mean(axis=0)
    _, s, vt = np.linalg.svd(points - c, full_matrices=False)
    tol = _FLAT * max(float(s[0]), 1e-300) if s.size else 0.0
    rank = int(np.sum(s > tol)) if s.size and s[0] > 1e-15 else 0
    if rank == 3:
        m = trimesh.convex.convex_hull(points)
        return np.asarray(m.vertices, float), np.asarray(m.faces, np.int64)
    if rank <= 1:
        t = (points - c) @ vt[0] if rank == 1 else np.zeros(len(points))
        v = points[[int(np.argmin(t)), int(np.argmax(t))]]
        return v, np.array([[0, 1, 1]], np.int64)
    from scipy.spatial import ConvexHull

    ring = points[ConvexHull((points - c) @ vt[:2].T).vertices]  # counter-clockwise
    fan = np.array([[0, i, i + 1] for i in range(1, len(ring) - 1)], np.int64)
    return ring, np.concatenate([fan, fan[:, ::-1]])


def shape_mesh(shape: Shape, T=None) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.int64]]:
    """A convex shape, a ``Mesh``, a ``VoxelGrid`` or a ``Halfspace`` posed by ``T (4, 4)``
    (identity when None) as triangles in the world frame (module doc: inscribed in the
    shape, with the shape's exact world bounds).

    Returns ``vertices (n, 3) float64`` (m) and ``faces (m, 3) int64``. A ``PointCloud``
    has no single mesh: use `obstacle_drawable`.
    """
    T = np.eye(4) if T is None else np.asarray(T, float)
    R, t = T[:3, :3], T[:3, 3]
    if isinstance(shape, Box):
        v = (0.5 * _BOX_SIGNS * shape.extents) @ R.T + t
        return v, _BOX_FACES.copy()
    if isinstance(shape, Halfspace):
        n = shape.normal
        u = np.cross(n, (1.0, 0.0, 0.0) if abs(n[0]) < 0.9 else (0.0, 1.0, 0.0))
        u /= np.linalg.norm(u)
        w = np.cross(n, u)
        a = HALFSPACE_SIZE / 2
        sq = n * shape.offset + a * np.array([-u - w, u - w, u + w, -u + w])
        f = np.array([[0, 1, 2], [0, 2, 3]], np.int64)
        return sq @ R.T + t, np.concatenate([f, f[:, ::-1]])
    if isinstance(shape, Mesh):
        used = np.unique(shape.faces)
        remap = np.full(len(shape.vertices), -1, np.int64)
        remap[used] = np.arange(used.size)
        return shape.vertices[used] @ R.T + t, remap[shape.faces].astype(np.int64)
    if isinstance(shape, VoxelGrid):
        centres = shape.centers
        corners = centres[:, None, :] + 0.5 * shape.voxel_size * _BOX_SIGNS[None]
        faces = (_BOX_FACES[None] + 8 * np.arange(len(centres))[:, None, None]).reshape(-1, 3)
        return corners.reshape(-1, 3) @ R.T + t, faces
    if isinstance(shape, (Sphere, Capsule, Cylinder, Cone, Convex)):
        pts = _surface_sample(shape) @ R.T + t
        extremes = _local_support(shape, _AXES @ R) @ R.T + t  # world axes in the local frame
        return _hull(np.concatenate([pts, extremes]))
    if isinstance(shape, PointCloud):
        raise TypeError("a PointCloud is drawn as points or octahedra: use obstacle_drawable")
    raise TypeError(f"expected a planning_collision shape, got {type(shape).__name__}")


def merge_meshes(meshes) -> tuple[np.ndarray, np.ndarray]:
    """One (vertices, faces) from several, faces renumbered."""
    meshes = list(meshes)
    if not meshes:
        return np.zeros((0, 3)), np.zeros((0, 3), np.int64)
    offs = np.cumsum([0] + [len(v) for v, _ in meshes[:-1]])
    return (
        np.concatenate([v for v, _ in meshes]),
        np.concatenate([f + o for (_, f), o in zip(meshes, offs, strict=True)]),
    )


def _cloud(shape: PointCloud, T: np.ndarray):
    """(points, None) for radius 0, else (None, octahedra mesh)."""
    p = shape.points @ T[:3, :3].T + T[:3, 3]
    if shape.radius == 0.0:
        return p, None
    tips = shape.radius * _AXES  # world axes: the ball's extremes
    v = (p[:, None, :] + tips[None]).reshape(-1, 3)
    f = (_OCTA_FACES[None] + 6 * np.arange(len(p))[:, None, None]).reshape(-1, 3)
    return None, (v, f)


def obstacle_drawable(shape, T) -> Drawable:
    """A scene obstacle (a shape, or a compound: a list of ``(shape, T_object_part)``)
    posed by ``T_world_object (4, 4)`` as a `Drawable` in the world frame."""
    T = np.asarray(T, float)
    parts = [(shape, T)] if isinstance(shape, Shape) else [(s, T @ Tp) for s, Tp in shape]
    meshes, points = [], []
    for s, Tw in parts:
        if isinstance(s, PointCloud):
            p, m = _cloud(s, Tw)
            if p is not None:
                points.append(p)
            if m is not None:
                meshes.append(m)
        else:
            meshes.append(shape_mesh(s, Tw))
    v, f = merge_meshes(meshes) if meshes else (None, None)
    return Drawable(v, f, np.concatenate(points) if points else None)


def link_meshes(robot, poses=None) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """{link: (vertices, faces)} for every link with collision pieces, each piece posed by
    ``poses (n_pieces, 4, 4)`` (world frame; `robot.piece_poses(q)`), or, when None, by its
    ``T_link_piece`` (the link's own frame, for a viewer that poses links by FK)."""
    out: dict[str, list] = {}
    for k, p in enumerate(robot.pieces):
        T = p.pose if poses is None else poses[k]
        out.setdefault(p.link, []).append(shape_mesh(p.shape, T))
    return {link: merge_meshes(m) for link, m in out.items()}
