"""Where an end-to-end problem's time goes, part by part, as `planning_collision.demos.bench.vamp`
runs it: obstacles in (`ObstacleArrays.from_records`, `Scene.replace_all`), the query on the
setup (`set_problem`, which builds the checker's new model at its first check), the solve
through OMPL (`solve`: the query's checks, OMPL's call of the compiled planner, which reads
its start and goal through OMPL, runs the compiled search and hands the path back) and the
path read out (`solution_path`).

Each part is timed by wrapping its function for this process (two clock reads around each
call); parts nest (the search within the planner's solve within `solve`). The problems run
interleaved with VAMP when it is installed (``--no-vamp``: alone), so the figures are those
of the benchmark's table, where code and data are out of the processor's caches between
two set-ups; alone and back to back, the same work takes a fraction of that. Means per
problem over ``--n`` problems x ``--repeats``.

    python -m planning_collision.demos.dev.e2e_parts                 # 4 sets, a few seconds
    python -m planning_collision.demos.dev.e2e_parts --sets cage --no-vamp
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import time

import numpy as np

from planning_collision.io import MBM_SETS, load_mbm, mbm_path

# (label, owner's import path, attribute, class attribute or None), outermost first
PARTS = (
    ("from_records", "planning_collision.geometry.arrays", "ObstacleArrays", "from_records"),
    ("replace_all", "planning_collision.scene", "Scene", "replace_all"),
    ("set_problem", "planning_collision.plugins.ompl", "set_problem", None),
    ("  checker's new model", "planning_collision.checker.checker", "CollisionChecker",
     "_refresh"),
    ("solve", "planning_collision.plugins.ompl", "solve", None),
    ("  query key", "planning_collision.plugins.ompl.query", "QueryKey", "__init__"),
    ("  planner's solve", "planning_collision.plugins.ompl.planner", "CompiledRRTConnect",
     "solve"),
    ("    start and goal via OMPL", "planning_collision.plugins.ompl.planner",
     "CompiledRRTConnect", "_inputs"),
    ("    compiled search", "planning_collision.kernels.planner.rrt_connect", "rrt_connect",
     None),
    ("solution_path", "planning_collision.plugins.ompl", "solution_path", None),
)  # fmt: skip


def _timed(fn, label: str, into: dict):
    @functools.wraps(fn)
    def run(*args, **kwargs):
        t0 = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            into[label] = into.get(label, 0.0) + time.perf_counter() - t0

    return run


@contextlib.contextmanager
def timing(into: dict):
    """Every part of `PARTS` wrapped to add its seconds to into[label] while inside."""
    import importlib

    undo = []
    try:
        for label, module, name, attr in PARTS:
            owner = importlib.import_module(module)
            if attr is not None:
                owner = getattr(owner, name)
                name = attr
            raw = owner.__dict__[name] if isinstance(owner, type) else getattr(owner, name)
            undo.append((owner, name, raw))
            if isinstance(raw, classmethod):
                wrapped = classmethod(_timed(raw.__func__, label, into))
            else:
                wrapped = _timed(raw, label, into)
            setattr(owner, name, wrapped)
        yield into
    finally:
        for owner, name, raw in reversed(undo):
            setattr(owner, name, raw)


def measure(name: str, n: int, repeats: int, vamp=None) -> tuple[dict, dict]:
    """({label: seconds per problem}, {"ours", "vamp": end-to-end seconds per problem}) of
    set `name`, ours and VAMP's runs alternating in order problem by problem."""
    from planning_collision import robots
    from planning_collision.demos.bench.vamp import PLANNER, SECONDS, Reused, ours

    pset = load_mbm(str(mbm_path(name)))
    problems = [p for p in pset.problems if p.valid][:n]
    robot = robots.load("panda", fixed_joints=problems[0].fixed_joints)
    parts: dict = {}
    total = {"ours": [], "vamp": []}
    # wrapped before the setup is made: OMPL's binding may keep the method it found first
    with timing(parts):
        reused = Reused(robot, problems[0], PLANNER, None)
        ours(robot, problems[0], SECONDS, None, PLANNER, reused)  # loads or compiles
        if vamp is not None:
            vamp.solve(problems[0], name)
        parts.clear()
        for r in range(repeats):
            for k, p in enumerate(problems):
                who = ["ours"] + (["vamp"] if vamp is not None else [])
                for w in who if (k + r) % 2 == 0 else who[::-1]:
                    if w == "ours":
                        x = ours(robot, p, SECONDS, None, PLANNER, reused)
                    else:
                        x = vamp.solve(p, name)
                    total[w].append(x["total"])
    runs = len(problems) * repeats
    means = {k: float(np.mean(v)) for k, v in total.items() if v}
    return {k: v / runs for k, v in parts.items()}, means


def table(name: str, parts: dict, total: dict) -> str:
    lines = [f"{name}: ours {total['ours'] * 1e3:.2f} ms a problem (mean)"
             + (f", VAMP {total['vamp'] * 1e3:.2f} ms" if "vamp" in total else "")]  # fmt: skip
    for label, *_ in PARTS:
        s = parts.get(label, 0.0)
        lines.append(f"  {label:<30} {s * 1e6:9.1f} us  {100 * s / total['ours']:5.1f} %")
    return "\n".join(lines)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--sets", nargs="+", default=list(MBM_SETS), choices=MBM_SETS)
    p.add_argument("--n", type=int, default=10, help="problems per set (default 10)")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--no-vamp", action="store_true", help="ours alone, even with VAMP installed")
    args = p.parse_args(argv)
    from ompl import util as ou

    from planning_collision.demos.bench.baselines import vamp_runner

    ou.setLogLevel(ou.LOG_NONE)
    vamp = None
    if not args.no_vamp and vamp_runner.available():
        vamp = vamp_runner.VampPanda()
    print("interleaved with VAMP (its benchmark settings)" if vamp else "ours alone")
    for name in args.sets:
        print(table(name, *measure(name, args.n, args.repeats, vamp)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
