r"""A seeded factory scene, KCD's setting: thousands of static primitives in a hall.

Pipe runs (compound objects of cylinders along the axes with spherical elbows), a steel frame
(box columns and beams, one object per frame bay), cabinets (compound objects of boxes: body,
doors, handles, shelves) and a few machine meshes (tanks and pumps from trimesh). Every
object is made of pieces that touch, so KCD groups them; objects do not share groups.

    python -m planning_collision.demos.bench.factory_scene \
        [--seed 0] [--scale 1.0] [--out factory.json]

prints the counts and build time (under a second for the default ~5,500 primitives; `--out`
writes the scene in the project's JSON format, docs/scene_format.md). `factory_objects` is
what the benchmark (demos/bench/scene.py) feeds to every engine, so all see the same shapes.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import planning_collision as pc
from planning_collision.scene import Scene

HALL = np.array([40.0, 30.0, 8.0])  # metres: x, y, z extent of the hall


def _T(p, R=None):
    T = np.eye(4)
    if R is not None:
        T[:3, :3] = R
    T[:3, 3] = p
    return T


def _axis_rotation(axis: int) -> np.ndarray:
    """Rotation taking local z to world axis `axis` (0 x, 1 y, 2 z)."""
    if axis == 2:
        return np.eye(3)
    if axis == 0:
        return np.array([[0.0, 0, 1], [0, 1, 0], [-1, 0, 0]])
    return np.array([[1.0, 0, 0], [0, 0, 1], [0, -1, 0]])


def _rz(a):
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, -s, 0], [s, c, 0], [0, 0, 1.0]])


def pipe_run(rng, n_segments: int):
    """A pipe: axis-aligned straight segments (cylinders) joined by elbows (spheres)."""
    r = float(rng.uniform(0.03, 0.15))
    p = rng.uniform([1, 1, 2.5], HALL - [1, 1, 0.5])
    parts = []
    axis = int(rng.integers(3))
    for _ in range(n_segments):
        length = float(rng.uniform(0.5, 3.0))
        sign = 1.0 if rng.random() < 0.5 else -1.0
        d = np.zeros(3)
        d[axis] = sign * length
        q = np.clip(p + d, [0.5, 0.5, 2.0], HALL - 0.3)
        seg = q - p
        L = float(np.linalg.norm(seg))
        if L > 0.1:
            parts.append((pc.Cylinder(r, L), _T(0.5 * (p + q), _axis_rotation(axis))))
            parts.append((pc.Sphere(r * 1.05), _T(q)))
            p = q
        axis = int((axis + rng.integers(1, 3)) % 3)
    return parts


def frame_bay(x0, y0, dx, dy, h, beam=0.3):
    """Four columns and four beams around one bay of the steel frame."""
    parts = []
    for cx, cy in ((x0, y0), (x0 + dx, y0), (x0, y0 + dy), (x0 + dx, y0 + dy)):
        parts.append((pc.Box((beam, beam, h)), _T((cx, cy, h / 2))))
    parts.append((pc.Box((dx + beam, beam, beam)), _T((x0 + dx / 2, y0, h - beam / 2))))
    parts.append((pc.Box((dx + beam, beam, beam)), _T((x0 + dx / 2, y0 + dy, h - beam / 2))))
    parts.append((pc.Box((beam, dy + beam, beam)), _T((x0, y0 + dy / 2, h - beam / 2))))
    parts.append((pc.Box((beam, dy + beam, beam)), _T((x0 + dx, y0 + dy / 2, h - beam / 2))))
    return parts


def cabinet(rng):
    """Body, two doors, two handles, three shelves, a plinth: nine touching boxes."""
    w, d, h = rng.uniform([0.6, 0.4, 1.2], [1.2, 0.8, 2.2])
    parts = [(pc.Box((w, d, h)), _T((0, 0, h / 2 + 0.1)))]
    parts.append((pc.Box((w, d, 0.1)), _T((0, 0, 0.05))))
    for sx in (-1, 1):
        parts.append(
            (pc.Box((w / 2 - 0.01, 0.02, h - 0.05)), _T((sx * w / 4, d / 2 + 0.01, h / 2 + 0.1)))
        )
        parts.append((pc.Box((0.02, 0.04, 0.2)), _T((sx * 0.05, d / 2 + 0.04, h / 2 + 0.1))))
    for k in range(3):
        parts.append((pc.Box((w * 0.9, 0.25, 0.03)), _T((0, -d / 2 - 0.12, 0.5 + 0.5 * k))))
    return parts


def machine_mesh(rng, kind: int):
    import trimesh

    if kind % 3 == 0:
        m = trimesh.creation.icosphere(3, float(rng.uniform(0.8, 1.5)))  # a tank, 1280 faces
    elif kind % 3 == 1:
        m = trimesh.creation.capsule(
            float(rng.uniform(1.0, 2.0)), float(rng.uniform(0.3, 0.6)), count=[24, 24]
        )
    else:
        m = trimesh.creation.annulus(0.4, 0.8, float(rng.uniform(0.5, 1.0)), sections=48)
    return pc.Mesh.from_trimesh(m)


def factory_objects(seed: int = 0, scale: float = 1.0):
    """[(shape or [(shape, T_part)], T_world_object, name), ...] of a factory hall.

    scale multiplies the number of pipes and cabinets (1.0: ~5,500 primitives)."""
    rng = np.random.default_rng(seed)
    objs = []
    bx, by = 8.0, 6.0
    for i in range(int(HALL[0] // bx)):
        for j in range(int(HALL[1] // by)):
            objs.append(
                (
                    frame_bay(i * bx + 0.5, j * by + 0.5, bx - 1.0, by - 1.0, HALL[2] - 0.2),
                    np.eye(4),
                    f"bay_{i}_{j}",
                )
            )
    for k in range(int(round(260 * scale))):
        objs.append((pipe_run(rng, int(rng.integers(4, 10))), np.eye(4), f"pipe_{k}"))
    for k in range(int(round(150 * scale))):
        p = (*rng.uniform([1, 1], HALL[:2] - 1), 0.0)
        objs.append((cabinet(rng), _T(p, _rz(rng.uniform(0, 2 * np.pi))), f"cabinet_{k}"))
    for k in range(4):
        p = (*rng.uniform([3, 3], HALL[:2] - 3), 1.5)
        objs.append((machine_mesh(rng, k), _T(p, _rz(rng.uniform(0, 2 * np.pi))), f"machine_{k}"))
    return objs


def make_factory(seed: int = 0, scale: float = 1.0, min_size: float | None = None) -> Scene:
    """The factory as a `Scene` (see `factory_objects`)."""
    scene = Scene(min_size=min_size)
    for shape, T, name in factory_objects(seed, scale):
        scene.add(shape, T, name)
    return scene


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--scale", type=float, default=1.0, help="multiplies pipes and cabinets")
    ap.add_argument("--min-size", type=float, default=None, help="KCD detail filter, m")
    ap.add_argument("--out", default=None, help="write the scene (.json or .scene)")
    args = ap.parse_args(argv)
    objs = factory_objects(args.seed, args.scale)
    t0 = time.perf_counter()
    scene = Scene(min_size=args.min_size)
    for shape, T, name in objs:
        scene.add(shape, T, name)
    t1 = time.perf_counter()
    scene.build()
    t2 = time.perf_counter()
    st = scene.stats()
    print(
        f"factory seed={args.seed}: {st['objects']} objects, {st['primitives']} primitives, "
        f"{st['groups']} KCD groups, {st['kcd_nodes']} KCD nodes, {st['bvh_nodes']} BVH nodes"
    )
    print(
        f"compile objects {t1 - t0:.3f} s + join {t2 - t1:.3f} s = build {t2 - t0:.3f} s; "
        f"{st['bytes'] / 1e6:.2f} MB of arrays"
    )
    if args.out:
        scene.to_file(args.out)
        print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
