"""A state check resumes after the first piece whose outer hull touches something and whose piece
does not: the pieces before it must be clear of every obstacle, bounded or not. When the primitives
without a box (halfspaces) were tested for all pieces before the trees, a later piece's hull grazing
a floor was found first and an earlier piece inside a box was never tested: `is_valid` called a
colliding configuration free (35 of 20,000 configurations with a box at a piece and a floor just
under the pieces after it: `python -m planning_collision.demos.dev.fuzz --parts floors`)."""

import numpy as np
import pytest

import planning_collision as pc

# the configuration the search found: link1 around a 1 cm box, a finger's outer hull
# 4 cm above the floor's offset grazing it, no piece touching the floor
Q = [-2.1909275013015566, -0.48671009639397056, -2.800114708735649, -2.6481049255056432,
     -1.89330110676921, 1.8918681822626897, -0.6909584725413334]  # fmt: skip
FLOOR = -0.042645158771549035
BOX_AT = [-0.030234910144287655, 0.021483912334727878, 0.2644845111221075]


@pytest.fixture(scope="module")
def panda(example_robot_data):
    from planning_collision import robots

    return robots.load("panda")


@pytest.fixture(scope="module")
def scenes(panda):
    T = np.eye(4)
    T[:3, 3] = BOX_AT
    both, box, floor = pc.Scene(), pc.Scene(), pc.Scene()
    for s in (both, floor):
        s.add(pc.Halfspace((0, 0, 1), FLOOR), name="floor")
    for s in (both, box):
        s.add(pc.Box((0.01, 0.01, 0.01)), T, name="box")
    return both, box, floor


@pytest.mark.parametrize("rigid", [True, False])
def test_a_piece_in_a_box_is_found_when_a_later_hull_grazes_a_floor(panda, scenes, rigid):
    both, box, floor = scenes
    q = np.array(Q)
    assert not pc.CollisionChecker(panda, box, rigid_bodies=rigid).is_valid(q)
    assert pc.CollisionChecker(panda, floor, rigid_bodies=rigid).is_valid(q)  # a graze only
    checker = pc.CollisionChecker(panda, both, rigid_bodies=rigid)
    assert not checker.is_valid(q)
    assert not checker.is_valid_batch(q[None])[0]
    assert checker.clearance(q) <= 0.0
    assert not checker.check_edge(q, q, method="discrete").valid
