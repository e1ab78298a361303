"""Planning benchmark: OMPL planners on MotionBenchMaker problems, our checker against what
Python users have today, every returned path re-checked on the exact meshes.

Validators (``--validators``):

- ``dichotomy``, ``ca`` (certified edges) and ``discrete`` (states at OMPL's 1 % resolution):
  the plugin (plugins/ompl) over `planning_collision.CollisionChecker`;
- ``fcl``: the baseline users write today: a Python `StateValidityChecker` over python-fcl on
  the exact link meshes (planning_collision.testing.fcl_robot) and OMPL's own
  `DiscreteMotionValidator` at its default resolution;
- ``mplib``: MPlib's own RRTConnect (in its own environment, ``MPLIB_PYTHON``:
  demos/bench/baselines/mplib_runner.py),
  the planner Python users install today. The planner list does not apply to it.

Each run solves one problem with a time limit. Every path a run returns is then re-checked
on the exact link meshes by python-fcl, independently of the checker under test, at states
no farther apart than ``--recheck-step`` (any point of the robot moves at most that much
between two checked states: the robot's motion bounds), and the paths with a colliding
state are counted: the missed-collision metric.

Outputs in ``--out``: ``runs.jsonl`` (one line per run), ``benchmark.log`` (OMPL's benchmark
log format, one experiment per problem set, one "planner" per planner and validator) and
``benchmark.db`` (``ompl_benchmark_statistics``: what Planner Arena reads), ``summary.md``
(the table printed at the end) and ``times.png`` (solve times per set and validator).

Runs go over local worker processes (``--workers``; OMPL's ``solve`` holds the GIL, so
parallel planning means processes) or a Ray cluster (``--ray auto`` or an address). Timed
runs share the machine with each other: use ``--workers 1`` for times to quote.

    python -m demos.benchmark --sets bookshelf_small --n 10              # a quick look
    python -m demos.benchmark --validators dichotomy fcl --n 100 --workers 1
    python -m demos.benchmark --validators dichotomy mplib --ray auto
    python -m demos.benchmark --summarize out_a out_b   # two runs' rows, one table

The MotionBenchMaker Panda sets ship in planning_collision/data/mbm (``--data`` for another copy).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from planning_collision.io import mbm_path

DEFAULT_DATA = mbm_path("box").parent  # the shipped MotionBenchMaker Panda sets
SETS = ("bookshelf_small", "box", "cage", "table_pick")
OURS = ("dichotomy", "ca", "discrete")
VALIDATORS = (*OURS, "fcl", "mplib")

# ------------------------------------------------------------------------- worker side

_CACHE: dict = {}


def _problem_set(data: str, name: str):
    key = ("set", data, name)
    if key not in _CACHE:
        from planning_collision.io import load_mbm

        _CACHE[key] = load_mbm(str(Path(data) / f"{name}.json"))
    return _CACHE[key]


def _robot(fixed_joints: dict):
    key = ("robot", tuple(sorted(fixed_joints.items())))
    if key not in _CACHE:
        import robots

        _CACHE[key] = robots.load("panda", fixed_joints=dict(fixed_joints))
    return _CACHE[key]


def _world(data: str, set_name: str, index: int):
    """(problem, robot, scene, checker, fcl robot) of one problem, kept for the next run."""
    key = ("world", data, set_name, index)
    if key not in _CACHE:
        import planning_collision as pc
        from planning_collision.testing.fcl_robot import FclRobot

        for k in [k for k in _CACHE if k[0] == "world"]:  # one problem at a time
            del _CACHE[k]
        p = _problem_set(data, set_name).problems[index]
        robot = _robot(p.fixed_joints)
        scene = pc.Scene.from_records(p.obstacles)
        checker = pc.CollisionChecker(robot, scene)
        checker.warm_up()
        _CACHE[key] = (p, robot, scene, checker, FclRobot(robot, scene))
    return _CACHE[key]


def _init_worker(seed: int, per_process: bool = True) -> None:
    """Seed OMPL once per process (its RNG takes a seed only before any sampler exists):
    with `seed` itself in a single process (runs in one process are reproducible, but for
    the time limits), plus the pid in worker processes (so that they differ)."""
    from ompl import util as ou

    ou.setLogLevel(ou.LOG_NONE)
    ou.RNG.setSeed(int(seed) + (os.getpid() % 100000 if per_process else 0))


def _fcl_setup(robot, fcl_robot, planner: str):
    """OMPL with a python-fcl state checker and its own DiscreteMotionValidator."""
    from ompl import base as ob
    from ompl import geometric as og

    from plugins.ompl import StateCodec, make_planner, make_state_space

    space = make_state_space(robot)
    ss = og.SimpleSetup(space)
    si = ss.getSpaceInformation()
    codec = StateCodec(space, robot.continuous)

    class FclValidity(ob.StateValidityChecker):
        def __init__(self, si):
            super().__init__(si)
            self.calls = 0

        def isValid(self, state):
            self.calls += 1
            try:
                return not fcl_robot.collides(codec.read(state))
            except Exception:  # noqa: BLE001 - a callback must never raise into OMPL
                return False

    svc = FclValidity(si)
    ss.setStateValidityChecker(svc)
    ss.setPlanner(make_planner(planner, si))
    return ss, codec, svc


def _set_start_goal(ss, codec, p) -> None:
    from plugins.ompl import new_state

    si = ss.getSpaceInformation()
    s, g = new_state(si), new_state(si)
    codec.write(p.start, s)
    codec.write(p.goals[0], g)
    ss.setStartAndGoalStates(s, g, 1e-6)


def recheck(fcl_robot, robot, Q, step: float) -> bool:
    """True when some state of the polyline Q collides on the exact meshes (python-fcl),
    states spaced so that no point of the robot moves more than `step` (m) between two."""
    R = robot.motion_bound_R
    for a, b in zip(Q[:-1], Q[1:], strict=True):
        n = max(1, math.ceil(float((R @ np.abs(b - a)).max()) / step))
        for k in range(n + 1):
            if fcl_robot.collides(a + (k / n) * (b - a)):
                return True
    return False


def _plan(task, p, robot, scene, checker, fcl_robot):
    """Solve one problem; returns (row, path or None)."""
    from ompl import geometric as og

    from plugins.ompl import solve

    v = task["validator"]
    row = {"planner": task["planner"] if v != "mplib" else "MPlib-RRTConnect"}
    if v == "mplib":
        from demos.bench.baselines.mplib_runner import MPlibPanda

        if "mplib" not in _CACHE:
            _CACHE["mplib"] = MPlibPanda()
        r = _CACHE["mplib"].solve(p, task["time"], task["seed"])
        row.update(solved=bool(r["solved"]), time=float(r["seconds"]), status=r["status"])
        return row, r["path"] if r["solved"] else None
    if v == "fcl":
        ss, codec, svc = _fcl_setup(robot, fcl_robot, task["planner"])
        _set_start_goal(ss, codec, p)
        mv = None
    else:
        from plugins.ompl import make_setup, validators

        ss = make_setup(
            robot, scene, p.start, p.goals[0], method=v, planner=task["planner"], checker=checker
        )
        svc, mv = validators(ss)
        codec = svc.codec
    t0 = time.perf_counter()
    status = solve(ss, task["time"])  # no OMPL timer thread (plugins.ompl.solve)
    row["time"] = time.perf_counter() - t0
    row["solved"] = bool(status) and ss.haveExactSolutionPath()
    row["status"] = str(status)
    row["state_checks"] = svc.calls
    if mv is not None:
        row["valid_motions"] = mv.counts["valid"]
        row["invalid_motions"] = mv.counts["invalid"]
        row["edge_seconds"] = mv.seconds
        row["state_seconds"] = svc.seconds
    if not row["solved"]:
        return row, None
    path = og.PathGeometric(ss.getSolutionPath())
    return row, codec.path(path.getStates())


def run_task(task: dict) -> dict:
    """One run (a dict of `make_tasks`): plan, then re-check the path. Never raises: an
    error is reported in the row."""
    row = dict(task)
    try:
        p, robot, scene, checker, fcl_robot = _world(task["data"], task["set"], task["index"])
        row["problem"] = p.name
        out, Q = _plan(task, p, robot, scene, checker, fcl_robot)
        row.update(out)
        if Q is not None:
            row["length"] = float(np.linalg.norm(np.diff(Q, axis=0), axis=1).sum())
            row["segments"] = len(Q) - 1
            ends = np.allclose(Q[0], p.start, atol=1e-6) and np.allclose(
                Q[-1], p.goals[0], atol=1e-3
            )
            t0 = time.perf_counter()
            row["collides"] = (not ends) or recheck(fcl_robot, robot, Q, task["recheck_step"])
            row["recheck_seconds"] = time.perf_counter() - t0
    except Exception as e:  # noqa: BLE001 - one bad run must not end the benchmark
        row.update(solved=False, error=f"{type(e).__name__}: {e}")
    row.pop("data", None)
    return row


# ------------------------------------------------------------------------- driver side


def make_tasks(args) -> list[dict]:
    """Every run: sets x problems x (planners x validators) x repeats."""
    from planning_collision.io import load_mbm

    tasks = []
    for s in args.sets:
        ps = load_mbm(str(Path(args.data) / f"{s}.json"))
        robot = _robot(ps.problems[0].fixed_joints)
        for i, p in enumerate(ps.problems[: args.n]):
            inside = all(
                np.all(q >= robot.lower) and np.all(q <= robot.upper) for q in (p.start, p.goals[0])
            )
            if not inside:  # data/README: four goals exceed the URDF's joint-4 limit
                print(f"skipped {s}/{p.name}: start or goal outside the joint limits")
                continue
            for v in args.validators:
                for planner in args.planners if v != "mplib" else ["RRTConnect"]:
                    for r in range(args.repeats):
                        tasks.append(
                            {
                                "data": str(args.data),
                                "set": s,
                                "index": i,  # the position in the set (p.index counts from 1)
                                "planner": planner,
                                "validator": v,
                                "repeat": r,
                                "seed": args.seed + r,
                                "time": args.time,
                                "recheck_step": args.recheck_step,
                            }
                        )
    return tasks


def _run_local(tasks, workers: int, seed: int):
    import multiprocessing as mp

    from tqdm import tqdm

    # problems grouped per worker: each process keeps one problem's checker at a time
    tasks = sorted(tasks, key=lambda t: (t["set"], t["index"]))
    if workers <= 1:
        _init_worker(seed, per_process=False)
        return [run_task(t) for t in tqdm(tasks, desc="runs", unit="run")]
    ctx = mp.get_context("spawn")
    with ctx.Pool(workers, initializer=_init_worker, initargs=(seed,)) as pool:
        it = pool.imap_unordered(run_task, tasks, chunksize=max(1, len(tasks) // (8 * workers)))
        return list(tqdm(it, total=len(tasks), desc="runs", unit="run"))


def _ray_batch(batch: list, seed: int) -> list:
    """A Ray task: runs in a Ray worker process (seeded once per process)."""
    if "seeded" not in _CACHE:
        _init_worker(seed)
        _CACHE["seeded"] = True
    return [run_task(t) for t in batch]


def _run_ray(tasks, address: str, seed: int):
    """The runs as Ray tasks of 8 runs each. Workers import this module: on a cluster, every
    node needs the project installed at the same path (pip install -e .)."""
    import ray
    from tqdm import tqdm

    root = str(Path(__file__).resolve().parents[2])  # the repository (demos/bench/..)
    env = {"env_vars": {"PYTHONPATH": os.pathsep.join([root, os.environ.get("PYTHONPATH", "")])}}
    ray.init(
        address=None if address == "local" else address, runtime_env=env, ignore_reinit_error=True
    )
    remote = ray.remote(_ray_batch)
    tasks = sorted(tasks, key=lambda t: (t["set"], t["index"]))
    batches = [tasks[i : i + 8] for i in range(0, len(tasks), 8)]
    pending = [remote.remote(b, seed) for b in batches]
    rows = []
    with tqdm(total=len(tasks), desc="runs (ray)", unit="run") as bar:
        while pending:
            done, pending = ray.wait(pending)
            for d in ray.get(done):
                rows.extend(d)
                bar.update(len(d))
    return rows


# ------------------------------------------------------------------------- reports


def _machine() -> str:
    """The CPU model and core count (for the log and the summary)."""
    model = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            model = next(ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return f"{model}, {os.cpu_count()} cores"


def _label(row) -> str:
    return (
        row["planner"] if row["validator"] == "mplib" else f"{row['planner']}[{row['validator']}]"
    )


_RUN_PROPS = [
    ("time", "REAL"),
    ("solved", "BOOLEAN"),
    ("solution length", "REAL"),
    ("solution segments", "INTEGER"),
    ("collides on meshes", "BOOLEAN"),
    ("state checks", "INTEGER"),
    ("valid motions", "INTEGER"),
    ("invalid motions", "INTEGER"),
    ("problem", "INTEGER"),
    ("repeat", "INTEGER"),
]
_ROW_KEYS = [
    "time",
    "solved",
    "length",
    "segments",
    "collides",
    "state_checks",
    "valid_motions",
    "invalid_motions",
    "index",
    "repeat",
]


def write_ompl_log(path: Path, rows, args, seconds: float) -> None:
    """OMPL's benchmark log (what ompl_benchmark_statistics parses): one experiment per
    problem set; each planner-validator pair is one planner; each run one problem."""
    import ompl
    from ompl import util as ou  # noqa: F401 - the version below comes from the wheel

    version = getattr(ompl, "__version__", "2")
    with open(path, "w", encoding="utf-8") as f:
        for s in args.sets:
            srows = [r for r in rows if r["set"] == s]
            labels = sorted({_label(r) for r in srows})
            f.write(f"OMPL version {version}\nExperiment {s}\n0 experiment properties\n")
            f.write(f"Running on {socket.gethostname()}\n")
            f.write(f"Starting at {time.strftime('%Y-%m-%d %H:%M:%S')}\n")
            f.write(f"<<<|\nMotionBenchMaker {s}, Panda; demos/bench/planning.py\n|>>>\n")
            f.write(f"<<<|\n{_machine()}\n|>>>\n")
            f.write(f"{args.seed} is the random seed\n{args.time} seconds per run\n")
            f.write(f"0 MB per run\n{args.repeats} runs per planner\n")
            f.write(f"{seconds:.3f} seconds spent to collect the data\n0 enum types\n")
            f.write(f"{len(labels)} planners\n")
            for label in labels:
                lrows = [r for r in srows if _label(r) == label]
                f.write(
                    f"{label}\n0 common properties\n{len(_RUN_PROPS)} properties for each run\n"
                )
                for name, typ in _RUN_PROPS:
                    f.write(f"{name} {typ}\n")
                f.write(f"{len(lrows)} runs\n")
                for r in lrows:
                    vals = []
                    for k in _ROW_KEYS:
                        v = r.get(k)
                        vals.append(
                            "" if v is None else str(int(v)) if isinstance(v, bool) else str(v)
                        )
                    f.write("; ".join(vals) + "; \n")
                f.write(".\n")


def summarize(rows, args) -> str:
    """The summary table (markdown): per set and validator."""
    lines = [
        "| set | planner [validator] | solved | median time (ms) | paths colliding on the meshes "
        "| median state checks | µs per motion check | errors |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for s in [*args.sets, "all"] if len(args.sets) > 1 else args.sets:
        in_set = [r for r in rows if s == "all" or r["set"] == s]
        for label in sorted({_label(r) for r in in_set}):
            rr = [r for r in in_set if _label(r) == label]
            ok = [r for r in rr if r.get("solved")]
            t = np.median([r["time"] for r in ok]) * 1e3 if ok else float("nan")
            bad = sum(1 for r in ok if r.get("collides"))
            counted = [r["state_checks"] for r in rr if "state_checks" in r]
            checks = f"{np.median(counted):.0f}" if counted else "-"  # MPlib counts none
            errs = sum(1 for r in rr if "error" in r)
            # our validators time their own motion checks (all runs, solved or not)
            timed = [r for r in rr if "edge_seconds" in r]
            n_mot = sum(r["valid_motions"] + r["invalid_motions"] for r in timed)
            us = f"{sum(r['edge_seconds'] for r in timed) / n_mot * 1e6:.1f}" if n_mot else "-"
            lines.append(
                f"| {s} | {label} | {len(ok)}/{len(rr)} | {t:.1f} | {bad} of {len(ok)} "
                f"| {checks} | {us} | {errs} |"
            )
    return "\n".join(lines + [""] + ratios(rows) + time_split(rows))


def time_split(rows) -> list[str]:
    """Where our validators' solve time goes, over all their runs: motion checks, state
    checks (as the validators time them, with reading OMPL's states), the rest (OMPL's own
    work and its calls into Python)."""
    out = []
    for label in sorted({_label(r) for r in rows if "edge_seconds" in r}):
        rr = [r for r in rows if _label(r) == label and "edge_seconds" in r]
        total = sum(r["time"] for r in rr)
        if total <= 0.0:
            continue
        edges = sum(r["edge_seconds"] for r in rr) / total
        states = sum(r["state_seconds"] for r in rr) / total
        out.append(
            f"{label}'s solve time: motion checks {edges:.0%}, state checks {states:.0%}, "
            f"OMPL and its calls into Python {1.0 - edges - states:.0%}"
        )
    return out


def ratios(rows) -> list[str]:
    """Per problem (set, index, repeat), the median over the problems both solve of one
    planner's time over another's: each other label against each of ours."""
    times: dict = {}
    for r in rows:
        if r.get("solved"):
            times.setdefault(_label(r), {})[(r["set"], r["index"], r["repeat"])] = r["time"]
    ours = [k for k in sorted(times) if k.endswith(("[dichotomy]", "[ca]", "[discrete]"))]
    out = []
    for a in ours:
        for b in sorted(times):
            both = sorted(set(times[a]) & set(times[b])) if b != a and b not in ours else []
            if both:
                x = np.median([times[b][k] / times[a][k] for k in both])
                out.append(f"{a} is {x:.1f}x faster than {b} (median per-problem ratio, "
                           f"{len(both)} problems both solve)")  # fmt: skip
    return out


def plot(rows, args, path: Path) -> bool:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no plot")
        return False
    labels = sorted({_label(r) for r in rows})
    fig, axes = plt.subplots(1, len(args.sets), figsize=(4 * len(args.sets), 4), squeeze=False)
    for ax, s in zip(axes[0], args.sets, strict=True):
        data = [
            [
                1e3 * r["time"]
                for r in rows
                if r["set"] == s and _label(r) == lab and r.get("solved")
            ]
            for lab in labels
        ]
        ax.boxplot([d if d else [np.nan] for d in data], showfliers=True)
        ax.set_xticks(range(1, len(labels) + 1), labels, rotation=30, ha="right", fontsize=7)
        ax.set_yscale("log")
        ax.set_title(s)
        ax.set_ylabel("solve time of solved runs (ms)")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    return True


def main(argv=None) -> int:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    from plugins.ompl import PLANNERS

    p.add_argument("--data", default=str(DEFAULT_DATA), help="MotionBenchMaker Panda directory")
    p.add_argument("--sets", nargs="+", default=list(SETS), help=f"problem sets {SETS}")
    p.add_argument("--n", type=int, default=100, help="problems per set (default all 100)")
    p.add_argument("--planners", nargs="+", choices=PLANNERS, default=["RRTConnect"])
    p.add_argument("--validators", nargs="+", choices=VALIDATORS, default=["dichotomy", "fcl"])
    p.add_argument("--time", type=float, default=1.0, help="seconds per solve (default 1)")
    p.add_argument("--repeats", type=int, default=1, help="runs per problem (default 1)")
    p.add_argument(
        "--seed", type=int, default=1, help="OMPL's seed (--workers 1: the same runs each time)"
    )
    p.add_argument("--recheck-step", type=float, default=0.005, help="m (default 0.005)")
    p.add_argument("--workers", type=int, default=1, help="local worker processes")
    p.add_argument("--ray", metavar="ADDRESS", help="run on Ray: 'auto', 'local' or an address")
    p.add_argument("--out", default="benchmark_results", help="output directory")
    p.add_argument(
        "--summarize",
        nargs="+",
        metavar="DIR",
        help="print the summary and per-problem ratios of earlier runs (their --out "
        "directories together, e.g. one run with MPlib's environment and one without), "
        "and exit",
    )
    args = p.parse_args(argv)
    if args.summarize:
        rows = []
        for d in args.summarize:
            rows += [json.loads(x) for x in (Path(d) / "runs.jsonl").read_text().splitlines()]
        print(summarize(rows, args))
        return 0
    if not Path(args.data).is_dir():
        p.error(f"no MotionBenchMaker data at {args.data} (--data)")
    if "mplib" in args.validators:
        from demos.bench.baselines import mplib_runner

        if not mplib_runner.available():
            p.error(
                f"--validators mplib: no MPlib that runs in {mplib_runner.python()} (MPlib 0.2.1 "
                "needs numpy < 2): python -m venv ~/.venv-mplib && ~/.venv-mplib/bin/pip "
                "install mplib==0.2.1, then MPLIB_PYTHON=~/.venv-mplib/bin/python"
            )
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    tasks = make_tasks(args)
    print(
        f"{len(tasks)} runs: sets {args.sets}, planners {args.planners}, validators "
        f"{args.validators}, {args.time:g} s each; workers: {args.ray or args.workers}"
    )
    print("(each process compiles or loads the checker's kernels first: ~35-45 s when fresh)")
    t0 = time.perf_counter()
    rows = (
        _run_ray(tasks, args.ray, args.seed)
        if args.ray
        else _run_local(tasks, args.workers, args.seed)
    )
    seconds = time.perf_counter() - t0
    rows.sort(key=lambda r: (r["set"], r["index"], _label(r), r["repeat"]))
    with open(out / "runs.jsonl", "w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")
    log = out / "benchmark.log"
    write_ompl_log(log, rows, args, seconds)
    db = out / "benchmark.db"
    db.unlink(missing_ok=True)
    r = subprocess.run(
        [sys.executable, "-m", "ompl.ompl_benchmark_statistics", "-d", str(db), str(log)],
        capture_output=True,
        text=True,
    )
    if r.returncode != 0:
        print(f"ompl_benchmark_statistics failed:\n{r.stderr[-1500:]}")
    table = summarize(rows, args)
    machine = _machine()
    (out / "summary.md").write_text(
        f"{table}\n\n{len(rows)} runs in {seconds:.0f} s on {machine}; time limit {args.time:g} s; "
        f"re-check step {args.recheck_step} m.\n",
        encoding="utf-8",
    )
    plot(rows, args, out / "times.png")
    print(table)
    errors = [r for r in rows if "error" in r]
    for e in errors[:5]:
        print(f"error in {e['set']}/{e['index']} {_label(e)}: {e['error']}")
    print(
        f"{len(rows)} runs in {seconds:.0f} s; results in {out}/ (runs.jsonl, benchmark.log, "
        "benchmark.db, summary.md, times.png)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
