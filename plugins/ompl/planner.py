"""`CompiledRRTConnect`: the compiled planner (planning_collision/planner.py) as an OMPL
`Planner`.

    ss = make_setup(robot, scene, start, goal, planner="CompiledRRTConnect")
    if solve(ss, 1.0):
        Q = solution_path(ss)

Its `solve(ptc)` reads the start states and goal states from the problem definition (as
OMPL's planners do, through `PlannerInputStates`: starts and goals outside the bounds or
invalid are skipped with OMPL's warning), runs the compiled search, polling `ptc` between
its time slices, and adds the path to the problem definition: `SimpleSetup`,
`ompl.tools.Benchmark` and Planner Arena see a planner like any other
(``geometric_CompiledRRTConnect`` in a benchmark log). Every motion of the path is
certified by the checker of the setup's `CollisionValidityChecker` (the plugin's), with the
"dichotomy" edge kernel, whatever the motion validator's method.

Goals: a `GoalState`, `GoalStates`, or any sampleable goal region, from which up to
`MAX_GOALS` goal states are drawn before the search. The path ends exactly at one of them.
"""

from __future__ import annotations

import math

import numpy as np
from ompl import base as ob
from ompl import geometric as og

from planning_collision.planner import RRTConnect

from .spaces import new_state
from .validators import CollisionValidityChecker

__all__ = ["MAX_GOALS", "CompiledRRTConnect"]

MAX_GOALS = 64  # goal states drawn from a sampleable region before the search


class CompiledRRTConnect(ob.Planner):
    """Certified RRT-Connect compiled with the checker, behind OMPL's `Planner` (module
    doc). `range` (rad) as OMPL's `setRange`; `seed` as `setSeed` (None: drawn from OMPL's
    RNG when the planner is made, so ``ou.RNG.setSeed(n)`` makes runs repeatable);
    `simplify`: shorten the path by certified shortcuts before handing it to OMPL. The
    other keywords are `planning_collision.RRTConnect`'s."""

    NAME = "CompiledRRTConnect"

    def __init__(self, si, range: float | None = None, seed: int | None = None,
                 simplify: bool = False, **options):  # fmt: skip
        super().__init__(si, self.NAME)
        self._range = range
        if seed is None:
            from ompl import util as ou

            seed = int(ou.RNG().uniformInt(0, 2**31 - 2))
        self._seed = seed
        self._simplify = bool(simplify)
        self._options = options
        self._planner: RRTConnect | None = None
        self._checker = None
        self.last = None  # the last solve's PlanResult

    # OMPL's RRTConnect setters, by the same names
    def setRange(self, distance: float) -> None:
        self._range = float(distance)
        self._planner = None

    def getRange(self) -> float:
        p = self._engine()
        return p.range

    def setSeed(self, seed: int) -> None:
        self._seed = int(seed)
        self._planner = None

    def _engine(self) -> RRTConnect:
        svc = self.getSpaceInformation().getStateValidityChecker()
        if not isinstance(svc, CollisionValidityChecker):
            raise ValueError(
                f"{self.NAME} plans with the plugin's CollisionValidityChecker (make_setup), "
                f"and this space information has {type(svc).__name__}"
            )
        if self._planner is None or self._checker is not svc.checker:
            self._checker = svc.checker
            self._codec = svc.codec
            self._planner = RRTConnect(
                svc.checker, range=self._range or None, seed=self._seed, **self._options
            )
        return self._planner

    def _inputs(self):
        """(starts, goals) as lists of arrays: the problem definition's valid ones (within
        the bounds and free: OMPL's `PlannerInputStates` skips the others)."""
        pis = self.getPlannerInputStates()
        pis.restart()
        codec = self._codec
        starts = []
        while (s := pis.nextStart()) is not None:
            starts.append(codec.read(s).copy())
        goals = []
        while len(goals) < MAX_GOALS and (g := pis.nextGoal()) is not None:
            goals.append(codec.read(g).copy())
        return starts, goals

    def solve(self, ptc):
        pdef = self.getProblemDefinition()
        if pdef is None or pdef.getGoal() is None:
            return ob.PlannerStatus(ob.PlannerStatus.INVALID_GOAL)
        planner = self._engine()
        starts, goals = self._inputs()
        if not starts:
            return ob.PlannerStatus(ob.PlannerStatus.INVALID_START)
        if not goals:
            return ob.PlannerStatus(ob.PlannerStatus.INVALID_GOAL)
        # checked by OMPL: within the bounds and free (`_inputs`)
        r = planner._plan(np.array(starts), np.array(goals), math.inf, ptc)
        self.last = r
        if not r.solved:
            return ob.PlannerStatus(ob.PlannerStatus.TIMEOUT)
        Q = planner.simplify(r.path) if self._simplify else r.path
        si = self.getSpaceInformation()
        path = og.PathGeometric(si)
        s = new_state(si)
        for q in Q:
            self._codec.write(q, s)
            path.append(s)
        pdef.addSolutionPath(path, False, 0.0, self.getName())
        return ob.PlannerStatus(ob.PlannerStatus.EXACT_SOLUTION)

    def clear(self):
        super().clear()
        self.last = None
