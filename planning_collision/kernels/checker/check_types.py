"""The checker's flat robot (`CheckRobot`) and per-thread buffers (`CheckBuffers`), as the
compiled code sees them (kernels/checker/check_core.py); planning_collision.checker builds them.

Sizes: n_links links (all of the robot's), n_pieces collision pieces, n_bodies bodies (the
link bodies, then the self pairs), n_pairs self pairs, dof configuration coordinates,
n_terms local-bound terms, n_cells self-table cells; and the workspace's capacities:
intervals per body, front_rows (front-list entries per piece times n_pieces), endpoints
in the endpoint cache, queue rows of the discrete method.
"""

from ..base.layout import ShapeTable
from ..base.records import F1, F2, F3, I1, I2, L1, Field, record
from ..robot.fk import RobotModel

NAN = float("nan")

CheckRobot = record(
    "CheckRobot",
    __name__,
    "A robot as the checker's kernels read it; frozen where Python holds it.",
    [
        Field("model", RobotModel, (), "the kinematic tree, cut after the last link posed"),
        Field("tab", ShapeTable, (), "the collision pieces"),
        Field("piece_link", I1, ("n_pieces",), "each piece's link"),
        Field("piece_pose", F3, ("n_pieces", 4, 4), "T_link_piece"),
        Field("link_start", I1, ("n_links + 1",), "pieces of link l: [link_start[l]:[l + 1])"),
        Field("body_link", I1, ("n_link_bodies",), "the collision link of each link body"),
        Field("pairs", I2, ("n_pairs", 2), "the links of each self-pair body"),
        Field("R", F2, ("n_bodies", "dof"), "motion-bound rows (robot/bounds.py)"),
        Field("limited", I1, ("dof",), "1 where q must stay within [lower, upper]"),
        Field("outer", ShapeTable, (), "each piece's outer hull (holds it; checker/bounds.py)"),
        Field("caps", ShapeTable, (), "each piece's bounding capsule (holds it)"),
        Field("cap_pose", F3, ("n_pieces", 4, 4), "T_piece_capsule"),
        Field("cap_p0", F2, ("n_pieces", 3), "the capsule's segment ends, piece frame"),
        Field("cap_p1", F2, ("n_pieces", 3), ""),
        # local motion bounds (kernels/robot/motion_bounds.py, robot/bounds.py `body_terms`)
        Field("sphere_c", F2, ("n_links", 3), "centre of a ball holding each link, link frame"),
        Field("sphere_r", F1, ("n_links",), "its radius"),
        Field("term_start", I1, ("n_bodies + 1",), "body b's rows of term, term_w"),
        Field("term", I2, ("n_terms", 3), "(sphere link, joint link or -1, q index)"),
        Field("term_w", F2, ("n_terms", 3), "(|mult|, speed per unit of the joint, mult)"),
        # self-pair clearance tables (kernels/robot/self_tables.py), one per self pair j
        Field("pt_q", I2, ("n_pairs", 2), "the q index of each table axis (-1: none)"),
        Field("pt_lo", F2, ("n_pairs", 2), "the grid's origin on each axis"),
        Field("pt_w", F2, ("n_pairs", 2), "its cell width on each axis"),
        Field("pt_n", I2, ("n_pairs", 2), "its cells on each axis"),
        Field("pt_start", I1, ("n_pairs",), "the pair's first cell in pt_lb (-1: no table)"),
        Field("pt_min", F1, ("n_pairs",), "the smallest bound of the pair's table"),
        Field("pt_lb", F1, ("n_cells",), "each cell's bound on the pair's distance"),
    ],
)

CheckBuffers = record(
    "CheckBuffers",
    __name__,
    "What the checker's kernels write besides the traversal's Scratch: one thread's.",
    [
        Field("link_poses", F3, ("n_links", 4, 4), "each link's world pose"),
        Field("piece_poses", F3, ("n_pieces", 4, 4), "each piece's world pose"),
        Field("plo", F2, ("n_pieces", 3), "conservative world boxes of the pieces: lo"),
        Field("phi", F2, ("n_pieces", 3), "and hi"),
        Field("cap_poses", F3, ("n_pieces", 4, 4), "the bounding capsules' world poses"),
        Field("q", F1, ("dof",), "the configuration being checked"),
        Field("d", F1, ("n_bodies",), "distance lower bounds at the last evaluation"),
        Field("exact", I1, ("n_bodies",), "1 when d is the distance, 0 when only a bound"),
        Field("slot", I1, ("n_bodies",), "the nearest object slot of a link body (-1: none)"),
        Field("mu", F1, ("n_bodies",), "motion bounds of the current edge"),
        Field("ilo", F2, ("n_bodies", "intervals"), "uncovered intervals of each body: lo"),
        Field("ihi", F2, ("n_bodies", "intervals"), "and hi"),
        Field("icount", I1, ("n_bodies",), "how many"),
        Field("env_lo", F2, ("n_pieces", 3), "front envelope of each piece (world box): lo"),
        Field("env_hi", F2, ("n_pieces", 3), "and hi"),
        Field("front_n", I1, ("n_pieces",), "entries in the piece's front (-1: none)", -1),
        Field("front", I2, ("front_rows", 2), "front entries (tree, node), a block per piece"),
        Field("ranges", I2, ("n_pieces", 2), "each piece's rows of front a traversal starts"),
        Field("ec_key", L1, ("endpoints",), "endpoint cache: a configuration's hash per slot"),
        Field("ec_q", F2, ("endpoints", "dof"), "the configuration (checked on a hit)", NAN),
        # read only where ec_key and ec_q match, after a store: left uninitialised
        Field("ec_d", F2, ("endpoints", "n_bodies"), "distance lower bounds there", None),
        Field("ec_exact", I2, ("endpoints", "n_bodies"), "their `exact`", None),
        Field("queue", I2, ("queue", 2), "the discrete method's FIFO of index ranges"),
        Field("dqa", F2, (2, "dof"), "|q1 - q0| and q1 - q0 of the current edge"),
        Field("growth", F2, ("n_bodies", 2), "the local bounds' B and alpha of the edge"),
    ],
)
