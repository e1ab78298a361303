"""Scratch memory of one thread's queries, as one argument kernels take (`Scratch`).

Models (robots, scenes) hold arrays that no query writes; everything a query writes lives
here, in arrays its caller allocated once (pinocchio's Model / Data split). One `Scratch` per
thread: never share one between threads. `planning_collision.workspace.Workspace` owns one
and grows it for the scenes it meets.

- ``pair``: the pair kernels' scratch (GJK simplex, EPA polytope; `pair.WORKSPACE_SIZE`);
- ``stack (STACK_SIZE, 2)`` int32: the scene traversal's stack;
- ``tmp (OUT_SIZE,)``: one pair result;
- ``hit (n_obj,)`` uint8: objects in collision, all 0 between queries;
- ``best (n_obj, OUT_SIZE)``: per-object distance records, ``best[:, 0]`` inf between queries;
- ``out (n,)`` int32: candidate primitive indices (or leaf nodes);
- ``counts (N_COUNTS,)`` int64: running counters kernels add to (kernels/traversal.py
  BV_TESTS, PAIR_TESTS; the checker's own after them), never reset by a kernel;
- ``warm (W, 4)``: GJK warm starts, a direct-mapped cache of the last search direction
  per (query primitive, scene primitive) pair: (key, vx, vy, vz). W = 0 turns it off. A
  stale or colliding entry only costs GJK iterations: any start direction is correct.
"""

from collections import namedtuple

import numpy as np

from .bvh import STACK_SIZE
from .layout import OUT_SIZE
from .pair import WORKSPACE_SIZE

Scratch = namedtuple("Scratch", ["pair", "stack", "tmp", "hit", "best", "out", "counts", "warm"])

# Default number of GJK warm-start slots.
WARM_SLOTS = 1024

# Length of Scratch.counts: room for the traversal's counters and the checker's.
N_COUNTS = 16


def new_scratch(n_obj: int = 1, n_out: int = 1, warm: int = WARM_SLOTS) -> Scratch:
    """A Scratch for scenes of up to `n_obj` objects and `n_out` candidate primitives, with
    `warm` GJK warm-start slots (0: none)."""
    n_obj = max(int(n_obj), 1)
    best = np.zeros((n_obj, OUT_SIZE))
    best[:, 0] = np.inf
    return Scratch(
        np.zeros(WORKSPACE_SIZE),
        np.zeros((STACK_SIZE, 2), np.int32),
        np.zeros(OUT_SIZE),
        np.zeros(n_obj, np.uint8),
        best,
        np.zeros(max(int(n_out), 2), np.int32),  # COLLIDE's first hit uses two
        np.zeros(N_COUNTS, np.int64),
        np.full((int(warm), 4), np.nan),
    )
