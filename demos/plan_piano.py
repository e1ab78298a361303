"""The piano movers' problem (FCL's classic benchmark): a free-flying piano carried from one
room to the next through a doorway, planned by OMPL through planning_collision.

The piano (robots/free_flyer: a 1.4 x 2.1 x 0.95 m box on a floating base with six
coordinates x, y, z, yaw, pitch, roll; yaw and roll are SO2 angles) starts beside a table
and must reach the far room turned by 90 degrees; the doorway (demos/scenes.py:
piano_room) is 1.6 m wide, so it passes only turned so that its 1.4 m side spans the
opening. Every edge is certified free ("dichotomy" by default): the piano cannot clip the
door frame between two sampled poses. The summary gives what was solved, the solve time,
the path length, the edges and states checked and what each check cost, and a dense
re-check of the simplified path (states at most 2 mm of piano motion apart). `--out` also
draws the floor plan seen from above (matplotlib): the walls and furniture, the piano's
centre path and its outline at a few poses.

    python -m planning_collision.demos.plan_piano                  # RRTConnect, certified edges
    python -m planning_collision.demos.plan_piano --planner BITstar --time 5
    # OMPL-style sampled edges, for contrast
    python -m planning_collision.demos.plan_piano --method discrete
    python -m planning_collision.demos.plan_piano --out piano.png  # and the floor plan
    # in the browser (--export f.glb: glTF)
    python -m planning_collision.demos.plan_piano --view

Why not OMPL's SE3StateSpace: OMPL interpolates its rotations by slerp, a motion the checker
does not certify; in these six coordinates OMPL's straight-line interpolation is exactly
the motion each edge certificate covers (plugins/ompl/spaces.py).

The first run on a machine compiles the checker's kernels (about 35 s, announced); numba
caches them, and later runs take a few seconds.
"""

from __future__ import annotations

import argparse
import math

import numpy as np

from planning_collision.demos import cli, viewing
from planning_collision.demos.scenes import piano_room
from planning_collision.plugins.ompl import solution_path

RECHECK_STEP = 0.002  # m: the largest piano motion between two re-checked states
POSES = 7  # piano outlines drawn along the path, start and goal included


def dense_states(robot, Q: np.ndarray, step: float = RECHECK_STEP) -> np.ndarray:
    """States along the polyline Q (n, dof) spaced so that no point of the robot moves
    more than `step` (m) between two (the robot's motion bounds)."""
    R = robot.motion_bound_R
    out = [Q[:1]]
    for a, b in zip(Q[:-1], Q[1:], strict=True):
        k = max(1, math.ceil(float((R @ np.abs(b - a)).max()) / step))
        out.append(a + (np.arange(1, k + 1)[:, None] / k) * (b - a))
    return np.concatenate(out)


def _turn(o, a, b) -> float:
    """> 0 when o -> a -> b turns left."""
    return float((a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0]))


def footprint(robot, q) -> np.ndarray:
    """(k, 2) the convex outline, seen from above, of the robot's convex pieces at q
    (Andrew's monotone chain on their posed points)."""
    pts = []
    for piece, T in zip(robot.pieces, robot.piece_poses(q), strict=True):
        P = np.asarray(getattr(piece.shape, "points", np.zeros((0, 3))))
        pts.append(P @ T[:3, :3].T + T[:3, 3])
    P = np.unique(np.concatenate(pts)[:, :2].round(9), axis=0)  # sorted by x, then y

    def chain(points):
        out: list = []
        for p in points:
            while len(out) >= 2 and _turn(out[-2], out[-1], p) <= 0:
                out.pop()
            out.append(p)
        return out[:-1]

    return np.array(chain(P) + chain(P[::-1]))


def draw(out, robot, scene, Q, title) -> bool:
    """The floor plan (module doc) into `out`. False when matplotlib is missing."""
    try:
        from matplotlib import patches
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        print("the floor plan needs matplotlib (pip install matplotlib): skipped")
        return False
    fig = Figure(figsize=(7.5, 7.0), dpi=110, layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    for ob in scene:
        if ob.name == "floor":
            continue
        lo, hi = scene.aabb(ob.id)
        ax.add_patch(
            patches.Rectangle(lo[:2], *(hi - lo)[:2], facecolor="#28a050", alpha=0.6, ec="k")
        )
        ax.annotate(ob.name, 0.5 * (lo[:2] + hi[:2]), ha="center", va="center", fontsize=7)
    D = dense_states(robot, Q, 0.02)
    ax.plot(D[:, 0], D[:, 1], color="#c800c8", lw=2, label="piano centre (certified path)")
    picks = np.round(np.linspace(0, len(D) - 1, POSES)).astype(int)
    for k, i in enumerate(picks):
        ax.add_patch(
            patches.Polygon(
                footprint(robot, D[i]),
                closed=True,
                fill=False,
                ec="#ff8c00",
                lw=1.5,
                alpha=0.35 + 0.65 * k / (POSES - 1),
            )
        )
    ax.plot([], [], color="#ff8c00", lw=1.5, label="piano footprint")
    ax.set_xlim(-5, 5)
    ax.set_ylim(-5, 5)
    ax.set_aspect("equal")
    ax.set_xlabel("x (m)")
    ax.set_ylabel("y (m)")
    ax.set_title(title, fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(loc="lower left", fontsize=8)
    fig.savefig(out)
    return True


def main(argv=None) -> int:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    cli.add_arguments(p, "RRTConnect", 10.0)
    p.add_argument("--out", help="also draw the floor plan into this PNG")
    args = cli.parse(p, argv)

    import planning_collision as pc

    robot, scene, start, goal = piano_room()
    checker = pc.CollisionChecker(robot, scene)
    print(
        f"piano ({robot.dof} coordinates: x y z yaw pitch roll), {len(scene)} obstacles, "
        f"doorway 1.6 m wide; edges: {args.method}"
    )
    cli.warm_up(checker, args.method)

    r = cli.solve(robot, scene, start, goal, checker, args)
    ss, solved, dt = r.ss, r.solved, r.seconds
    edges, states, us_edge, us_state = r.edges, r.states, r.us_edge, r.us_state
    if not solved:
        print(f"{args.planner:12s} not solved in {1e3 * dt:.0f} ms  edges {edges}  states {states}")
        return 1
    ss.simplifySolution(1.0)  # shortcuts are checked by the same validator
    Q = solution_path(ss)
    length = float(np.linalg.norm(np.diff(Q[:, :3], axis=0), axis=1).sum())
    turned = math.degrees(Q[-1, 3] - Q[0, 3])
    print(
        f"{args.planner:12s} solved in {1e3 * dt:7.1f} ms  centre path {length:5.2f} m, "
        f"yaw {turned:+.0f} deg along it, {len(Q)} waypoints  "
        f"edges {edges:5d} ({us_edge:5.1f} us each)  states {states:5d} ({us_state:4.1f} us each)"
    )
    D = dense_states(robot, Q)
    bad = int((~checker.is_valid_batch(D)).sum())
    print(
        f"dense re-check ({len(D)} states, at most {1e3 * RECHECK_STEP:g} mm of motion apart): "
        + ("no state collides" if bad == 0 else f"{bad} states collide")
    )
    if args.out:
        title = f"{args.planner}, edges by {args.method}: solved in {1e3 * dt:.0f} ms"
        if draw(args.out, robot, scene, Q, title):
            print(f"wrote {args.out}")
    viewing.show(scene, robot, Q, args)
    return 0 if bad == 0 or args.method == "discrete" else 1


if __name__ == "__main__":
    raise SystemExit(main())
