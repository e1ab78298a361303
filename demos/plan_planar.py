"""The planar arm reaching through a gap, planned by OMPL through planning_collision, and a
picture of what the planner built.

The 3-link arm of robots/planar_arm (joint1 continuous; the arm moves in the z = 0 plane)
reaches from one side of two posts to the other through the gap between them
(demos/scenes.py: planar_arm_gap). One planner (PRM by default) solves it once, every edge
certified free (method "dichotomy"); the summary gives what was solved, the solve time, the
path length, the edges and states checked and what each check cost. The picture (--out,
default roadmap.png) shows the plane seen from above:

- the obstacles' outlines (cylinders as circles, boxes as rectangles);
- the roadmap or tree in end-effector space (the tool frame; each edge interpolated in
  joint space, so a straight joint-space edge is drawn as the curve the tool follows);
- the solution path's end-effector curve (every certified edge interpolated densely);
- the arm at a few configurations along the path (segments between its link origins).

    python -m planning_collision.demos.plan_planar         # PRM, roadmap.png
    python -m planning_collision.demos.plan_planar --planner RRTConnect --out tree.png
    # OMPL-style sampled edges, for contrast
    python -m planning_collision.demos.plan_planar --method discrete
    python -m planning_collision.demos.plan_planar --view  # in the browser (--export f.glb: glTF)

The picture needs matplotlib (the viz extra); without it the demo says so and only plans.
The first run on a machine compiles the checker's kernels (about 35 s, announced); numba
caches them, and later runs take a few seconds.
"""

from __future__ import annotations

import argparse
import math

import numpy as np

from planning_collision.demos import cli, viewing
from planning_collision.demos.scenes import planar_arm_gap
from planning_collision.plugins.ompl import solution_path, validators

EE_LINK = "tool"  # the arm's last frame: link3's tip, between the fingers
EDGE_SAMPLES = 12  # configurations per drawn roadmap edge
PATH_STEP = 0.01  # rad: the largest joint move between two samples of the drawn path
POSES = 5  # arm configurations drawn along the path, start and goal included

# the viewer's palette (planning_collision/viz: obstacles green, robot orange, path
# magenta, roadmap violet), as matplotlib colours
OBSTACLE = "#28a050"
ROBOT = "#ff8c00"
PATH = "#c800c8"
ROADMAP = "#6e46c8"


def planner_graph(ss) -> tuple[np.ndarray, np.ndarray]:
    """(vertices (n, dof), edges (m, 2)) of the planner's data: the roadmap or tree, each
    edge once (PRM stores each both ways)."""
    from ompl import base as ob

    svc, _ = validators(ss)
    pd = ob.PlannerData(ss.getSpaceInformation())
    ss.getPlannerData(pd)
    n = pd.numVertices()
    # vertex states are borrowed and the codec reuses its buffer: copy each
    V = np.array([svc.codec.read(pd.getVertex(i).getState()).copy() for i in range(n)])
    E = sorted({(min(i, j), max(i, j)) for i in range(n) for j in pd.getEdges(i) if j != i})
    return V.reshape(n, svc.codec.dof), np.array(E, np.int64).reshape(-1, 2)


def edge_configurations(codec, V, E, k: int = EDGE_SAMPLES) -> np.ndarray:
    """(m, k, dof) k configurations along each edge (i, j) of E, from V[i] to V[j] with the
    continuous joints unwrapped as the motion validator checks them."""
    t = np.linspace(0.0, 1.0, k)[:, None]
    out = np.empty((len(E), k, V.shape[1]))
    for e, (i, j) in enumerate(E):
        a = V[i]
        b = codec.unwrap(a, V[j].copy())
        out[e] = a + t * (b - a)
    return out


def densify(Q: np.ndarray, step: float = PATH_STEP) -> np.ndarray:
    """The joint-space polyline Q (n, dof) sampled so that no joint moves more than `step`
    between samples; the waypoints are kept."""
    out = [Q[:1]]
    for a, b in zip(Q[:-1], Q[1:], strict=True):
        k = max(1, math.ceil(float(np.abs(b - a).max()) / step))
        out.append(a + (np.arange(1, k + 1)[:, None] / k) * (b - a))
    return np.concatenate(out)


def link_chain(robot, link: str) -> list[int]:
    """Indices of the links from the root down to `link`."""
    chain = [robot.link_index[link]]
    while robot.model.parent[chain[-1]] >= 0:
        chain.append(int(robot.model.parent[chain[-1]]))
    return chain[::-1]


def obstacle_patch(scene, ob, patches):
    """The outline of obstacle `ob` seen from above: a circle for a sphere or an upright
    cylinder, a rectangle for an upright box, else its world box (dashed)."""
    import planning_collision as pc

    T, s = ob.T, ob.shape
    upright = abs(T[2, 2]) > 1.0 - 1e-9  # local z along world z: x and y stay in the plane
    style = {"facecolor": OBSTACLE, "edgecolor": "black", "alpha": 0.6, "lw": 1.0}
    if isinstance(s, pc.Sphere) or (isinstance(s, pc.Cylinder) and upright):
        return patches.Circle(T[:2, 3], s.radius, **style)
    if isinstance(s, pc.Box) and upright:
        hx, hy = 0.5 * s.extents[0], 0.5 * s.extents[1]
        corners = np.array([[-hx, -hy], [hx, -hy], [hx, hy], [-hx, hy]])
        return patches.Polygon(T[:2, 3] + corners @ T[:2, :2].T, closed=True, **style)
    lo, hi = scene.aabb(ob.id)
    return patches.Rectangle(lo[:2], *(hi - lo)[:2], ls="--", **style)


def draw(out, robot, scene, codec, V, E, Q, title) -> bool:
    """The picture (module doc) into `out`; Q (n, dof) the solution path or None. False
    when matplotlib is missing."""
    try:
        from matplotlib import patches
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.collections import LineCollection
        from matplotlib.figure import Figure
    except ImportError:
        print("the picture needs matplotlib (pip install matplotlib, or the viz extra): skipped")
        return False
    ee = robot.link_index[EE_LINK]
    fig = Figure(figsize=(8.5, 6.0), dpi=110, layout="constrained")
    FigureCanvasAgg(fig)  # Agg, whatever pyplot's backend is
    ax = fig.add_subplot()
    for ob in scene:
        ax.add_patch(obstacle_patch(scene, ob, patches))
        ax.annotate(ob.name or str(ob.id), ob.T[:2, 3], ha="center", va="center", fontsize=7)
    if len(E):
        C = edge_configurations(codec, V, E)
        P = robot.fk_batch(C.reshape(-1, robot.dof))[:, ee, :2, 3].reshape(len(E), -1, 2)
        ax.add_collection(LineCollection(P, colors=ROADMAP, lw=0.5, alpha=0.45))
    if len(V):
        pv = robot.fk_batch(V)[:, ee, :2, 3]
        ax.plot(*pv.T, ".", color=ROADMAP, ms=3, label=f"planner data: {len(V)} vertices")
    if Q is not None:
        D = densify(Q)
        F = robot.fk_batch(D)
        chain = link_chain(robot, EE_LINK)
        picks = np.round(np.linspace(0, len(D) - 1, POSES)).astype(int)
        for k, i in enumerate(picks):
            arm = F[i, chain, :2, 3]
            ax.plot(*arm.T, "-o", color=ROBOT, lw=3, ms=4, alpha=0.3 + 0.7 * k / (POSES - 1))
        ax.plot(*F[:, ee, :2, 3].T, color=PATH, lw=2.2, label="path of the tool (certified)")
        ax.plot(*F[0, ee, :2, 3], "o", color="black", ms=7, label="start")
        ax.plot(*F[-1, ee, :2, 3], "*", color="black", ms=11, label="goal")
        ax.plot([], [], "-o", color=ROBOT, lw=3, ms=4, label="arm along the path")
    ax.autoscale_view()
    ax.set_aspect("equal")
    ax.set_xlabel("x (m)")
    ax.set_ylabel("y (m)")
    ax.set_title(title, fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize=8)
    fig.savefig(out)
    return True


def main(argv=None) -> int:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    cli.add_arguments(p, "PRM", 1.0)
    p.add_argument("--out", default="roadmap.png", help="the picture (default roadmap.png)")
    args = cli.parse(p, argv)

    import planning_collision as pc

    robot, scene, start, goal = planar_arm_gap()
    checker = pc.CollisionChecker(robot, scene)
    print(
        f"planar arm ({robot.dof} joints, {robot.joint_names[0]} continuous), "
        f"{len(scene)} obstacles, edges: {args.method}"
    )
    cli.warm_up(checker, args.method)

    r = cli.solve(robot, scene, start, goal, checker, args)
    ss, solved, dt = r.ss, r.solved, r.seconds
    edges, states, us_edge, us_state = r.edges, r.states, r.us_edge, r.us_state
    svc, _ = validators(ss)
    V, E = planner_graph(ss)  # before simplifying: what the planner built
    Q = None
    if solved:
        raw = float(np.linalg.norm(np.diff(solution_path(ss), axis=0), axis=1).sum())
        ss.simplifySolution(0.2)  # shortcuts are checked by the same certified validator
        Q = solution_path(ss)
        length = float(np.linalg.norm(np.diff(Q, axis=0), axis=1).sum())
        result = (
            f"solved in {1e3 * dt:6.1f} ms  length {length:5.2f} rad "
            f"({raw:5.2f} before simplifying, {len(Q)} waypoints)"
        )
    else:
        result = f"not solved in {1e3 * dt:6.1f} ms"
    print(
        f"{args.planner:12s} {result}  edges {edges:5d} ({us_edge:5.1f} us each)  "
        f"states {states:5d} ({us_state:4.1f} us each)"
    )
    print(f"planner data: {len(V)} vertices, {len(E)} edges")
    title = f"{args.planner}, edges by {args.method}: " + (
        f"path {length:.2f} rad in {1e3 * dt:.0f} ms" if solved else "not solved"
    )
    if draw(args.out, robot, scene, svc.codec, V, E, Q, title):
        print(f"wrote {args.out}")
    if solved:
        viewing.show(scene, robot, Q, args, roadmap=(V, E))
    return 0 if solved else 1


if __name__ == "__main__":
    raise SystemExit(main())
