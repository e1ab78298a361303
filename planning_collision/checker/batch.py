"""`is_valid_batch`'s parallel region, run only where numba's threading layer allows it.

numba picks its threading layer at the first parallel region: TBB, else GNU OpenMP, else
its own ``workqueue``, which is not thread-safe: two Python threads' regions at once abort
the process ("Concurrent access has been detected"), where the other layers run them side
by side. So until the first region has told which layer this process got, and from then on
when it is ``workqueue``, regions run one at a time (a process-wide lock): batches from
several threads wait for each other instead. In a child forked after a region ran, GNU
OpenMP aborts at the next one: `CollisionChecker.is_valid_batch` then checks its rows one by
one instead (planning_collision/processes.py).
"""

from __future__ import annotations

import threading

import numba

from ..processes import fork_safe, parallel_ran

__all__ = ["run_parallel", "threading_layer"]

_ONE_AT_A_TIME = fork_safe(threading.Lock())
_LAYER: list = [None]  # numba's threading layer, once a region has run in this process


def threading_layer() -> str | None:
    """The threading layer numba runs this process's parallel regions on (None before the
    first one, and as plain Python: NUMBA_DISABLE_JIT)."""
    return _LAYER[0]


def run_parallel(kernel, *args) -> None:
    """`kernel(*args)`, a parallel kernel, under the lock the layer needs (module doc)."""
    layer = _LAYER[0]
    if layer is not None and layer != "workqueue":
        kernel(*args)
        return
    with _ONE_AT_A_TIME:
        kernel(*args)
        try:
            _LAYER[0] = numba.threading_layer()
        except ValueError:  # no region ran: the kernel ran as Python (NUMBA_DISABLE_JIT)
            return
        parallel_ran()
