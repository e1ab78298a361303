"""Workspaces: the scratch memory of queries, owned by the caller, one per thread.

Robots and scenes are *models*: arrays no query writes (pinocchio's ``Model``). Everything a
query writes (the pair kernels' GJK/EPA scratch, the traversal stack, per-object result
rows, per-link pose buffers) lives in a `Workspace` (pinocchio's ``Data``), allocated once
and reused, so no query allocates scratch::

    ws = Workspace()                      # one per thread
    scene.collide_object(shape, T, workspace=ws)

The convenience calls (`planning_collision.distance`, `Scene.min_distance`, ...) take an
optional ``workspace``; without one they use `thread_workspace()`, the calling thread's
own. Never share a workspace between threads.
"""

from __future__ import annotations

import threading

import numpy as np

from .kernels.scene.scratch import Scratch, new_scratch

__all__ = ["Workspace", "thread_workspace"]


class Workspace:
    """Scratch memory for queries (module doc). Grows to the largest scene and robot it
    serves; never shrinks."""

    def __init__(self):
        # no GJK warm starts: a public query answers the same whatever was asked before it
        # (a warm start changes the witness points of a face-to-face contact, which are
        # not unique); the checker, which needs bounds only, keeps its own with them
        self._scratch = new_scratch(warm=0)
        self._arrays: dict[str, np.ndarray] = {}
        # the pair kernels' scratch alone (never reallocated): the public pair queries'
        # fast path reads it without the size checks of `scratch`
        self.pair = self._scratch.pair

    def scratch(self, n_obj: int = 1, n_out: int = 1) -> Scratch:
        """The kernels' `Scratch`, with room for `n_obj` objects and `n_out` candidates."""
        s = self._scratch
        if s.hit.shape[0] < n_obj or s.out.shape[0] < n_out:
            grown = new_scratch(max(n_obj, s.hit.shape[0]), max(n_out, s.out.shape[0]), 0)
            # the pair scratch (~100 KB), the counters and warm starts do not depend on the
            # scene's size: keep them
            self._scratch = s = grown._replace(pair=s.pair, counts=s.counts, warm=s.warm)
        return s

    def array(self, key: str, shape: tuple, dtype=np.float64) -> np.ndarray:
        """A scratch array of `shape` and `dtype` kept under `key` (reallocated only when a
        larger one is asked for). Its contents are whatever the last user left."""
        a = self._arrays.get(key)
        size = int(np.prod(shape))
        if a is None or a.dtype != np.dtype(dtype) or a.size < size:
            a = self._arrays[key] = np.zeros(size, dtype)
        return a[:size].reshape(shape)


_local = threading.local()


def thread_workspace() -> Workspace:
    """The calling thread's default workspace (created on first use)."""
    ws = getattr(_local, "ws", None)
    if ws is None:
        ws = _local.ws = Workspace()
    return ws
