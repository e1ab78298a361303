"""CollisionChecker: what a planner calls — is a configuration free, and is the straight
motion between two free (docs/architecture.md, "Checker").

::

    import planning_collision as pc
    checker = pc.CollisionChecker(robot, scene, padding=0.0)
    checker.is_valid(q)                          # one compiled call, no EPA, ~1-3 µs
    checker.is_valid_batch(Q)                    # (m,) bool, parallel over configurations
    checker.check_edge(q0, q1)                   # EdgeResult; certified ("dichotomy")
    checker.check_edge(q0, q1, method="ca")      # first time of contact
    checker.check_path(Q)                        # PathResult: a whole path, certified
    checker.clearance(q), checker.link_distances(q)
    checker.stats, checker.reset_stats()

A state is valid when every collision link is farther than `padding` from the scene and
every checked self-collision pair (the robot's ACM complement) farther than `padding`
apart. A certified edge method ("dichotomy", "ca") calls a motion valid only when that
holds at every t in [0, 1]; closer than ``padding + eta`` counts as a collision (eta, the
contact tolerance, keeps the certificate conservative and the check finite).

The checker follows its robot and scene: when either changed since the last call (an
obstacle added, an ACM entry edited: their `version`), the next call rebuilds the flat
model and forgets the caches.

**Threads.** A checker may be called from any number of Python threads at once, while
other threads edit its scene (docs/architecture.md, "Threads and edits"). The flat model
is immutable and is published with the workspaces made for it: a call takes the model
that is current when it starts and a workspace of its own thread sized for that model
(one per Python thread per model; `is_valid_batch` uses a set of them per calling thread,
one per chunk of its rows). A call that overlaps an edit answers for the scene before
the edit or after it, never for half of it; the next call sees the edit.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import threading
import time

import numpy as np
import numpy.typing as npt

from ..geometry.validate import bool_flag, real_array
from ..kernels._jit import call_checked, seal
from ..kernels.base.tolerances import DEFAULT_ETA
from ..kernels.checker import edges as E
from ..kernels.checker import states as K
from ..kernels.scene.scratch import BV_TESTS, PAIR_TESTS
from ..processes import fork_safe, serial_batches
from ..results import Contact, EdgeResult, PathResult
from ..stamps import LATEST
from .batch import run_parallel
from .distances import DistanceQueries
from .model import (
    QUEUE,
    CheckModel,
    CheckWorkspace,
    acm_key,
    build_model,
    has_robot_part,
)
from .paths import check_path
from .settings import CheckerSettings, Settings, edge_settings
from .workspaces import Bound, Workspaces

_F64 = np.dtype(np.float64)
_state_check = K.state_check
_SEALED: set = set()  # the kernels `_seal` has sealed in this process
_WARMED: set = set()  # the edge methods `warm_up` has run in this process
_ENTRY = E.ENTRY_POINTS
# the kernels' codes as Python ints: a comparison with them gives a bool, not a numpy one
FREE, BAD_Q, UNDECIDED = int(K.FREE), int(K.BAD_Q), int(E.UNDECIDED)

__all__ = ["CollisionChecker", "Contact", "METHODS"]

METHODS = {"discrete": E.DISCRETE, "dichotomy": E.DICHOTOMY, "ca": E.CA}

_COUNTERS = {
    "states": K.STATES,
    "edges": K.EDGES,
    "distance_queries": K.DIST_QUERIES,
    "bv_tests": BV_TESTS,
    "narrowphase_pairs": PAIR_TESTS,
    "self_pair_tests": K.SELF_TESTS,
    "front_hits": K.FRONT_HITS,
    "front_builds": K.FRONT_BUILDS,
    "endpoint_hits": K.ENDPOINT_HITS,
}


def _seal(kernel) -> None:
    """After a call with checked arguments: numba compiles `kernel` for no other argument
    types from now on and raises TypeError instead (another type of q would compile the
    whole check again, ~30 s), so the hot paths may pass their arguments as they come and
    check them only then (`CollisionChecker._state_check`, `_edge_checked`). As plain
    Python (NUMBA_DISABLE_JIT) nothing is sealed and every call is checked."""
    if kernel not in _SEALED and seal(kernel):
        _SEALED.add(kernel)


class CollisionChecker(DistanceQueries, CheckerSettings):
    """State and edge checks of `robot` among the obstacles of `scene` (module doc).

    padding : m, >= 0; robot geometry closer than this to an obstacle (or, for checked
        self pairs, to another link) counts as a collision (MoveIt's link padding).
    self_collision : check the link pairs the robot's ACM does not allow.
    eta : m, > 0; the contact tolerance of certified edge checks.
    cache : keep the endpoint cache and GJK warm starts between queries (False: every
        query from scratch, for benchmarks).
    front_lists : also start each edge's distance traversals from the front the piece's
        last one recorded (FCL's front list; needs `cache`). Off by default: on the
        shallow KCD hierarchies a root traversal costs ~8 box tests per query, and the
        recorded fronts cost more than they save (MBM and factory scenes: +22 % and +25 %
        BV tests, +3 % time; python -m planning_collision.demos.bench.checker measures it).
    resolution : the "discrete" method's state spacing, as a fraction of the joint space's
        extent (OMPL's ``setStateValidityCheckingResolution``; 0.01 is OMPL's default).
    self_tables : read the self pairs moved by at most two joints from their clearance
        tables first (checker/self_tables.py; built on the first call, ~1 s once per robot,
        then cached per user). False: their geometry at every query (an oracle for them).
    rigid_bodies : check links joined by fixed or held joints (a gripper's hand and
        fingers and the link they hang on), when the ACM gives them the same checked
        partners, as one body (robot/rigid.py): one scene query where there were several,
        one self pair per pair of bodies (the Panda's 23 pairs become 10), and rigidly
        joined pairs, which never move, unchecked. Same answers except for such a pair
        touching, which would make every configuration collide.
        `body_names` (and `link_distances(bodies=True)`) then name a body by its links
        joined by "+"; `contacts` and `link_distances` name links (checker/distances.py).
        False: one body per collision link.
    """

    def __init__(
        self,
        robot,
        scene,
        padding: float = 0.0,
        self_collision: bool = True,
        eta: float = DEFAULT_ETA,
        cache: bool = True,
        resolution: float = 0.01,
        front_lists: bool = False,
        self_tables: bool = True,
        rigid_bodies: bool = True,
    ):
        self.robot = robot
        self.scene = scene
        self.resolution = resolution
        self._settings = Settings(
            **edge_settings(padding, eta, cache, front_lists),
            self_collision=bool_flag("self_collision", self_collision),
        )
        self._self_tables = bool_flag("self_tables", self_tables)
        self._rigid_bodies = bool_flag("rigid_bodies", rigid_bodies)
        self._shape = (int(robot.dof),)
        if not robot.pieces:
            raise ValueError(f"robot {robot.name!r} has no collision geometry to check")
        self._ws = Workspaces()  # per thread and model, handed on when they fit; counts
        self._rebuilding = fork_safe(threading.Lock())  # one rebuild at a time
        self._seconds = 0.0
        self._seen = -1
        # the self-pair tables' first build compiles a distance kernel, which belongs to
        # the first call's compile: unless another checker of this robot built them, they
        # are left for the first call (`_build`)
        self._bound = self._build(tables=has_robot_part(robot, *self._part_options()))
        extent = np.where(robot.continuous, math.pi, robot.upper - robot.lower)
        self._extent = float(np.linalg.norm(extent))

    # ---------------------------------------------------------------- settings
    # (properties of CheckerSettings, checker/settings.py): a setter publishes the settings
    # with a new Bound, so every thread's next call starts on workspaces made under them
    def _publish_settings(self, settings: Settings, rebuild: bool) -> None:
        with self._rebuilding:
            self._settings = settings
            self._bound = self._build() if rebuild else Bound(self._bound.model, settings)

    # ---------------------------------------------------------------- model and workspaces
    def _part_options(self) -> tuple:
        return self.self_collision, self.self_tables, self.rigid_bodies

    def _build(self, tables: bool = True) -> Bound:
        """The model of the robot and scene as they are now, under the current settings,
        with no workspaces yet. Without `tables` (at construction) the self-pair tables are
        left for the first call (`_current` then builds the model again, with them)."""
        sc, st, rigid = self._part_options()
        settings = self._settings
        m = build_model(self.robot, self.scene.snapshot(), sc, tables and st, rigid)
        if st and not tables:
            m = dataclasses.replace(m, robot_version=-1)  # `_current` rebuilds it, with them
        return Bound(m, settings)

    def _stale(self, m: CheckModel) -> bool:
        return (
            m.scene_version != self.scene.version
            or m.robot_version != self.robot.version
            or m.acm_key != acm_key(self.robot)
        )

    def _current(self) -> Bound:
        """The model and its workspaces, rebuilt first when the robot or the scene changed."""
        return self._bound if self._seen == LATEST[0] else self._refresh()

    def _refresh(self) -> Bound:
        """`_current` after an edit somewhere in the process (planning_collision/stamps.py):
        rebuild when this checker's robot or scene is what changed. Threads that find the
        model stale at once rebuild it once; calls running on the old model finish on it
        (it and their workspaces stay alive while they use them)."""
        seen = LATEST[0]  # read first: an edit from here on is seen by the next call
        b = self._bound
        if self._stale(b.model):
            with self._rebuilding:
                b = self._bound
                if self._stale(b.model):
                    b = self._bound = self._build()
        self._seen = seen
        return b

    def _workspace(self, b: Bound) -> CheckWorkspace:
        """The calling thread's workspace for b's model (made on first use, or the thread's
        last one handed on: checker/workspaces.py)."""
        return self._ws.workspace(b, b.settings.cache)

    @property
    def model(self) -> CheckModel:
        """The flat model of the robot and scene as they are now (rebuilt first when either
        was edited): what the kernels read."""
        return self._current().model

    @property
    def body_names(self) -> tuple:
        """The bodies a certificate bounds: each collision link (against the scene), then
        each checked self pair ("link_a|link_b")."""
        return self._current().model.body_names

    # ---------------------------------------------------------------- states
    def _q(self, q, name="q") -> np.ndarray:
        # the kernels check the length, finiteness and limits; here only what they cannot
        # take (a read-only array is another numba type: it would compile them again)
        if type(q) is np.ndarray and q.dtype is _F64 and q.shape == self._shape:
            flags = q.flags
            if flags.c_contiguous and flags.writeable:
                return q
        q = self.robot.validate_q(q, name)
        return q if q.flags.writeable else q.copy()

    def _raise_bad_q(self, code: int, q, name: str):
        """Explain a BAD_Q code of a kernel (the kernel found q non-finite or outside the
        joint limits; see kernels/checker/check_core.q_code)."""
        dof = self.robot.dof
        k = code - BAD_Q
        if k < dof:
            self.robot.validate_q(q, name)  # names the non-finite joint
        self.robot.validate_q(q, name, check_limits=True)  # names the joint out of limits
        raise AssertionError(f"kernel code {code} not explained for {name}")  # unreachable

    def is_valid(self, q) -> bool:
        """True when configuration q (dof,) is collision-free (module doc). ValueError
        naming the joint when q is not finite or outside the joint limits."""
        # the planner's hot path: ~0.2 us of Python around a ~2.4 us compiled call (it was
        # 0.9): no method calls on the way, the kernel times itself, and q goes to the
        # kernel unchecked once the kernel is sealed (`_state_check`)
        b = self._bound if self._seen == LATEST[0] else self._refresh()
        m = b.model
        try:
            ws = b.local.ws
        except AttributeError:
            ws = self._workspace(b)
        if _state_check in _SEALED:
            try:
                code = _state_check(m.table, ws.table, q, b.padding, b.self_collision, True)
            except TypeError:  # not a writeable float64 C array: the checked path below
                code = self._state_check(b, ws, q)
        else:
            code = self._state_check(b, ws, q)
        if code >= BAD_Q:
            self._raise_bad_q(code, q, "q")
        return code == FREE

    def _state_check(self, b, ws, q) -> int:
        """`state_check` of q after `_q` has checked and converted it; then the kernel is
        sealed (`_seal`): `is_valid` passes q as it comes and comes here only on a
        TypeError."""
        q = self._q(q)
        args = (b.model.table, ws.table, q, b.padding, b.self_collision, True)
        code = call_checked(_state_check, *args)
        _seal(_state_check)
        return code

    def is_valid_batch(self, Q) -> npt.NDArray[np.bool_]:
        """(m,) bool: `is_valid` of each row of Q (m, dof), in parallel (numba threads).
        Safe from several Python threads at once: each calling thread checks its rows in
        workspaces of its own (on numba's workqueue layer, which is not thread-safe, one
        batch at a time: checker/batch.py); in a child forked after a batch, row by row."""
        b = self._current()
        Q = np.ascontiguousarray(real_array("Q", Q, f"an (m, {self.robot.dof}) array"))
        if not Q.flags.writeable:  # another numba type: the kernel would compile again
            Q = Q.copy()
        if Q.ndim != 2 or Q.shape[1] != self.robot.dof:
            raise ValueError(f"Q must have shape (m, {self.robot.dof}), got {Q.shape}")
        codes = np.empty(Q.shape[0], np.int64)
        if serial_batches():  # forked after numba's threads ran (planning_collision/processes.py)
            ws, hm = self._workspace(b), b.model.table
            for r in range(Q.shape[0]):  # the rows one by one, as `is_valid` checks them
                codes[r] = _state_check(hm, ws.table, Q[r], b.padding, b.self_collision, True)
        else:
            tables = self._ws.batch(b, b.settings.cache)
            t0 = time.perf_counter()
            args = (b.model.table, tables, Q, b.padding, b.self_collision, codes)
            run_parallel(K.state_check_batch, *args)  # under the lock its layer needs
            self._seconds += time.perf_counter() - t0
        bad = np.flatnonzero(codes >= BAD_Q)
        if bad.size:
            self._raise_bad_q(int(codes[bad[0]]), Q[bad[0]], f"Q[{bad[0]}]")
        return codes == FREE

    # ---------------------------------------------------------------- edges
    def _edge(self, q0, q1, method: str, check_start: bool, first: bool) -> np.ndarray:
        """The method's kernel on q0 -> q1; out[0:4] = (status, last_valid_t, toc,
        n_queries). The motion validator's hot path, as lean as `is_valid`'s: the
        certified methods' kernels take q0, q1 as they come once sealed (`_edge_checked`)."""
        b = self._bound if self._seen == LATEST[0] else self._refresh()
        m = b.model
        code_m = METHODS.get(method)
        try:
            ws = b.local.ws
        except AttributeError:
            ws = self._workspace(b)
        kernel = _ENTRY.get(code_m)
        try:  # this call's settings, one record (kernels/checker/edges.py EdgeRequest)
            request = b.requests[check_start, first]
        except (KeyError, TypeError):  # not met before, or check_start not a bool
            request = None
        if kernel in _SEALED and request is not None:
            try:
                code = kernel(m.table, ws.table, q0, q1, request, ws.out)
            except TypeError:  # not float64 arrays: checked below
                code = self._edge_checked(b, ws, method, q0, q1, check_start, first)
        else:
            code = self._edge_checked(b, ws, method, q0, q1, check_start, first)
        if code >= BAD_Q:
            dof = self.robot.dof
            if code - BAD_Q >= 2 * dof + 2:
                self._raise_bad_q(code - 2 * dof - 2, q1, "q1")
            self._raise_bad_q(code, q0, "q0")
        return ws.out

    def _edge_checked(self, b, ws, method, q0, q1, check_start, first) -> int:
        """`_edge` with q0, q1 checked and converted (`_q`) and the method named; the first
        call of a certified method's kernel seals it (`_seal`). The discrete
        method always comes here: its number of states depends on q1 - q0."""
        code_m = METHODS.get(method)
        if code_m is None:
            raise ValueError(f"method must be one of {sorted(METHODS)}, got {method!r}")
        q0 = self._q(q0, "q0")
        q1 = self._q(q1, "q1")
        check_start = bool_flag("check_start", check_start)
        n_steps = 1
        if code_m == E.DISCRETE:
            # the length needs finite ends (the kernel checks them, but only after this);
            # the limits are the kernel's to check
            self.robot.validate_q(q0, "q0")
            self.robot.validate_q(q1, "q1")
            d = np.abs(q1 - q0)
            scale = float(d.max())  # |q1 - q0| without overflow (continuous joints at 1e300)
            length = scale * float(np.linalg.norm(d / scale)) if scale > 0.0 else 0.0
            steps = length / (self.resolution * self._extent)
            # the bisection queue's room (kernels/checker/edges.py) caps the states
            n_steps = 2 * QUEUE if not steps < 2 * QUEUE else max(1, math.ceil(steps))
        request = b.request(check_start, first)
        m = b.model
        kernel = _ENTRY[code_m]
        if code_m != E.DISCRETE:
            code = call_checked(kernel, m.table, ws.table, q0, q1, request, ws.out)
            _seal(kernel)
            return code
        ws.request[:] = request  # the shared record with this edge's number of states
        ws.request[E.N_STEPS] = n_steps
        return kernel(m.table, ws.table, q0, q1, ws.request, ws.out)

    def edge_request(self, check_start: bool, first: bool = False) -> np.ndarray:
        """The edge kernels' settings (kernels/checker/edges.py `EdgeRequest`) for this checker's
        padding, eta and caches: shared, never written; a new one when a setting changes
        (with new workspaces: call `bind` again too)."""
        return self._current().request(check_start, first)

    def bind(self) -> tuple[CheckModel, CheckWorkspace]:
        """(the model current now, the calling thread's workspace for it): what compiled
        callers pass the kernels, which then answer for that model whatever other threads
        edit meanwhile. Hold both while the kernels run: the workspace is the caller's for
        good (never handed on to a later model: checker/workspaces.py). `bound` gives them
        for a ``with`` block only."""
        b = self._current()
        ws = self._workspace(b)
        ws.pinned = True
        return b.model, ws

    @contextlib.contextmanager
    def bound(self):
        """``with checker.bound() as (model, ws):`` `bind` for the block: the calling
        thread's workspace is held while it runs (a scene edited and a call made meanwhile
        in this thread get another), then free to serve the next model (the compiled
        planner's solve: planning_collision/planner.py)."""
        b = self._current()
        ws = self._workspace(b)
        with self._ws.holding(ws):
            yield b.model, ws

    def check_edge(self, q0, q1, method: str = "dichotomy", check_start: bool = True) -> EdgeResult:
        """Check the straight motion q0 -> q1 (dof,): "dichotomy" (certified, default),
        "ca" (certified, with the first time of contact) or "discrete" (states at
        `resolution`, not certified). check_start: also check q0 (a planner that knows q0
        is valid passes False). Returns EdgeResult(valid, last_valid_t, toc, n_queries,
        method, certified)."""
        out = self._edge(q0, q1, method, check_start, True)
        status = int(out[0])
        return EdgeResult(
            valid=status == FREE,
            last_valid_t=float(out[1]),
            toc=float(out[2]),
            n_queries=int(out[3]),
            method=method,
            certified=method != "discrete" and status != UNDECIDED,
        )

    def check_path(self, Q, method: str = "dichotomy") -> PathResult:
        """Check the path through the rows of Q (n, dof): its first state and each straight
        segment Q[k] -> Q[k + 1], by `method` (certified with "dichotomy" and "ca"), as
        OMPL's ``path.check()``. Returns PathResult(valid, segment, last_valid_t,
        last_valid, n_queries, method, certified): the first segment not shown free and
        where the path's free prefix ends, its first contact found by "ca"
        (checker/paths.py). ``if checker.check_path(Q):`` reads its validity."""
        if method not in METHODS:
            raise ValueError(f"method must be one of {sorted(METHODS)}, got {method!r}")
        return check_path(self, Q, method)

    def edge_free(self, q0, q1, method: str = "dichotomy", check_start: bool = False) -> bool:
        """`check_edge(...).valid` without building a result (the motion validator's fast
        path); "discrete" stops at the first colliding state it meets."""
        return self._edge(q0, q1, method, check_start, False)[0] == FREE

    def warm_up(self, batch: bool = False, methods=None) -> float:
        """Compile (or load from numba's cache) every kernel a planner calls: a state check, a
        clearance, an edge by each of `methods` (default all three: name the one your motion
        validator uses, and the first run compiles only its kernel); with `batch`, `is_valid_batch`
        too. A first run compiles for ~40 s (said on stderr; timed by `python -m
        planning_collision.demos.dev.cold_start`), later processes load them in about a second. Call
        it before timing or planning, or the first solve's time limit goes to the compiler. Leaves
        the stats and caches as they were. Returns the seconds it took."""
        methods = tuple(METHODS) if methods is None else tuple(methods)
        for method in methods:
            if method not in METHODS:
                raise ValueError(f"method must be one of {sorted(METHODS)}, got {method!r}")
        t0 = time.perf_counter()
        lo, hi = self.robot.lower, self.robot.upper
        q0 = lo + 0.25 * (hi - lo)
        q1 = lo + 0.75 * (hi - lo)
        saved = self._ws.saved_counts()
        seconds = self._seconds
        self.is_valid(q0)
        self.clearance(q0)
        for method in methods:
            self.check_edge(q0, q1, method)
            self.edge_free(q0, q1, method)
        _WARMED.update(methods)
        if batch:
            self.is_valid_batch(np.stack([q0, q1]))
        self.forget()
        self._ws.restore_counts(saved)
        self._seconds = seconds
        return time.perf_counter() - t0

    @property
    def warmed(self) -> frozenset:
        """The edge methods whose kernels a `warm_up` has compiled (or loaded) in this
        process (they serve every checker: `make_setup` warms up only what is missing)."""
        return frozenset(_WARMED)

    # ---------------------------------------------------------------- stats
    @property
    def stats(self) -> dict:
        """Counters since the last `reset_stats`, summed over this checker's workspaces:
        states posed, edges, distance queries, BV tests, narrowphase pairs, self-pair
        tests, front hits and builds, endpoint-cache hits, and seconds inside kernels
        (wall time of the compiled calls; `is_valid`'s and the edges' are timed inside
        them, by kernels/base/clock.py, and not at all where it has no clock: Windows)."""
        total = self._ws.totals()
        out = {k: int(total[i]) for k, i in _COUNTERS.items()}
        out["seconds"] = self._seconds + int(total[K.KERNEL_NS]) * 1e-9
        return out

    def reset_stats(self) -> None:
        self._ws.reset()
        self._seconds = 0.0

    def forget(self) -> None:
        """Drop the front lists and endpoint caches of every workspace."""
        self._ws.forget()

    def __repr__(self) -> str:
        m = self._current().model
        return (
            f"CollisionChecker({self.robot.name!r}, {len(self.scene)} obstacles, "
            f"{m.n_links} links, {len(m.body_names) - m.n_links} self pairs, "
            f"padding={self.padding}, eta={self.eta}, cache={self.cache})"
        )
