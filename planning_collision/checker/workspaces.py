"""A checker's workspaces: one per thread for the model it calls, made when first needed,
handed on to the next model when it fits, and their counters summed for `stats`.

A checker publishes its model with the workspaces made for it (`Bound`, docs/architecture.md
"Threads and edits"): a call takes the model current when it starts and its own thread's
workspace for that model. A scene replaced per problem (`Scene.replace_all`) makes a new
model per problem, and a new ~1.4 MB workspace per thread cost ~60 µs (allocated, filled,
addressed) plus the page faults of its first use. A thread's workspace depends on the model
only through its sizes (the robot's, which a robot part fixes, and room for the scene's
objects and primitives), so the thread's last one (`Workspaces.mine`) serves the new model
when it has the room: its caches of the old scene forgotten (front lists, endpoint cache,
GJK warm starts), nothing else to redo, its address table the same.

A workspace is handed on only by its own thread, between two of its calls, and never while
someone holds it: `CollisionChecker.bind` pins a workspace for good, `bound` while its
``with`` block runs (the compiled planner's solve, which returns to Python between its time
slices). A pinned one stays with its model.
"""

from __future__ import annotations

import contextlib
import threading
import weakref

import numba
import numpy as np

from ..kernels.scene.scratch import N_COUNTS
from ..processes import fork_safe
from .model import CheckModel, CheckWorkspace
from .settings import Settings, make_request

__all__ = ["Bound", "Workspaces"]


class Bound:
    """A checker's model, its settings and the workspaces made for both, one per thread
    (`local.ws`, and `local.batch` for `is_valid_batch`), published together: a call that
    read a model can only get a workspace sized for that model, whose caches hold nothing
    from other settings (a workspace handed on forgets them: checker/settings.py).
    `requests`: the edge requests under these settings by (check_start, first), made on
    first use; the settings' fields the hot paths read are copied to slots."""

    __slots__ = ("model", "local", "settings", "requests", "padding", "self_collision")

    def __init__(self, model: CheckModel, settings: Settings):
        self.model = model
        self.local = threading.local()
        self.settings = settings
        self.requests: dict = {}
        self.padding = settings.padding
        self.self_collision = settings.self_collision

    def request(self, check_start: bool, first: bool):
        """The shared, never written, request record for (check_start, first)."""
        key = (bool(check_start), bool(first))
        got = self.requests.get(key)
        if got is None:
            got = self.requests[key] = make_request(self.settings, *key)
        return got


def _keep_counts(retired: np.ndarray, lock, counts: np.ndarray) -> None:
    """A dead workspace's counters, added to its checker's retired ones (its finalizer:
    it holds the two arrays and the lock, not the checker)."""
    with lock:
        retired += counts


class Workspaces:
    """The workspaces of one checker (module doc): the live ones (weakly: a thread's dies
    with the thread), the counts of those gone, and each thread's last ones (`mine`: ``ws``
    and ``batch``), which the thread's first call on a new model takes when they fit."""

    def __init__(self):
        # re-entrant: a workspace's finalizer may run inside a locked section when the
        # collector runs there
        self.lock = fork_safe(threading.RLock())
        self.live: weakref.WeakSet[CheckWorkspace] = weakref.WeakSet()
        self.retired = np.zeros(N_COUNTS, np.int64)
        self.mine = threading.local()

    def new(self, m: CheckModel, cache: bool) -> CheckWorkspace:
        """A workspace for model m, registered for `totals`: when it dies (its thread ended,
        or its model was replaced and no call uses it), its counts move to the retired
        ones. Nothing else keeps it: a server that starts a thread per request does not
        keep a workspace per thread it ever saw (each is ~1.4 MB)."""
        ws = CheckWorkspace(m, cache)
        with self.lock:
            self.live.add(ws)
        weakref.finalize(ws, _keep_counts, self.retired, self.lock, ws.counts)
        return ws

    @staticmethod
    def _free(ws, m: CheckModel, cache: bool) -> bool:
        return ws is not None and ws.holders == 0 and not ws.pinned and ws.fits(m, cache)

    def workspace(self, b: Bound, cache: bool) -> CheckWorkspace:
        """The calling thread's workspace for b's model: made on first use, or its last one
        handed on (module doc)."""
        ws = getattr(b.local, "ws", None)
        if ws is None:
            last = getattr(self.mine, "ws", None)
            if self._free(last, b.model, cache):
                last.forget_scene()  # its caches belong to the scene it was used in
                ws = last
            else:
                ws = self.new(b.model, cache)
            b.local.ws = self.mine.ws = ws
        return ws

    def batch(self, b: Bound, cache: bool) -> np.ndarray:
        """(k, rows, 5) address tables of the calling thread's k batch workspaces for b's
        model, k = numba's thread count (`numba.set_num_threads` is per thread too); the
        thread's last set handed on when every one fits."""
        n = numba.get_num_threads()
        got = getattr(b.local, "batch", None)
        if got is None or len(got[1]) != n:
            last = getattr(self.mine, "batch", None)
            if last is not None and len(last[1]) == n:
                if all(self._free(w, b.model, cache) for w in last[1]):
                    for w in last[1]:
                        w.forget_scene()
                    got = last
            if got is None or len(got[1]) != n:
                wss = [self.new(b.model, cache) for _ in range(n)]
                # the workspaces stay with their address table: it points into their arrays
                got = (np.ascontiguousarray(np.stack([w.table for w in wss])), wss)
            b.local.batch = self.mine.batch = got
        return got[0]

    @contextlib.contextmanager
    def holding(self, ws: CheckWorkspace):
        """ws held for the block: not handed on to another model meanwhile."""
        ws.holders += 1
        try:
            yield ws
        finally:
            ws.holders -= 1

    # ------------------------------------------------------------------ counters
    def totals(self) -> np.ndarray:
        with self.lock:
            return sum((w.counts for w in list(self.live)), self.retired.copy())

    def saved_counts(self) -> tuple:
        with self.lock:
            return {w: w.counts.copy() for w in self.live}, self.retired.copy()

    def restore_counts(self, saved: tuple) -> None:
        counts, retired = saved
        with self.lock:
            for w in list(self.live):
                w.counts[:] = counts.get(w, 0)
            self.retired[:] = retired

    def reset(self) -> None:
        with self.lock:
            for w in list(self.live):
                w.counts[:] = 0
            self.retired[:] = 0

    def forget(self) -> None:
        with self.lock:
            for w in list(self.live):
                w.forget()
