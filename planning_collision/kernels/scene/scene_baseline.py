"""No-broadphase baselines: the query against every primitive (what KCD is measured against).

Kept as kernels, not test code, so the benchmark compares compiled loops with compiled
loops (python -m planning_collision.demos.bench.scene, column "(c) all pairs").
"""

import math

from .._jit import kernel
from ..base.codes import ZERO
from ..convex.pair import pair_distance, pair_overlap

ONLY = ZERO  # the query's one shape (np.int64: kernels/base/codes.py)


@kernel
def all_pairs_collide_batch(tab, poses, qtab, qposes, margin, ws, out):
    """out[b] = first primitive within margin of the query at qposes[b], or -1; every
    primitive is tried (no bounding-volume test) until one collides."""
    n = tab.kind.shape[0]
    for b in range(qposes.shape[0]):
        out[b] = -1
        for p in range(n):
            if pair_overlap(qtab, ONLY, qposes[b], tab, p, poses[p], margin, ws):
                out[b] = p
                break


@kernel
def all_pairs_min_distance_batch(tab, poses, qtab, qposes, ws, tmp, out):
    """out[b] = min over all primitives of the signed distance to the query at qposes[b];
    each pair gets the best distance so far as its early-exit bound."""
    n = tab.kind.shape[0]
    for b in range(qposes.shape[0]):
        best = math.inf
        for p in range(n):
            pair_distance(qtab, ONLY, qposes[b], tab, p, poses[p], best, ws, tmp)
            if tmp[0] < best:
                best = tmp[0]
        out[b] = best
