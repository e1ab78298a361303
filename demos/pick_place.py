"""Pick and place: the Panda carries a box from a table to a shelf, planned by OMPL.

What a MoveIt user does with an ``AttachedCollisionObject``, here with `Robot.attach`:

1. plan from the ready pose to the grasp: the hand around the box on the table (the box is
   an obstacle, its fingers 2 cm clear of it);
2. attach the box to the hand (`robot.attach_from_scene`: it leaves the scene and rides on
   ``panda_hand``; the fingers may touch it, everything else is checked against it: the
   table, the shelf and the arm's own links), plan to the shelf and set it on a board;
3. detach it into the scene where it stands (`robot.detach_to_scene`), plan back to ready.

Every edge the planner keeps is certified (method "dichotomy"), the box's motion included.
Each returned path is then re-checked on the exact URDF link meshes, the box as a box, by
python-fcl (`planning_collision.testing.fcl_robot`, states at most 0.01 rad apart; skipped
without python-fcl). The box rests 3 mm above the table and the board: the checker counts
touching as a collision, and this demo has no support-surface exception (MoveIt lets a
held object touch its support while it lifts).

Takes a few seconds once the checker's kernels are compiled (the first run on a machine
compiles them, ~40 s, announced on stderr)::

    python -m planning_collision.demos.pick_place
    python -m planning_collision.demos.pick_place --time 5 --seed 3
    # the carrying path, box in hand
    python -m planning_collision.demos.pick_place --export carry.glb
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from planning_collision.demos import cli, viewing
from planning_collision.plugins.ompl import make_setup, solution_path, solve

FINGERS = ("panda_leftfinger", "panda_rightfinger")
OPEN = {"panda_finger_joint1": 0.04, "panda_finger_joint2": 0.04}  # 8 cm between the pads
BOX = (0.04, 0.04, 0.10)  # m, full sides; held along the hand's z axis
GAP = 0.003  # m between the box and the surface it rests on
READY = np.array([0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785])
# The hand pointing down, its TCP over the table and over the shelf's board (found by
# least squares on robot.fk; the scene below is built around these poses).
PICK = np.array([-0.408, 0.359, -0.296, -1.798, 0.122, 2.139, 1.08])
PLACE = np.array([0.772, 0.576, 0.023, -0.9, -0.012, 1.479, 2.621])


def grasp() -> np.ndarray:
    """T_hand_box: the box's centre 2 cm past the TCP along the hand's z (its top 7 mm
    below the palm, its sides between the finger pads)."""
    T = np.eye(4)
    T[2, 3] = 0.1234
    return T


def _slab(lo, hi) -> tuple:
    """(Box, T) of the axis-aligned box from lo to hi (m)."""
    import planning_collision as pc

    lo, hi = np.asarray(lo, float), np.asarray(hi, float)
    T = np.eye(4)
    T[:3, 3] = 0.5 * (lo + hi)
    return pc.Box(hi - lo), T


def _bottom(robot, q) -> float:
    """World z of the lowest corner of the box held at configuration q."""
    c = np.array([[x, y, z, 2.0] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)]) / 2
    c[:, :3] *= BOX
    return float((robot.fk(q)["panda_hand"] @ grasp() @ c.T)[2].min())


def pick_place_scene():
    """(robot, scene, box id): the Panda (fingers open), a table with the box on it where
    the hand grasps at PICK, and a shelf (a board, a top, a back and two sides) whose board
    is under the box held at PLACE."""
    import planning_collision as pc
    from planning_collision import robots

    robot = robots.load("panda", fixed_joints=OPEN)
    scene = pc.Scene()
    table = _bottom(robot, PICK) - GAP
    scene.add(*_slab((0.30, -0.65, 0.0), (0.70, -0.15, table)), name="table")
    board = _bottom(robot, PLACE) - GAP
    x0, x1, y0, y1 = 0.36, 0.72, 0.24, 0.76  # the shelf's open front faces the robot
    for name, lo, hi in (
        ("shelf board", (x0, y0, board - 0.02), (x1, y1, board)),
        ("shelf top", (x0, y0, board + 0.50), (x1, y1, board + 0.52)),
        ("shelf back", (x1, y0, 0.0), (x1 + 0.02, y1, board + 0.52)),
        ("shelf left", (x0, y0 - 0.02, 0.0), (x1, y0, board + 0.52)),
        ("shelf right", (x0, y1, 0.0), (x1, y1 + 0.02, board + 0.52)),
    ):
        scene.add(*_slab(lo, hi), name=name)
    T_box = robot.fk(PICK)["panda_hand"] @ grasp()
    box = scene.add(pc.Box(BOX), T_box, name="box")
    return robot, scene, box


def exact_recheck(robot, scene, Q, step: float = 0.01):
    """(states checked, first colliding (edge, t) or None) of the path Q (n, dof) on the
    exact meshes and the attached objects' exact shapes (python-fcl), states at most
    `step` rad apart; None for the count when python-fcl is missing."""
    try:
        from planning_collision.testing.fcl_robot import FclRobot

        oracle = FclRobot(robot, scene)
    except ImportError:
        return None, None
    n = 0
    for k, (a, b) in enumerate(zip(Q[:-1], Q[1:], strict=True)):
        m = max(1, int(np.ceil(np.abs(b - a).max() / step)))
        t = oracle.edge_collides(a, b, m)
        n += m + 1
        if t is not None:
            return n, (k, t)
    return n, None


def plan(robot, scene, checker, start, goal, args):
    """The simplified path (n, dof) from start to goal, or None; and the solve's seconds."""
    ss = make_setup(robot, scene, start, goal, planner=args.planner, checker=checker)
    t0 = time.perf_counter()
    solved = bool(solve(ss, args.time)) and ss.haveExactSolutionPath()
    dt = time.perf_counter() - t0
    if not solved:
        return None, dt
    ss.simplifySolution(0.2)  # shortcuts are certified by the same validator
    return solution_path(ss), dt


def _phase(title, robot, scene, checker, start, goal, args) -> tuple:
    """Plan one leg, re-check it, say both; returns (path or None, its path is free)."""
    Q, dt = plan(robot, scene, checker, start, goal, args)
    if Q is None:
        print(f"{title}: not solved in {args.time:g} s")
        return None, False
    length = float(np.linalg.norm(np.diff(Q, axis=0), axis=1).sum())
    n, hit = exact_recheck(robot, scene, Q)
    if n is None:
        check = "exact re-check skipped (pip install python-fcl)"
    elif hit is None:
        check = f"exact re-check: {n} states free (python-fcl, meshes + box)"
    else:
        check = f"exact re-check: COLLIDES on edge {hit[0]} at t = {hit[1]:.3f}"
    print(f"{title}: {1e3 * dt:.0f} ms, {len(Q)} waypoints, {length:.2f} rad; {check}")
    return Q, hit is None


def main(argv=None) -> int:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    cli.add_arguments(p, "RRTConnect", 2.0)  # --planner, --method, --time, --seed, --view...
    args = cli.parse(p, argv)
    if args.method != "dichotomy":
        print(f"edges by {args.method!r}")

    import planning_collision as pc

    robot, scene, box = pick_place_scene()
    checker = pc.CollisionChecker(robot, scene)
    print(f"Panda ({robot.dof} joints), {len(scene)} obstacles: a table, a shelf and a box")
    cli.warm_up(checker, args.method)

    fetch, ok1 = _phase("1. ready -> grasp", robot, scene, checker, READY, PICK, args)
    held = robot.attach_from_scene(scene, box, "panda_hand", PICK, touch_links=FINGERS)
    print(f"   attached {held}")
    carry, ok2 = _phase("2. grasp -> shelf (box in hand)", robot, scene, checker, PICK, PLACE, args)
    if carry is not None and (args.view or args.export):  # the carrying path, box in hand
        viewing.show(scene, robot, carry, args)
    box = robot.detach_to_scene("box", scene, PLACE)
    T = scene.get(box).T
    print(f"   detached: the box stands on the shelf board at {np.round(T[:3, 3], 3).tolist()}")
    back, ok3 = _phase("3. shelf -> ready", robot, scene, checker, PLACE, READY, args)
    solved = all(Q is not None for Q in (fetch, carry, back))
    free = ok1 and ok2 and ok3
    print(
        ("every leg solved" if solved else "a leg was not solved")
        + ("; every path free on the exact meshes with the box" if free else "")
    )
    if not (args.view or args.export):
        print(viewing.HOW_TO_SEE)
    return 0 if solved and free else 1


if __name__ == "__main__":
    raise SystemExit(main())
