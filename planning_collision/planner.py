"""A motion planner compiled with the checker: certified RRT-Connect in one compiled loop.

::

    import planning_collision as pc
    checker = pc.CollisionChecker(robot, scene)
    planner = pc.RRTConnect(checker, seed=1)
    result = planner.solve(start, goal, seconds=1.0)     # PlanResult
    if result.solved:
        Q = planner.simplify(result.path)                # (n, dof), shortcuts certified

Every motion the search keeps is certified free by the checker's "dichotomy" edge kernel, called
from the compiled loop (kernels/planner/rrt_connect.py): the returned path has no collision
anywhere along it, exactly as a path found through the OMPL plugin's motion validator on the
same checker.
`planning_collision.plugins.ompl.CompiledRRTConnect` is this planner behind OMPL's `Planner`
interface (SimpleSetup, ompl.tools.Benchmark); this module knows nothing of OMPL.

The search runs in time slices (`SLICE` s) between which it returns to Python, where the
deadline and a caller's `stop()` are checked: a solve overruns its limit by at most one
slice's last motion check. The model it plans on is the checker's model when `solve`
starts: a scene edited meanwhile in another thread is seen by the next solve.
"""

from __future__ import annotations

import dataclasses
import math
import os
import threading
import time

import numpy as np
import numpy.typing as npt

from .geometry.validate import positive_scalar
from .kernels.base.clock import HAS_CLOCK
from .kernels.base.records import allocate
from .kernels.planner import rrt_connect as K

__all__ = ["PlanResult", "RRTConnect", "SAMPLERS", "SLICE"]

# Seconds of search between two returns to Python (the deadline and `stop` are checked
# there): a return costs ~3 us, so a slice this long spends 0.3 % of a long solve on them,
# and a limit is overrun by at most this much plus one motion check.
SLICE = 1e-3

SAMPLERS = ("halton", "uniform")

# How a new node joins the other tree: "vamp", the tree it grew on goes on toward the other
# tree's nearest node; "ompl", that nearest node's tree grows toward the new node
CONNECTS = ("vamp", "ompl")

# Nodes a new search reserves per tree; a full tree doubles (kernels/planner/rrt_connect.py FULL).
CAPACITY = 1024

# The dynamic domain's radius after a node's first colliding motion and its least, as
# fractions of the joint space's diameter, and its growth / shrink factor: VAMP's constants
# (rrtc_settings.hh: 4 and 1 rad, 1e-4) for the Panda, whose diameter is 13.0 rad.
DD_RADIUS = 4.0 / 13.0
DD_MIN_RADIUS = 1.0 / 13.0
DD_ALPHA = 1e-4


# Lazy certification (`RRTConnect`): states probed per range of motion, the motions checked
# before it starts, and the refuted solutions after which it stops. On the MotionBenchMaker
# Panda sets (10 problems x 4 seeds each, interleaved against certifying every motion
# tried): cage 0.71x by mean solve time (a cage's trees grow many motions no solution
# takes, and a probe costs a tenth of a certificate), the other sets 0.93-0.97x; probes a
# quarter of a range apart refuted ~3x more solutions than an eighth, and probing from the
# first motion made easy problems (a few dozen motions, most of them the solution's) up
# to 1.2x slower
LAZY, LAZY_AFTER, LAZY_FAILURES = 8, 100, 4


def _count(name: str, value, most: int | None = None) -> int:
    """value as a non-negative int (at most `most`), else ValueError naming it."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"{name} must be an int, got {value!r}")
    if value < 0 or (most is not None and value > most):
        top = "" if most is None else f" and <= {most}"
        raise ValueError(f"{name} must be >= 0{top}, got {value}")
    return int(value)


# Each thread's last PlanTrees per number of joints: a solve's scratch, reused by the next
# solve of any planner in that thread (solves in one thread never overlap: a planner's own
# lock refuses a second solve, and a stop() callback that solved with another planner of
# the same robot would find the record in use and take a new one: `_solve`)
_POOL = threading.local()


@dataclasses.dataclass(frozen=True)
class PlanResult:
    """What `RRTConnect.solve` returns.

    path : (n, dof) float64 or None; start to goal, each motion certified free, continuous
        joints unwrapped along it (consecutive rows within pi). None when not solved.
    solved : a path was found (it ends exactly at one of the goals).
    status : "solved", "timeout" (the time limit or `stop` ended it first).
    goal : the index of the goal the path ends at (-1 when not solved).
    iterations : samples drawn; edges : motions checked (probed or certified); nodes :
        (start tree, goal tree), removed branches included.
    rejected : solutions of a lazy search whose certificate found a collision (each
        removed the branch below it).
    seconds : wall time of the solve.
    """

    path: npt.NDArray[np.float64] | None
    solved: bool
    status: str
    goal: int
    iterations: int
    edges: int
    nodes: tuple
    rejected: int
    seconds: float

    def __bool__(self) -> bool:
        return self.solved


_M64 = (1 << 64) - 1


def _splitmix64(x: int) -> tuple[int, int]:
    """(next state, output) of SplitMix64 (Steele et al. 2014), the seeding generator
    xoshiro's authors recommend: a few Python integer operations, no numpy generator."""
    x = (x + 0x9E3779B97F4A7C15) & _M64
    z = x
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _M64
    return x, z ^ (z >> 31)


def seed_streams(seed, rng: np.ndarray, offset: np.ndarray) -> None:
    """rng (4,) uint64 <- a xoshiro256** state (never all zero) and offset (2, dof) <- each
    tree's Halton shifts in [0, 1), from `seed` (an int; None: fresh entropy)."""
    x = int.from_bytes(os.urandom(8), "little") if seed is None else int(seed) & _M64
    words = []
    for _ in range(4 + offset.size):
        x, z = _splitmix64(x)
        words.append(z)
    rng[:] = [w or 1 for w in words[:4]]
    offset.flat[:] = [(w >> 11) * (1.0 / 9007199254740992.0) for w in words[4:]]


@dataclasses.dataclass(frozen=True)
class _Limits:
    """What a planner reads of its robot's joints (`_limits`)."""

    model: object  # the robot's RobotModel these were read from
    lower: np.ndarray  # (dof,) float64
    upper: np.ndarray
    cont: np.ndarray  # (dof,) int64: 1 for a continuous joint
    diameter: float  # of the joint space: each limited joint's range, pi for a continuous one
    lo: np.ndarray  # the limits as one comparison takes them: a continuous joint within the
    hi: np.ndarray  # finite floats (NaN and +-inf fail both, so it also checks finiteness)


_LIMITS: dict = {}  # id(robot.model) -> _Limits, the model kept alive with its entry


def _limits(robot) -> _Limits:
    """The joint limits of `robot` as planners read them, checked once per robot model (a
    planner per problem, as make_setup makes, would otherwise read them again each time):
    ValueError for a robot without joints, with more than the sampler's `K.PRIMES`, or with
    a limited joint whose limits are not finite with lower < upper."""
    model = robot.model
    got = _LIMITS.get(id(model))
    if got is not None and got.model is model:
        return got
    dof = int(robot.dof)
    if dof == 0:
        raise ValueError(f"robot {robot.name!r} has no active joints: nothing to plan")
    lower = np.ascontiguousarray(robot.lower, np.float64)
    upper = np.ascontiguousarray(robot.upper, np.float64)
    cont = np.ascontiguousarray(robot.continuous, np.int64)
    limited = cont == 0
    bad = np.flatnonzero(limited & ~(np.isfinite(lower) & np.isfinite(upper) & (upper > lower)))
    if bad.size:
        d = int(bad[0])
        raise ValueError(
            f"joint {robot.joint_names[d]!r} has limits [{lower[d]}, {upper[d]}]: "
            "a planner samples within finite limits with lower < upper"
        )
    if dof > len(K.PRIMES):
        raise ValueError(f"the planner samples up to {len(K.PRIMES)} joints, got {dof}")
    width = np.where(cont != 0, math.pi, upper - lower)
    big = np.finfo(np.float64).max
    got = _Limits(
        model, lower, upper, cont, float(np.linalg.norm(width)),
        np.where(limited, lower, -big), np.where(limited, upper, big),
    )  # fmt: skip
    if len(_LIMITS) >= 64:  # bounded: a process that loads robot after robot
        _LIMITS.clear()  # (one call: safe while another thread reads or writes)
    _LIMITS[id(model)] = got
    return got


class RRTConnect:
    """Certified RRT-Connect on `checker` (module doc).

    range : rad, > 0; the longest motion one step makes (Euclidean in joint space). None:
        `RANGE_FRACTION` of the joint space's diameter (0.91 rad for the Panda).
    seed : int or None; samples are repeatable from it (every solve starts from it again);
        None draws fresh entropy per solve.
    sampler : "halton" (a Halton sequence per tree, shifted at random per coordinate, as
        VAMP samples) or "uniform" (xoshiro256** draws).
    balance : grow the smaller tree (VAMP) instead of alternating.
    dynamic_domain : skip samples farther from their nearest node than its radius, which
        shrinks where its motions collide (Yershova et al. 2005; VAMP's default).
    direct : first try the straight motion from each start to each goal.
    connect : "vamp" (the tree a sample grew goes on toward the other tree's nearest node)
        or "ompl" (the other tree's nearest node grows toward the new node).
    lazy : 1-64: once `lazy_after` motions were checked, probe each motion as the trees
        grow (its end and its states at most range / lazy apart, a boolean check each)
        and certify only a solution's motions, when the trees join: one found colliding
        removes its node's branch, and the search goes on (after `lazy_failures` such
        solutions, each motion is certified as it is tried again). 0: each motion certified
        as it is tried. Either way every motion of a returned path is certified.
    """

    # The step as a fraction of the joint space's diameter (plugins/ompl/setup.py
    # RANGE_FRACTION: the measured choice for certified edges on the MotionBenchMaker sets)
    RANGE_FRACTION = 0.07

    def __init__(
        self,
        checker,
        range: float | None = None,
        seed: int | None = None,
        sampler: str = "halton",
        balance: bool = True,
        dynamic_domain: bool = True,
        direct: bool = True,
        connect: str = "ompl",
        lazy: int = LAZY,
        lazy_failures: int = LAZY_FAILURES,
        lazy_after: int = LAZY_AFTER,
    ):
        self.checker = checker
        limits = _limits(checker.robot)
        self.dof = len(limits.lower)
        self.lower, self.upper, self.cont = limits.lower, limits.upper, limits.cont
        self.diameter = limits.diameter
        # the limits as one comparison takes them (`_configurations`)
        self._lo, self._hi = limits.lo, limits.hi
        self.range = (
            self.RANGE_FRACTION * self.diameter
            if range is None
            else positive_scalar("range", range)
        )
        if sampler not in SAMPLERS:
            raise ValueError(f"sampler must be one of {SAMPLERS}, got {sampler!r}")
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer))):
            raise ValueError(f"seed must be an int or None, got {seed!r}")
        self.seed = None if seed is None else int(seed)
        self.sampler = sampler
        self.balance = bool(balance)
        self.dynamic_domain = bool(dynamic_domain)
        self.direct = bool(direct)
        if connect not in CONNECTS:
            raise ValueError(f"connect must be one of {CONNECTS}, got {connect!r}")
        self.connect = connect
        self.lazy = _count("lazy", lazy, K.DIRECT_STATES)
        self.lazy_failures = _count("lazy_failures", lazy_failures)
        self.lazy_after = _count("lazy_after", lazy_after)
        self._busy = threading.Lock()
        self._prepared = None  # (key, settings, room, rng, offset): `_prepare`

    def settings(self) -> np.ndarray:
        """The search's settings array (kernels/planner/rrt_connect.py PlanSettings)."""
        return K.plan_settings(
            range=self.range, balance=self.balance, tree_ratio=1.0,
            dynamic_domain=self.dynamic_domain, dd_radius=DD_RADIUS * self.diameter,
            dd_alpha=DD_ALPHA, dd_min_radius=DD_MIN_RADIUS * self.diameter,
            sampler=SAMPLERS.index(self.sampler), direct=self.direct,
            connect=CONNECTS.index(self.connect), lazy=self.lazy,
            lazy_failures=self.lazy_failures, lazy_after=self.lazy_after,
        )  # fmt: skip

    def _prepare(self) -> tuple:
        """(settings, room, rng, offset) of the planner's current attributes: the settings
        array, the nodes one iteration may add (`K.most_steps` + 1), and the sampler's
        streams from `seed` (None when it is None: fresh ones per solve). Made again only when
        an attribute changed since the last solve."""
        key = (
            self.range, self.balance, self.dynamic_domain, self.direct, self.sampler,
            self.connect, self.lazy, self.lazy_failures, self.lazy_after, self.seed,
        )  # fmt: skip
        got = self._prepared
        if got is not None and got[0] == key:
            return got[1:]
        settings = self.settings()
        room = K.most_steps(self.lower, self.upper, self.cont, self.range) + 1
        rng = offset = None
        if self.seed is not None:
            rng, offset = np.empty(4, np.uint64), np.empty((2, self.dof))
            seed_streams(self.seed, rng, offset)
        self._prepared = (key, settings, room, rng, offset)
        return self._prepared[1:]

    def warm_up(self) -> float:
        """Compile (or load from numba's cache) the search and the shortcut kernels, here
        rather than in a first solve's time limit (~1 min on a machine's first run, said on
        stderr; then a fraction of a second). Returns the seconds it took."""
        t0 = time.perf_counter()
        self._prepare()  # the settings and the room one iteration may add (K.most_steps)
        q = np.where(self.cont != 0, 0.0, 0.5 * (self.lower + self.upper))
        request = self.checker.edge_request(check_start=False)
        tr = allocate(K.PlanTrees, dof=self.dof, capacity=4)
        tr.size[:] = 1
        tr.x[:, :, 0] = q
        tr.parent[:, 0] = -1
        tr.cert[:, 0] = K.CERTIFIED
        settings = self.settings()
        P = np.stack([q, q, q])
        with self.checker.bound() as (model, ws):
            hm, hw = model.table, ws.table
            K.rrt_connect(hm, hw, request, tr, settings, self.lower, self.upper, self.cont, 0)
            K.shortcut(hm, hw, request, P, 3, self.cont, ws.out)
        return time.perf_counter() - t0

    # ------------------------------------------------------------------ inputs
    def _configurations(self, Q, name: str) -> np.ndarray:
        """(k, dof) from one configuration or k; each within the joint limits."""
        if type(Q) is np.ndarray and Q.dtype == np.float64:
            A = Q
        else:
            a = np.asarray(Q)
            if a.dtype.kind not in "fiu":  # bools, complex, strings, objects: named there
                self.checker.robot.validate_q(Q, name)
            A = a.astype(np.float64)
        A = A.reshape(1, -1) if A.ndim == 1 else A
        if A.ndim != 2 or A.shape[1] != self.dof or len(A) == 0:
            raise ValueError(
                f"{name} must have shape ({self.dof},) or (k, {self.dof}), got {np.shape(Q)}"
            )
        if ((A >= self._lo) & (A <= self._hi)).all():  # finite, and within the limits
            return np.ascontiguousarray(A)
        robot = self.checker.robot  # which row and joint, and why (real_array: not a number)
        for i, a in enumerate(A):
            robot.validate_q(a, f"{name}[{i}]" if len(A) > 1 else name, check_limits=True)
        raise AssertionError(f"{name}: a refused configuration not named")  # unreachable

    def _trees_for(self, n_roots: int, room: int) -> object:
        """A PlanTrees record with room for n_roots roots and an iteration's nodes (`room`):
        the calling thread's (`_POOL`: a planner per problem, as make_setup makes, would
        otherwise allocate one per solve, ~40 us), or a new one when it is in use."""
        cap = max(CAPACITY, 2 * n_roots + 2 * room + 2)
        if not hasattr(_POOL, "trees"):
            _POOL.trees, _POOL.busy = {}, set()
        tr = _POOL.trees.get(self.dof)
        if tr is None or id(tr) in _POOL.busy or not cap <= tr.x.shape[2] <= 4 * cap:
            tr = allocate(K.PlanTrees, dof=self.dof, capacity=cap)
        _POOL.trees[self.dof] = tr
        tr.size[:] = 0
        tr.state[:] = 0
        return tr

    @staticmethod
    def _grow(tr):
        """tr with twice the room, its trees copied."""
        cap = tr.x.shape[2]
        new = allocate(K.PlanTrees, dof=tr.x.shape[1], capacity=2 * cap)
        new.x[:, :, :cap] = tr.x
        new.parent[:, :cap] = tr.parent
        new.radius[:, :cap] = tr.radius
        new.cert[:, :cap] = tr.cert
        for name in ("size", "offset", "rng", "state"):
            getattr(new, name)[:] = getattr(tr, name)
        return new

    # ------------------------------------------------------------------ solving
    def solve(self, start, goal, seconds: float = 1.0, stop=None, check: bool = True) -> PlanResult:
        """Plan from `start` (dof,) or several (k, dof) to `goal` (dof,) or several (k, dof)
        within `seconds` (inf with a `stop`), or until ``stop()`` is true (polled every
        `SLICE` s). With
        `check`, a start or goal in collision is a ValueError naming what it touches;
        without, such states are the caller's to have checked."""
        if not (stop is not None and seconds == math.inf):
            seconds = positive_scalar("seconds", seconds)  # inf only with a stop()
        starts = self._configurations(start, "start")
        goals = self._configurations(goal, "goal")
        if check:
            for name, A in (("start", starts), ("goal", goals)):
                for i, q in enumerate(A):
                    self._check_free(q, f"{name}[{i}]" if len(A) > 1 else name)
        return self._plan(starts, goals, seconds, stop)

    def _plan(self, starts, goals, seconds: float, stop) -> PlanResult:
        """`solve` of starts (k, dof) and goals (m, dof), float64 C arrays of finite
        configurations within the limits (continuous joints wrapped or not), each free:
        `solve` checks them; `CompiledRRTConnect` reads them from OMPL's problem definition,
        which has checked them."""
        if not HAS_CLOCK:
            raise RuntimeError("the compiled planner needs a monotonic clock (clock_gettime)")
        if not self._busy.acquire(blocking=False):
            raise RuntimeError("this planner is solving in another thread: make one per thread")
        try:
            # one model for the whole solve (module doc), its workspace held meanwhile
            with self.checker.bound() as (model, ws):
                return self._solve(starts, goals, seconds, stop, model, ws)
        finally:
            self._busy.release()

    def _check_free(self, q, name: str) -> None:
        if self.checker.is_valid(q):
            return
        found = self.checker.contacts(q)
        what = "; ".join(f"{c.body} touches {c.other}" for c in found[:4]) or "within eta"
        raise ValueError(f"{name} is in collision: {what}")

    def _solve(self, starts, goals, seconds, stop, model, ws) -> PlanResult:
        t0 = time.perf_counter()
        never = 2**62  # ns: ~146 years
        deadline = never if math.isinf(seconds) else time.monotonic_ns() + int(seconds * 1e9)
        request = self.checker.edge_request(check_start=False)
        prepared = self._prepare()
        tr = self._trees_for(len(starts) + len(goals), prepared[1])
        _POOL.busy.add(id(tr))
        try:
            return self._search(tr, model, ws, request, starts, goals, deadline, stop, t0, prepared)
        finally:
            _POOL.busy.discard(id(tr))
            _POOL.busy.discard(id(_POOL.trees.get(self.dof)))

    def _search(
        self, tr, model, ws, request, starts, goals, deadline, stop, t0, prepared
    ) -> PlanResult:
        settings, _, rng, offset = prepared
        if rng is None:  # no seed: fresh streams per solve
            seed_streams(None, tr.rng, tr.offset)
        else:
            tr.rng[:] = rng
            tr.offset[:] = offset
        for t, A in enumerate((starts, goals)):
            n = len(A)
            tr.x[t, :, :n] = A.T
            tr.parent[t, :n] = -1
            tr.radius[t, :n] = math.inf
            tr.cert[t, :n] = K.CERTIFIED
            tr.size[t] = n
        hm, hw = model.table, ws.table
        while True:
            now = time.monotonic_ns()
            code = K.rrt_connect(
                hm, hw, request, tr, settings, self.lower, self.upper, self.cont,
                min(deadline, now + int(SLICE * 1e9)),
            )  # fmt: skip
            if code == K.SOLVED:
                break
            if code == K.FULL:
                tr = _POOL.trees[self.dof] = self._grow(tr)
                _POOL.busy.add(id(tr))
                continue
            if time.monotonic_ns() >= deadline or (stop is not None and stop()):
                break
        st = tr.state
        solved = code == K.SOLVED
        path, goal = None, -1
        if solved:
            path = tr.path[: st[K.S_PATH]].copy()
            goal = int(st[K.S_GOAL])
        return PlanResult(
            path=path, solved=solved, status="solved" if solved else "timeout", goal=goal,
            iterations=int(st[K.S_ITER]), edges=int(st[K.S_EDGES]),
            nodes=(int(tr.size[0]), int(tr.size[1])), rejected=int(st[K.S_FAILED]),
            seconds=time.perf_counter() - t0,
        )  # fmt: skip

    # ------------------------------------------------------------------ simplifying
    def simplify(self, path) -> np.ndarray:
        """A shorter path with the same ends: from each kept state, the farthest later one
        reachable by one certified motion (OMPL's reduceVertices, greedy). Every motion of
        the result is certified free by the checker."""
        P = np.array(path, dtype=np.float64, order="C")
        if P.ndim != 2 or P.shape[1] != self.dof:
            raise ValueError(f"path must have shape (n, {self.dof}), got {np.shape(path)}")
        if len(P) < 3:
            return P
        robot = self.checker.robot
        for i, q in enumerate(P):
            if not np.all(np.isfinite(q)):
                robot.validate_q(q, f"path[{i}]")
        request = self.checker.edge_request(check_start=False)
        with self.checker.bound() as (model, ws):
            n = K.shortcut(model.table, ws.table, request, P, len(P), self.cont, ws.out)
        return P[:n].copy()
