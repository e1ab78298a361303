"""Certified means certified: the edge methods against dense sampling, on many edges.

Worlds: the Panda (fingers at 0.065 m, self-collision on) in MotionBenchMaker scenes
(the shipped sets, the first ``--problems`` of each set) plus generated adversarial ones: the
same scene with thin plates (2-5 mm) and rods placed across random motions, each obstacle
between two free configurations (planning_collision.testing.edges.thin_obstacles), so that
states at OMPL's 1 % resolution step over it. Edges: those adversarial motions, and
RRT-like motions in the scene (a valid state, a random step of 0.05-1.5 rad).

The oracle: 2,001 evenly spaced states per edge checked on the checker's link models (whose
every mesh triangle lies inside them: tests/test_robot_geometry.py, so a state colliding on
the meshes collides on the models too: this oracle is at least as strict as the meshes),
every link and every checked link pair by its own geometry (``self_tables=False``,
``rigid_bodies=False``: the clearance tables and the rigid bodies are under test too), and
on ``--mesh-edges`` of the edges, 501 states with python-fcl on the exact meshes.

Counted per method: false negatives (called free, the oracle finds a collision: must be 0
for "dichotomy" and "ca"), false alarms (called colliding while every dense state is at
least 1 mm clear of collision), and for "ca" that the time of contact is never after the
oracle's first colliding state and that the robot is within eta of contact there.
"discrete" (OMPL's 1 % states) is there for contrast: its misses are what certification
buys.

    python -m planning_collision.demos.dev.certify                       # >= 20,000 edges, ~18 min
    python -m planning_collision.demos.dev.certify --problems 1 --edges-per-world 200
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from planning_collision.io import mbm_path

DATA = mbm_path("box").parent  # the shipped MotionBenchMaker Panda sets
SETS = ("bookshelf_small", "box", "cage", "table_pick")
METHODS = ("dichotomy", "ca", "discrete")
CLEAR = 1e-3  # a false alarm: every dense state at least this clear (m)


def _worlds(data: Path, per_set: int):
    import planning_collision as pc
    from planning_collision import robots
    from planning_collision.io import load_mbm

    robot, out = None, []
    for s in SETS:
        for p in load_mbm(str(data / f"{s}.json")).problems[:per_set]:
            robot = robot or robots.load("panda", fixed_joints=p.fixed_joints)
            out.append((p.name, robot, pc.Scene.from_records(p.obstacles)))
    return out


def _min_clearance(checker, Q) -> float:
    return min(checker.clearance(q) for q in Q)


def certify_world(name, robot, scene, n_edges: int, rng, eta: float, counts: dict, n_mesh: int):
    import planning_collision as pc
    from planning_collision.testing.edges import dense_first_collision, rrt_edges, thin_obstacles

    n_thin = n_edges // 4
    thin_scene, thin = thin_obstacles(robot, rng, n_thin, base_scene=scene)
    checker = pc.CollisionChecker(robot, thin_scene, eta=eta)
    # the oracle's states: every link and checked link pair apart, every pair by its geometry
    oracle = pc.CollisionChecker(robot, thin_scene, eta=eta, self_tables=False, rigid_bodies=False)
    edges = thin + rrt_edges(checker, rng, n_edges - n_thin, step=(0.05, 1.5))
    mesh_idx = set(rng.choice(len(edges), min(n_mesh, len(edges)), replace=False).tolist())
    fcl_robot = None
    for k, (a, b) in enumerate(edges):
        first, Q = dense_first_collision(oracle, a, b, 2000)
        counts["edges"] += 1
        counts["colliding"] += first is not None
        if k in mesh_idx:
            if fcl_robot is None:
                from planning_collision.testing.fcl_robot import FclRobot

                fcl_robot = FclRobot(robot, thin_scene)
            mesh_hit = any(fcl_robot.collides(q) for q in Q[::4])
            counts["mesh edges"] += 1
            # the models contain the meshes: a mesh collision is a model collision
            counts["mesh collides, models free"] += mesh_hit and first is None
        clear = None
        for m in METHODS:
            r = checker.check_edge(a, b, m)
            if r.valid and first is not None:
                counts[(m, "false free")] += 1
            if not r.valid and first is None:
                if clear is None:
                    clear = _min_clearance(checker, Q[::10]) >= CLEAR
                counts[(m, "false alarm")] += clear
            if m == "ca" and not r.valid and first is not None:
                late = r.toc > first + 1e-12
                q_toc = np.clip(a + r.toc * (b - a), robot.lower, robot.upper)
                far = checker.clearance(q_toc) > eta + 1e-9  # contact within eta at toc
                counts[("ca", "toc after first contact")] += late
                counts[("ca", "toc not within eta of a contact")] += far and not late


def main(argv=None) -> int:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--data", default=str(DATA))
    p.add_argument("--problems", type=int, default=5, help="problems per set (default 5)")
    p.add_argument("--edges-per-world", type=int, default=1000, help="default 1000")
    p.add_argument("--mesh-edges", type=int, default=25, help="per world, python-fcl re-check")
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args(argv)
    data = Path(a.data)
    if not data.is_dir():
        p.error(f"no MotionBenchMaker data at {data} (--data)")
    rng = np.random.default_rng(a.seed)
    import collections

    from planning_collision.checker.checker import DEFAULT_ETA

    counts: collections.Counter = collections.Counter()
    t0 = time.perf_counter()
    worlds = _worlds(data, a.problems)
    for k, (name, robot, scene) in enumerate(worlds):
        certify_world(name, robot, scene, a.edges_per_world, rng, DEFAULT_ETA, counts, a.mesh_edges)
        print(
            f"[{k + 1}/{len(worlds)}] {name}: {counts['edges']} edges so far, "
            f"{time.perf_counter() - t0:.0f} s",
            flush=True,
        )
    n = counts["edges"]
    free = n - counts["colliding"]
    print(f"\n{n} edges ({counts['colliding']} colliding under dense sampling, 2,001 states each)")
    print(f"{'method':12s} {'false free':>11s} {'false alarms (>= 1 mm clear)':>30s}")
    for m in METHODS:
        fa = counts[(m, "false alarm")]
        print(f"{m:12s} {counts[(m, 'false free')]:11d} {fa:16d} ({fa / max(free, 1):.2%} of free)")
    print(
        f"ca: toc after the first colliding state {counts[('ca', 'toc after first contact')]}, "
        f"not within eta of a contact {counts[('ca', 'toc not within eta of a contact')]}"
    )
    print(
        f"exact meshes (python-fcl, 501 states) on {counts['mesh edges']} edges: "
        f"{counts['mesh collides, models free']} collide where the models are free"
    )
    ok = all(counts[(m, "false free")] == 0 for m in ("dichotomy", "ca"))
    ok &= counts["mesh collides, models free"] == 0
    ok &= counts[("ca", "toc after first contact")] == 0
    print("certified methods: " + ("no edge called free collides" if ok else "FAILED"))
    print(f"({time.perf_counter() - t0:.0f} s)")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
