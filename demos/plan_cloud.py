"""The Panda planning through a shelf it sees as a point cloud, re-planning every frame.

Each frame a simulated sensor samples the shelf's surfaces (--points, uniform by area, a new
sample every frame, as a depth camera's noise would give), an optional voxel filter thins it
(--spacing; the radius grows by half a cell's diagonal so the thinned cloud holds the
original balls), the cloud obstacle is replaced in place (`Scene.update_cloud`), and
RRTConnect plans again with certified edges. Printed per frame: filter, build and plan
times, and the end-to-end time (filter + build + plan; the sensor's sampling is not
counted), and whether the path is free on the primitives the cloud was sampled from (each
edge certified on them). Takes a few seconds after the kernels are compiled.

    python -m planning_collision.demos.plan_cloud                        # 100,000 points, 20 frames
    python -m planning_collision.demos.plan_cloud --points 30000 --spacing 0.02 --frames 50
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from planning_collision.demos import cli
from planning_collision.demos.scenes import panda_shelf
from planning_collision.plugins.ompl import make_setup, solution_path, solve


def _frame(scene, cid, pts, args):
    """(filter s, build s, points kept): thin when asked, replace the cloud."""
    import planning_collision as pc
    from planning_collision.cloud_blocks import voxel_filter

    t0 = time.perf_counter()
    r = args.radius
    if args.spacing > 0:
        pts, r = voxel_filter(pts, args.spacing, r)
    t1 = time.perf_counter()
    scene.replace(cid, pc.PointCloud(pts, r))
    t2 = time.perf_counter()
    return t1 - t0, t2 - t1, pts.shape[0]


def _free_on(checker, Q) -> bool:
    """Every edge of the path certified free on `checker`'s scene."""
    return all(checker.check_edge(a, b).valid for a, b in zip(Q[:-1], Q[1:], strict=True))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--points", type=int, default=100_000, help="points per frame (100,000)")
    p.add_argument("--radius", type=float, default=0.01, help="point radius, m (0.01)")
    p.add_argument("--spacing", type=float, default=0.0, help="voxel filter cell, m (0: off)")
    p.add_argument("--frames", type=int, default=20, help="frames (default 20)")
    p.add_argument("--time", type=float, default=1.0, help="seconds per plan (default 1)")
    p.add_argument("--seed", type=int, default=1, help="OMPL's and the sensor's seed")
    args = p.parse_args(argv)
    if args.points < 1 or args.frames < 1 or args.time <= 0 or args.radius < 0:
        p.error("--points, --frames must be >= 1, --time > 0, --radius >= 0")
    cli.seed_ompl(args.seed)

    import planning_collision as pc
    from planning_collision.testing.surface import surface_points, surface_spacing

    robot, shelf, start, goal = panda_shelf()
    records = shelf.records()
    rng = np.random.default_rng(args.seed)
    scene = pc.Scene()
    cid = scene.add(pc.PointCloud(surface_points(records, args.points, rng), args.radius))
    checker = pc.CollisionChecker(robot, scene)
    exact = pc.CollisionChecker(robot, shelf)  # the primitives the cloud is sampled from
    print(
        f"Panda in the bookshelf seen as {args.points:,} surface points (mean spacing "
        f"{1e3 * surface_spacing(records, args.points):.1f} mm), radius {1e3 * args.radius:g} mm"
        + (f", voxel filter {1e3 * args.spacing:g} mm" if args.spacing > 0 else "")
    )
    t0 = time.perf_counter()
    cli.warm_up(checker)
    exact.warm_up(methods=("dichotomy",))
    _frame(scene, cid, surface_points(records, args.points, rng), args)  # cloud kernels
    print(f"warm-up (compile or load, first build) {time.perf_counter() - t0:.1f} s")
    try:
        ss = make_setup(robot, scene, start, goal, planner="RRTConnect", checker=checker)
    except ValueError as e:  # the start or the goal within the cloud's balls
        print(f"cannot plan: {e}")
        return 1
    rows = []
    for k in range(args.frames):
        pts = surface_points(records, args.points, rng)  # the sensor: not timed
        tf, tb, kept = _frame(scene, cid, pts, args)
        ss.clear()
        t0 = time.perf_counter()
        ok = bool(solve(ss, args.time))
        tp = time.perf_counter() - t0
        free = _free_on(exact, solution_path(ss)) if ok else None
        rows.append((tf, tb, tp, ok, free))
        print(
            f"frame {k:3d}: {kept:7,} points  filter {1e3 * tf:6.1f} ms  build {1e3 * tb:6.1f} ms"
            f"  plan {1e3 * tp:7.1f} ms ({'solved' if ok else 'not solved'})  "
            f"end to end {1e3 * (tf + tb + tp):7.1f} ms"
            + ("" if free is None else f"  on the primitives: {'free' if free else 'COLLIDES'}")
        )
    a = np.array([r[:3] for r in rows])
    total = a.sum(axis=1)
    solved = sum(r[3] for r in rows)
    bad = sum(r[4] is False for r in rows)
    print(
        f"median per frame: filter {1e3 * np.median(a[:, 0]):.1f} ms, build "
        f"{1e3 * np.median(a[:, 1]):.1f} ms, plan {1e3 * np.median(a[:, 2]):.1f} ms, end to end "
        f"{1e3 * np.median(total):.1f} ms ({1.0 / np.median(total):.1f} frames per second)"
    )
    print(
        f"{solved}/{len(rows)} frames solved; paths colliding with the primitives: {bad} "
        "(each edge certified on them)"
    )
    return 0 if solved == len(rows) and bad == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
