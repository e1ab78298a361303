"""Memory stays flat over a long PRM session: the checker's caches are bounded.

PRM solves the shelf problem (demos/scenes.panda_shelf) again and again for ``--seconds``
(default 60) through one checker: each solve grows a roadmap (OMPL's memory, freed by
``clear()`` before the next), and every edge passes through the checker's bounded caches
(front lists per piece, GJK warm starts, the endpoint cache of 4,096 configurations). The
resident set size is printed every ``--every`` seconds: after the first solves fill the
caches it stays where it is.

    python -m planning_collision.demos.dev.prm_memory                  # 60 s
    python -m planning_collision.demos.dev.prm_memory --seconds 10 --every 2
"""

from __future__ import annotations

import argparse
import os
import time

from planning_collision.demos.scenes import panda_shelf
from planning_collision.plugins.ompl import make_setup, solve, validators


def rss_mb() -> float:
    """Resident set size of this process (MB), from /proc (Linux) or resource."""
    try:
        with open("/proc/self/statm", encoding="ascii") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except OSError:  # pragma: no cover - not Linux
        import resource

        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main(argv=None) -> int:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--seconds", type=float, default=60.0)
    p.add_argument("--every", type=float, default=10.0, help="report interval (s)")
    p.add_argument("--seed", type=int, default=1)
    a = p.parse_args(argv)
    from ompl import util as ou

    import planning_collision as pc

    ou.RNG.setSeed(a.seed)
    ou.setLogLevel(ou.LOG_NONE)
    robot, scene, start, goal = panda_shelf()
    checker = pc.CollisionChecker(robot, scene)
    print(f"kernels ready in {checker.warm_up():.1f} s; PRM for {a.seconds:g} s")
    ss = make_setup(robot, scene, start, goal, planner="PRM", checker=checker)
    _, mv = validators(ss)
    print(f"{'time (s)':>8s} {'solves':>7s} {'edges checked':>14s} {'RSS (MB)':>9s}")
    t0 = time.perf_counter()
    next_report = 0.0
    solves = 0
    first = None
    rss = rss_mb()
    while True:
        now = time.perf_counter() - t0
        if now >= next_report:
            rss = rss_mb()
            edges = sum(mv.counts.values())
            print(f"{now:8.1f} {solves:7d} {edges:14d} {rss:9.1f}", flush=True)
            if first is None and solves > 0:
                first = rss
            next_report += a.every
        if now >= a.seconds:
            break
        ss.clear()
        solve(ss, 1.0)
        solves += 1
    growth = rss - (first if first is not None else rss)
    print(f"RSS grew {growth:+.1f} MB after the first report ({solves} solves)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
