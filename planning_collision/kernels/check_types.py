"""The checker's flat robot (`CheckRobot`) and per-thread buffers (`CheckBuffers`), as the
compiled code sees them (kernels/checker.py); planning_collision.checker builds them."""

from collections import namedtuple

from .fk import RobotModel
from .handles import F1, F2, F3, I1, I2, L1, register
from .layout import ShapeTable

CheckRobot = namedtuple(
    "CheckRobot",
    [
        "model",  # RobotModel
        "tab",  # ShapeTable of the collision pieces
        "piece_link",  # (n_pieces,) int32
        "piece_pose",  # (n_pieces, 4, 4) T_link_piece
        "link_start",  # (n_all_links + 1,) int32: pieces of link l
        "body_link",  # (n_links,) int32: the collision link of each link body
        "pairs",  # (n_pairs, 2) int32: the links of each self-pair body
        "R",  # (n_bodies, dof): motion-bound rows (robot/bounds.py)
        "limited",  # (dof,) int32: 1 where q must stay within [lower, upper]
        "outer",  # ShapeTable: each piece's outer hull (contains it; checker/bounds.py)
        "caps",  # ShapeTable: each piece's bounding capsule (contains it)
        "cap_pose",  # (n_pieces, 4, 4) T_piece_capsule
        "cap_p0",  # (n_pieces, 3) the capsule's segment ends, piece frame
        "cap_p1",
        # local motion bounds (kernels/motion_bounds.py, robot/bounds.py `body_terms`)
        "sphere_c",  # (n_all_links, 3) centre of a ball holding each link (link frame)
        "sphere_r",  # (n_all_links,) its radius
        "term_start",  # (n_bodies + 1,) int32: body b's rows of term, term_w
        "term",  # (n_terms, 3) int32: (sphere link, joint link or -1, configuration index)
        "term_w",  # (n_terms, 3): (|mult|, speed per unit of the joint, mult)
        # self-pair clearance tables (kernels/self_tables.py), one per self pair j
        "pt_q",  # (n_pairs, 2) int32: the configuration index of each table axis (-1: none)
        "pt_lo",  # (n_pairs, 2) the grid's origin on each axis
        "pt_w",  # (n_pairs, 2) its cell width on each axis
        "pt_n",  # (n_pairs, 2) int32: its cells on each axis
        "pt_start",  # (n_pairs,) int32: the pair's first cell in pt_lb (-1: no table)
        "pt_min",  # (n_pairs,) the smallest bound of the pair's table
        "pt_lb",  # (n_cells,) each cell's lower bound on the pair's distance, axis 1 fastest
    ],
)

CheckBuffers = namedtuple(
    "CheckBuffers",
    [
        "link_poses",  # (n_all_links, 4, 4)
        "piece_poses",  # (n_pieces, 4, 4)
        "plo",  # (n_pieces, 3) conservative world boxes of the pieces
        "phi",
        "cap_poses",  # (n_pieces, 4, 4) the bounding capsules' world poses (edge checks)
        "q",  # (dof,) the configuration being checked
        "d",  # (n_bodies,) distance lower bounds at the last evaluation
        "exact",  # (n_bodies,) int32: 1 when d is the distance, 0 when only a lower bound
        "slot",  # (n_bodies,) int32: the nearest object slot of a link body (-1: none)
        "mu",  # (n_bodies,) motion bounds of the current edge
        "ilo",  # (n_bodies, K) uncovered intervals of each body (edge checks)
        "ihi",
        "icount",  # (n_bodies,) int32
        "env_lo",  # (n_pieces, 3) front envelope of each piece (world box)
        "env_hi",
        "front_n",  # (n_pieces,) int32: entries in the piece's front (-1: none)
        "front",  # (n_pieces * F, 2) int32: front entries, F per piece
        "ranges",  # (n_pieces, 2) int32: each piece's rows of front a traversal starts from
        "ec_key",  # (C,) int64: endpoint cache, the hash of the configuration in a slot
        "ec_q",  # (C, dof): the configuration (checked on a hit)
        "ec_d",  # (C, n_bodies): distance lower bounds there
        "ec_exact",  # (C, n_bodies) int32
        "queue",  # (Qn, 2) int32: the discrete method's FIFO of index ranges
        "dqa",  # (2, dof) |q1 - q0| and q1 - q0 of the current edge
        "growth",  # (n_bodies, 2) the local bounds' B and alpha of the current edge
    ],
)

register(
    CheckRobot,
    [RobotModel, ShapeTable, I1, F3, I1, I1, I2, F2, I1, ShapeTable, ShapeTable, F3, F2, F2]
    + [F2, F1, I1, I2, F2]
    + [I2, F2, F2, I2, I1, F1, F1],
)
register(
    CheckBuffers,
    [F3, F3, F2, F2, F3, F1, F1, I1, I1, F1, F2, F2, I1]
    + [F2, F2, I1, I2, I2, L1, F2, F2, I2, I2, F2, F2],
)
