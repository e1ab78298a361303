"""Worker processes: what a process made by ``fork`` must not inherit as it was.

``fork`` copies a process with only the calling thread. A lock another thread held at that
moment stays held in the child, for ever; and GNU OpenMP's threads are gone while its state
says they exist (numba's ``omp`` layer: a child forked after a parallel region ran aborts
at its first one, "fork() called from a process already using GNU OpenMP, this is unsafe").
So:

- the package's locks are registered with `fork_safe`, which makes each one free again in a
  forked child (``_at_fork_reinit``, as the standard library's logging and
  concurrent.futures do for theirs);
- `serial_batches()` is True in a child forked after a parallel region ran in its parent
  (`parallel_ran` records one): `CollisionChecker.is_valid_batch` then checks its rows one
  by one on the calling thread (the state kernel `is_valid` calls: nothing to compile),
  never in numba's threads.

Spawned processes and Ray workers start a fresh interpreter and inherit nothing (objects
reach them pickled: scenes and ACMs take versions of the receiving process, scene.py and
robot/acm.py).
"""

from __future__ import annotations

import os
import weakref

__all__ = ["fork_safe", "parallel_ran", "serial_batches"]

_LOCKS: weakref.WeakSet = weakref.WeakSet()
_STATE = {"parallel": False, "serial": False}


def fork_safe(lock):
    """`lock` (a threading.Lock or RLock), made free again in any child forked later."""
    _LOCKS.add(lock)
    return lock


def parallel_ran() -> None:
    """Record that numba's threads ran a parallel region in this process."""
    _STATE["parallel"] = True


def serial_batches() -> bool:
    """Whether this process was forked after a parallel region ran (module doc)."""
    return _STATE["serial"]


def _in_forked_child() -> None:
    for lock in list(_LOCKS):
        lock._at_fork_reinit()
    if _STATE["parallel"]:
        _STATE["serial"] = True


if hasattr(os, "register_at_fork"):  # not on Windows, which has no fork
    os.register_at_fork(after_in_child=_in_forked_child)
