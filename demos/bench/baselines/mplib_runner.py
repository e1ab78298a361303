"""MPlib's own planner on MotionBenchMaker Panda problems: the baseline Python users install.

MPlib (SAPIEN's motion-planning library) plans with OMPL's RRTConnect in C++ over its own
FCL collision checking of the URDF's meshes, checking each edge at sampled states.
`MPlibPanda` drives one `mplib.Planner` for the Panda of example-robot-data (its URDF with
the mesh paths made relative to a copy, its SRDF for the allowed pairs) and, per problem,
replaces the obstacles of MPlib's planning world with the problem's boxes and cylinders and
plans from the start to the first goal with MPlib's defaults (RRTConnect range 0.1 rad, path
simplification on). The time is that of MPlib's planning call; the path is its simplified
waypoints (``planner.planner.plan``: what `Planner.plan_qpos` hands to TOPP for timing), the
7 arm joints in the problem's order. The fingers stay where the problem holds them
(MotionBenchMaker: 0.065 m, past the URDF's 0.04 m limit, which `plan_qpos` would clip).

MPlib 0.2.1 needs numpy < 2: with numpy 2 (this project's environment) building its model
segfaults. So MPlib runs in its own interpreter, a child process speaking JSON lines
(this file with ``--serve``; it imports only numpy and mplib). Give it an environment:

    python -m venv ~/.venv-mplib && ~/.venv-mplib/bin/pip install mplib==0.2.1
    export MPLIB_PYTHON=~/.venv-mplib/bin/python

(without MPLIB_PYTHON this interpreter is tried, which works where numpy < 2).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ARM = tuple(f"panda_joint{k}" for k in range(1, 8))
MOVE_GROUP = "panda_hand"
RRT_RANGE = 0.1  # MPlib's default (plan_qpos)
_CHECK = "import mplib, numpy; assert int(numpy.__version__.split('.')[0]) < 2"


def python() -> str:
    """The interpreter MPlib runs in: $MPLIB_PYTHON, else this one."""
    return os.path.expanduser(os.environ.get("MPLIB_PYTHON", "")) or sys.executable


def available() -> bool:
    """True when `python()` imports MPlib with a numpy it runs with (< 2)."""
    try:
        r = subprocess.run([python(), "-c", _CHECK], capture_output=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return r.returncode == 0


def _urdf_copy(urdf: Path, out_dir: Path) -> Path:
    """example-robot-data's Panda URDF copied into out_dir with its package:// mesh paths
    relative to the copy (MPlib resolves every mesh path against the URDF's directory)."""
    share = urdf.parents[3]  # .../share/example-robot-data
    rel = Path(os.path.relpath(share, out_dir)).as_posix()
    out = out_dir / "panda.urdf"
    out.write_text(re.sub(r"package://example-robot-data/", f"{rel}/", urdf.read_text()))
    return out


def _obstacle(r) -> dict:
    kind = type(r.shape).__name__
    if kind == "Box":
        geom = {"kind": kind, "size": [float(x) for x in r.shape.extents]}
    elif kind in ("Cylinder", "Sphere"):
        geom = {"kind": kind, "radius": float(r.shape.radius)}
        if kind == "Cylinder":
            geom["length"] = float(r.shape.length)
    else:
        raise ValueError(f"obstacle {r.name!r}: the MPlib baseline has no {kind}")
    geom["T"] = np.asarray(r.T, float).tolist()
    return geom


class MPlibPanda:
    """MPlib's planner for the Panda in a child process (module doc), reused over problems."""

    def __init__(self):
        from planning_collision import robots

        urdf = robots.urdf_path("panda")
        self._tmp = tempfile.TemporaryDirectory(prefix="mplib_panda_")
        path = _urdf_copy(urdf, Path(self._tmp.name))
        srdf = urdf.parents[1] / "srdf" / "panda.srdf"
        self._proc = subprocess.Popen(
            [python(), str(Path(__file__).resolve()), "--serve", str(path), str(srdf)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        self.names = self._read()["names"]
        self.arm_index = [self.names.index(j) for j in ARM]

    def _read(self) -> dict:
        line = self._proc.stdout.readline()
        if not line:
            raise RuntimeError(f"the MPlib process ({python()}) ended: see its stderr above")
        return json.loads(line)

    def solve(self, p, time_limit: float, seed: int) -> dict:
        """Plan problem `p` (io.mbm.Problem) within `time_limit` s with MPlib's RRTConnect:
        {"solved", "seconds", "path" ((n, 7) arm waypoints or None), "status"}."""
        q = [0.0] * len(self.names)
        for j, v in p.fixed_joints.items():
            if j in self.names:
                q[self.names.index(j)] = float(v)
        for k, i in enumerate(self.arm_index):
            q[i] = float(p.start[k])
        request = {
            "obstacles": [_obstacle(r) for r in p.obstacles],
            "q": q,
            "arm": self.arm_index,
            "goal": np.asarray(p.goals[0], float).tolist(),
            "time": float(time_limit),
            "seed": int(seed),
        }
        self._proc.stdin.write(json.dumps(request) + "\n")
        self._proc.stdin.flush()
        r = self._read()
        solved = r["status"] == "Exact solution"
        Q = np.asarray(r["path"], float).reshape(-1, len(ARM)) if solved else None
        return {"solved": solved, "seconds": r["seconds"], "path": Q, "status": r["status"]}

    def close(self) -> None:
        if self._proc.poll() is None:
            self._proc.stdin.close()
            self._proc.wait(timeout=10)

    def __del__(self):
        try:
            self.close()
        except Exception:  # noqa: BLE001, S110 - interpreter shutdown
            pass


def _serve(urdf: str, srdf: str) -> None:
    """The child: one planner; a JSON request per line in, a JSON result per line out."""
    import mplib
    from mplib.collision_detection import fcl
    from mplib.pymp import Pose, set_global_seed

    planner = mplib.Planner(urdf=urdf, srdf=srdf, move_group=MOVE_GROUP)
    print(json.dumps({"names": list(planner.user_joint_names)}), flush=True)
    world = planner.planning_world
    names: list[str] = []
    for line in sys.stdin:
        req = json.loads(line)
        for name in names:
            world.remove_object(name)
        names = []
        for k, o in enumerate(req["obstacles"]):
            if o["kind"] == "Box":
                geom = fcl.Box(np.asarray(o["size"], float))
            elif o["kind"] == "Cylinder":
                geom = fcl.Cylinder(o["radius"], o["length"])
            else:
                geom = fcl.Sphere(o["radius"])
            names.append(f"obstacle_{k}")
            pose = Pose(np.asarray(o["T"], float))
            world.add_object(fcl.FCLObject(names[-1], pose, [fcl.CollisionObject(geom)], [Pose()]))
        q = np.asarray(req["q"], float)
        arm = np.asarray(req["arm"])
        planner.robot.set_qpos(q, True)
        set_global_seed(req["seed"])
        t0 = time.perf_counter()
        status, path = planner.planner.plan(
            q[arm],
            [np.asarray(req["goal"], float)],
            time=req["time"],
            range=RRT_RANGE,
            simplify=True,
        )
        seconds = time.perf_counter() - t0
        out = {"status": str(status), "seconds": seconds}
        out["path"] = np.asarray(path, float).tolist() if status == "Exact solution" else None
        print(json.dumps(out), flush=True)


if __name__ == "__main__" and sys.argv[1:2] == ["--serve"]:
    _serve(sys.argv[2], sys.argv[3])
