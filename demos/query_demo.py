"""Pair queries on a few shapes: collide, signed distance with witness points, penetration.

Shows the convenient path (`planning_collision.collide/distance/penetration` on shape
objects and 4x4 poses) and then the explicit one (the compiled batch kernel on a flat
table), with JIT warm-up timed apart. Takes ~45 s on a fresh machine (numba compiles the
kernels once and caches them on disk), ~2 s after that.

    python -m planning_collision.demos.query_demo [--pairs 10000] [--seed 0]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import planning_collision as pc
from planning_collision.geometry import shape_table
from planning_collision.kernels.convex.pair import pair_distance_batch
from planning_collision.testing.sampling import random_poses


def _pose(x=0.0, y=0.0, z=0.0, rz=0.0):
    T = np.eye(4)
    c, s = np.cos(rz), np.sin(rz)
    T[:2, :2] = [[c, -s], [s, c]]
    T[:3, 3] = (x, y, z)
    return T


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=10000, help="pairs in the batch part")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    rng = np.random.default_rng(args.seed)

    gripper = pc.Box((0.08, 0.02, 0.10))
    pipe = pc.Cylinder(radius=0.05, length=1.0)
    link = pc.Capsule(radius=0.06, length=0.3)
    rock = pc.Convex(rng.normal(size=(40, 3)) * 0.05)
    floor = pc.Halfspace((0, 0, 1), 0.0)

    t0 = time.perf_counter()
    pc.distance(gripper, _pose(), pipe, _pose(0.2))
    warm = time.perf_counter() - t0

    cases = [
        ("gripper box vs pipe", gripper, _pose(0.0, 0.0, 0.3), pipe, _pose(0.12, 0.0, 0.3, 0.3)),
        ("gripper box vs pipe (overlap)", gripper, _pose(0.0, 0.0, 0.3), pipe, _pose(0.07, 0, 0.3)),
        ("capsule link vs rock", link, _pose(0.0, 0.0, 0.2), rock, _pose(0.2, 0.05, 0.2)),
        ("rock vs floor", rock, _pose(0.0, 0.0, 0.04), floor, _pose()),
    ]
    print(f"JIT warm-up (first query, compiles or loads the cache): {warm:.2f} s\n")
    print(f"{'pair':32s} {'collide':>8s} {'distance m':>12s} {'depth m':>9s}  normal a->b")
    for name, a, Ta, b, Tb in cases:
        hit = pc.collide(a, Ta, b, Tb)
        d = pc.distance(a, Ta, b, Tb)
        p = pc.penetration(a, Ta, b, Tb)
        n = np.array2string(d.normal, precision=3, suppress_small=True)
        print(f"{name:32s} {hit!s:>8s} {d.distance:12.6f} {p.depth:9.6f}  {n}")

    # the explicit path: one compiled call over a flat table and arrays of poses
    shapes = [gripper, pipe, link, rock]
    tab = shape_table(shapes)
    n = args.pairs
    ia = rng.integers(0, len(shapes), n)
    ib = rng.integers(0, len(shapes), n)
    Ta = random_poses(rng, n, 0.3)
    Tb = random_poses(rng, n, 0.3)
    out = np.empty((n, 10))
    t0 = time.perf_counter()
    pair_distance_batch(tab, ia, Ta, tab, ib, Tb, np.inf, out)
    warm = time.perf_counter() - t0
    times = []
    for _ in range(5):
        t0 = time.perf_counter()
        pair_distance_batch(tab, ia, Ta, tab, ib, Tb, np.inf, out)
        times.append(time.perf_counter() - t0)
    per = float(np.median(times)) / n * 1e9
    print(
        f"\nbatch: {n} random pairs, {np.mean(out[:, 0] <= 0):.0%} overlapping, "
        f"{per:.0f} ns/pair inside numba (median of 5; first call {warm:.2f} s)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
