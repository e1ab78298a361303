"""Sensed scenes: how fast a point cloud obstacle is built and replaced, what checking in it
costs next to the same scene as primitives, and planning in the MotionBenchMaker sets seen
as surface clouds (docs/clouds.md, docs/performance.md).

Three parts, each printed as a table (medians over --repeats, the two scenes of a row
measured side by side, interleaved, in one run; JIT warm-up done first and reported apart):

- build: a surface cloud of 10^4 and 10^5 points: the shape's validation, `Scene.add`,
  `update_cloud` (a new frame in place), the scene's flat form, the checker's model, and
  the general KCD path for the same points (`--kcd`, seconds);
- queries: per MBM set (its first problem), `is_valid` and a certified edge ("dichotomy")
  in the primitive scene and in its 10^5-point surface cloud, on states and edges recorded
  from RRTConnect in the primitive scene;
- planning: RRTConnect (--time per problem) in each set's problems (--n) sampled as surface
  clouds of a few densities (--densities, radius --radius): solved, median time, and paths
  that collide with the primitives the cloud was sampled from (each edge certified on
  them: the sampling gap at work), beside the primitive scene itself.

    python -m planning_collision.demos.bench.clouds                          # all three, ~4 min
    python -m planning_collision.demos.bench.clouds --parts build queries    # ~1 min
"""

from __future__ import annotations

import argparse
import time

import numpy as np

SETS = ("bookshelf_small", "box", "cage", "table_pick")


def _median_ms(xs) -> float:
    return 1e3 * float(np.median(xs))


def bench_build(records, robot, start, sizes, repeats, radius, kcd, rng) -> list[dict]:
    """Per cloud size, the build steps' median ms (module doc)."""
    import planning_collision as pc
    from planning_collision.cloud_blocks import voxel_filter
    from planning_collision.kcd import compile_object

    rows = []
    pf = time.perf_counter
    for n in sizes:
        frames = [_sampler()(records, n, rng) for _ in range(repeats)]
        scene = pc.Scene()
        cid = scene.add(pc.PointCloud(frames[0], radius))
        checker = pc.CollisionChecker(robot, scene)
        checker.is_valid(start)
        t = {k: [] for k in ("shape", "add", "update", "flat", "model", "first", "filter")}
        for pts in frames:
            t0 = pf()
            cloud = pc.PointCloud(pts, radius)
            t1 = pf()
            other = pc.Scene()
            other.add(cloud)
            t2 = pf()
            scene.update_cloud(cid, pts)
            t3 = pf()
            scene.build()
            t4 = pf()
            checker.model  # noqa: B018 - the property rebuilds the checker's model
            t5 = pf()
            checker.is_valid(start)
            t6 = pf()
            voxel_filter(pts, 0.01, radius)
            t7 = pf()
            stamps = np.diff([t0, t1, t2, t3, t4, t5, t6, t7])
            for k, dt in zip(t, stamps, strict=True):
                t[k].append(dt)
        row = {"points": n, **{k: _median_ms(v) for k, v in t.items()}}
        row["replace_total"] = _median_ms(
            np.sum([t[k] for k in ("update", "flat", "model", "first")], axis=0)
        )
        if kcd:
            t0 = pf()
            compile_object([(pc.PointCloud(frames[0], radius), np.eye(4))], None)
            row["kcd"] = 1e3 * (pf() - t0)
        rows.append(row)
    return rows


def _sampler():
    from planning_collision.testing.surface import surface_points

    return surface_points


def _timed(f, xs) -> np.ndarray:
    t = np.empty(len(xs))
    pf = time.perf_counter
    for k, x in enumerate(xs):
        t0 = pf()
        f(x)
        t[k] = pf() - t0
    return t


def bench_queries(sets, n_points, radius, n_edges, repeats, seed) -> list[dict]:
    """Per set, is_valid and dichotomy edge times in the primitive and the cloud scene."""
    import planning_collision as pc
    from planning_collision import robots
    from planning_collision.demos.bench.checker import record_edges
    from planning_collision.io import load_mbm, mbm_path
    from planning_collision.testing.surface import surface_points

    rows = []
    rng = np.random.default_rng(seed)
    for name in sets:
        p = load_mbm(mbm_path(name)).problems[0]
        robot = robots.load("panda", fixed_joints=p.fixed_joints)
        prim = pc.Scene.from_records(p.obstacles)
        cloud = pc.Scene()
        cloud.add(pc.PointCloud(surface_points(p.obstacles, n_points, rng), radius))
        edges = record_edges([(name, robot, prim, p)], n_edges, seed)
        Q = np.array([e[1] for e in edges] + [0.5 * (e[1] + e[2]) for e in edges])
        checkers = {"prim": pc.CollisionChecker(robot, prim), "cloud": None}
        checkers["cloud"] = pc.CollisionChecker(robot, cloud)
        for ch in checkers.values():
            ch.is_valid(Q[0])
            ch.check_edge(edges[0][1], edges[0][2])
        got = {k: {"state": [], "edge": [], "state_mean": [], "edge_mean": []} for k in checkers}
        for _ in range(repeats):
            for k, ch in checkers.items():
                ts = _timed(ch.is_valid, Q)
                te = _timed(lambda e, ch=ch: ch.check_edge(e[1], e[2]), edges)
                got[k]["state"].append(np.median(ts))
                got[k]["edge"].append(np.median(te))
                got[k]["state_mean"].append(np.mean(ts))
                got[k]["edge_mean"].append(np.mean(te))
        row = {"set": name, "states": len(Q), "edges": len(edges)}
        for k in checkers:
            for m, v in got[k].items():
                row[f"{k}_{m}"] = 1e6 * float(np.median(v))
                row[f"{k}_{m}_range"] = (1e6 * float(np.min(v)), 1e6 * float(np.max(v)))
        rows.append(row)
    return rows


def bench_planning(sets, densities, radius, n, seconds, seed) -> list[dict]:
    """Per set and density (0: the primitive scene), RRTConnect's results (module doc)."""
    from ompl import util as ou

    import planning_collision as pc
    from planning_collision import robots
    from planning_collision.io import load_mbm, mbm_path
    from planning_collision.plugins.ompl import make_setup, solution_path, solve
    from planning_collision.testing.surface import surface_points, surface_spacing

    ou.setLogLevel(ou.LOG_NONE)
    ou.RNG.setSeed(seed)
    rng = np.random.default_rng(seed)
    rows = []
    for name in sets:
        ps = load_mbm(mbm_path(name))
        robot = robots.load("panda", fixed_joints=ps.problems[0].fixed_joints)
        for density in densities:
            times, solved, bad, refused, spacing = [], 0, 0, 0, []
            for p in ps.problems[:n]:
                prim = pc.Scene.from_records(p.obstacles)
                exact = pc.CollisionChecker(robot, prim)
                if density:
                    scene = pc.Scene()
                    pts = surface_points(p.obstacles, density, rng)
                    scene.add(pc.PointCloud(pts, radius))
                    spacing.append(surface_spacing(p.obstacles, density))
                else:
                    scene = prim
                checker = exact if scene is prim else pc.CollisionChecker(robot, scene)
                try:
                    ss = make_setup(robot, scene, p.start, p.goals[0], checker=checker)
                except ValueError:  # start or goal in collision with the cloud
                    refused += 1
                    continue
                t0 = time.perf_counter()
                ok = bool(solve(ss, seconds))
                times.append(time.perf_counter() - t0)
                if ok:
                    solved += 1
                    Q = solution_path(ss)
                    pairs = zip(Q[:-1], Q[1:], strict=True)
                    bad += not all(exact.check_edge(a, b).valid for a, b in pairs)
            rows.append(
                {
                    "set": name,
                    "points": density,
                    "spacing_mm": 1e3 * float(np.mean(spacing)) if spacing else 0.0,
                    "problems": min(n, len(ps.problems)),
                    "refused": refused,
                    "solved": solved,
                    "median_ms": _median_ms(times) if times else float("nan"),
                    "colliding": bad,
                }
            )
    return rows


def main(argv=None) -> int:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument(
        "--parts", nargs="+", choices=("build", "queries", "planning"),
        default=["build", "queries", "planning"],
    )  # fmt: skip
    p.add_argument("--sets", nargs="+", choices=SETS, default=list(SETS))
    p.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    p.add_argument("--densities", type=int, nargs="+", default=[10_000, 30_000, 100_000])
    p.add_argument("--radius", type=float, default=0.005, help="point radius, m (0.005)")
    p.add_argument("--repeats", type=int, default=7, help="repeats per measurement (7)")
    p.add_argument("--edges", type=int, default=300, help="edges per set (300)")
    p.add_argument("--n", type=int, default=20, help="problems per set for planning (20)")
    p.add_argument("--time", type=float, default=1.0, help="seconds per solve (1)")
    p.add_argument("--kcd", action="store_true", help="also time the general path (slow)")
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args(argv)

    import planning_collision as pc
    from planning_collision import robots
    from planning_collision.io import load_mbm, mbm_path

    t0 = time.perf_counter()
    pc.warm_up()
    prob = load_mbm(mbm_path("bookshelf_small")).problems[0]
    robot = robots.load("panda", fixed_joints=prob.fixed_joints)
    rng = np.random.default_rng(args.seed)
    bench_build(prob.obstacles, robot, prob.start, [1000], 1, args.radius, False, rng)
    print(f"warm-up (kernels compiled or loaded) {time.perf_counter() - t0:.1f} s")

    if "build" in args.parts:
        print("\nbuild (bookshelf_small surface cloud), median ms over", args.repeats)
        rows = bench_build(
            prob.obstacles, robot, prob.start, args.sizes, args.repeats, args.radius,
            args.kcd, rng,
        )  # fmt: skip
        print(
            f"{'points':>8} {'shape':>7} {'add':>7} {'update':>7} {'flat':>7} {'model':>7} "
            f"{'1st chk':>7} {'replace':>8} {'filter':>7}" + (f" {'KCD':>8}" if args.kcd else "")
        )
        for r in rows:
            print(
                f"{r['points']:>8,} {r['shape']:7.1f} {r['add']:7.1f} {r['update']:7.1f} "
                f"{r['flat']:7.1f} {r['model']:7.1f} {r['first']:7.1f} "
                f"{r['replace_total']:8.1f} {r['filter']:7.1f}"
                + (f" {r['kcd']:8.0f}" if args.kcd else "")
            )
        print("replace = update + flat + model + first check: a new frame until it is answered")
    if "queries" in args.parts:
        print(f"\nqueries: primitives vs a {100_000:,}-point surface cloud, median us")
        rows = bench_queries(args.sets, 100_000, args.radius, args.edges, 3, args.seed)
        print(
            f"{'set':16} {'is_valid prim':>13} {'cloud':>7} {'x':>5} {'(means)':>13} "
            f"{'edge prim':>10} {'cloud':>7} {'x':>5} {'(means)':>15}"
        )
        for r in rows:
            print(
                f"{r['set']:16} {r['prim_state']:13.2f} {r['cloud_state']:7.2f} "
                f"{r['cloud_state'] / r['prim_state']:5.2f} "
                f"{r['prim_state_mean']:6.2f}/{r['cloud_state_mean']:6.2f} "
                f"{r['prim_edge']:10.1f} {r['cloud_edge']:7.1f} "
                f"{r['cloud_edge'] / r['prim_edge']:5.2f} "
                f"{r['prim_edge_mean']:7.1f}/{r['cloud_edge_mean']:7.1f}"
            )
        lo = min(r["cloud_edge_range"][0] / r["prim_edge_range"][1] for r in rows)
        hi = max(r["cloud_edge_range"][1] / r["prim_edge_range"][0] for r in rows)
        print(f"edge ratio bounds over the repeats: {lo:.2f}-{hi:.2f}")
    if "planning" in args.parts:
        print(
            f"\nplanning: RRTConnect, {args.time:g} s, first {args.n} problems per set, "
            f"radius {1e3 * args.radius:g} mm; colliding = not certified free on the primitives"
        )
        rows = bench_planning(
            args.sets, [0, *args.densities], args.radius, args.n, args.time, args.seed
        )
        print(
            f"{'set':16} {'points':>8} {'spacing':>8} {'refused':>8} {'solved':>7} "
            f"{'median ms':>10} {'colliding':>10}"
        )
        for r in rows:
            pts = f"{r['points']:,}" if r["points"] else "prims"
            print(
                f"{r['set']:16} {pts:>8} {r['spacing_mm']:7.1f}mm {r['refused']:>8} "
                f"{r['solved']:>3}/{r['problems']:<3} {r['median_ms']:10.1f} {r['colliding']:>10}"
            )
        print("refused: start or goal within the cloud (make_setup refuses a colliding one)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
