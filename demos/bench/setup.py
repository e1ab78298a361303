"""Obstacles in, planner ready: what each part of a set-up costs, per MotionBenchMaker problem,
by the two ways to plan in a new scene per problem.

**new** (one scene, one checker, one setup for every problem; what
`planning_collision.demos.bench.vamp` runs):

- ``arrays``: `ObstacleArrays.from_records` of the problem's obstacle records;
- ``scene``: `Scene.replace_all` (validated, their rows and world boxes compiled at once);
- ``flat``: the scene's flat form (`SceneSnapshot.flat`, written by one compiled loop);
- ``checker``: the checker's model for the new scene (the robot's part kept, the scene's
  address table in one compiled call);
- ``workspace``: the first `is_valid` (the thread's workspace handed on, its caches of the
  last scene dropped);
- ``set_problem``: the start and goal on the same OMPL setup (checked), its planner cleared.

**old** (a new scene, checker and setup per problem):

- ``scene``: `Scene.from_records` (shapes validated, compiled); ``flat``; ``checker``: a new
  `CollisionChecker` (the robot's part shared); ``workspace``: its first `is_valid` (a new
  workspace); ``make_setup``: OMPL's state space, validators and planner, start and goal.

Medians over ``--repeats`` runs per problem (the two paths and the problems interleaved), then the
median over problems; `total` is the median of the per-problem sums. The first set-ups (numba
loading its cache, the robot's shared part) are made before the clock. Set-ups run back to back
here; between solves (planning_collision.demos.bench.vamp) the same work takes longer, its code and
data out of the processor's caches: ``--evict MB`` reads that many megabytes of other data
before each set-up, as a solve and a peer's run between two set-ups do.

    python -m planning_collision.demos.bench.setup        # 4 sets x 10 problems x 20 repeats, ~15 s
    python -m planning_collision.demos.bench.setup --evict 64    # each set-up after 64 MB read
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from planning_collision.io import MBM_SETS, load_mbm, mbm_path

OLD = ("scene", "flat", "checker", "workspace", "make_setup")
NEW = ("arrays", "scene", "flat", "checker", "workspace", "set_problem")
PARTS = {"old": OLD, "new": NEW}


def set_up_old(robot, problem) -> list:
    """Seconds of each part of one set-up by the old path (module doc)."""
    import planning_collision as pc
    from planning_collision.plugins.ompl import make_setup

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
    return list(np.diff(t))


class Reused:
    """The new path's scene, checker and OMPL setup, made once per robot."""

    def __init__(self, robot, problem):
        import planning_collision as pc
        from planning_collision.plugins.ompl import make_setup

        self.scene = pc.Scene.from_arrays(pc.ObstacleArrays.from_records(problem.obstacles))
        self.checker = pc.CollisionChecker(robot, self.scene)
        self.ss = make_setup(
            robot, self.scene, problem.start, problem.goals[0], checker=self.checker
        )

    def set_up(self, problem) -> list:
        """Seconds of each part of one set-up by the new path (module doc)."""
        import planning_collision as pc
        from planning_collision.plugins.ompl import set_problem

        clock = time.perf_counter
        t = [clock()]
        arrays = pc.ObstacleArrays.from_records(problem.obstacles)
        t.append(clock())
        self.scene.replace_all(arrays)
        t.append(clock())
        self.scene.snapshot().flat()
        t.append(clock())
        self.checker.model  # noqa: B018  (the checker follows its scene: its new model)
        t.append(clock())
        self.checker.is_valid(problem.start)
        t.append(clock())
        set_problem(self.ss, problem.start, problem.goals[0])
        t.append(clock())
        return list(np.diff(t))


def measure(sets, n: int, repeats: int, evict_mb: float = 0.0) -> dict:
    """{"old" | "new": {part: per-problem medians (s)}, "obstacles": [...]} over the first n
    valid problems of each set; with `evict_mb`, that many megabytes read before each
    set-up (the processor's caches filled with other data)."""
    from planning_collision import robots

    problems = []
    for name in sets:
        problems += [p for p in load_mbm(str(mbm_path(name))).problems if p.valid][:n]
    robot = robots.load("panda", fixed_joints=problems[0].fixed_joints)
    reused = Reused(robot, problems[0])
    set_up_old(robot, problems[0])
    reused.set_up(problems[0])
    runs = {"old": [[] for _ in problems], "new": [[] for _ in problems]}
    other = np.ones(int(evict_mb * 2**20) // 8)
    for r in range(repeats):
        for k, p in enumerate(problems):
            for path in ("old", "new") if (r + k) % 2 == 0 else ("new", "old"):
                other.sum()  # (nothing when evict_mb is 0)
                got = set_up_old(robot, p) if path == "old" else reused.set_up(p)
                runs[path][k].append(got)
    out: dict = {"obstacles": [len(p.obstacles) for p in problems]}
    for path, parts in PARTS.items():
        per = {
            part: [float(np.median([x[j] for x in rs])) for rs in runs[path]]
            for j, part in enumerate(parts)
        }
        per["total"] = [float(np.median([sum(x) for x in rs])) for rs in runs[path]]
        out[path] = per
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--sets", nargs="+", default=list(MBM_SETS), choices=MBM_SETS)
    p.add_argument("--n", type=int, default=10, help="problems per set (default 10)")
    p.add_argument("--repeats", type=int, default=20, help="set-ups per problem (default 20)")
    p.add_argument("--evict", type=float, default=0.0, metavar="MB",
                   help="megabytes of other data read before each set-up (default 0)")  # fmt: skip
    args = p.parse_args(argv)
    if args.evict < 0:
        p.error(f"--evict must be >= 0, got {args.evict}")
    from ompl import util as ou

    ou.setLogLevel(ou.LOG_NONE)
    res = measure(args.sets, args.n, args.repeats, args.evict)
    obstacles = res["obstacles"]
    after = f", each after {args.evict:g} MB of other data read" if args.evict else ""
    print(
        f"set-up per problem ({len(obstacles)} problems, {min(obstacles)}-{max(obstacles)} "
        f"obstacles; medians of {args.repeats} repeats, then over problems{after}), ms:"
    )
    rows = max(len(OLD), len(NEW)) + 1
    old = [*OLD, "total"] + [""] * (rows - len(OLD) - 1)
    new = [*NEW, "total"] + [""] * (rows - len(NEW) - 1)
    print(f"  {'old: new scene, checker, setup':34s}  new: replace_all, set_problem")
    for a, b in zip(old, new, strict=True):
        left = f"{a:12s} {np.median(res['old'][a]) * 1e3:7.3f}" if a else ""
        right = f"{b:12s} {np.median(res['new'][b]) * 1e3:7.3f}" if b else ""
        print(f"  {left:34s}  {right}")
    ratio = np.median(np.array(res["old"]["total"]) / np.array(res["new"]["total"]))
    print(f"  old / new total: {ratio:.1f}x (median of per-problem ratios)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
