r"""See a scene file and a robot in the browser (viser), or write them to a glTF file.

Reads any scene file the project reads (the JSON format, MoveIt ``.scene``, mesh files,
MotionBenchMaker problem files; default: the packaged bookshelf, or nothing with ``--urdf``)
and a robot from the registry (``--robot``) or your own URDF (``--urdf``, with ``--srdf`` for
its allowed collisions, ``--active`` for the joints to move, the others held at zero or at
their ``--fixed`` value), serves the view on
127.0.0.1 with a slider per joint and each link's clearance, and optionally writes a
``.glb``, takes a screenshot in a headless Chromium, or times slider updates. Seconds to
start once numba's cache is warm (the first run compiles the scene queries, ~30 s).

    python -m planning_collision.demos.view                      # the bookshelf, no robot
    python -m planning_collision.demos.view --robot panda        # reaching into the shelf
    python -m planning_collision.demos.view --robot panda --q 0 -0.785 0 -2.356 0 1.571 0.785
    # start -> goal
    python -m planning_collision.demos.view planning_collision/data/mbm/panda/cage.json --problem 3
    python -m planning_collision.demos.view --robot panda --export scene.glb --no-serve
    python -m planning_collision.demos.view --robot panda --fps  # slider updates per second
    python -m planning_collision.demos.view --urdf my_arm.urdf --srdf my_arm.srdf \
        --scene cell.json --q 0 1 0 ...
    python -m planning_collision.demos.view --urdf tiago.urdf \
        --active torso_lift_joint arm_1_joint arm_2_joint

A file, joint or configuration the robot or scene refuses is said in one line on stderr
(exit code 2), as argparse says a wrong flag.

``--q`` may be given several times: the configurations become a path (its end effector's
curve, translucent poses, a playback slider), and the robot is shown at the last one.
Without ``--q``: a MotionBenchMaker problem's start and goal, or the scene file's
``meta.example_paths`` entry for the robot (the bookshelf has one for the Panda), else the
robot's zero configuration clipped into its limits.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import time
from pathlib import Path

import numpy as np

import planning_collision as pc
from planning_collision import robots, viz

# Panda with its fingers as in the MotionBenchMaker problems (0.065 m, wide open).
PANDA_FINGERS = {"panda_finger_joint1": 0.065, "panda_finger_joint2": 0.065}


def load_mbm_problem(path, index: int):
    """Problem `index` of a MotionBenchMaker file: (scene, robot name, fixed joints,
    configurations (2, dof): start and first goal)."""
    from planning_collision.io import load_mbm

    problems = load_mbm(path)
    p = problems.problems[index]
    scene = pc.Scene.from_records(p.obstacles)
    return scene, problems.robot, p.fixed_joints, np.stack([p.start, p.goals[0]])


def _is_mbm(path: Path) -> bool:
    if path.suffix.lower() != ".json":
        return False
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    return isinstance(doc, dict) and str(doc.get("format", "")).startswith("mbm")


def _example_path(path: Path, robot: str):
    """The scene file's ``meta.example_paths[robot]`` (the application's data in a JSON
    scene), or None."""
    if path.suffix.lower() != ".json":
        return None
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    meta = doc.get("meta", {}) if isinstance(doc, dict) else {}
    paths = meta.get("example_paths", {}) if isinstance(meta, dict) else {}
    return np.array(paths[robot], dtype=float) if robot in paths else None


def _roadmap(robot, n: int, rng, k: int = 3):
    """n random configurations, each joined to its k nearest (joint space): a stand-in
    roadmap to look at, not a planner's."""
    V = robot.random_configurations(n, rng)
    d = np.linalg.norm(V[:, None] - V[None], axis=2)
    np.fill_diagonal(d, np.inf)
    nearest = np.argsort(d, axis=1)[:, :k]
    E = np.unique(np.sort(np.stack([np.repeat(np.arange(n), k), nearest.ravel()], 1), 1), axis=0)
    return V, E


def _connect_browser(stack, viewer) -> None:
    """A headless Chromium on the viewer's page for the timing, so that updates go to a
    real client; without Chromium or Playwright the timing runs without one."""
    from planning_collision.viz import browser

    if browser.find_chromium() is None:
        print("no Chromium: timing without a browser connected")
        return
    try:
        stack.enter_context(browser.open_page(viewer.url))
    except ImportError as e:
        print(f"{e}: timing without a browser connected")
        return
    viewer.wait_for_client()


def measure_fps(viewer, updates: int, rng) -> dict:
    """Times `updates` slider moves through the viewer's own slider callback (forward
    kinematics, the per-link scene queries, pose, colour and panel updates): a drag of
    each joint in turn across a random part of its range."""
    robot = viewer.robot
    q0 = viewer.q.copy()
    per_joint = max(1, updates // robot.dof)
    moves = []
    for j in range(robot.dof):
        a, b = np.sort(rng.uniform(robot.lower[j], robot.upper[j], 2))
        moves += [(j, x) for x in np.linspace(a, b, per_joint)]
    t0 = time.perf_counter()
    for j, x in moves:
        viewer.joint_sliders[j].value = float(x)
    total = time.perf_counter() - t0
    viewer.set_configuration(q0)
    qs = robot.random_configurations(len(moves), rng)
    t0 = time.perf_counter()
    for q in qs:
        robot.fk_array(q)
    fk = time.perf_counter() - t0
    t0 = time.perf_counter()
    if viewer.scene is not None:
        for q in qs:
            viz.link_status(viewer.scene, robot, q, viewer.checker)
    checks = time.perf_counter() - t0
    n = len(moves)
    return {
        "updates": n,
        "per_second": n / total,
        "ms_each": 1e3 * total / n,
        "fk_ms": 1e3 * fk / n,
        "checks_ms": 1e3 * checks / n,
    }


def _parse(argv):
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument(
        "scene_file",
        nargs="?",
        type=Path,
        help="a .json / .scene / mesh / MotionBenchMaker file (default: the bookshelf; none with "
        "--urdf)",
    )
    ap.add_argument("--scene", type=Path, metavar="FILE", help="the scene file (as scene_file)")
    ap.add_argument("--robot", choices=robots.available(), help="robot to show (MBM: the file's)")
    ap.add_argument("--urdf", type=Path, metavar="PATH", help="your robot's URDF (not --robot)")
    ap.add_argument("--srdf", type=Path, metavar="PATH", help="its MoveIt SRDF (allowed pairs)")
    ap.add_argument(
        "--active",
        nargs="+",
        metavar="JOINT",
        help="the joints to move, in this order (the others held: at zero, or --fixed)",
    )
    ap.add_argument(
        "--fixed",
        nargs="+",
        default=[],
        metavar="JOINT=VALUE",
        help="joints of --urdf held at a value (rad or m), e.g. gripper_joint=0.02",
    )
    ap.add_argument("--problem", type=int, default=0, help="MotionBenchMaker problem index")
    ap.add_argument(
        "--q",
        type=float,
        nargs="+",
        action="append",
        metavar="RAD",
        help="a configuration; repeat for a path (shown at its last configuration)",
    )
    ap.add_argument("--roadmap", type=int, default=0, metavar="N", help="draw N random vertices")
    ap.add_argument("--export", type=Path, metavar="OUT.glb", help="write a glTF binary file")
    ap.add_argument("--screenshot", type=Path, metavar="OUT.png", help="headless Chromium PNG")
    ap.add_argument("--fps", action="store_true", help="time slider updates, print per second")
    ap.add_argument("--updates", type=int, default=350, help="slider moves timed by --fps")
    ap.add_argument("--no-serve", action="store_true", help="do not keep serving the view")
    ap.add_argument("--seconds", type=float, help="serve this long, then stop (default: Ctrl-C)")
    ap.add_argument("--port", type=int, help="port to serve on (default: a free one)")
    ap.add_argument("--seed", type=int, default=0, help="for --roadmap and --fps")
    args = ap.parse_args(argv)
    if args.scene is not None:
        args.scene_file = args.scene
    if args.urdf is not None and args.robot is not None:
        ap.error("give --robot NAME or --urdf PATH, not both")
    if args.srdf is not None and args.urdf is None:
        ap.error("--srdf goes with --urdf (a registry robot has its allowed pairs already)")
    if args.scene_file is None:
        args.scene_file = None if args.urdf is not None else viz.BOOKSHELF
    try:
        args.fixed = {k: float(v) for k, v in (f.split("=", 1) for f in args.fixed)}
    except ValueError:
        ap.error(f"--fixed takes JOINT=VALUE pairs, got {args.fixed}")
    if args.active and args.robot is None and args.urdf is None:
        ap.error("--active needs a robot (--urdf PATH or --robot NAME)")
    if args.fps and args.robot is None and args.urdf is None and not _is_mbm(args.scene_file):
        ap.error("--fps needs a robot (--robot NAME or --urdf PATH)")
    return args


def _load(args):
    """(scene, robot or None, path or None, seconds to load the scene, the robot)."""
    t0 = time.perf_counter()
    robot_name, fixed, path = args.robot, None, None
    if args.scene_file is None:
        scene = pc.Scene()
    elif _is_mbm(args.scene_file):
        scene, mbm_robot, fixed, path = load_mbm_problem(args.scene_file, args.problem)
        robot_name = robot_name or mbm_robot
    else:
        scene = pc.Scene.from_file(args.scene_file)
    t_scene = time.perf_counter() - t0
    t0 = time.perf_counter()
    robot = None
    if args.urdf is not None:
        robot = pc.Robot.from_urdf(
            args.urdf, active_joints=args.active, fixed_joints=args.fixed or None, srdf=args.srdf
        )
    elif robot_name is not None:
        if fixed is None and robot_name == "panda":
            fixed = PANDA_FINGERS
        kw = {"fixed_joints": fixed} if fixed else {}
        if args.active:
            kw["active_joints"] = args.active
        robot = robots.load(robot_name, **kw)
    if robot is not None:
        if args.q:
            for k, q in enumerate(args.q):  # each within the limits, of the robot's joints
                robot.validate_q(q, "--q" if len(args.q) == 1 else f"--q #{k + 1}", True)
            path = np.array(args.q, dtype=float)
        elif path is None and args.scene_file is not None:
            path = _example_path(args.scene_file, robot.name)
    return scene, robot, path, t_scene, time.perf_counter() - t0


def main(argv=None) -> int:
    args = _parse(argv)
    rng = np.random.default_rng(args.seed)
    try:
        scene, robot, path, t_scene, t_robot = _load(args)
    except (ValueError, FileNotFoundError, IsADirectoryError) as e:
        # a file, joint or configuration refused by name: said as argparse says a bad flag
        print(f"view: error: {e}", file=sys.stderr)
        return 2
    where = args.scene_file.name if args.scene_file is not None else "no scene file"
    print(f"scene: {where}, {len(scene)} objects, loaded in {t_scene:.2f} s")
    q = None
    if robot is not None:
        q = path[-1] if path is not None else np.clip(0.0, robot.lower, robot.upper)
        if path is not None and len(path) == 1:
            path = None
        q = robot.validate_q(q)
        t0 = time.perf_counter()
        status = viz.link_status(scene, robot, q)  # the first call compiles the queries
        t_warm = time.perf_counter() - t0
        t0 = time.perf_counter()
        status = viz.link_status(scene, robot, q)
        t_check = time.perf_counter() - t0
        hits = [k for k, s in status.items() if s.colliding]
        print(
            f"robot: {robot.name}, {robot.dof} joints, {len(status)} links with geometry, "
            f"loaded in {t_robot:.2f} s; q = {np.round(q, 3).tolist()}"
        )
        print(f"JIT warm-up (first scene queries): {t_warm:.2f} s")
        print(
            f"links in collision: {hits or 'none'}; min clearance "
            f"{1e3 * min(s.clearance for s in status.values()):.1f} mm "
            f"(all links checked in {1e3 * t_check:.2f} ms)"
        )
    roadmap = _roadmap(robot, args.roadmap, rng) if robot is not None and args.roadmap else None

    if args.export is not None:
        t0 = time.perf_counter()
        configurations = [q] if q is not None else []
        viz.export_glb(args.export, scene, robot, configurations, path)
        print(f"wrote {args.export} in {time.perf_counter() - t0:.2f} s")

    if args.no_serve and args.screenshot is None and not args.fps:
        return 0
    viewer = viz.show(scene, robot, path=path, roadmap=roadmap, port=args.port, q=q)
    try:
        print(f"serving {viewer.url}")
        if args.screenshot is not None:
            from planning_collision.viz.browser import screenshot

            t0 = time.perf_counter()
            screenshot(viewer.url, args.screenshot)
            print(f"wrote {args.screenshot} in {time.perf_counter() - t0:.1f} s")
        if args.fps:
            with contextlib.ExitStack() as stack:
                _connect_browser(stack, viewer)
                r = measure_fps(viewer, args.updates, rng)
                clients = len(viewer.server.get_clients())
            print(
                f"slider updates: {r['updates']} in {r['updates'] / r['per_second']:.2f} s = "
                f"{r['per_second']:.0f} per second ({r['ms_each']:.2f} ms each; of which FK "
                f"{r['fk_ms']:.3f} ms and scene queries {r['checks_ms']:.2f} ms, the rest "
                f"pose, colour and panel messages), {clients} browser(s) "
                "connected"
            )
        if not args.no_serve:
            if args.seconds is None:
                print("Ctrl-C to stop")
                while True:
                    time.sleep(1.0)
            time.sleep(args.seconds)
    except KeyboardInterrupt:
        pass
    finally:
        viewer.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
