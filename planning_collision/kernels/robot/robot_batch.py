"""Batch self-collision sampling for the allowed-collision matrix (robot/acm.py).

MoveIt's setup assistant samples random configurations and counts, per link pair, how often
the pair collides; pairs that never (or nearly always) collide are allowed. One compiled
call runs FK, poses the collision pieces and tests every requested link pair for every
configuration, so 10,000 Panda samples take seconds.
"""

import numpy as np

from .._jit import kernel
from ..convex.pair import pair_overlap
from .fk import balls_apart, fk, piece_poses


@kernel
def count_link_pair_collisions(
    model,
    tab,
    piece_link,
    piece_pose,
    link_start,
    pairs,
    Q,
    margin,
    ws,
    link_buf,
    piece_buf,
    counts,
):
    """counts[p] += number of rows of Q (m, dof) in which link pair pairs[p] = (a, b) has a
    piece pair with signed distance <= margin.

    Pieces of link ``l`` are ``link_start[l]:link_start[l+1]`` of `tab`, posed in the link by
    ``piece_pose``. A bounding-sphere test (``tab.brad`` about the piece origin) skips far
    pairs before GJK (`balls_apart`). link_buf (n_links, 4, 4), piece_buf (n_pieces, 4, 4): scratch.
    """
    for k in range(Q.shape[0]):
        fk(model, Q[k], link_buf)
        piece_poses(link_buf, piece_link, piece_pose, piece_buf)
        for p in range(pairs.shape[0]):
            a = pairs[p, 0]
            b = pairs[p, 1]
            hit = False
            # int64 indices, as the checker's: the pair queries compile once for both
            for ia in range(np.int64(link_start[a]), np.int64(link_start[a + 1])):
                for ib in range(np.int64(link_start[b]), np.int64(link_start[b + 1])):
                    if balls_apart(piece_buf, tab.brad, ia, ib, margin):
                        continue
                    if pair_overlap(tab, ia, piece_buf[ia], tab, ib, piece_buf[ib], margin, ws):
                        hit = True
                        break
                if hit:
                    break
            if hit:
                counts[p] += 1
