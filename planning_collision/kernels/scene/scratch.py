"""Scratch memory of one thread's queries, as one argument kernels take (`Scratch`).

Models (robots, scenes) hold arrays that no query writes; everything a query writes lives
here, in arrays its caller allocated once (pinocchio's Model / Data split). One `Scratch` per
thread: never share one between threads. `planning_collision.workspace.Workspace` owns one
and grows it for the scenes it meets.

The fields, their shapes and meanings are declared once, in `Scratch` below. ``warm`` is a
direct-mapped cache of GJK's last search direction per (query primitive, scene primitive)
pair, W = 0 rows turn it off; a stale or colliding entry only costs GJK iterations: any
start direction is correct.
"""

import numpy as np

from ..base.layout import OUT_SIZE
from ..base.records import F1, F2, I1, I2, L1, U1, Field, allocate, record
from ..convex.pair import WORKSPACE_SIZE
from .bvh import STACK_SIZE

# Length of Scratch.counts: room for the traversal's counters and the checker's (below).
N_COUNTS = 16

Scratch = record(
    "Scratch",
    __name__,
    "The scratch arrays of one thread's queries (module doc).",
    [
        Field("pair", F1, (WORKSPACE_SIZE,), "the pair kernels' scratch (GJK simplex, EPA)"),
        Field("stack", I2, (STACK_SIZE, 2), "the traversal's stack of (tree, node)"),
        Field("tmp", F1, (OUT_SIZE,), "one pair result"),
        Field("hit", U1, ("n_obj",), "objects in collision, all 0 between queries"),
        Field("best", F2, ("n_obj", OUT_SIZE), "per-object distance records ([:, 0] inf)"),
        Field("out", I1, ("n_out",), "candidate primitives, leaf nodes, a first hit"),
        Field("counts", L1, (N_COUNTS,), "running counters (below), never reset by a kernel"),
        Field("warm", F2, ("warm", 4), "GJK warm starts: (key, direction)", np.nan),
    ],
)

# Default number of GJK warm-start slots.
WARM_SLOTS = 1024

# Scratch.counts, by index: the traversal's counters, then the checker's. np.int64 like
# every constant kernels pass on (kernels/base/codes.py).
BV_TESTS = np.int64(0)  # box tests (kernels/scene/traversal.py)
PAIR_TESTS = np.int64(1)  # pair queries (kernels/scene/traversal.py)
STATES = np.int64(2)  # configurations posed (FK + pieces)
DIST_QUERIES = np.int64(3)  # body distance queries
FRONT_HITS = np.int64(4)  # piece traversals started from a cached front
FRONT_BUILDS = np.int64(5)  # fronts recorded
ENDPOINT_HITS = np.int64(6)  # body distances reused from the endpoint cache
EDGES = np.int64(7)  # edges checked
SELF_TESTS = np.int64(8)  # self-collision piece pairs that reached a pair query
KERNEL_NS = np.int64(9)  # nanoseconds inside timed entry points (state_check, edges)
EDGE_T0 = np.int64(10)  # the clock at the current edge check's start (kernels/checker/edges.py)


def new_scratch(n_obj: int = 1, n_out: int = 1, warm: int = WARM_SLOTS) -> Scratch:
    """A Scratch for scenes of up to `n_obj` objects and `n_out` candidate primitives, with
    `warm` GJK warm-start slots (0: none)."""
    sc = allocate(
        Scratch,
        n_obj=max(int(n_obj), 1),
        n_out=max(int(n_out), 2),  # COLLIDE's first hit uses two
        warm=int(warm),
    )
    sc.best[:, 0] = np.inf
    return sc
