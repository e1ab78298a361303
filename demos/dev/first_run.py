"""A new robot's first run from empty caches: how long, and the longest silence on stderr.

Starts a fresh Python process with an empty per-user model cache (``PLANNING_COLLISION_CACHE``)
and, with ``--empty-numba``, an empty ``NUMBA_CACHE_DIR``; it loads a robot from its URDF
(link models, ACM sampling), builds a `CollisionChecker`, and checks a state and an edge, as
a user's first script does. This process stamps every line the child writes on stderr (the
compile notices, the builds' notices: notices.py) and prints them with the time, then the
wall time of each step and the longest gap between two lines. The project's aim: no gap over
10 s.

Robots: ``so101`` (example-robot-data's SO-101: 17 collision meshes of up to 54,000
triangles), ``ur5-dense`` (the UR5 with each collision mesh split flat to ~40,000 triangles,
written to a temporary directory), or any URDF path. Takes 2-4 minutes for ``so101`` on this
2-core machine with numba's cache warm, several more with ``--empty-numba``::

    python -m planning_collision.demos.dev.first_run                       # so101
    python -m planning_collision.demos.dev.first_run --robot ur5-dense --empty-numba
    python -m planning_collision.demos.dev.first_run --robot path/to/my.urdf
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

_CHILD = """
import sys, time
import numpy as np
import planning_collision as pc
t0 = time.perf_counter()
robot = pc.Robot.from_urdf(sys.argv[1])
t1 = time.perf_counter()
checker = pc.CollisionChecker(robot, pc.Scene())
t2 = time.perf_counter()
q0 = np.clip(np.zeros(robot.dof), robot.lower, robot.upper)
checker.is_valid(q0)
t3 = time.perf_counter()
checker.check_edge(q0, robot.lower + 0.6 * (robot.upper - robot.lower))
t4 = time.perf_counter()
print(f"steps: load {t1 - t0:.1f} s, checker {t2 - t1:.1f} s, first is_valid {t3 - t2:.1f} s, "
      f"first check_edge {t4 - t3:.1f} s", file=sys.stderr)
"""


def dense_ur5(out: Path, target: int = 40_000) -> Path:
    """The UR5 of example-robot-data with each collision mesh split flat (the same surface)
    until it has about `target` triangles, written under `out`; returns the URDF."""
    import numpy as np
    import trimesh

    from planning_collision.io.urdf import example_robot_data_dir

    d = example_robot_data_dir() / "robots" / "ur_description"
    (out / "meshes").mkdir(parents=True, exist_ok=True)
    for f in (d / "meshes" / "ur5" / "collision").glob("*.stl"):
        m = trimesh.load(f, force="mesh", process=False)
        v, fa = np.asarray(m.vertices), np.asarray(m.faces)
        while len(fa) * 4 <= 1.5 * target:
            v, fa = trimesh.remesh.subdivide(v, fa)
        trimesh.Trimesh(v, fa, process=False).export(out / "meshes" / f.name)
    urdf = (d / "urdf" / "ur5_robot.urdf").read_text()
    prefix = "package://example-robot-data/robots/ur_description/meshes/ur5/collision/"
    urdf = urdf.replace(prefix, str(out / "meshes") + "/")
    (out / "ur5_dense.urdf").write_text(urdf)
    return out / "ur5_dense.urdf"


def _urdf(name: str, tmp: Path) -> Path:
    if name == "so101":
        from planning_collision.io.urdf import example_robot_data_dir

        return example_robot_data_dir() / "robots/so_arm_description/urdf/so101.urdf"
    if name == "ur5-dense":
        return dense_ur5(tmp / "ur5_dense")
    return Path(name)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--robot", default="so101", help="so101, ur5-dense or a URDF path")
    ap.add_argument("--empty-numba", action="store_true", help="an empty NUMBA_CACHE_DIR too")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        urdf = _urdf(args.robot, tmp)
        env = dict(os.environ, PLANNING_COLLISION_CACHE=str(tmp / "cache"))
        env.pop("PLANNING_COLLISION_COMPILE_NOTICE", None)
        if args.empty_numba:
            env["NUMBA_CACHE_DIR"] = str(tmp / "numba")
        t0 = last = time.perf_counter()
        gap, at = 0.0, 0.0
        p = subprocess.Popen(
            [sys.executable, "-c", _CHILD, str(urdf)],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        for line in p.stderr:
            now = time.perf_counter()
            if now - last > gap:
                gap, at = now - last, last - t0
            last = now
            print(f"{now - t0:7.1f} s  {line.rstrip()}")
        rc = p.wait()
        end = time.perf_counter()
        if end - last > gap:
            gap, at = end - last, last - t0
    print(f"exit {rc}; total {end - t0:.1f} s; longest silence {gap:.1f} s (from {at:.1f} s)")
    return rc


if __name__ == "__main__":
    raise SystemExit(main())
