"""The query a setup answers (its start states and goal) and the guards that keep a solve
from answering an old one.

OMPL keeps a problem definition's solution paths, and a planner its trees, sampler and
best cost, when the start or the goal changes: `ss.setGoalState(g2)` then `ss.solve()`
reports an exact solution whose path ends at the old goal (RRT, RRTConnect, RRT*, PRM,
BIT*, KPIECE, AORRTC, ...: the old path is still the problem definition's best, or the
old goal is still a root of the planner's goal tree), and SORRTstar never returns (its
ordered informed sampler draws from the ellipse of the old start, goal and best cost and
keeps only samples that could beat that cost towards the new goal: when none can, it
draws batches forever without reading the termination condition). OMPL's remedy is the
user's: `ss.clear()`, or `planner.clearQuery()` and `pdef.clearSolutionPaths()` (which
keep a PRM roadmap). `PlanningSetup` (setup.py) does it whenever the query changes, and
`solve` refuses by name a path that does not start at a current start state and, when
exact, end in the current goal.

- `QueryKey`: what the query is (the goal object, copies of its states and of the start
  states); `key.holds(pdef)` when nothing a planner reads has changed since.
- `stale_solution(pdef)`: why the problem definition's solution does not answer its query
  (None when it does, or when there is none).
"""

from __future__ import annotations

import math

from ompl import base as ob

from .spaces import new_state

__all__ = ["QueryKey", "missing_input", "stale_solution", "start_states"]

# A path's first state is a copy of a start state (every bound planner copies it): equal up
# to rounding in the space's distance
_SAME = 1e-9


def start_states(pdef) -> list:
    """The problem definition's start states as OMPL's planners see them (through
    `PlannerInputStates`: within bounds and valid), borrowed: use them before the problem
    definition changes. (The binding's `pdef.getStartState(i)` hands Python a state it
    frees twice.)"""
    pis = ob.PlannerInputStates()
    pis.use(pdef)
    out = []
    while (s := pis.nextStart()) is not None:
        out.append(s)
    return out


def _goal_states(goal) -> list:
    """The states of a GoalState or GoalStates (not lazy samples, which grow by themselves):
    borrowed."""
    if isinstance(goal, ob.GoalLazySamples):
        return []
    if isinstance(goal, ob.GoalStates):
        return [goal.getState(k) for k in range(goal.getStateCount())]
    if isinstance(goal, ob.GoalState):
        return [goal.getState()]
    return []


class QueryKey:
    """The query of a problem definition when made: its goal (the object, its threshold and
    copies of its states), its number of start states and copies of the valid ones (read
    as planners read them: one validity check each). `holds(pdef)` tells whether a planner
    would still see that query, without validity checks."""

    __slots__ = ("si", "goal", "threshold", "goals", "n_starts", "starts")

    def __init__(self, si, pdef):
        self.si = si
        self.goal = pdef.getGoal()
        self.threshold = _threshold(self.goal)
        self.goals = [self._copy(s) for s in _goal_states(self.goal)]
        self.n_starts = pdef.getStartStateCount()
        self.starts = [self._copy(s) for s in start_states(pdef)]

    def _copy(self, state):
        c = new_state(self.si)
        self.si.copyState(c, state)
        return c

    def holds(self, pdef) -> bool:
        """Whether pdef's query is still this one: the same goal object with the same
        threshold and states, as many start states, each valid one still among them (a
        start that was invalid and is replaced by another, the count unchanged, is not seen;
        OMPL warns of invalid starts)."""
        goal = pdef.getGoal()
        if goal is not self.goal or _threshold(goal) != self.threshold:
            return False
        now = _goal_states(goal)
        if len(now) != len(self.goals):
            return False
        if not all(self.si.equalStates(a, b) for a, b in zip(now, self.goals, strict=True)):
            return False
        if pdef.getStartStateCount() != self.n_starts:
            return False
        # hasStartState's second argument is OMPL's `unsigned int *startIndex`: 0, none
        return all(pdef.hasStartState(s, 0) for s in self.starts)


def _threshold(goal) -> float | None:
    get = getattr(goal, "getThreshold", None)
    return None if get is None else float(get())


def missing_input(pdef, what: str) -> str | None:
    """What the problem definition lacks before a solve ("no goal yet: ...", "no start state
    yet: ..."), or None."""
    if pdef is None:
        return f"{what} has no problem definition"
    if pdef.getGoal() is None:
        return (
            "no goal yet: set one before solving (set_goals(ss, goal), or make_setup(..., goal=))"
        )
    if pdef.getStartStateCount() == 0:
        return (
            "no start state yet: set one before solving (ss.setStartState, or "
            "make_setup(..., start=))"
        )
    return None


def stale_solution(si, pdef) -> str | None:
    """Why the problem definition's solution path does not answer its current query: it
    does not begin at one of the start states, or it is called exact and does not end in
    the goal (a solution or a planner's tree kept from an earlier query). None when it
    answers it, or when there is no solution."""
    if pdef is None or not pdef.hasSolution():
        return None
    states = pdef.getSolutionPath().getStates()
    if not states:
        return None
    first, last = states[0], states[-1]
    if not pdef.hasStartState(first, 0):  # (exactly a start: the common case, no checks)
        starts = start_states(pdef)
        d = min((si.distance(first, s) for s in starts), default=math.inf)
        if d > _SAME:
            return f"its solution path begins {d:.3g} from the nearest start state"
    goal = pdef.getGoal()
    if pdef.hasExactSolution() and goal is not None and not goal.isSatisfied(last):
        get = getattr(goal, "distanceGoal", None)
        far = f" {get(last):.3g} from it" if get is not None else ""
        return f"its exact solution path ends outside the goal{far}"
    return None
