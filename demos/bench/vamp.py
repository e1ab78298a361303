"""Certified planning against VAMP, end to end: obstacles in, path out, side by side.

For the first ``--n`` problems of each MotionBenchMaker Panda set, ``--repeats`` times,
interleaved problem by problem (the order of the two alternates between repeats):

- **ours**: the problem's obstacles into one scene (`Scene.replace_all` of their
  `ObstacleArrays`) that one `CollisionChecker` (self collision on) and one `make_setup`
  (``--planner``, by default the planner compiled with the checker, CompiledRRTConnect; any name of
  `planning_collision.plugins.ompl.PLANNERS`, e.g. OMPL's RRTConnect through the plugin's
  validators; edges certified by "dichotomy") serve for every problem, its start and goal set by
  `set_problem`, then `solve` with a ``--time`` limit (``--new-setup``: a new scene by
  `Scene.from_records`, a new checker and a new setup per problem instead);
- **VAMP** (demos/bench/baselines/vamp_runner.py): its environment of the same obstacles,
  then its RRTConnect (sampled edges, sphere model), twice: with its benchmark settings
  (10^6 samples: the comparison's basis) and with 10^5, its fastest from Python.

Times are wall times from Python (medians over repeats, per problem); the ratio per problem is ours
/ VAMP, and the table gives its median per set and overall. Every returned path is re-checked on the
exact link meshes with python-fcl (planning_collision.demos.bench.planning.recheck: states no
farther apart than ``--recheck-step``), once every run of every set is timed
(`count_colliding`), and the colliding ones counted. The first calls (compile, or numba's
cache) are made before any timing and not counted.

A last table says where the solve goes: our checks per solve (states and certified edges)
against VAMP's iterations (each extends its tree by one sampled edge or more), and the
solve time per check and per iteration.

    python -m planning_collision.demos.bench.vamp         # 4 sets x 10 problems x 3 repeats, ~2 min
    python -m planning_collision.demos.bench.vamp --sets cage --n 30 --repeats 1
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from planning_collision.io import MBM_SETS, load_mbm, mbm_path

PLANNER = "CompiledRRTConnect"  # ours by default: the planner compiled with the checker
FAST_SAMPLES = 100_000  # VAMP's fastest budget from Python (its benchmark's: 10^6)
SECONDS = 1.0  # our solve's time limit (--time)


class Reused:
    """Our scene, checker and OMPL setup, made once per robot and planner and reused for
    every problem (`Scene.replace_all`, `set_problem`): what a user who plans problem after
    problem does (python -m planning_collision.demos.bench.setup times each part)."""

    def __init__(self, robot, problem, planner: str, planner_range: float | None):
        import planning_collision as pc
        from planning_collision.plugins.ompl import make_setup

        self.scene = pc.Scene.from_arrays(pc.ObstacleArrays.from_records(problem.obstacles))
        self.checker = pc.CollisionChecker(robot, self.scene)
        self.ss = make_setup(
            robot, self.scene, problem.start, problem.goals[0], checker=self.checker,
            planner=planner, planner_range=planner_range,
        )  # fmt: skip


def ours(
    robot, problem, seconds: float, planner_range: float | None, planner: str = PLANNER,
    reused: Reused | None = None,
) -> dict:  # fmt: skip
    """Obstacles in, path out, with this project: times (s) of the parts, solved, path, and
    the checks of the solve (states and certified edges: the validators' calls, or the
    compiled planner's motions and the states it checked). With `reused`, the problem's
    obstacles replace the last one's in its scene and its start and goal go on its setup;
    without, a new scene, checker and setup."""
    import planning_collision as pc
    from planning_collision.plugins.ompl import (
        COMPILED,
        make_setup,
        set_problem,
        solution_path,
        solve,
        validators,
    )

    t0 = time.perf_counter()
    if reused is not None:
        reused.scene.replace_all(pc.ObstacleArrays.from_records(problem.obstacles))
        ss = reused.ss
        set_problem(ss, problem.start, problem.goals[0])
    else:
        scene = pc.Scene.from_records(problem.obstacles)
        checker = pc.CollisionChecker(robot, scene)
        ss = make_setup(
            robot, scene, problem.start, problem.goals[0], checker=checker, planner=planner,
            planner_range=planner_range,
        )  # fmt: skip
    t1 = time.perf_counter()
    sv, mv = validators(ss)
    states0, motions0 = sv.calls, mv.counts["valid"] + mv.counts["invalid"]  # (reused)
    status = solve(ss, seconds)
    Q = solution_path(ss) if status else None
    t2 = time.perf_counter()
    if planner in COMPILED:
        last = ss.getPlanner().last
        motions = last.edges if last is not None else 0
    else:
        motions = mv.counts["valid"] + mv.counts["invalid"] - motions0
    checks = sv.calls - states0 + motions
    return {
        "setup": t1 - t0, "solve": t2 - t1, "total": t2 - t0, "solved": bool(status), "path": Q,
        "checks": checks,
    }  # fmt: skip


def run_set(name: str, args, vamps: dict) -> dict:
    """Rows of one set: per problem, the medians of ours and of each VAMP configuration
    (`vamps`: "vamp" with its benchmark settings, "vamp_fast" with FAST_SAMPLES), the runs
    interleaved in an order that rotates with the problem and the repeat. The paths are
    kept for `count_colliding`, which counts the colliding ones once every set is timed."""
    from planning_collision import robots

    pset = load_mbm(str(mbm_path(name)))
    problems = [p for p in pset.problems if p.valid][: args.n]
    robot = robots.load("panda", fixed_joints=problems[0].fixed_joints)
    reused = None if args.new_setup else Reused(robot, problems[0], args.planner, args.range)
    # first calls before the clock: compile or load the kernels, the robot's shared part
    ours(robot, problems[0], args.time, args.range, args.planner, reused)
    for v in vamps.values():
        v.solve(problems[0], name)
    who_all = ["ours", *vamps]
    rows = []
    for k, p in enumerate(problems):
        runs = {who: [] for who in who_all}
        for r in range(args.repeats):
            shift = (k + r) % len(who_all)
            for who in who_all[shift:] + who_all[:shift]:
                if who == "ours":
                    runs[who].append(ours(robot, p, args.time, args.range, args.planner, reused))
                else:
                    runs[who].append(vamps[who].solve(p, name))
        row = {"problem": p.name}
        for who, rs in runs.items():
            row[who] = {
                key: float(np.median([x[key] for x in rs])) for key in ("setup", "solve", "total")
            }
            row[who]["checks"] = float(np.median([x["checks"] for x in rs]))
            row[who]["solved"] = sum(x["solved"] for x in rs)
            row[who]["paths"] = [x["path"] for x in rs if x["solved"]]
        rows.append(row)
    return {"set": name, "rows": rows, "robot": robot, "problems": problems}


def count_colliding(results: list, step: float) -> None:
    """Count the colliding paths of each row (python-fcl on the exact meshes: `path_collides`),
    in place, and drop the paths, the robot and the problems (what the JSON output does not
    hold). Run once every set is timed: the exact meshes' collision objects (python-fcl's
    bounding-volume trees, megabytes of C++ allocations) alive, or freed, between timed
    runs left both planners slower, VAMP's benchmark settings 2x (measured: VAMP 1.34 ms a
    solve against 0.65, our set-up 0.53 against 0.32; the allocator's state that VAMP's
    buffer of 10^6 samples then meets, not the work)."""
    import planning_collision as pc
    from planning_collision.demos.bench.planning import path_collides
    from planning_collision.testing.fcl_robot import FclRobot

    for res in results:
        robot, problems = res.pop("robot"), res.pop("problems")
        for row, p in zip(res["rows"], problems, strict=True):
            fcl_robot = FclRobot(robot, pc.Scene.from_records(p.obstacles))
            for r in row.values():
                if isinstance(r, dict):
                    paths = r.pop("paths")
                    r["colliding"] = sum(
                        path_collides(fcl_robot, robot, Q, p.start, p.goals[0], step) for Q in paths
                    )


def _with_all(results: list) -> list:
    """The sets' results, then one more set "all" with every set's rows: the tables' last
    line."""
    return results + [{"set": "all", "rows": [r for x in results for r in x["rows"]]}]


def _table(results: list, repeats: int, vamp: str = "vamp") -> str:
    """End to end against VAMP configuration `vamp` ("vamp": its benchmark settings;
    "vamp_fast": FAST_SAMPLES), per set and over all: medians of per-problem times and of
    per-problem ratios ours / VAMP."""
    lines = [
        "| set | solved ours / VAMP | end to end, ours ms | end to end, VAMP ms | "
        "ours / VAMP (median of per-problem ratios) | ours: set-up / solve ms | "
        "VAMP: set-up / solve ms | colliding paths ours / VAMP |",
        "|---|---|---|---|---|---|---|---|",
    ]
    every = []
    for res in _with_all(results):
        rows = res["rows"]
        if not rows:
            continue
        o = {k: [r["ours"][k] * 1e3 for r in rows] for k in ("setup", "solve", "total")}
        v = {k: [r[vamp][k] * 1e3 for r in rows] for k in ("setup", "solve", "total")}
        ratio = [r["ours"]["total"] / r[vamp]["total"] for r in rows]
        if res["set"] != "all":
            every.append(float(np.median(ratio)))
        runs = len(rows) * repeats
        so = sum(r["ours"]["solved"] for r in rows)
        sv = sum(r[vamp]["solved"] for r in rows)
        co = sum(r["ours"]["colliding"] for r in rows)
        cv = sum(r[vamp]["colliding"] for r in rows)
        lines.append(
            f"| {res['set']} | {so}/{runs} / {sv}/{runs} | {np.median(o['total']):.2f} | "
            f"{np.median(v['total']):.2f} | {np.median(ratio):.2f}x | "
            f"{np.median(o['setup']):.2f} / {np.median(o['solve']):.2f} | "
            f"{np.median(v['setup']):.2f} / {np.median(v['solve']):.2f} | {co} / {cv} |"
        )
    if every:
        lines.append(f"\nworst set: {max(every):.2f}x")
    return "\n".join(lines)


def _checks_table(results: list) -> str:
    """Where the solve goes: per solve, our validators' calls (states and edges) and VAMP's
    iterations (each an extension of its tree: one edge or more), and the solve time per
    call and per iteration (medians over the problems of per-problem ratios)."""
    lines = [
        "| set | ours: states + edges per solve | ours: us per check | "
        "VAMP: iterations per solve | VAMP: us per iteration |",
        "|---|---|---|---|---|",
    ]
    for res in _with_all(results):
        rows = [r for r in res["rows"] if r["ours"]["checks"] > 0 and r["vamp"]["checks"] > 0]
        if not rows:
            continue
        cells = [res["set"]]
        for who in ("ours", "vamp"):
            n = [r[who]["checks"] for r in rows]
            per = [r[who]["solve"] / r[who]["checks"] * 1e6 for r in rows]
            cells += [f"{np.median(n):.0f}", f"{np.median(per):.1f}"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--sets", nargs="+", default=list(MBM_SETS), choices=MBM_SETS)
    p.add_argument("--n", type=int, default=10, help="problems per set (default 10)")
    p.add_argument("--repeats", type=int, default=3, help="runs per problem (default 3)")
    p.add_argument(
        "--time", type=float, default=SECONDS, help=f"our solve's limit, s (default {SECONDS:g})"
    )
    p.add_argument("--range", type=float, default=None, help="RRTConnect range (default ours)")
    p.add_argument("--planner", default=PLANNER, help=f"ours (default {PLANNER})")
    p.add_argument("--recheck-step", type=float, default=0.005, help="m (default 0.005)")
    p.add_argument(
        "--new-setup", action="store_true",
        help="ours: a new scene, checker and setup per problem (default: one of each, the "
        "obstacles replaced and the start and goal set per problem)",
    )  # fmt: skip
    p.add_argument("--out", type=Path, default=None, help="write the rows as JSON here")
    args = p.parse_args(argv)
    from ompl import util as ou

    from planning_collision.demos.bench.baselines import vamp_runner

    if not vamp_runner.available():
        print("VAMP is not installed in this environment (vamp_runner's doc says how)")
        return 1
    ou.setLogLevel(ou.LOG_NONE)
    ou.RNG.setSeed(1)
    vamps = {"vamp": vamp_runner.VampPanda(), "vamp_fast": vamp_runner.VampPanda(FAST_SAMPLES)}
    t0 = time.perf_counter()
    results = [run_set(s, args, vamps) for s in args.sets]
    seconds = time.perf_counter() - t0
    count_colliding(results, args.recheck_step)  # after every timed run (its doc says why)
    print(
        f"ours: {args.planner}; VAMP with its benchmark settings ({vamps['vamp'].samples} samples)"
    )
    print(_table(results, args.repeats))
    print(f"\nours: {args.planner}; VAMP with {FAST_SAMPLES} samples, its fastest from Python")
    print(_table(results, args.repeats, "vamp_fast"))
    print()
    print(_checks_table(results))
    print(
        f"({seconds:.0f} s timed, {time.perf_counter() - t0:.0f} s with the re-checks; "
        f"{args.n} problems per set, {args.repeats} repeats)"
    )
    if args.out:
        args.out.write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
