"""What the planning demos share: their command line (--planner, --method, --time, --seed,
--view, --export), OMPL's seed, the warm-up, and one timed solve with its counts."""

from __future__ import annotations

import time
from typing import NamedTuple

from planning_collision.demos import viewing
from planning_collision.plugins.ompl import METHODS, PLANNERS, make_setup, validators
from planning_collision.plugins.ompl import solve as ompl_solve


def add_arguments(p, planner: str, seconds: float) -> None:
    """The demos' common flags on parser p, with their defaults."""
    p.add_argument("--planner", choices=PLANNERS, default=planner, help=f"default {planner}")
    p.add_argument("--method", choices=METHODS, default="dichotomy", help="default dichotomy")
    p.add_argument(
        "--time", type=float, default=seconds, help=f"seconds to solve (default {seconds:g})"
    )
    p.add_argument("--seed", type=int, default=1, help="OMPL's random seed (default 1)")
    viewing.add_arguments(p)


def parse(p, argv):
    """Parse, refuse a non-positive --time, and seed OMPL (before any planner or sampler
    exists: OMPL_BINDINGS.md)."""
    args = p.parse_args(argv)
    if args.time <= 0:
        p.error("--time must be > 0")
    seed_ompl(args.seed)
    return args


def seed_ompl(seed: int) -> None:
    from ompl import util as ou

    ou.RNG.setSeed(seed)
    ou.setLogLevel(ou.LOG_WARN)


def warm_up(checker, method: str = "dichotomy") -> None:
    """Compile (or load from numba's cache) what planning with edge `method` calls, and say
    how long it took (the library announces the compiles themselves on stderr)."""
    print(f"kernels ready in {checker.warm_up(methods=(method,)):.1f} s", flush=True)


class Solved(NamedTuple):
    ss: object  # the og.SimpleSetup
    solved: bool  # an exact solution
    seconds: float
    edges: int  # motions checked
    states: int  # states checked
    us_edge: float  # per motion check
    us_state: float


def solve(robot, scene, start, goal, checker, args) -> Solved:
    """One `make_setup` with the flags' planner and method, solved within --time."""
    ss = make_setup(
        robot, scene, start, goal, method=args.method, planner=args.planner, checker=checker
    )
    svc, mv = validators(ss)
    t0 = time.perf_counter()
    solved = bool(ompl_solve(ss, args.time)) and ss.haveExactSolutionPath()
    dt = time.perf_counter() - t0
    edges, states = sum(mv.counts.values()), svc.calls
    return Solved(
        ss,
        solved,
        dt,
        edges,
        states,
        1e6 * mv.seconds / max(edges, 1),
        1e6 * svc.seconds / max(states, 1),
    )
