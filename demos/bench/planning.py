"""Planning benchmark: OMPL planners on MotionBenchMaker problems or on your own, our checker
against what Python users have today, every returned path re-checked on the exact meshes.

Problems: the four MotionBenchMaker Panda sets that ship with the project (``--sets``, all
four by default; ``--data`` for another directory of such files), and your own problem files
(``--problems FILE ...``: a robot by registry name or URDF, a scene file, start/goal pairs,
and optionally planners, validators and a time limit; the format is in docs/benchmark.md and
demos/bench/problems.py). Each set is one OMPL experiment.

Validators (``--validators``):

- ``dichotomy``, ``ca`` (certified edges) and ``discrete`` (states at OMPL's 1 % resolution):
  the plugin (plugins/ompl) over `planning_collision.CollisionChecker`;
- ``fcl``: the baseline users write today: a Python `StateValidityChecker` over python-fcl on
  the exact link meshes (planning_collision.testing.fcl_robot) and OMPL's own
  `DiscreteMotionValidator` at its default resolution;
- ``mplib``: MPlib's own RRTConnect (in its own environment, ``MPLIB_PYTHON``:
  demos/bench/baselines/mplib_runner.py), the planner Python users install today; the
  MotionBenchMaker sets only. The planner list does not apply to it.
- ``vamp``: VAMP's RRTConnect with its benchmark settings (SIMD sphere models, edges checked
  at sampled states; demos/bench/baselines/vamp_runner.py), when VAMP is installed; the
  MotionBenchMaker sets only. The planner list does not apply to it.

Each row has the solve time and, for ours and VAMP, the end-to-end time: obstacles in, path out
(ours: `Scene.from_records` of the problem's obstacles, a `CollisionChecker`, `make_setup` and the
solve; VAMP: its environment and its solve). `planning_collision.demos.bench.vamp` runs the two
interleaved, problem by problem, for a closer ratio.

Each run solves one problem with a time limit. Every path a run returns is re-checked, once
every run is timed, on the exact link meshes by python-fcl, independently of the checker
under test, at states no farther apart than ``--recheck-step`` (any point of the robot moves
at most that much between two checked states: the robot's motion bounds), and the paths
with a colliding state are counted: the missed-collision metric.

Outputs in ``--out``: ``runs.jsonl`` (one line per run), ``logs/<set>.log`` (OMPL's benchmark
log format, one experiment per set, one "planner" per planner and validator: Planner Arena
reads one experiment per log), ``benchmark.db`` (``ompl_benchmark_statistics`` over every
log: what Planner Arena reads), ``summary.md`` (the table printed at the end) and
``times.png`` (solve times per set and validator).

Runs go over local worker processes (``--workers``; OMPL's ``solve`` holds the GIL, so
parallel planning means processes) or a Ray cluster (``--ray auto`` or an address). Timed
runs share the machine with each other: use ``--workers 1`` for times to quote. A run takes
at most its time limit plus the re-check (10 bookshelf problems, dichotomy and fcl: 16 s on
2 cores), after the compile of a fresh machine's first run.

    # a quick look, ~20 s
    python -m planning_collision.demos.benchmark --sets bookshelf_small --n 10
    python -m planning_collision.demos.benchmark --validators dichotomy fcl --n 100 --workers 1
    python -m planning_collision.demos.benchmark --problems my_cell.json  # your problems
    python -m planning_collision.demos.benchmark --validators dichotomy mplib --ray auto
    # two runs' rows, one table
    python -m planning_collision.demos.benchmark --summarize out_a out_b
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np

from planning_collision.demos.bench import reports
from planning_collision.demos.bench.problems import VALIDATORS, mbm_set, problem_file
from planning_collision.io import MBM_SETS, mbm_path

DEFAULT_DATA = mbm_path("box").parent  # the shipped MotionBenchMaker Panda sets
SETS = MBM_SETS
OURS = reports.OURS

# ------------------------------------------------------------------------- worker side

_CACHE: dict = {}


def load_set(source: dict):
    """The `BenchSet` of a task's source (``{"kind": "mbm" | "file", "path": ...}``), loaded
    once per process."""
    key = ("set", source["kind"], source["path"])
    if key not in _CACHE:
        if source["kind"] == "mbm":
            _CACHE[key] = mbm_set(source["path"])
        else:
            _CACHE[key] = problem_file(source["path"])
    return _CACHE[key]


def _robot(bset):
    key = ("robot", json.dumps(bset.robot_spec, sort_keys=True, default=str))
    if key not in _CACHE:
        _CACHE[key] = bset.robot()
    return _CACHE[key]


def _one_scene(kind: str, source: dict, index: int, bset, make):
    """_CACHE's entry of `kind` for this problem's scene, made by make() when it is not the
    one kept (one scene of each kind at a time)."""
    shared = bset.queries[index].obstacles is None  # a problem file's scene serves them all
    key = (kind, source["kind"], source["path"], None if shared else index)
    if key not in _CACHE:
        for k in [k for k in _CACHE if k[0] == kind]:
            del _CACHE[k]
        _CACHE[key] = make()
    return _CACHE[key]


def _world(source: dict, index: int, fcl: bool):
    """(set, query, robot, scene, checker, fcl robot) of one problem, kept for the next run;
    the python-fcl robot only with `fcl` (the baseline validator plans with it), else None."""
    import planning_collision as pc

    bset = load_set(source)

    def make():
        robot, scene = _robot(bset), bset.scene(index)
        checker = pc.CollisionChecker(robot, scene)
        checker.warm_up()
        return [robot, scene, checker, None]

    world = _one_scene("world", source, index, bset, make)
    if fcl and world[3] is None:
        from planning_collision.testing.fcl_robot import FclRobot

        world[3] = FclRobot(world[0], world[1])
    return (bset, bset.queries[index], *world)


def _exact_world(source: dict, index: int):
    """(query, robot, python-fcl robot) of one problem for the re-checks, kept for the next
    (one scene at a time)."""
    from planning_collision.testing.fcl_robot import FclRobot

    bset = load_set(source)

    def make():
        robot = _robot(bset)
        return robot, FclRobot(robot, bset.scene(index))

    return (bset.queries[index], *_one_scene("exact", source, index, bset, make))


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

    from planning_collision.plugins.ompl import StateCodec, make_planner, make_state_space

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
    ss.setPlanner(make_planner(planner, si, planner_range=0))  # OMPL's own range, as users have it
    return ss, codec, svc


def _set_start_goal(ss, codec, query) -> None:
    from planning_collision.plugins.ompl import new_state

    si = ss.getSpaceInformation()
    s, g = new_state(si), new_state(si)
    codec.write(query.start, s)
    codec.write(query.goal, g)
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


def path_collides(fcl_robot, robot, Q, start, goal, step: float) -> bool:
    """True when the path Q does not go from `start` to `goal` (within 1e-6 and 1e-3 of a
    joint), or when some state of it collides on the exact meshes (`recheck`)."""
    ends = np.allclose(Q[0], start, atol=1e-6) and np.allclose(Q[-1], goal, atol=1e-3)
    return (not ends) or recheck(fcl_robot, robot, Q, step)


def _plan(task, bset, query, robot, scene, checker, fcl_robot):
    """Solve one problem; returns (row, path or None)."""
    from ompl import geometric as og

    from planning_collision.plugins.ompl import solve

    v = task["validator"]
    row = {
        "planner": {"mplib": "MPlib-RRTConnect", "vamp": "VAMP-RRTConnect"}.get(v, task["planner"])
    }
    if v == "vamp":
        from planning_collision.demos.bench.baselines.vamp_runner import VampPanda

        if "vamp" not in _CACHE:
            _CACHE["vamp"] = VampPanda()
        p = SimpleNamespace(start=query.start, goals=[query.goal], obstacles=query.obstacles)
        r = _CACHE["vamp"].solve(p, bset.name)
        row.update(solved=r["solved"], time=r["solve"], end_to_end=r["total"])
        row["status"] = "Exact solution" if r["solved"] else "Timeout"
        return row, r["path"]
    if v == "mplib":
        from planning_collision.demos.bench.baselines.mplib_runner import MPlibPanda

        if "mplib" not in _CACHE:
            _CACHE["mplib"] = MPlibPanda()
        p = SimpleNamespace(  # what MPlibPanda reads of a MotionBenchMaker problem
            fixed_joints=bset.robot_spec.get("fixed_joints", {}),
            start=query.start,
            goals=[query.goal],
            obstacles=query.obstacles,
        )
        r = _CACHE["mplib"].solve(p, task["time_limit"], task["seed"])
        row.update(solved=bool(r["solved"]), time=float(r["seconds"]), status=r["status"])
        return row, r["path"] if r["solved"] else None
    if v == "fcl":
        ss, codec, svc = _fcl_setup(robot, fcl_robot, task["planner"])
        _set_start_goal(ss, codec, query)
        mv = None
    else:
        import planning_collision as pc
        from planning_collision.plugins.ompl import make_setup, validators

        t_setup = time.perf_counter()  # end to end: obstacles in (a scene of its own)
        if query.obstacles is not None:
            scene = pc.Scene.from_records(query.obstacles)
            checker = pc.CollisionChecker(robot, scene)
        ss = make_setup(
            robot,
            scene,
            query.start,
            query.goal,
            method=v,
            planner=task["planner"],
            checker=checker,
        )
        svc, mv = validators(ss)
        codec = svc.codec
        t_setup = time.perf_counter() - t_setup
    t0 = time.perf_counter()
    status = solve(ss, task["time_limit"])  # no OMPL timer thread (plugins.ompl.solve)
    row["time"] = time.perf_counter() - t0
    if mv is not None:
        row["end_to_end"] = t_setup + row["time"]
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
    """One run (a dict of `make_tasks`): plan, keeping the path for `recheck_row`. Never
    raises: an error is reported in the row."""
    row = dict(task)
    try:
        world = _world(task["source"], task["index"], fcl=task["validator"] == "fcl")
        query = world[1]
        row["problem"] = query.name
        out, Q = _plan(task, *world)
        row.update(out)
        if Q is not None:
            row["length"] = float(np.linalg.norm(np.diff(Q, axis=0), axis=1).sum())
            row["segments"] = len(Q) - 1
            row["path"] = np.asarray(Q, np.float64)
    except Exception as e:  # noqa: BLE001 - one bad run must not end the benchmark
        row.update(solved=False, error=f"{type(e).__name__}: {e}")
    return row


def recheck_row(row: dict) -> dict:
    """A run's path re-checked on the exact meshes (`path_collides`), its path and source
    then dropped. Run once
    every run is timed: python-fcl's objects made and freed between timed runs slowed the
    next runs (measured: end to end 3.8-3.9 ms a box problem against 3.3, 2.3 against
    1.6-1.7 on table_pick; solves up to 10 %). Never raises."""
    Q = row.pop("path", None)
    try:
        if Q is not None:
            query, robot, fcl_robot = _exact_world(row["source"], row["index"])
            t0 = time.perf_counter()
            row["collides"] = path_collides(
                fcl_robot, robot, Q, query.start, query.goal, row["recheck_step"]
            )
            row["recheck_seconds"] = time.perf_counter() - t0
    except Exception as e:  # noqa: BLE001 - one bad re-check must not end the benchmark
        row["error"] = f"re-check: {type(e).__name__}: {e}"
    row.pop("source", None)
    return row


# ------------------------------------------------------------------------- driver side


def problem_sets(args) -> list[tuple[dict, object]]:
    """[(source, BenchSet)] of the command line: the MotionBenchMaker sets, then the problem
    files. Raises ValueError / FileNotFoundError naming a bad set or file."""

    sources = [{"kind": "mbm", "path": str(Path(args.data) / f"{s}.json")} for s in args.sets]
    sources += [{"kind": "file", "path": str(Path(f).resolve())} for f in args.problems]
    out = []
    for src in sources:
        if src["kind"] == "mbm":
            if not Path(src["path"]).is_file():
                raise FileNotFoundError(f"--sets: no MotionBenchMaker file {src['path']} (--data)")
            out.append((src, mbm_set(src["path"])))
        else:
            out.append((src, problem_file(src["path"])))
    names = [b.name for _, b in out]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ValueError(f"problem set names must differ (one OMPL experiment each): {twice}")
    return out


def set_options(args, bset) -> tuple[list, list, float]:
    """(planners, validators, seconds per run) of a set: the command line's, else the
    problem file's, else RRTConnect, dichotomy and fcl, 1 s."""
    planners = args.planners or bset.planners or ["RRTConnect"]
    validators = args.validators or bset.validators or ["dichotomy", "fcl"]
    for peer in ("mplib", "vamp"):
        if peer in validators and not bset.mbm:
            raise ValueError(
                f"set {bset.name!r}: the {peer} baseline plans the MotionBenchMaker Panda sets only"
            )
    return list(planners), list(validators), float(args.time or bset.time or 1.0)


def make_tasks(args, sets) -> list[dict]:
    """Every run: sets x problems x (planners x validators) x repeats."""
    tasks = []
    for src, bset in sets:
        planners, validators, seconds = set_options(args, bset)
        robot = _robot(bset)
        for i, q in enumerate(bset.queries[: args.n]):
            for what, x in (("start", q.start), ("goal", q.goal)):
                if x.shape != (robot.dof,):
                    raise ValueError(
                        f"{q.name}: {what} has {x.size} values; robot {robot.name!r} has "
                        f"{robot.dof} active joints {robot.joint_names}"
                    )
            inside = all(
                np.all(x >= robot.lower) and np.all(x <= robot.upper) for x in (q.start, q.goal)
            )
            if not inside:  # data/mbm/README.md: two table_pick goals exceed joint 4's limit
                print(f"skipped {q.name}: start or goal outside the joint limits")
                continue
            for v in validators:
                for planner in planners if v not in ("mplib", "vamp") else ["RRTConnect"]:
                    for r in range(args.repeats):
                        tasks.append(
                            {
                                "source": src,
                                "set": bset.name,
                                "index": i,  # the position in the set
                                "planner": planner,
                                "validator": v,
                                "repeat": r,
                                "seed": args.seed + r,
                                "time_limit": seconds,
                                "recheck_step": args.recheck_step,
                            }
                        )
    return tasks


def _run_local(tasks, workers: int, seed: int):
    import multiprocessing as mp

    from tqdm import tqdm

    # problems grouped per worker: each process keeps one problem's checker at a time; the
    # paths re-checked once every run is timed (`recheck_row`)
    tasks = sorted(tasks, key=_by_problem)
    chunk = max(1, len(tasks) // (8 * max(1, workers)))
    if workers <= 1:
        _init_worker(seed, per_process=False)
        rows = [run_task(t) for t in tqdm(tasks, desc="runs", unit="run")]
        rows.sort(key=_by_problem)
        return [recheck_row(r) for r in tqdm(rows, desc="re-checks", unit="run")]
    ctx = mp.get_context("spawn")
    with ctx.Pool(workers, initializer=_init_worker, initargs=(seed,)) as pool:
        it = pool.imap_unordered(run_task, tasks, chunksize=chunk)
        rows = sorted(tqdm(it, total=len(tasks), desc="runs", unit="run"), key=_by_problem)
        it = pool.imap_unordered(recheck_row, rows, chunksize=chunk)
        return list(tqdm(it, total=len(rows), desc="re-checks", unit="run"))


def _by_problem(t: dict) -> tuple:
    return (t["set"], t["index"])


def _ray_batch(batch: list, seed: int, step) -> list:
    """A Ray task: runs (`step` run_task) or re-checks (recheck_row) in a Ray worker process
    (seeded once per process)."""
    if "seeded" not in _CACHE:
        _init_worker(seed)
        _CACHE["seeded"] = True
    return [step(t) for t in batch]


def _run_ray(tasks, address: str, seed: int):
    """The runs as Ray tasks of 8 runs each. Workers import this module: on a cluster, every
    node needs the project installed at the same path (pip install -e .)."""
    import ray
    from tqdm import tqdm

    root = str(Path(__file__).resolve().parents[2])  # the repository (demos/bench/..)
    env = {"env_vars": {"PYTHONPATH": os.pathsep.join([root, os.environ.get("PYTHONPATH", "")])}}
    ours = not ray.is_initialized()  # a Ray this call starts, it shuts down
    if ours and address == "local":  # a local cluster listens on this machine only
        ray.init(runtime_env=env, _node_ip_address="127.0.0.1", include_dashboard=False)
    elif ours:
        ray.init(address=address, runtime_env=env)
    try:
        remote = ray.remote(_ray_batch)
        rows = sorted(tasks, key=_by_problem)
        for step, what in ((run_task, "runs (ray)"), (recheck_row, "re-checks (ray)")):
            batches = [rows[i : i + 8] for i in range(0, len(rows), 8)]
            pending = [remote.remote(b, seed, step) for b in batches]
            rows = []
            with tqdm(total=sum(map(len, batches)), desc=what, unit="run") as bar:
                while pending:
                    done, pending = ray.wait(pending)
                    for d in ray.get(done):
                        rows.extend(d)
                        bar.update(len(d))
            rows.sort(key=_by_problem)
    finally:
        if ours:
            ray.shutdown()
    return rows


def _parser():
    from planning_collision.plugins.ompl import PLANNERS

    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--data", default=str(DEFAULT_DATA), help="MotionBenchMaker Panda directory")
    p.add_argument(
        "--sets",
        nargs="+",
        help=f"MotionBenchMaker sets (default: all of {SETS}, unless --problems is given)",
    )
    p.add_argument(
        "--problems", nargs="+", default=[], metavar="FILE", help="your problem files (JSON)"
    )
    p.add_argument("--n", type=int, default=100, help="problems per set (default all 100)")
    p.add_argument(
        "--planners", nargs="+", choices=PLANNERS, help="default: the file's, else RRTConnect"
    )
    p.add_argument(
        "--validators",
        nargs="+",
        choices=VALIDATORS,
        help="default: the file's, else dichotomy fcl",
    )
    p.add_argument("--time", type=float, help="seconds per solve (default: the file's, else 1)")
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
    return p


def _check_mplib(p, args, sets) -> None:
    if any("mplib" in set_options(args, b)[1] for _, b in sets):
        from planning_collision.demos.bench.baselines import mplib_runner

        if not mplib_runner.available():
            p.error(
                f"--validators mplib: no MPlib that runs in {mplib_runner.python()} (MPlib 0.2.1 "
                "needs numpy < 2): python -m venv ~/.venv-mplib && ~/.venv-mplib/bin/pip "
                "install mplib==0.2.1, then MPLIB_PYTHON=~/.venv-mplib/bin/python"
            )


def _check_vamp(p, args, sets) -> None:
    if any("vamp" in set_options(args, b)[1] for _, b in sets):
        from planning_collision.demos.bench.baselines import vamp_runner

        if not vamp_runner.available():
            p.error("--validators vamp: VAMP is not installed here (vamp_runner's doc says how)")


def write_results(out: Path, rows, sets, args, seconds: float) -> str:
    """runs.jsonl, one OMPL log per set, the database over all logs, summary.md and the
    plot; returns the summary table."""
    with open(out / "runs.jsonl", "w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")
    (out / "logs").mkdir(exist_ok=True)
    logs = []
    for _, bset in sets:
        log = out / "logs" / f"{re.sub(r'[^A-Za-z0-9_.-]', '_', bset.name)}.log"
        srows = [r for r in rows if r["set"] == bset.name]
        time_limit = set_options(args, bset)[2]
        reports.write_ompl_log(log, bset.name, bset.description, srows, args.seed, time_limit)
        logs.append(log)
    failed = reports.build_database(out / "benchmark.db", logs)
    if failed:
        print(f"ompl_benchmark_statistics failed:\n{failed}")
    names = [b.name for _, b in sets]
    table = reports.summarize(rows, names)
    (out / "summary.md").write_text(
        f"{table}\n\n{len(rows)} runs in {seconds:.0f} s on {reports.machine()}; re-check step "
        f"{args.recheck_step} m.\n",
        encoding="utf-8",
    )
    reports.plot(rows, names, out / "times.png")
    return table


def main(argv=None) -> int:
    p = _parser()
    args = p.parse_args(argv)
    if args.summarize:
        rows = []
        for d in args.summarize:
            rows += [json.loads(x) for x in (Path(d) / "runs.jsonl").read_text().splitlines()]
        print(reports.summarize(rows, list(dict.fromkeys(r["set"] for r in rows))))
        return 0
    if args.sets is None:
        args.sets = [] if args.problems else list(SETS)
    if args.time is not None and args.time <= 0:
        p.error(f"--time must be > 0, got {args.time}")
    try:
        sets = problem_sets(args)
        tasks = make_tasks(args, sets)
    except (ValueError, FileNotFoundError) as e:
        p.error(str(e))
    _check_mplib(p, args, sets)
    _check_vamp(p, args, sets)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    print(
        f"{len(tasks)} runs: sets {[b.name for _, b in sets]}, planners "
        f"{sorted({t['planner'] for t in tasks})}, validators "
        f"{sorted({t['validator'] for t in tasks})}; workers: {args.ray or args.workers}"
    )
    print("(each process compiles or loads the checker's kernels first: ~35-45 s when fresh)")
    t0 = time.perf_counter()
    rows = (
        _run_ray(tasks, args.ray, args.seed)
        if args.ray
        else _run_local(tasks, args.workers, args.seed)
    )
    seconds = time.perf_counter() - t0
    rows.sort(key=lambda r: (r["set"], r["index"], reports.label(r), r["repeat"]))
    table = write_results(out, rows, sets, args, seconds)
    print(table)
    for e in [r for r in rows if "error" in r][:5]:
        print(f"error in {e['set']}/{e['index']} {reports.label(e)}: {e['error']}")
    print(
        f"{len(rows)} runs in {seconds:.0f} s; results in {out}/ (runs.jsonl, logs/, "
        "benchmark.db, summary.md, times.png)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
