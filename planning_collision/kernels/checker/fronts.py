"""Front lists (FCL): where a piece's last traversal found leaves, reused while the piece stays
inside the box it was recorded for (CollisionChecker(front_lists=True); docs/performance.md
says what they buy)."""

from collections import namedtuple

from .._jit import hot_kernel, inline_kernel
from ..base.codes import BV, ENVELOPE, LEAVES, NO, NONE
from ..scene.scratch import FRONT_BUILDS, FRONT_HITS
from .check_core import query

# What `set_ranges` reads and writes: the buffers' front list and envelopes, the pieces'
# boxes, the scratch's counters and its `out` (where a LEAVES traversal lists).
FrontArrays = namedtuple(
    "FrontArrays", ["front", "front_n", "ranges", "env_lo", "env_hi", "plo", "phi", "counts", "out"]
)


@inline_kernel
def front_arrays(sc, buf):
    """The `FrontArrays` of scratch sc and buffers buf."""
    return FrontArrays(
        front=buf.front, front_n=buf.front_n, ranges=buf.ranges, env_lo=buf.env_lo,
        env_hi=buf.env_hi, plo=buf.plo, phi=buf.phi, counts=sc.counts, out=sc.out,
    )  # fmt: skip


@hot_kernel
def _contains(lo, hi, i, qlo, qhi, j, margin):
    """Box i of (lo, hi) holds box j of (qlo, qhi) grown by margin."""
    for k in range(3):
        if qlo[j, k] - margin < lo[i, k] or qhi[j, k] + margin > hi[i, k]:
            return False
    return True


@inline_kernel
def set_ranges(hm, hw, fr, i0, i1, bound, delta):
    """For each piece i in [i0, i1), the rows ranges[i] of the front list its traversal
    under `bound` starts from (an empty range: the root); fr: `FrontArrays`.

    Its front (the group-BVH leaves overlapping the front's envelope box) when the piece's
    box grown by `bound` lies inside that envelope: every leaf a traversal from the root
    would reach is in the front, so the answer is the same. Otherwise, when delta > 0 (how
    far the piece may move in the queries to come), a new front for the envelope "piece box
    grown by bound + delta", if it has at most F leaves; else the root."""
    front, front_n, ranges = fr.front, fr.front_n, fr.ranges
    F = front.shape[0] // front_n.shape[0]
    for i in range(i0, i1):
        n = front_n[i]
        ranges[i, 0] = 0
        ranges[i, 1] = 0
        if n >= 0 and _contains(fr.env_lo, fr.env_hi, i, fr.plo, fr.phi, i, bound):
            fr.counts[FRONT_HITS] += 1
            ranges[i, 0] = i * F
            ranges[i, 1] = i * F + max(n, 1)
            continue
        if delta <= 0.0:
            continue
        g = bound + delta
        for k in range(3):
            fr.env_lo[i, k] = fr.plo[i, k] - g
            fr.env_hi[i, k] = fr.phi[i, k] + g
        m = query(hm, hw, LEAVES, ENVELOPE, i, i + 1, 0.0, NO)
        if m < 0 or m > F:
            front_n[i] = -1
            continue
        for j in range(m):
            front[i * F + j, 0] = BV
            front[i * F + j, 1] = fr.out[j]
        if m == 0:  # nothing near: one entry that stands for nothing (empty means root)
            front[i * F, 0] = NONE
            front[i * F, 1] = 0
        front_n[i] = m
        fr.counts[FRONT_BUILDS] += 1
        ranges[i, 0] = i * F
        ranges[i, 1] = i * F + max(m, 1)
