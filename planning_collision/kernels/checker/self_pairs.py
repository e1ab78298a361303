"""The checker's self pairs: whether a posed configuration's checked link pairs touch, and a
lower bound on one pair's distance, cheapest test first (kernels/checker/check_core.py says how the
checker's kernels are cut).

A pair of links (a, b) is tested, in order: by its clearance table when it has one
(kernels/robot/self_tables.py); by the links' bounding balls (`link_ball_gap`); then each piece
pair by the pieces' bounding balls (`balls_apart`), their bounding capsules, their outer
hulls, and the pieces themselves.
"""

import math
from collections import namedtuple

import numpy as np

from .._jit import inline_kernel
from ..base.codes import APART, CORES_WITHIN, LOWER_BOUND, NO, OUTER, PIECES, YES
from ..convex.capsule_capsule import posed_capsule_gap
from ..robot.fk import balls_apart
from ..robot.self_tables import table_floor
from ..scene.scratch import SELF_TESTS
from .check_core import self_test

# What the self-pair tests read: the posed pieces and links, and the robot's arrays
SelfArrays = namedtuple(
    "SelfArrays",
    [
        "piece_poses",  # the buffers' (n_pieces, 4, 4)
        "brad",  # the pieces' bounding radii (robot.tab.brad)
        "pairs",  # (n_pairs, 2) the links of each self pair
        "link_start",  # pieces of link l: [link_start[l], link_start[l + 1])
        "cap_p0",  # the pieces' bounding capsules: segment ends (piece frame), radii
        "cap_p1",
        "cap_params",
        "link_poses",  # the buffers' (n_links, 4, 4)
        "sphere_c",  # each link's bounding ball: centre (link frame), radius
        "sphere_r",
    ],
)


@inline_kernel
def self_arrays(robot, buf):
    """The `SelfArrays` of the robot and the buffers."""
    return SelfArrays(
        piece_poses=buf.piece_poses, brad=robot.tab.brad, pairs=robot.pairs,
        link_start=robot.link_start, cap_p0=robot.cap_p0, cap_p1=robot.cap_p1,
        cap_params=robot.caps.params, link_poses=buf.link_poses, sphere_c=robot.sphere_c,
        sphere_r=robot.sphere_r,
    )  # fmt: skip


@inline_kernel
def link_ball_gap(sa, a, b):
    """A lower bound on the distance between links a and b: their balls' gap (posed), or
    -inf when each is a single piece (the pieces' own balls are as cheap and tighter)."""
    link_start = sa.link_start
    if link_start[a + 1] - link_start[a] == 1 and link_start[b + 1] - link_start[b] == 1:
        return -math.inf
    T, c, r = sa.link_poses, sa.sphere_c, sa.sphere_r
    e = 0.0
    for k in range(3):
        xa = T[a, k, 0] * c[a, 0] + T[a, k, 1] * c[a, 1] + T[a, k, 2] * c[a, 2] + T[a, k, 3]
        xb = T[b, k, 0] * c[b, 0] + T[b, k, 1] * c[b, 1] + T[b, k, 2] * c[b, 2] + T[b, k, 3]
        e += (xa - xb) * (xa - xb)
    return math.sqrt(e) - r[a] - r[b]


@inline_kernel
def self_hit(hm, hw, sa, tables, q, counts, margin):
    """posed_collides' self part: True when a checked pair is within margin (module doc for
    the order of the tests). tables: the robot's pt_start and `grid`; q: the posed
    configuration; sa: `SelfArrays`; counts: the scratch's."""
    P, pairs, link_start = sa.piece_poses, sa.pairs, sa.link_start
    for j in range(pairs.shape[0]):
        if table_floor(tables[0], tables[1], j, q) > margin:
            continue
        a = pairs[j, 0]
        b = pairs[j, 1]
        if link_ball_gap(sa, a, b) > margin:  # the hand's 10 pieces at once
            continue
        for ia in range(np.int64(link_start[a]), np.int64(link_start[a + 1])):
            for ib in range(np.int64(link_start[b]), np.int64(link_start[b + 1])):
                if balls_apart(P, sa.brad, ia, ib, margin):
                    continue
                if posed_capsule_gap(P, sa.cap_p0, sa.cap_p1, sa.cap_params, ia, ib) > margin:
                    continue
                counts[SELF_TESTS] += 1
                r = self_test(hm, hw, OUTER, ia, ib, margin, YES)
                if r == APART:
                    continue
                if r == CORES_WITHIN:  # the pieces overlap: no GJK on them needed
                    return True
                if self_test(hm, hw, PIECES, ia, ib, margin, YES) == CORES_WITHIN:
                    return True
    return False


@inline_kernel
def pair_distance_bound(hm, hw, sa, tmp, counts, j, need, floor, enough):
    """(d, final) for self pair j, as `states.link_distance` for a link: bounding balls and
    capsules first (a capsule distance past `enough` is taken as the bound), then the outer
    hulls, the pieces only where those come within floor. sa: `SelfArrays`; tmp, counts:
    the scratch's."""
    P, pairs, link_start = sa.piece_poses, sa.pairs, sa.link_start
    a = pairs[j, 0]
    b = pairs[j, 1]
    best = need
    final = 0
    if link_ball_gap(sa, a, b) > need:  # every piece pair's distance is at least this
        return need, 0
    for ia in range(np.int64(link_start[a]), np.int64(link_start[a + 1])):
        for ib in range(np.int64(link_start[b]), np.int64(link_start[b + 1])):
            if balls_apart(P, sa.brad, ia, ib, best):
                continue
            g = posed_capsule_gap(P, sa.cap_p0, sa.cap_p1, sa.cap_params, ia, ib)
            if g > best:
                continue
            if g > enough:
                best = g
                final = 1
                continue
            counts[SELF_TESTS] += 1
            d = best
            for which in (OUTER, PIECES):
                if self_test(hm, hw, which, ia, ib, best, NO) == LOWER_BOUND:
                    d = math.inf
                    break
                d = tmp[0]
                if d > floor:
                    break
            if d <= best:
                best = d
                final = 1
    return best, final
