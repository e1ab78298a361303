"""Compiles said out loud, and one call that does them all ahead of time.

The first call of a compiled entry point on a machine compiles it (numba caches the machine
code, and later processes load it in about a second): a state check takes ~20 s, a
certified edge ~30 s with what they share (`python -m demos.dev.cold_start`). Whatever
starts one (a demo, a user's own script, an OMPL callback), the library says so: one line on
stderr and a log record (logger ``planning_collision.compile``, INFO) once a compile has run
`QUIET` seconds, one every `TICK` seconds while it runs, and one when it ends. A call that
finds its kernels in numba's cache compiles nothing and says nothing.

``PLANNING_COLLISION_COMPILE_NOTICE=0`` keeps stderr quiet (the log records remain).

`warm_up()` (or ``python -m planning_collision.warm_up`` once after installing) compiles
everything a planner uses: the pair queries, the scene's queries, the checker's state
check, batch, clearance and the three edge methods, and the compiled planner.
"""

from __future__ import annotations

import logging
import threading
import time

from .kernels._jit import event
from .notices import NOTICE_ENV, QUIET, TICK, say

__all__ = ["NOTICE_ENV", "QUIET", "TICK", "warm_up"]

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


def warm_up(robot=None, methods=("dichotomy", "ca", "discrete")) -> float:
    """Compile (or load from numba's cache) every kernel a planner and a user's scene
    queries call, in the calling process: the pair queries, the scene's queries, its
    point-cloud builder and its array path (`Scene.from_arrays`), and a checker's state
    check, batch, clearance, link distances and edges by each of `methods` (the kernels do
    not depend on the robot: any robot warms them for all; default, a two-link arm built
    here). Returns the seconds it took (~1 s when the cache is warm; the first run on a
    machine compiles for a minute or two, said on stderr)."""
    import numpy as np

    from . import geometry as g
    from .checker import CollisionChecker
    from .geometry.arrays import ObstacleArrays
    from .geometry.clouds import PointCloud
    from .planner import RRTConnect
    from .queries import collide, distance, penetration
    from .robot import Robot
    from .scene import Scene

    t0 = time.perf_counter()
    T = np.eye(4)
    T[:3, 3] = (0.3, 0.0, 0.2)
    a, b = g.Box((0.2, 0.2, 0.2)), g.Capsule(0.05, 0.3)
    collide(a, np.eye(4), b, T)
    distance(a, np.eye(4), b, T)
    penetration(a, np.eye(4), b, T)
    scene = Scene.from_arrays(ObstacleArrays.boxes(np.full((2, 3), 0.2), np.stack([T, T])))
    scene.snapshot().flat()  # the one-primitive objects' rows, poses' check and flat form
    scene = Scene()
    scene.add(a, T, name="box")
    scene.add(PointCloud(np.full((2, 3), 2.0), 0.01), name="cloud")  # the cloud builder
    scene.in_collision(b, np.eye(4))
    scene.min_distance(b, np.eye(4))
    scene.distances(b, np.eye(4))
    if robot is None:  # adjacent pairs allowed, base-fore checked (no ACM sampling)
        robot = Robot.from_urdf(
            _two_link_urdf(), acm=[("base", "upper", "adjacent"), ("upper", "fore", "adjacent")]
        )
    checker = CollisionChecker(robot, scene)
    checker.warm_up(batch=True, methods=methods)
    checker.link_distances((robot.lower + robot.upper) / 2)
    RRTConnect(checker).warm_up()
    return time.perf_counter() - t0


def _two_link_urdf():
    from importlib.resources import files

    return files("planning_collision") / "data" / "two_link_arm.urdf"
