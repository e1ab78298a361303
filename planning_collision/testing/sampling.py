"""Random shapes and poses for oracle tests, the full sweep and the benchmark.

One generator for all three, so the CI sample is a prefix-alike of the sweep: sizes 2-50 cm
uniformly random rotations, and the second shape placed along a random direction
at a random fraction of the two bounding radii so that roughly a third of pairs overlap.
All randomness comes from the `np.random.Generator` passed in.
"""

from __future__ import annotations

import itertools

import numpy as np

from planning_collision import Box, Capsule, Cone, Convex, Cylinder, Halfspace, Sphere
from planning_collision.geometry.poses import quaternion_to_matrix

KINDS = ("sphere", "box", "capsule", "cylinder", "cone", "convex")

# Every unordered pair of the six convex kinds (21) and halfspace vs each (6).
PAIR_TYPES = [(a, b) for a, b in itertools.combinations_with_replacement(KINDS, 2)] + [
    ("halfspace", k) for k in KINDS
]

SIZE_MIN, SIZE_MAX = 0.02, 0.5  # metres: sizes from 2 cm to 50 cm


def random_rotations(rng: np.random.Generator, n: int | None = None) -> np.ndarray:
    """Uniform on SO(3) (unit quaternions from a 4-D Gaussian), exactly orthonormalised:
    (3, 3), or (n, 3, 3) when n is given."""
    R = quaternion_to_matrix(rng.normal(size=4 if n is None else (n, 4)))
    u, _, vt = np.linalg.svd(R)
    return u @ vt


def random_rotation(rng: np.random.Generator) -> np.ndarray:
    """One uniformly random rotation (3, 3)."""
    return random_rotations(rng)


def random_poses(rng: np.random.Generator, n: int, spread: float = 1.0) -> np.ndarray:
    """(n, 4, 4) poses: uniform rotations, translations uniform in [-spread, spread]^3."""
    T = np.tile(np.eye(4), (n, 1, 1))
    T[:, :3, :3] = random_rotations(rng, n)
    T[:, :3, 3] = rng.uniform(-spread, spread, (n, 3))
    return T


def random_pose(rng: np.random.Generator, spread: float = 1.0) -> np.ndarray:
    T = np.eye(4)
    T[:3, :3] = random_rotation(rng)
    T[:3, 3] = rng.uniform(-spread, spread, 3)
    return T


def _size(rng):
    return float(rng.uniform(SIZE_MIN, SIZE_MAX))


def random_convex_points(rng: np.random.Generator, n: int | None = None) -> np.ndarray:
    """8-40 points in a random ellipsoid with semi-axes of 1-25 cm (so diameters 2-50 cm),
    offset from the local origin by up to a quarter of the size (hulls need not be centred)."""
    n = int(rng.integers(8, 41)) if n is None else n
    axes = rng.uniform(0.5 * SIZE_MIN, 0.5 * SIZE_MAX, 3)
    d = rng.normal(size=(n, 3))
    d /= np.linalg.norm(d, axis=1)[:, None]
    p = d * rng.uniform(0.3, 1.0, (n, 1)) ** (1 / 3) * axes
    p = p @ random_rotation(rng).T + rng.uniform(-0.25, 0.25, 3) * axes
    return p


def random_shape(kind: str, rng: np.random.Generator, n_points: int | None = None):
    """One shape of `kind`; a convex gets `n_points` points (default 8-40)."""
    if kind == "sphere":
        return Sphere(0.5 * _size(rng))
    if kind == "box":
        return Box(rng.uniform(SIZE_MIN, SIZE_MAX, 3))
    if kind == "capsule":
        return Capsule(0.5 * _size(rng), _size(rng))
    if kind == "cylinder":
        return Cylinder(0.5 * _size(rng), _size(rng))
    if kind == "cone":
        return Cone(0.5 * _size(rng), _size(rng))
    if kind == "convex":
        # a quarter of the hulls are sphere-swept (kernels/base/layout.py), the rest plain polytopes
        r = float(rng.uniform(0.005, 0.05)) if rng.random() < 0.25 else 0.0
        return Convex(random_convex_points(rng, n_points), r)
    if kind == "halfspace":
        n = rng.normal(size=3)
        return Halfspace(n / np.linalg.norm(n), float(rng.uniform(-0.2, 0.2)))
    raise ValueError(f"kind must be one of {KINDS + ('halfspace',)}, got {kind!r}")


def bounding_radius(shape) -> float:
    """Radius of a ball about the local origin containing the shape."""
    if isinstance(shape, Sphere):
        return shape.radius
    if isinstance(shape, Box):
        return 0.5 * float(np.linalg.norm(shape.extents))
    if isinstance(shape, Capsule):
        return shape.radius + 0.5 * shape.length
    if isinstance(shape, (Cylinder, Cone)):
        return float(np.hypot(shape.radius, 0.5 * shape.length))
    if isinstance(shape, Convex):
        return float(np.linalg.norm(shape.points, axis=1).max()) + shape.radius
    raise TypeError(type(shape).__name__)


def inner_radius(shape) -> float:
    """A scale of the shape's thickness (for placement only)."""
    if isinstance(shape, Sphere):
        return shape.radius
    if isinstance(shape, Box):
        return 0.5 * float(np.min(shape.extents))
    if isinstance(shape, (Capsule, Cylinder, Cone)):
        return shape.radius
    if isinstance(shape, Convex):
        return 0.25 * float(np.ptp(shape.points, axis=0).min()) + shape.radius
    raise TypeError(type(shape).__name__)


def place_pair(a, b, rng: np.random.Generator):
    """Poses (Ta, Tb) for a and b: b's centre along a random direction from a's, at a
    distance drawn so that about a third of pairs overlap."""
    Ta = random_pose(rng)
    if isinstance(a, Halfspace):
        # b's origin at signed height s above the plane (in a's frame): s < 0 overlaps for
        # sure, s > bounding radius is free for sure; in between depends on the orientation
        Tb = random_pose(rng)
        n_w = Ta[:3, :3] @ a.normal
        plane_pt = Ta[:3, :3] @ (a.normal * a.offset) + Ta[:3, 3]
        s = rng.uniform(-0.3, 1.6) * bounding_radius(b)
        Tb[:3, 3] = plane_pt + s * n_w + _tangent(n_w, rng) * rng.uniform(-0.5, 0.5)
        return Ta, Tb
    Tb = random_pose(rng)
    u = rng.normal(size=3)
    u /= np.linalg.norm(u)
    lo = inner_radius(a) + inner_radius(b)
    hi = bounding_radius(a) + bounding_radius(b)
    s = rng.uniform(0.5 * lo, 1.3 * hi)
    Tb[:3, 3] = Ta[:3, 3] + s * u
    return Ta, Tb


def _tangent(n, rng):
    t = np.cross(n, rng.normal(size=3))
    return t / np.linalg.norm(t)


def random_pairs(pair_type, n: int, rng: np.random.Generator, n_points: int | None = None):
    """n random (a, Ta, b, Tb) of one pair type."""
    ka, kb = pair_type
    out = []
    for _ in range(n):
        a, b = random_shape(ka, rng, n_points), random_shape(kb, rng, n_points)
        Ta, Tb = place_pair(a, b, rng)
        out.append((a, Ta, b, Tb))
    return out


def scaled(shape, k: float):
    """The shape scaled by k about its local origin (a halfspace: its offset)."""
    if isinstance(shape, Sphere):
        return Sphere(shape.radius * k)
    if isinstance(shape, Box):
        return Box(np.asarray(shape.extents) * k)
    if isinstance(shape, Capsule):
        return Capsule(shape.radius * k, shape.length * k)
    if isinstance(shape, Cylinder):
        return Cylinder(shape.radius * k, shape.length * k)
    if isinstance(shape, Cone):
        return Cone(shape.radius * k, shape.length * k)
    if isinstance(shape, Convex):
        return Convex(np.asarray(shape.points) * k, shape.radius * k)
    if isinstance(shape, Halfspace):
        return Halfspace(shape.normal, shape.offset * k)
    raise TypeError(type(shape).__name__)


def scaled_pose(T: np.ndarray, k: float) -> np.ndarray:
    T = T.copy()
    T[:3, 3] *= k
    return T
