"""The main demo: the Panda reaching into a shelf, planned by OMPL through planning_collision.

Every edge a planner keeps is certified free (method "dichotomy": no collision anywhere
along the motion, not just at sampled states). Each planner solves the problem --runs
times; the summary gives what was solved, the median solve time, the path length, the
checks the planner made and what each cost, and a dense re-check of every returned path
(2,000 states per edge on the checker's models).

    python demos/plan_shelf.py                         # RRTConnect and PRM
    python demos/plan_shelf.py --planner RRTstar --time 2 --runs 3
    python demos/plan_shelf.py --method discrete       # OMPL-style sampled edges, for contrast
    python demos/plan_shelf.py --view                  # the path in the browser (viz extra)
    python demos/plan_shelf.py --export path.glb       # or as a glTF file

From a clone, the first run on a machine compiles the checker's kernels (announced on
stderr; docs/performance.md says how long), numba caches them, and later runs start in
about a second; a wheel ships them compiled.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from planning_collision.demos import cli, viewing
from planning_collision.demos.scenes import panda_shelf
from planning_collision.plugins.ompl import PLANNERS, make_setup, solution_path, solve, validators


def dense_collisions(checker, Q, per_edge: int = 2000) -> int:
    """Edges of the polyline Q (n, dof) with a colliding state among `per_edge` evenly
    spaced ones (the checker's exact link models). One `is_valid` per state, the planner's
    own compiled call: ~4 us each, where `is_valid_batch` would compile a kernel of its own
    on a machine's first run (~9 s) to save a fraction of a second."""
    t = np.linspace(0.0, 1.0, per_edge)[:, None]
    is_valid = checker.is_valid
    return sum(
        int(not all(is_valid(q) for q in a + t * (b - a)))
        for a, b in zip(Q[:-1], Q[1:], strict=True)
    )


def run_planner(name, robot, scene, start, goal, checker, args, log=print):
    """Solve `args.runs` times with planner `name`; returns the summary row (dict)."""
    rows = []
    for _ in range(args.runs):
        ss = make_setup(
            robot, scene, start, goal, method=args.method, planner=name, checker=checker
        )
        svc, mv = validators(ss)
        t0 = time.perf_counter()
        solved = bool(solve(ss, args.time)) and ss.haveExactSolutionPath()
        dt = time.perf_counter() - t0
        row = {"solved": solved, "time": dt, "states": svc.calls, "edges": sum(mv.counts.values())}
        row["state_s"], row["edge_s"] = svc.seconds, mv.seconds
        if solved:
            row["raw_length"] = ss.getSolutionPath().length()
            ss.simplifySolution(0.2)  # shortcuts are checked by the same certified validator
            Q = solution_path(ss)
            row["length"] = float(np.linalg.norm(np.diff(Q, axis=0), axis=1).sum())
            row["waypoints"] = len(Q)
            row["colliding_edges"] = dense_collisions(checker, Q)
            row["path"] = Q
        rows.append(row)
    ok = [r for r in rows if r["solved"]]
    summary = {
        "planner": name,
        "solved": len(ok),
        "runs": len(rows),
        "time_ms": 1e3 * float(np.median([r["time"] for r in rows])),
        "length": float(np.median([r["length"] for r in ok])) if ok else float("nan"),
        "edges": float(np.median([r["edges"] for r in rows])),
        "states": float(np.median([r["states"] for r in rows])),
        "us_per_edge": 1e6 * sum(r["edge_s"] for r in rows) / max(sum(r["edges"] for r in rows), 1),
        "us_per_state": 1e6
        * sum(r["state_s"] for r in rows)
        / max(sum(r["states"] for r in rows), 1),
        "colliding_paths": sum(r["colliding_edges"] > 0 for r in ok),
        "path": ok[0]["path"] if ok else None,
    }
    log(
        f"{name:12s} {summary['solved']}/{summary['runs']} solved  "
        f"median {summary['time_ms']:7.1f} ms  length {summary['length']:5.2f} rad  "
        f"edges {summary['edges']:6.0f} ({summary['us_per_edge']:5.1f} us each)  "
        f"states {summary['states']:5.0f} ({summary['us_per_state']:4.1f} us each)  "
        f"colliding paths {summary['colliding_paths']}"
    )
    return summary


def main(argv=None) -> int:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--planner", nargs="+", choices=PLANNERS, default=["RRTConnect", "PRM"])
    p.add_argument("--method", choices=("dichotomy", "ca", "discrete"), default="dichotomy")
    p.add_argument("--time", type=float, default=1.0, help="seconds per solve (default 1)")
    p.add_argument("--runs", type=int, default=5, help="solves per planner (default 5)")
    p.add_argument("--seed", type=int, default=1, help="OMPL's random seed (default 1)")
    viewing.add_arguments(p)  # --view, --export: the first path found
    args = p.parse_args(argv)
    if args.runs < 1 or args.time <= 0:
        p.error("--runs must be >= 1 and --time > 0")

    cli.seed_ompl(args.seed)  # before any planner or sampler exists (OMPL_BINDINGS.md)

    import planning_collision as pc

    robot, scene, start, goal = panda_shelf()
    checker = pc.CollisionChecker(robot, scene)
    print(f"Panda ({robot.dof} joints), bookshelf ({len(scene)} obstacles), edges: {args.method}")
    cli.warm_up(checker, args.method)
    print(f"{args.runs} solves per planner, {args.time:g} s each")
    summaries = [
        run_planner(name, robot, scene, start, goal, checker, args) for name in args.planner
    ]
    bad = sum(s["colliding_paths"] for s in summaries)
    print(
        "dense re-check (2,000 states per edge): "
        + ("no returned path collides" if bad == 0 else f"{bad} returned paths collide")
    )
    path = next((s["path"] for s in summaries if s["path"] is not None), None)
    if path is not None:
        viewing.show(scene, robot, path, args)
    return 0 if all(s["solved"] for s in summaries) or args.method == "discrete" else 1


if __name__ == "__main__":
    raise SystemExit(main())
