"""Surface clouds: the obstacles of a scene as a sensor would see them, points sampled on
their surfaces (for the cloud demo, the cloud benchmark and the tests).

`surface_points(records, n, rng)` samples ``n`` points uniformly by area over the surfaces
of boxes, spheres, cylinders and capsules (world frame); `surface_spacing` says how far
apart they are on average. A cloud of balls of radius ``r`` about such points covers the
surfaces it was sampled from only where every surface point lies within ``r`` of a sample:
the *sampling gap*. A robot piece thinner than the gaps may pass where the primitives would
stop it, so a path planned in a sampled cloud is re-checked on the primitives
(demos/bench/clouds.py counts those that collide).
"""

from __future__ import annotations

import math

import numpy as np

from planning_collision.geometry.shapes import Box, Capsule, Cylinder, Sphere

__all__ = ["surface_area", "surface_points", "surface_spacing"]


def _area(shape) -> float:
    if isinstance(shape, Box):
        x, y, z = shape.extents
        return 2.0 * (x * y + y * z + z * x)
    if isinstance(shape, Sphere):
        return 4.0 * math.pi * shape.radius**2
    if isinstance(shape, Cylinder):
        r, h = shape.radius, shape.length
        return 2.0 * math.pi * r * h + 2.0 * math.pi * r * r
    if isinstance(shape, Capsule):
        r, h = shape.radius, shape.length
        return 2.0 * math.pi * r * h + 4.0 * math.pi * r * r
    raise TypeError(f"no surface sampler for {type(shape).__name__}")


def _parts(records):
    """(shape, T_world_part) of every record, compounds (lists of (shape, T_object_part))
    opened."""
    out = []
    for r in records:
        T = np.asarray(r.T, np.float64)
        if isinstance(r.shape, (list, tuple)):
            out += [(s, T @ np.asarray(Tp, np.float64)) for s, Tp in r.shape]
        else:
            out.append((r.shape, T))
    return out


def surface_area(records) -> float:
    """Total surface area (m^2) of the records' shapes (box, sphere, cylinder, capsule;
    compounds of them)."""
    return float(sum(_area(s) for s, _ in _parts(records)))


def _unit(rng, n):
    v = rng.normal(size=(n, 3))
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def _local(shape, n: int, rng) -> np.ndarray:
    """n points uniform by area on the shape's surface, in its frame."""
    if isinstance(shape, Box):
        e = np.asarray(shape.extents)
        areas = np.array([e[1] * e[2], e[0] * e[2], e[0] * e[1]])
        axis = rng.choice(3, size=n, p=areas / areas.sum())
        p = (rng.random((n, 3)) - 0.5) * e
        side = np.where(rng.random(n) < 0.5, -0.5, 0.5)
        p[np.arange(n), axis] = side * e[axis]
        return p
    if isinstance(shape, Sphere):
        return shape.radius * _unit(rng, n)
    r, h = shape.radius, shape.length
    if isinstance(shape, Cylinder):
        side, cap = 2.0 * math.pi * r * h, math.pi * r * r
        on_side = rng.random(n) < side / (side + 2.0 * cap)
        a = rng.random(n) * 2.0 * math.pi
        rho = np.where(on_side, r, r * np.sqrt(rng.random(n)))
        z = np.where(on_side, (rng.random(n) - 0.5) * h, np.where(rng.random(n) < 0.5, -h, h) / 2)
        return np.stack([rho * np.cos(a), rho * np.sin(a), z], axis=1)
    side, ends = 2.0 * math.pi * r * h, 4.0 * math.pi * r * r
    on_side = rng.random(n) < side / (side + ends)
    a = rng.random(n) * 2.0 * math.pi
    p = np.stack([r * np.cos(a), r * np.sin(a), (rng.random(n) - 0.5) * h], axis=1)
    u = r * _unit(rng, n)
    u[:, 2] += np.sign(u[:, 2]) * h / 2
    return np.where(on_side[:, None], p, u)


def surface_points(records, n: int, rng: np.random.Generator) -> np.ndarray:
    """``(n, 3)`` float64 points (world frame, m) uniform by area on the surfaces of the
    records' shapes (anything with ``shape`` and ``T``: `ObstacleRecord`, `Obstacle`;
    compounds opened)."""
    parts = _parts(records)
    areas = np.array([_area(s) for s, _ in parts])
    counts = rng.multinomial(int(n), areas / areas.sum())
    out = []
    for (shape, T), k in zip(parts, counts, strict=True):
        if k:
            p = _local(shape, int(k), rng)
            out.append(p @ T[:3, :3].T + T[:3, 3])
    return np.concatenate(out) if out else np.zeros((0, 3))


def surface_spacing(records, n: int) -> float:
    """The mean spacing (m) of n points on the records' surfaces: sqrt(area / n), the side
    of the square each point has to itself."""
    return math.sqrt(surface_area(records) / max(int(n), 1))
