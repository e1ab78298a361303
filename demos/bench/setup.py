"""Obstacles in, planner ready: what each part of a set-up costs, per MotionBenchMaker problem.

A user who plans in a new scene per problem (the end-to-end comparison with VAMP,
`demos.bench.vamp`) pays for these before the planner's first step:

- ``scene``: `Scene.from_records` of the problem's obstacles (shapes validated, compiled);
- ``flat``: the scene's flat form for the kernels (`SceneSnapshot.flat`: the KCD hierarchy);
- ``checker``: a `CollisionChecker` over it (the robot's part is shared by every checker of
  the robot; the scene's part and its address table are made here);
- ``workspace``: the checker's first `is_valid` (it makes the calling thread's workspace);
- ``make_setup``: OMPL's state space, validators and planner, the start and goal checked.

Medians over ``--repeats`` runs per problem (interleaved problem by problem), then the
median over problems; `total` is the median of the per-problem sums. The first set-up (numba
loading its cache, the robot's shared part) is made before the clock and not counted.

    python -m demos.bench.setup                  # 4 sets x 10 problems x 20 repeats, ~10 s
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from planning_collision.io import MBM_SETS, load_mbm, mbm_path

PARTS = ("scene", "flat", "checker", "workspace", "make_setup")


def set_up(robot, problem) -> dict:
    """Seconds of each part of one set-up (module doc)."""
    import planning_collision as pc
    from plugins.ompl import make_setup

    clock = time.perf_counter
    t = [clock()]
    scene = pc.Scene.from_records(problem.obstacles)
    t.append(clock())
    scene.snapshot().flat()
    t.append(clock())
    checker = pc.CollisionChecker(robot, scene)
    t.append(clock())
    checker.is_valid(problem.start)
    t.append(clock())
    make_setup(robot, scene, problem.start, problem.goals[0], checker=checker)
    t.append(clock())
    return dict(zip(PARTS, np.diff(t), strict=True))


def measure(sets, n: int, repeats: int) -> dict:
    """{part: per-problem medians (s)} over the first n valid problems of each set."""
    import robots

    problems = []
    for name in sets:
        problems += [p for p in load_mbm(str(mbm_path(name))).problems if p.valid][:n]
    robot = robots.load("panda", fixed_joints=problems[0].fixed_joints)
    set_up(robot, problems[0])
    runs = [[] for _ in problems]
    for _ in range(repeats):
        for k, p in enumerate(problems):
            runs[k].append(set_up(robot, p))
    out = {part: [float(np.median([r[part] for r in rs])) for rs in runs] for part in PARTS}
    out["total"] = [float(np.median([sum(r.values()) for r in rs])) for rs in runs]
    out["obstacles"] = [len(p.obstacles) for p in problems]
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--sets", nargs="+", default=list(MBM_SETS), choices=MBM_SETS)
    p.add_argument("--n", type=int, default=10, help="problems per set (default 10)")
    p.add_argument("--repeats", type=int, default=20, help="set-ups per problem (default 20)")
    args = p.parse_args(argv)
    from ompl import util as ou

    ou.setLogLevel(ou.LOG_NONE)
    res = measure(args.sets, args.n, args.repeats)
    obstacles = res.pop("obstacles")
    print(
        f"set-up per problem ({len(obstacles)} problems, {min(obstacles)}-{max(obstacles)} "
        f"obstacles; medians of {args.repeats} repeats, then over problems):"
    )
    for part, xs in res.items():
        print(f"  {part:11s} {np.median(xs) * 1e3:.3f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
