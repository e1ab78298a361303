"""Compiles said out loud, and one call that does them all ahead of time.

The first call of a compiled entry point on a machine compiles it (numba caches the machine code,
and later processes load it in about a second): a state check takes ~20 s, a certified edge ~30 s
with what they share (`python -m planning_collision.demos.dev.cold_start`). Whatever starts one (a
demo, a user's own script, an OMPL callback), the library says so: one line on stderr and a log
record (logger ``planning_collision.compile``, INFO) once a compile has run `QUIET` seconds, one
every `TICK` seconds while it runs, and one when it ends. A call that finds its kernels in numba's
cache compiles nothing and says nothing.

``PLANNING_COLLISION_COMPILE_NOTICE=0`` keeps stderr quiet (the log records remain).

`warm_up()` (or ``python -m planning_collision warm-up`` once after installing) compiles
every entry point of `STEPS`: the pair queries, the scene's queries, the checker's state
check, batch, clearance and the three edge methods, the compiled planner and the viewer's
queries. A wheel ships them compiled (planning_collision/shipping.py runs the same list).
"""

from __future__ import annotations

import dataclasses
import functools
import json
import logging
import subprocess
import sys
import threading
import time
from collections.abc import Callable

from .kernels._jit import event
from .notices import NOTICE_ENV, QUIET, TICK, say

__all__ = ["NOTICE_ENV", "QUIET", "STEPS", "TICK", "Step", "warm_up"]

log = logging.getLogger("planning_collision.compile")

# NOTICE_ENV, QUIET (seconds a compile runs before it is announced) and TICK (seconds between
# "still compiling" lines) are notices.py's, shared with the robot builds' notices

# what a user called, for the kernels a first call compiles (anything else: its own name)
_WHAT = {
    "state_check": "is_valid",
    "state_check_batch": "is_valid_batch",
    "state_distances": "clearance / link_distances",
    "dichotomy": "check_edge (dichotomy)",
    "advance": "check_edge (ca)",
    "discrete": "check_edge (discrete)",
    "scene_traverse": "the scene's queries",
    "checked_distance": "distance()",
    "checked_overlap": "collide()",
    "fk": "Robot.fk",
    "pose": "the self-collision tables",
    "body_distance": "the self-collision tables",
    "rrt_connect": "the compiled planner (RRTConnect)",
    "one_node_flat": "a scene's flat form (one-primitive objects)",
    "primitive_rows": "a scene of spheres, boxes, capsules, cylinders and cones",
    "first_bad_pose": "the poses' check (ObstacleArrays, Scene.add_many)",
    "_address_rows": "a checker's scene table",
    "shortcut": "the compiled planner's shortcuts",
}


def _ours(ev) -> bool:
    f = getattr(ev.data.get("dispatcher"), "py_func", None)
    return getattr(f, "__module__", "").startswith("planning_collision.")


class _Notice(event.Listener):
    """Announces the outermost compile of a planning_collision kernel (nested compiles of
    its callees belong to it) once it has run `QUIET` seconds, ticks every `TICK` seconds
    while it runs, and reports its time; a compile shorter than `QUIET` says nothing."""

    def __init__(self):
        self.depth = 0
        self._run: _Run | None = None

    def on_start(self, ev):
        if not _ours(ev):
            return
        if self.depth == 0:
            name = ev.data["dispatcher"].py_func.__name__
            self._run = _Run(_WHAT.get(name, name))
        self.depth += 1

    def on_end(self, ev):
        if not _ours(ev) or self.depth == 0:
            return
        self.depth -= 1
        if self.depth == 0:
            self._run.finish()


class _Run:
    """One announced compile: a daemon thread that speaks after QUIET s, then every TICK s."""

    def __init__(self, what: str):
        self.what = what
        self.t0 = time.perf_counter()
        self.stop = threading.Event()
        self.spoke = False
        self.lock = threading.Lock()
        threading.Thread(target=self._tick, daemon=True).start()

    def _tick(self) -> None:
        wait = QUIET
        while not self.stop.wait(wait):
            with self.lock:
                if self.stop.is_set():
                    return
                if not self.spoke:
                    _say("compiling %s: its first use on this machine (then cached)", self.what)
                    self.spoke = True
                else:
                    _say("still compiling %s (%.0f s)", self.what, time.perf_counter() - self.t0)
            wait = TICK

    def finish(self) -> None:
        with self.lock:
            self.stop.set()
            if self.spoke:
                _say("compiled %s in %.1f s", self.what, time.perf_counter() - self.t0)


def _say(msg: str, *args) -> None:
    say(log, msg, *args)


event.register("numba:compile", _Notice())


# ---------------------------------------------------------------------------------------
# What a warm-up compiles. Each `Step` calls compiled entry points once; steps of one
# `group` share compiled callees (the checker's steps all link the pose and distance
# kernels) and run in order in one process, while groups may run in parallel processes.
# A new compiled entry point (a planner kernel, a query) is one more Step in STEPS: the
# warm-up, `python -m planning_collision warm-up` and the wheel's shipped machine code
# (planning_collision/shipping.py) all compile this list.


@dataclasses.dataclass(frozen=True)
class Step:
    """name: what the progress line says; group: the process it runs in; run(bench)."""

    name: str
    group: str
    run: Callable


class Bench:
    """What the steps call into, built once per process: a scene, a robot (a two-link arm
    built here, or the user's) and a checker."""

    def __init__(self, robot=None, methods=("dichotomy", "ca", "discrete")):
        self._robot = robot
        self.methods = tuple(methods)

    @functools.cached_property
    def robot(self):
        from .robot import Robot

        if self._robot is not None:
            return self._robot
        # adjacent pairs allowed, base-fore checked (no ACM sampling)
        return Robot.from_urdf(
            _two_link_urdf(), acm=[("base", "upper", "adjacent"), ("upper", "fore", "adjacent")]
        )

    @functools.cached_property
    def scene(self):
        import numpy as np

        from . import geometry as g
        from .geometry.clouds import PointCloud
        from .scene import Scene

        scene = Scene()
        scene.add(g.Box((0.2, 0.2, 0.2)), _T(0.3, 0.0, 0.2), name="box")
        scene.add(PointCloud(np.full((2, 3), 2.0), 0.01), name="cloud")  # the cloud builder
        return scene

    @functools.cached_property
    def checker(self):
        from .checker import CollisionChecker

        return CollisionChecker(self.robot, self.scene)


def _T(x, y, z):
    import numpy as np

    T = np.eye(4)
    T[:3, 3] = (x, y, z)
    return T


def _pair_queries(bench) -> None:
    import numpy as np

    from . import geometry as g
    from .geometry.arrays import ObstacleArrays
    from .queries import collide, distance, penetration
    from .scene import Scene

    a, b = g.Box((0.2, 0.2, 0.2)), g.Capsule(0.05, 0.3)
    T = _T(0.3, 0.0, 0.2)
    for query in (collide, distance, penetration):
        query(a, np.eye(4), b, T)
    scene = Scene.from_arrays(ObstacleArrays.boxes(np.full((2, 3), 0.2), np.stack([T, T])))
    scene.snapshot().flat()  # the one-primitive objects' rows, poses' check and flat form
    # a mesh obstacle of 128 triangles: more than 64 primitives are grouped by a BVH traversal
    # (kcd.py, bvh.overlap_groups) where a few boxes or spheres are grouped pair by pair
    n = 9
    ij = np.stack(np.meshgrid(np.arange(n), np.arange(n), indexing="ij"), -1).reshape(-1, 2)
    a = (ij[:, 0] * n + ij[:, 1]).reshape(n, n)[:-1, :-1].ravel()
    faces = np.concatenate([np.c_[a, a + 1, a + n], np.c_[a + 1, a + n + 1, a + n]])
    Scene().add(g.Mesh(np.c_[0.05 * ij, np.zeros(len(ij))], faces), T)


def _new_robot(bench) -> None:
    """What loading a robot without a cached ACM runs (`Robot.compute_acm`: each link pair's
    collisions counted over sampled configurations, one compiled call), and what building
    the link model of a mesh runs (robot/convexify.py: its triangles scanned against the
    pieces that must hold them)."""
    import numpy as np

    from .robot.convexify import convexify_mesh

    r = bench.robot
    r.count_self_collisions(np.stack([r.lower, r.upper, (r.lower + r.upper) / 2]))
    corners = np.array([[x, y, z] for x in (0, 1) for y in (0, 1) for z in (0, 1)], float)
    faces = [[0, 1, 3], [0, 3, 2], [4, 6, 7], [4, 7, 5], [0, 4, 5], [0, 5, 1],
             [2, 3, 7], [2, 7, 6], [0, 2, 6], [0, 6, 4], [1, 5, 7], [1, 7, 3]]  # fmt: skip
    convexify_mesh(0.1 * corners, np.array(faces))  # a cube's mesh


def _robot_queries(bench) -> None:
    """A robot's own queries beside its checker: FK of many configurations (the viewer's,
    the demos' plots) and the motion bounds of a motion, per link and per link pair."""
    import numpy as np

    r = bench.robot
    r.fk_batch(np.stack([r.lower, r.upper]))
    r.motion_bounds(r.lower, r.upper)
    r.pair_motion_bounds(r.lower, r.upper)


def _scene_queries(bench) -> None:
    import numpy as np

    from . import geometry as g

    b = g.Capsule(0.05, 0.3)
    bench.scene.in_collision(b, np.eye(4))
    bench.scene.min_distance(b, np.eye(4))
    bench.scene.distances(b, np.eye(4))


def _edges(method: str):
    def run(bench) -> None:
        bench.checker.warm_up(methods=(method,))

    return run


def _planner(bench) -> None:
    from .planner import RRTConnect

    RRTConnect(bench.checker).warm_up()


def _viewer(bench) -> None:
    """What the viewer's link panel calls (viz/_engine.py `link_status`): a per-link
    checker's link distances and, for a link touching an obstacle, the scene's depth query
    on its pieces."""
    from . import geometry as g
    from .checker import CollisionChecker
    from .scene import Scene

    r = bench.robot
    q = (r.lower + r.upper) / 2
    scene = Scene()
    scene.add(g.Box((0.2, 0.2, 0.2)), _T(0.3, 0.0, 0.2))
    piece, T = r.pieces[0], r.piece_poses(q)[0]
    scene.add(g.Sphere(0.05), T)  # touches the first piece
    CollisionChecker(r, scene, rigid_bodies=False).link_distances(q)
    scene.min_distance(piece.shape, T)
    r.fk(q)


STEPS = [
    Step("pair queries, scenes from arrays", "queries", _pair_queries),
    Step("the scene's queries", "queries", _scene_queries),
    Step("a new robot's link models and self-collision sampling", "queries", _new_robot),
    Step("Robot.fk_batch and motion bounds", "queries", _robot_queries),
    Step("is_valid, clearance (and the self-collision tables)", "checker",
         lambda bench: bench.checker.warm_up(methods=())),
    Step("check_edge (dichotomy)", "edges", _edges("dichotomy")),
    Step("check_edge (ca)", "edges", _edges("ca")),
    Step("check_edge (discrete)", "edges", _edges("discrete")),
    Step("is_valid_batch", "checker", lambda bench: bench.checker.warm_up(batch=True, methods=())),
    Step("link_distances", "checker",
         lambda bench: bench.checker.link_distances((bench.robot.lower + bench.robot.upper) / 2)),
    Step("the compiled planner (RRTConnect)", "checker", _planner),
    Step("the viewer's queries", "checker", _viewer),
]  # fmt: skip
EDGE_STEPS = {"check_edge (dichotomy)": "dichotomy", "check_edge (ca)": "ca",
              "check_edge (discrete)": "discrete"}  # fmt: skip


def _steps(methods) -> list:
    """STEPS without the edge methods not in `methods`."""
    return [s for s in STEPS if s.name not in EDGE_STEPS or EDGE_STEPS[s.name] in methods]


def _bar(done: int, total: int, name: str, seconds: float) -> None:
    width = 20
    fill = width * done // max(total, 1)
    _say("warm-up [%s%s] %d/%d %s (%.1f s)", "#" * fill, "." * (width - fill), done, total,
         name, seconds)  # fmt: skip


def warm_up(
    robot=None, methods=("dichotomy", "ca", "discrete"), jobs: int = 1, urdf=None, srdf=None
) -> float:
    """Compile (or load from numba's cache) every entry point of `STEPS`: the pair queries,
    the scene's queries and its point-cloud builder, a new robot's link models and
    self-collision sampling (its ACM), a robot's batch FK and motion bounds, a checker's
    state check, batch, clearance, link distances and edges by each of `methods`, the
    compiled planner and the viewer's queries. The kernels do not depend on the robot: any
    robot warms them for all (default, a two-link arm built here); a user's robot (`robot`,
    or `urdf` and `srdf` files) also gets its link models and self-collision tables built
    and cached.

    `jobs` > 1 runs the groups of steps in that many processes (each compiles the callees
    its steps share: on 2 idle cores, 2 jobs finish a first warm-up sooner). A line per
    finished step on stderr (a progress bar). Returns the seconds it took (~1 s when the
    cache is warm; the first run on a machine compiles for a minute or two)."""
    t0 = time.perf_counter()
    if robot is None and urdf is not None:
        from .robot import Robot

        robot = Robot.from_urdf(urdf, srdf=srdf)  # link models built (with progress), cached
    steps = _steps(tuple(methods))
    groups = list(dict.fromkeys(s.group for s in steps))
    jobs = max(1, min(int(jobs), len(groups)))
    if jobs == 1 or (robot is not None and urdf is None):  # a Robot object: this process
        bench = Bench(robot, methods)
        for i, step in enumerate(steps):
            ts = time.perf_counter()
            step.run(bench)
            _bar(i + 1, len(steps), step.name, time.perf_counter() - ts)
        return time.perf_counter() - t0
    _parallel(steps, groups, jobs, methods, urdf, srdf)
    return time.perf_counter() - t0


def _parallel(steps, groups, jobs, methods, urdf, srdf) -> None:
    """Groups spread over `jobs` child processes (`run_group`), their steps reported as
    they finish."""
    lanes = [groups[k::jobs] for k in range(jobs)]
    done = [0]
    lock = threading.Lock()

    def follow(proc):
        for line in proc.stdout:
            try:
                name, seconds = json.loads(line)
            except ValueError:
                continue
            with lock:
                done[0] += 1
                _bar(done[0], len(steps), name, seconds)

    procs = []
    for lane in lanes:
        args = {"groups": lane, "methods": list(methods), "urdf": urdf and str(urdf),
                "srdf": srdf and str(srdf)}  # fmt: skip
        code = f"from planning_collision.compiling import run_groups; run_groups({args!r})"
        procs.append(subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE,
                                      text=True))  # fmt: skip
    threads = [threading.Thread(target=follow, args=(p,), daemon=True) for p in procs]
    for t in threads:
        t.start()
    failed = [p.wait() for p in procs]
    for t in threads:
        t.join()
    if any(failed):
        raise RuntimeError(f"warm-up: a worker process failed (exit codes {failed})")


def run_groups(args: dict) -> None:
    """A warm-up worker: the steps of `args["groups"]`, one JSON line per finished step."""
    robot = None
    if args.get("urdf"):
        from .robot import Robot

        robot = Robot.from_urdf(args["urdf"], srdf=args.get("srdf"))
    methods = tuple(args["methods"])
    bench = Bench(robot, methods)
    for step in _steps(methods):
        if step.group in args["groups"]:
            ts = time.perf_counter()
            step.run(bench)
            print(json.dumps([step.name, time.perf_counter() - ts]), flush=True)


def _two_link_urdf():
    from importlib.resources import files

    return files("planning_collision") / "data" / "two_link_arm.urdf"
