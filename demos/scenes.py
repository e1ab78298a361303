"""The planning problems the demos ship with (in the package: nothing to download).

- `panda_shelf()`: the Panda in front of the bookshelf of planning_collision/data, its hand
  in the middle compartment (the end of the scene file's ``meta.example_paths``) moving to
  the top one (the straight joint-space motion between them hits the shelf), fingers wide
  open as in the MotionBenchMaker problems.
- `piano_room()`: the free-flying piano (robots/free_flyer) in a room with a wall and a
  doorway it must pass through, tilted (FCL's rigid-body benchmark, in spirit).
- `planar_arm_gap()`: the 3-link planar arm reaching past two posts through a narrow gap.
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import numpy as np

import planning_collision as pc
from planning_collision import robots

BOOKSHELF = Path(str(resources.files("planning_collision") / "data" / "bookshelf.json"))
PANDA_FINGERS = {"panda_finger_joint1": 0.065, "panda_finger_joint2": 0.065}


# The hand in the top compartment, pointing into the shelf (found by sampling valid
# configurations whose hand lies there; 1.9 cm clear of the shelf).
PANDA_TOP = (0.277, 0.464, -0.596, -0.565, 0.632, 2.431, -1.628)


def panda_shelf():
    """(robot, scene, start, goal): the Panda from the middle compartment to the top one."""
    robot = robots.load("panda", fixed_joints=PANDA_FINGERS)
    scene = pc.Scene.from_file(BOOKSHELF)
    path = json.loads(BOOKSHELF.read_text())["meta"]["example_paths"]["panda"]
    return robot, scene, np.array(path[-1], float), np.array(PANDA_TOP, float)


def piano_room():
    """(robot, scene, start, goal): the piano (1.4 x 2.1 x 0.95 m) from one room to the next
    through a doorway 1.6 m wide and 2.4 m high in a wall at x = 0: it fits only turned
    (yaw) so that its 1.4 m side spans the doorway."""
    robot = robots.load("free_flyer")
    scene = pc.Scene()
    t = 0.1  # wall thickness

    def box(name, lo, hi):
        lo, hi = np.asarray(lo, float), np.asarray(hi, float)
        T = np.eye(4)
        T[:3, 3] = 0.5 * (lo + hi)
        scene.add(pc.Box(hi - lo), T, name=name)

    box("floor", [-5, -5, -0.1], [5, 5, 0.0])
    box("wall_left", [-t, -5, 0], [t, -0.8, 3])
    box("wall_right", [-t, 0.8, 0], [t, 5, 3])
    box("lintel", [-t, -0.8, 2.4], [t, 0.8, 3])
    box("table", [-3.0, 1.0, 0.0], [-2.0, 2.5, 0.8])
    box("shelf", [2.0, -2.5, 0.0], [2.4, -1.0, 2.0])
    start = np.array([-2.5, -1.5, 1.0, 0.0, 0.0, 0.0])
    goal = np.array([2.5, 1.5, 1.0, np.pi / 2, 0.0, 0.0])
    return robot, scene, start, goal


def planar_arm_gap():
    """(robot, scene, start, goal): the planar arm (base at the origin, z = 0 plane)
    reaching from one side of two posts to the other, through the gap between them."""
    robot = robots.load("planar_arm")
    scene = pc.Scene()
    for name, y in (("post_low", -0.33), ("post_high", 0.33)):
        T = np.eye(4)
        T[:3, 3] = (0.55, y, 0.0)
        scene.add(pc.Cylinder(0.12, 0.3), T, name=name)
    T = np.eye(4)
    T[:3, 3] = (-0.45, 0.0, 0.0)
    scene.add(pc.Box((0.1, 0.6, 0.3)), T, name="wall")
    start = np.array([np.pi / 2, 0.3, 0.3])
    goal = np.array([0.0, 0.0, 0.0])
    return robot, scene, start, goal
