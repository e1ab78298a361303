"""`make_setup`: an `og.SimpleSetup` planning for a robot in a scene through the checker, in
one call; planners by name; solution paths as numpy.

    ss = make_setup(robot, scene, start=q0, goal=q1)       # RRTConnect, certified edges
    if solve(ss, 1.0):                                     # ss.solve(1.0), ~1 ms sooner
        Q = solution_path(ss)                              # (n, dof)
"""

from __future__ import annotations

import math

import numpy as np
from ompl import base as ob
from ompl import geometric as og

from planning_collision import CollisionChecker, RRTConnect
from planning_collision.geometry.validate import real_array

from .planner import CompiledRRTConnect
from .query import QueryKey, missing_input, stale_solution
from .spaces import StateCodec, make_state_space, new_state
from .validators import CollisionMotionValidator, CollisionValidityChecker

__all__ = [
    "COMPILED",
    "PLANNERS",
    "RANGE_FRACTION",
    "PlanningSetup",
    "SolveStatus",
    "check_free",
    "check_planner_goals",
    "make_planner",
    "make_setup",
    "set_goals",
    "set_problem",
    "set_start",
    "solution_path",
    "solve",
    "validators",
]

# Planners compiled with the checker (planning_collision/planner.py), as OMPL planners
COMPILED = {"CompiledRRTConnect": CompiledRRTConnect}
_WARMED: set = set()  # the compiled planners whose kernels make_setup has warmed up

# The geometric planners the `ompl` wheel binds (OMPL_BINDINGS.md), by name, then ours.
PLANNERS = tuple(
    name
    for name in (
        "RRT",
        "RRTConnect",
        "RRTstar",
        "InformedRRTstar",
        "SORRTstar",
        "PRM",
        "PRMstar",
        "BITstar",
        "FMT",
        "BFMT",
        "KPIECE1",
        "BKPIECE1",
        "LBKPIECE1",
        "AORRTC",
    )
    if hasattr(og, name)
) + tuple(COMPILED)

# Planners whose second thread calls the validators while holding a lock the main thread
# waits for with the GIL held: with several goal states they deadlock (docs/ompl.md).
# PRMstar and LazyPRMstar derive from PRM in the binding; a renamed planner is still one.
_ONE_GOAL_ONLY = (og.PRM,)
_EPS = 2.220446049250313e-16  # SimpleSetup's default goal threshold (std::numeric_limits)


def _goal_states(goal) -> int:
    """How many goal states `goal` can give a planner (OMPL's `maxSampleCount`: 1 for a
    GoalState, k for k GoalStates, unbounded for a sampled region); 0 for no goal."""
    if goal is None:
        return 0
    count = getattr(goal, "maxSampleCount", None)
    return int(count()) if count is not None else 1


def check_planner_goals(planner, goal) -> None:
    """ValueError when `planner` would deadlock on `goal` with Python validators: PRM and
    PRMstar (or any subclass, whatever its name) with a goal of several states. Called by
    `PlanningSetup` wherever a planner or goal is set and before it solves, and by
    `solve`; call it yourself before `ompl.tools.Benchmark` runs PRM (docs/ompl.md)."""
    n = _goal_states(goal)
    if n > 1 and isinstance(planner, _ONE_GOAL_ONLY):
        raise ValueError(
            f"{planner.getName()} ({type(planner).__name__}) with {n} goal states deadlocks "
            "with Python validators (its second thread calls them under a lock the main "
            "thread waits for with the GIL held): give it one goal state, or use another "
            "planner"
        )


class PlanningSetup(og.SimpleSetup):
    """An `og.SimpleSetup` that answers the query it has now, and refuses what would
    deadlock with Python validators.

    - A new start or goal (`setStartState`, `addStartState`, `clearStartStates`,
      `setStartAndGoalStates`, `setGoalState`, `setGoal`, and `set_goals`) drops the last
      query's answers (`clearQuery`): the solution paths, and the planner's query data
      (`planner.clearQuery()`: a PRM roadmap stays, the other planners start afresh).
      Before each solve the query is compared with the last one solved (query.py
      `QueryKey`), so a start or goal changed through the problem definition is seen too.
      A solve never reports a path of an earlier query: one that does not begin at a
      start state or, when exact, end in the goal is a ValueError naming the planner.
    - No start or no goal before a solve: a ValueError ("no goal yet").
    - A PRM-family planner with several goal states, whichever is set first
      (`setPlanner`, `setGoal`, `setStartAndGoalStates`) and again before it solves
      (`solve`, `setup`: a goal set through the problem definition, a planner made by an
      allocator): a ValueError.

    `make_setup` returns one; everything else is OMPL's."""

    _solved = None  # the QueryKey of the last solve
    _set_up = False  # the planner was set up (AORRTC's clear() before that segfaults)

    def setPlanner(self, planner):
        check_planner_goals(planner, self.getGoal())
        super().setPlanner(planner)
        self._set_up = False
        self._solved = None

    def setGoal(self, goal):
        check_planner_goals(self.getPlanner(), goal)
        super().setGoal(goal)
        self.clearQuery()

    def setGoalState(self, goal, threshold: float = _EPS):
        super().setGoalState(goal, threshold)
        self.clearQuery()

    def setStartAndGoalStates(self, start, goal, threshold: float = _EPS):
        super().setStartAndGoalStates(start, goal, threshold)
        self.clearQuery()

    def setStartState(self, state):
        super().setStartState(state)
        self.clearQuery()

    def addStartState(self, state):
        super().addStartState(state)
        self.clearQuery()

    def clearStartStates(self):
        super().clearStartStates()
        self.clearQuery()

    def clearQuery(self) -> None:
        """Forget the last query's answers and keep what serves the next one: the problem
        definition's solution paths go, and the planner's query data
        (`planner.clearQuery()`: PRM and PRMstar keep their roadmap; OMPL's other
        planners keep nothing for another query and are cleared). Called whenever the
        start or the goal changes; `ss.clear()` clears the planner wholly."""
        pdef = self.getProblemDefinition()
        if pdef is not None:
            pdef.clearSolutionPaths()
        planner = self.getPlanner()
        if planner is not None and self._set_up:
            planner.clearQuery()
        self._solved = None

    def clear(self):
        """OMPL's `clear` (the planner's data and the solution paths), safe before the
        planner was set up too."""
        if self._set_up or self.getPlanner() is None:
            super().clear()
        else:
            self.clearQuery()
        self._solved = None

    def setup(self):
        super().setup()
        self._set_up = self.getPlanner() is not None
        check_planner_goals(self.getPlanner(), self.getGoal())

    def solve(self, *args):
        pdef = self.getProblemDefinition()
        missing = missing_input(pdef, "this setup")
        if missing:
            raise ValueError(missing)
        self.setup()  # makes an allocator's planner, as OMPL's solve would; then checks
        si = self.getSpaceInformation()
        if self._solved is not None and not self._solved.holds(pdef):
            self.clearQuery()  # changed through the problem definition
        if self._solved is None:  # once per query: a validity check per start state
            self._solved = QueryKey(si, pdef)
        status = super().solve(*args)
        _refuse_stale(si, pdef, self.getPlanner(), clear=self.clearQuery)
        return status


def _refuse_stale(si, pdef, planner, clear) -> None:
    """ValueError naming the planner when the problem definition's solution does not
    answer its query (query.py `stale_solution`), after `clear()` has dropped it."""
    why = stale_solution(si, pdef)
    if why is None:
        return
    name = planner.getName() if planner is not None else "the planner"
    clear()
    raise ValueError(
        f"{name} answered an earlier query: {why}. The start or goal changed behind the "
        "planner's back (through the problem definition, or on a planner solved alone); "
        "its solutions and query data are now cleared: solve again"
    )


# The range (longest motion a tree grows in one step) of the planners that take one, as a fraction
# of the state space's largest extent: OMPL's default is 0.2 (2.6 rad for the Panda), made for edges
# checked at a few states. A certified edge costs distance queries along all of it, and a long edge
# in a cluttered scene mostly collides: on the four MotionBenchMaker Panda sets (python -m
# planning_collision.demos.bench.vamp, 10 problems each, 3 repeats), the median end-to-end time over
# all sets was 5.2 ms at OMPL's default, 4.0 at 0.1 (1.3 rad), 3.7 at 0.07 (0.9 rad), 4.1-4.6 at
# 0.045-0.058 (0.6-0.75 rad); the cage set, whose bars block most long edges, 40 ms at the default
# and 17 ms at 0.07. Only RRTConnect, the planner measured, gets it: the single-tree planners reach
# the goal state by goal-biased steps of that length, and at 0.07 RRT, RRT* and its informed
# variants found the exact goal in 5 s in fewer runs of the shelf problem than at OMPL's range (1 in
# 6 missed).
RANGE_FRACTION = 0.07
_SHORT_RANGE = ("RRTConnect",)


def _solve_guarded(base):
    """`base` (PRM, PRMstar) whose own ``solve(ptc)``, reached from Python (``ss.getPlanner()
    .solve(ptc)``, a goal grown by ``addState`` since it was set), checks the goal first:
    OMPL's C++ calls (``ss.solve``) do not come here, and `PlanningSetup` guards those."""

    class Guarded(base):
        def solve(self, *args):
            pdef = self.getProblemDefinition()
            check_planner_goals(self, None if pdef is None else pdef.getGoal())
            return super().solve(*args)

    Guarded.__name__ = Guarded.__qualname__ = base.__name__
    Guarded.__doc__ = f"OMPL's {base.__name__}, refusing several goal states in its own solve."
    return Guarded


# make_planner's PRM and PRMstar
_GUARDED = {name: _solve_guarded(getattr(og, name)) for name in ("PRM", "PRMstar")}


def make_planner(planner, si, planner_range: float | None = None) -> ob.Planner:
    """A planner on si: a name of `PLANNERS`, or a callable ``f(si) -> ob.Planner`` (used
    as it comes). A named planner that has a range gets `planner_range` (rad of joint
    space); by default RRTConnect gets `RANGE_FRACTION` of the space's largest extent (0.91
    rad for the Panda) and the others OMPL's own (0.2 of the extent), which 0 also keeps."""
    if callable(planner) and not isinstance(planner, str):
        return planner(si)
    if planner not in PLANNERS:
        raise ValueError(f"planner must be one of {', '.join(PLANNERS)}, got {planner!r}")
    if planner in COMPILED:
        r = None if planner_range is None else float(planner_range)
        if r is not None and not (r >= 0.0 and math.isfinite(r)):
            raise ValueError(f"planner_range must be >= 0 and finite, got {planner_range!r}")
        return COMPILED[planner](si, range=r or None)
    p = (_GUARDED.get(planner) or getattr(og, planner))(si)
    if hasattr(p, "setRange"):
        if planner_range is None:
            short = planner in _SHORT_RANGE
            planner_range = RANGE_FRACTION * si.getStateSpace().getMaximumExtent() if short else 0
        planner_range = float(planner_range)
        if not (planner_range >= 0.0 and math.isfinite(planner_range)):
            raise ValueError(f"planner_range must be >= 0 and finite, got {planner_range!r}")
        if planner_range > 0.0:
            p.setRange(planner_range)
    return p


def _name(planner) -> str:
    return planner if isinstance(planner, str) else planner.getName()


def validators(ss) -> tuple[CollisionValidityChecker, CollisionMotionValidator]:
    """The plugin's state and motion validators of a setup made by `make_setup`."""
    svc = ss.getStateValidityChecker()
    mv = ss.getSpaceInformation().getMotionValidator()
    if not isinstance(svc, CollisionValidityChecker) or not isinstance(
        mv, CollisionMotionValidator
    ):
        raise ValueError("this SimpleSetup does not use the plugin's validators (make_setup)")
    return svc, mv


def _state(si, codec: StateCodec, q, name: str, checker, check: bool):
    """A new state of q, checked: within the joint limits, and with `check` free (else a
    ValueError saying what it touches)."""
    q = checker.robot.validate_q(q, name, check_limits=True)
    if check:
        check_free(checker, q, name)
    s = new_state(si)
    codec.write(q, s)
    return s


def check_free(checker, q, name: str = "q") -> None:
    """ValueError naming what configuration q touches (the robot's links and the obstacles'
    names or the self-collision partners: `CollisionChecker.contacts`) when it is not
    free. A planner given a colliding start or goal searches until its time runs out, or
    returns an approximate path that stops short of the goal."""
    if checker.is_valid(q):
        return
    found = checker.contacts(q)
    what = "; ".join(
        f"{c.body} {'touches' if c.distance <= 0 else 'is within padding of'} {c.other}"
        + ("" if c.distance <= 0 else f" ({1e3 * c.distance:.1f} mm)")
        for c in found[:4]
    )
    more = f" (and {len(found) - 4} more)" if len(found) > 4 else ""
    pad = f" (padding {checker.padding:g} m)" if checker.padding else ""
    raise ValueError(
        f"{name} is in collision{pad}: {what or 'a body within eta of another'}{more}; "
        "make_setup(..., check_endpoints=False) takes it anyway"
    )


def set_start(ss, start, check: bool = True) -> None:
    """The start configuration (dof,) of a setup made by `make_setup`, replacing its start
    states (the last query's answers go: `PlanningSetup.clearQuery`). With `check`, a start
    in collision is a ValueError naming what it touches (`check_free`)."""
    svc, _ = validators(ss)
    ss.setStartState(
        _state(ss.getSpaceInformation(), svc.codec, start, "start", svc.checker, check)
    )


def set_goals(ss, goal, threshold: float = 1e-6, check: bool = True) -> None:
    """Goal configuration(s) of a setup made by `make_setup`: goal (dof,) one state, or (k,
    dof) k goal states (refused for PRM and PRMstar, which deadlock with several goal
    states and Python validators). With `check`, a goal in collision is a ValueError
    naming what it touches (`check_free`)."""
    svc, _ = validators(ss)
    states = _checked_goals(ss, svc, goal, check)
    if len(states) == 1:
        ss.setGoalState(states[0], threshold)
    else:
        ss.setGoal(_goal_of(ss.getSpaceInformation(), states, threshold))


def _checked_goals(ss, svc, goal, check: bool) -> list:
    """The states of goal (dof,) or (k, dof), each checked as `set_goals` says."""
    si = ss.getSpaceInformation()
    robot = svc.checker.robot
    # bools, complex numbers and strings refused by name, as a start is (no silent cast)
    G = real_array("goal", goal, f"a numeric array of shape ({robot.dof},) or (k, {robot.dof})")
    G = G.reshape(1, -1) if G.ndim == 1 else G
    if G.ndim != 2 or G.shape[1] != robot.dof or len(G) == 0:
        raise ValueError(f"goal must have shape ({robot.dof},) or (k, {robot.dof}), got {G.shape}")
    if len(G) == 1:
        return [_state(si, svc.codec, G[0], "goal", svc.checker, check)]
    check_planner_goals(ss.getPlanner(), _Several(len(G)))
    return [_state(si, svc.codec, g, f"goal[{k}]", svc.checker, check) for k, g in enumerate(G)]


def _goal_of(si, states: list, threshold: float):
    goals = ob.GoalStates(si)
    for s in states:
        goals.addState(s)
    goals.setThreshold(threshold)
    return goals


def set_problem(ss, start, goal, threshold: float = 1e-6, check: bool = True) -> None:
    """The next query on a setup made by `make_setup`: `start` (dof,) and `goal` (dof,) or
    (k, dof) checked as `make_setup` checks them (with `check`, one in collision is a
    ValueError naming what it touches, and the setup is then unchanged), then the planner's
    data and the solution paths cleared (`ss.clear()`: nothing of the last query is
    returned again) and the two set. With the scene's obstacles replaced first
    (`Scene.replace_all`), the next problem in a new scene: the setup's checker follows
    its scene, and the state space, validators and planner are not made again (~0.03 ms
    where `make_setup` takes ~0.3; docs/ompl.md)."""
    svc, _ = validators(ss)
    si = ss.getSpaceInformation()
    s = _state(si, svc.codec, start, "start", svc.checker, check)
    goals = _checked_goals(ss, svc, goal, check)
    ss.clear()
    # OMPL's own setters: `ss.clear()` has done what PlanningSetup's add (`clearQuery`)
    og.SimpleSetup.setStartState(ss, s)
    if len(goals) == 1:
        og.SimpleSetup.setGoalState(ss, goals[0], threshold)
    else:
        og.SimpleSetup.setGoal(ss, _goal_of(si, goals, threshold))


class _Several:
    """A goal of n states, for the check before they are set."""

    def __init__(self, n: int):
        self.n = n

    def maxSampleCount(self) -> int:
        return self.n


def make_setup(
    robot,
    scene,
    start=None,
    goal=None,
    method: str = "dichotomy",
    planner="RRTConnect",
    padding: float = 0.0,
    checker: CollisionChecker | None = None,
    goal_threshold: float = 1e-6,
    warm_up: bool = True,
    check_endpoints: bool = True,
    planner_range: float | None = None,
) -> PlanningSetup:
    """An `og.SimpleSetup` for `robot` among `scene`'s obstacles: the robot's state space
    (`make_state_space`), the plugin's state and motion validators over one
    `CollisionChecker` (built here with `padding`, or the one given), edges checked with
    `method`, `planner` (a name of `PLANNERS` or ``f(si) -> planner``), and the start and
    goal configuration(s) when given (`set_goals`). With `check_endpoints`, a start or goal
    in collision is a ValueError naming the links and what they touch (`check_free`).
    `planner_range` (rad): the step of a named planner that takes one (RRTConnect, RRT,
    RRT*, ...); by default RRTConnect's is `RANGE_FRACTION` of the space's extent, shorter
    than OMPL's own, which suits certified edges, and the others' OMPL's (`make_planner`).

    The validators are reachable again through `validators(ss)`; `solution_path(ss)` reads
    the path as numpy. With `warm_up`, the checker's kernels for `method` are compiled (or
    loaded from numba's cache) here, unless `checker.warm_up` has done it: otherwise the
    first solve's time limit would go to the compiler (~10-40 s on a machine's first run,
    said on stderr; about a second later)."""
    checker = checker or CollisionChecker(robot, scene, padding=padding)
    if checker.robot is not robot:
        raise ValueError("checker was built for another robot")
    if scene is not None and checker.scene is not scene:
        raise ValueError("checker was built for another scene")
    if warm_up and method not in checker.warmed:
        checker.warm_up(methods=(method,))
    if warm_up and planner in COMPILED and planner not in _WARMED:
        RRTConnect(checker).warm_up()  # its kernels, here rather than in the first solve
        _WARMED.add(planner)
    # a new setup each time. New validators on an old setup cost as much (0.29 ms against
    # 0.30: SimpleSetup::setup() sets the space information up again); the old validators,
    # whose checker follows its scene, do not (`set_problem`)
    space = make_state_space(robot)
    ss = PlanningSetup(space)
    si = ss.getSpaceInformation()
    codec = StateCodec(space, robot.continuous)
    ss.setStateValidityChecker(CollisionValidityChecker(si, checker, codec))
    # OMPL's binding has no SimpleSetup.setMotionValidator: set it on si before setup()
    si.setMotionValidator(
        CollisionMotionValidator(si, checker, method, StateCodec(space, robot.continuous))
    )
    ss.setPlanner(make_planner(planner, si, planner_range))
    if start is not None:
        ss.setStartState(_state(si, codec, start, "start", checker, check_endpoints))
    if goal is not None:
        set_goals(ss, goal, goal_threshold, check_endpoints)
    return ss


class SolveStatus:
    """What `solve` returns: OMPL's `PlannerStatus` (`status`), true only for an **exact**
    solution. OMPL's own status is true for an approximate one too (a path that stops
    short of the goal: with the goal in collision, RRT returns one ending far from it), so
    ``if ss.solve(1.0):`` accepts it; ``if solve(ss, 1.0):`` does not. `approximate` says
    when OMPL found only that; `str` and ``==`` (against a PlannerStatus or its
    StatusType) are OMPL's."""

    __slots__ = ("status",)

    def __init__(self, status):
        self.status = status

    @property
    def exact(self) -> bool:
        return self.status.getStatus() == ob.PlannerStatus.EXACT_SOLUTION

    @property
    def approximate(self) -> bool:
        return self.status.getStatus() == ob.PlannerStatus.APPROXIMATE_SOLUTION

    def __bool__(self) -> bool:
        return self.exact

    def __eq__(self, other):
        if isinstance(other, SolveStatus):
            other = other.status
        return self.status == other

    __hash__ = None

    def __str__(self) -> str:
        return str(self.status)

    def __repr__(self) -> str:
        return f"SolveStatus({self.status})"


def solve(setup, seconds: float) -> SolveStatus:
    """`setup.solve(seconds)` (an `og.SimpleSetup` or a planner) without OMPL's timer thread;
    returns a `SolveStatus`: true for an exact solution only (OMPL's status is true for an
    approximate one too).

    For a time limit of 1 s or more, OMPL's `Planner::solve(double)` evaluates the limit in a thread
    of its own, which sleeps 1 ms at a time, and joins that thread when the planner returns, waiting
    out the rest of its sleep: 0.2-1.2 ms added to a solve, however quickly the planner finishes
    (`python -m planning_collision.demos.bench.checker`: OMPL's time outside the validators for
    RRTConnect solving at once, 0.2-0.8 ms through `ss.solve(1.0)` against 0.01-0.02 ms through this
    function; in the planning benchmark, on the same trees, the median problem got ~1.2 ms faster).
    That is a quarter of a typical certified Panda solve. This passes
    `ob.timedPlannerTerminationCondition(seconds)`, which the planner reads in its own loop (what
    OMPL does for limits under 1 s): the same limit, no thread. A planner iteration that outlasts
    the limit overruns it by that iteration; the plugin's callbacks take microseconds.

    The query: a `PlanningSetup` follows its own (its docstring). On another setup or a
    planner alone, a solution kept from an earlier query (one that does not begin at a
    start state or, when exact, end in the goal) means the query changed: the solutions and
    the planner's query data are cleared before it solves. After any solve, such a path is
    refused (a ValueError naming the planner), and no start or no goal is a ValueError."""
    seconds = float(seconds)
    if not seconds > 0.0 or math.isinf(seconds):
        raise ValueError(f"seconds must be a positive finite number, got {seconds!r}")
    ptc = ob.timedPlannerTerminationCondition(seconds)
    if isinstance(setup, PlanningSetup):  # checks, and clears a changed query, itself
        return SolveStatus(setup.solve(ptc))
    pdef, si = setup.getProblemDefinition(), setup.getSpaceInformation()
    missing = missing_input(pdef, "this setup")
    if missing:
        raise ValueError(missing)
    if isinstance(setup, og.SimpleSetup):
        setup.setup()
        planner = setup.getPlanner()
    else:
        planner = setup
    check_planner_goals(planner, pdef.getGoal())
    if stale_solution(si, pdef) is not None:
        # the query changed since a solve (this setup's or planner's queries are yours to
        # follow): the kept best cost would hang SORRTstar (query.py), so start afresh
        planner.checkValidity()  # sets it up first if it was not (AORRTC's clear() needs it)
        _clear_query(pdef, planner)
    status = setup.solve(ptc)
    _refuse_stale(si, pdef, planner, clear=lambda: _clear_query(pdef, planner))
    return SolveStatus(status)


def _clear_query(pdef, planner) -> None:
    pdef.clearSolutionPaths()
    planner.clearQuery()


def solution_path(ss, interpolate: int | None = None) -> np.ndarray:
    """(n, dof) the configurations of the setup's solution path, continuous joints
    unwrapped along it (the joint-space polyline the plugin checked). With `interpolate`,
    OMPL's `PathGeometric.interpolate(n)` on a copy first."""
    svc, _ = validators(ss)
    path = ss.getSolutionPath()
    if interpolate is not None:
        path = og.PathGeometric(path)
        path.interpolate(int(interpolate))
    return svc.codec.path(path.getStates())
