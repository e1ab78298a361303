"""The compiled entry points Python callers use over the scene traversal
(kernels/scene/traversal.py): `scene_traverse` (Scene's queries, the public pair queries of
non-convex shapes) and the batch fast paths for one moving single-primitive query
(benchmarks, tests). The checker compiles the traversal into its own kernels instead
(kernels/checker/check_core.py `query`)."""

from __future__ import annotations

import math

from .._jit import hot_kernel
from ..base.codes import COLLIDE, DISTANCE, NO, ONE, OVERFLOW, YES, ZERO
from .traversal import traverse

__all__ = ["scene_collide_batch", "scene_min_distance_batch", "scene_traverse"]

# Constants go to `traverse` as np.int64 / np.bool_ (kernels/base/codes.py), never literals:
# numba would compile the traversal once per literal value, apart from the checker's and
# Scene's copy of it (tests/test_jit.py). `depth` alone is a literal True on purpose: it
# picks the pair query with penetration depths when the traversal is compiled.


@hot_kernel
def scene_collide_batch(scene, qtab, qposes, qlo, qhi, margin, sc, seeds, out):
    """The boolean fast path for B poses of one single-primitive query (a moving link).

    qposes (B, 4, 4), qlo, qhi (B, 3): the query's pose and world AABB per step. out (B,)
    int32: the slot of an object in collision (the first found), or -1. Leaves ``sc.hit``
    all 0. Returns OVERFLOW on stack overflow, else 0.
    """
    hit = sc.hit
    for b in range(qposes.shape[0]):
        n = traverse(
            scene,
            COLLIDE,
            qtab,
            qposes[b : b + 1],
            qlo[b : b + 1],
            qhi[b : b + 1],
            ZERO,
            ONE,
            seeds,
            seeds[0:0],
            margin,
            YES,
            sc,
            qtab.params[0:0, 0],
            True,
        )
        if n == OVERFLOW:
            return OVERFLOW
        out[b] = -1
        if n > 0:
            for o in range(hit.shape[0]):
                if hit[o]:
                    out[b] = o
                    hit[o] = 0
    return 0


@hot_kernel
def scene_min_distance_batch(scene, qtab, qposes, qlo, qhi, max_dist, sc, seeds, out):
    """Nearest-obstacle distance for B poses of one single-primitive query. out (B,) float64
    signed distance (inf when nothing is within max_dist). Leaves ``sc.best[:, 0]`` all
    inf (a nearest-only query sets one row, reset here after each pose). Returns OVERFLOW on
    stack overflow, else 0.
    """
    best = sc.best
    for b in range(qposes.shape[0]):
        arg = traverse(
            scene,
            DISTANCE,
            qtab,
            qposes[b : b + 1],
            qlo[b : b + 1],
            qhi[b : b + 1],
            ZERO,
            ONE,
            seeds,
            seeds[0:0],
            max_dist,
            NO,
            sc,
            qtab.params[0:0, 0],
            True,
        )
        if arg == OVERFLOW:
            return OVERFLOW
        out[b] = math.inf
        if arg >= 0:
            out[b] = best[arg, 0]
            best[arg, 0] = math.inf
    return 0


@hot_kernel
def scene_traverse(scene, mode, qtab, qposes, qlo, qhi, i0, i1, seeds, bound, flag, sc):
    """`traverse` with penetration depths: the entry point Python callers (Scene, the
    public pair queries of non-convex shapes) use."""
    return traverse(
        scene, mode, qtab, qposes, qlo, qhi, i0, i1, seeds, seeds[0:0], bound, flag, sc,
        qtab.params[0:0, 0], True,
    )  # fmt: skip
