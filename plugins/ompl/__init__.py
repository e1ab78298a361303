"""OMPL adapters: plug a `planning_collision.CollisionChecker` into any OMPL planner.

    from planning_collision.plugins.ompl import make_setup, solution_path, solve
    ss = make_setup(robot, scene, start=q0, goal=q1, planner="RRTConnect")
    if solve(ss, 1.0):                   # ss.solve(1.0) without OMPL's timer thread (~1 ms)
        Q = solution_path(ss)

- `make_state_space(robot)`: joint limits as bounds, SO2 for continuous joints, a floating
  base in its six coordinates (spaces.py says why not SE3); `StateCodec`: states <-> numpy;
  `new_state(si)`: a state to fill, safe where the binding's `si.allocState()` is not.
- `CollisionValidityChecker`, `CollisionMotionValidator`: the validators (certified edges
  with method "dichotomy" or "ca"); exceptions in callbacks are logged once and reported
  invalid, never raised into OMPL.
- `make_setup` (a `PlanningSetup`: answers the start and goal it has now, dropping the
  last query's solutions and planner data when they change (`clearQuery`: a PRM roadmap
  stays); refuses PRM with several goal states, which would deadlock), `set_start`,
  `set_goals`, `set_problem` (the next query on the same setup: a new scene by
  `Scene.replace_all`, a new start and goal), `solution_path`, `validators`, `PLANNERS`,
  `make_planner`;
  `solve(ss, seconds)`: `ss.solve(seconds)` without the ~1 ms OMPL's timer thread adds,
  true for an exact solution only (a `SolveStatus`; OMPL's is true for approximate ones).
- `check_path(ss, path)`: OMPL's ``path.check()`` certified, with the first segment not
  shown free and where the path's free prefix ends (a `PathResult`).
- `guarded(fn)`: your own validity callback, logging and reporting invalid instead of
  raising into OMPL.

docs/ompl.md has the details: which planners lose what to the binding's missing
`lastValid`, PRM with several goals, threads and processes.
"""

from .paths import check_path
from .planner import CompiledRRTConnect
from .setup import (
    COMPILED,
    PLANNERS,
    RANGE_FRACTION,
    PlanningSetup,
    SolveStatus,
    check_free,
    check_planner_goals,
    make_planner,
    make_setup,
    set_goals,
    set_problem,
    set_start,
    solution_path,
    solve,
    validators,
)
from .spaces import StateCodec, make_state_space, new_state
from .validators import (
    METHODS,
    CollisionMotionValidator,
    CollisionValidityChecker,
    Guarded,
    guarded,
)

__all__ = [
    "COMPILED",
    "CompiledRRTConnect",
    "METHODS",
    "PLANNERS",
    "RANGE_FRACTION",
    "CollisionMotionValidator",
    "CollisionValidityChecker",
    "Guarded",
    "PlanningSetup",
    "SolveStatus",
    "StateCodec",
    "check_free",
    "check_path",
    "check_planner_goals",
    "guarded",
    "make_planner",
    "make_setup",
    "make_state_space",
    "new_state",
    "set_goals",
    "set_problem",
    "set_start",
    "solution_path",
    "solve",
    "validators",
]
