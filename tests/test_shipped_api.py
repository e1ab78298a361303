"""A wheel's user compiles nothing: every public call of the README and docs, made in a fresh
process with an empty numba cache, runs on the shipped machine code (planning_collision/
shipping.py), and each kernel is shipped compiled once. A call that compiles in such a
process is an entry point the warm-up (the wheel's build) does not reach, or a
specialisation nobody ships: an array passed writeable where the shipped code took it
read-only compiled `posed_points` again for a voxel grid, and `Robot.fk_batch`, the motion
bounds and the compiled planner's `most_steps` compiled on first use.

Runs where shipped code for this build is present (CI compiles it before the tests; a clone
has it after ``python -m planning_collision.shipping planning_collision/kernels/_compiled``)."""

import json
import os
import subprocess
import sys
import textwrap

import pytest

from planning_collision.demos.dev.wheel_start import _PROLOGUE
from planning_collision.kernels import _jit

URDF = """<robot name="mine">
  <link name="base"><collision><geometry><box size="0.2 0.2 0.1"/></geometry></collision></link>
  <link name="arm"><collision><origin xyz="0 0 0.2"/>
    <geometry><mesh filename="link.stl"/></geometry></collision></link>
  <link name="tip"><collision><geometry><sphere radius="0.05"/></geometry></collision></link>
  <joint name="j1" type="revolute"><parent link="base"/><child link="arm"/>
    <origin xyz="0 0 0.05"/><axis xyz="0 0 1"/><limit lower="-3" upper="3" effort="1" velocity="1"/>
  </joint>
  <joint name="j2" type="revolute"><parent link="arm"/><child link="tip"/>
    <origin xyz="0 0 0.4"/><axis xyz="0 1 0"/><limit lower="-3" upper="3" effort="1" velocity="1"/>
  </joint>
</robot>
"""

# the child: wheel_start's compile recorder (`_COMPILED`, `_STEP`), then every public call
CHILD = _PROLOGUE + textwrap.dedent(
    """
    import json, sys

    import numpy as np
    import planning_collision as pc
    from planning_collision import robots
    from planning_collision.kernels import _jit
    from planning_collision.plugins.ompl import make_setup, solve

    _STEP[0] = "a robot"
    robot = robots.load("panda")
    q = (robot.lower + robot.upper) / 2
    robot.fk(q), robot.fk_batch(np.stack([q, q])), robot.piece_poses(q)
    robot.motion_bounds(q, q + 0.1), robot.pair_motion_bounds(q, q + 0.1)
    Q = robot.random_configurations(40, rng=0)
    robot.count_self_collisions(Q[:3])

    _STEP[0] = "pair queries"
    T = np.eye(4)
    T[:3, 3] = (0.5, 0.0, 0.4)
    rng = np.random.default_rng(0)
    shapes = [pc.Sphere(0.1), pc.Box((0.1, 0.2, 0.3)), pc.Capsule(0.05, 0.2),
              pc.Cylinder(0.05, 0.2), pc.Cone(0.05, 0.2),
              pc.Convex(rng.normal(size=(20, 3)) * 0.05)]
    for a in shapes:
        for b in shapes:
            for query in (pc.collide, pc.distance, pc.penetration):
                query(a, np.eye(4), b, T)

    _STEP[0] = "a scene"
    scene = pc.Scene()
    for k, s in enumerate(shapes):
        Tk = T.copy()
        Tk[1, 3] = 0.2 * k - 0.5
        scene.add(s, Tk)
    cloud = scene.add(pc.PointCloud(rng.uniform(-0.1, 0.1, (500, 3))), T)
    scene.add(pc.VoxelGrid(np.argwhere(np.ones((4, 4, 4), bool)), 0.02, origin=(0.0, -0.6, 0.2)))
    scene.update_cloud(cloud, rng.uniform(-0.1, 0.1, (300, 3)))
    scene.in_collision(shapes[2], T), scene.min_distance(shapes[2], T)
    scene.distances(shapes[2], T)

    _STEP[0] = "a checker"
    checker = pc.CollisionChecker(robot, scene)
    checker.is_valid(q), checker.is_valid_batch(Q), checker.clearance(q)
    checker.link_distances(q), checker.contacts(q)
    for method in ("dichotomy", "ca", "discrete"):
        checker.check_edge(Q[0], Q[1], method=method)
    checker.check_path(Q[:4]), checker.edge_free(Q[0], Q[1])

    _STEP[0] = "planners"
    free = [x for x in Q if checker.is_valid(x)][:2]
    planner = pc.RRTConnect(checker, seed=3)
    result = planner.solve(free[0], free[1], 1.0)
    if result.path is not None:
        planner.simplify(result.path)
    for name in ("RRTConnect", "CompiledRRTConnect"):
        solve(make_setup(robot, scene, free[0], free[1], checker=checker, planner=name), 1.0)

    _STEP[0] = "a user's robot (built: a mesh link, its ACM sampled)"
    import trimesh
    from planning_collision import Robot

    trimesh.creation.box((0.1, 0.1, 0.3)).export("link.stl")
    with open("mine.urdf", "w") as f:
        f.write(sys.argv[1])
    mine = Robot.from_urdf("mine.urdf", cache_dir=False)
    pc.CollisionChecker(mine, scene).check_edge(mine.lower * 0.5, mine.upper * 0.5)

    _STEP[0] = "scenes from arrays"
    boxes = pc.Scene.from_arrays(pc.ObstacleArrays.boxes(np.full((2, 3), 0.1), np.stack([T, T])))
    boxes.replace_all(pc.ObstacleArrays.boxes(np.full((3, 3), 0.1), np.stack([T, T, T])))
    pc.CollisionChecker(robot, boxes).is_valid(q)
    print(json.dumps({"compiled": _COMPILED, "shipped": _jit.shipped_status()[1]}))
    """
)


def _shipped_here() -> str | None:
    """Why this test cannot run here, or None."""
    if _jit.JIT_DISABLED:
        return "NUMBA_DISABLE_JIT"
    if os.environ.get(_jit.SHIPPED_ENV) == "0":
        return f"{_jit.SHIPPED_ENV}=0"
    from planning_collision.shipping import up_to_date

    magic, why = _jit.shipped_status()
    if magic is None:
        return f"no shipped machine code: {why}"
    return up_to_date(_jit.SHIPPED_DIR, magic[1])


def test_the_public_api_compiles_nothing_from_the_shipped_code(tmp_path):
    why = _shipped_here()
    if why is not None:
        pytest.skip(f"shipped machine code not usable here ({why})")
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "numba-cache"))
    r = subprocess.run(
        [sys.executable, "-c", CHILD, URDF], env=env, cwd=tmp_path, capture_output=True, text=True,
        timeout=600,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr[-3000:]
    got = json.loads(r.stdout.strip().splitlines()[-1])
    assert "x86-64" in got["shipped"], got
    assert got["compiled"] == [], got["compiled"]


def test_every_shipped_kernel_is_compiled_for_one_signature():
    """A kernel compiled twice is compile time spent for nothing (and a bigger wheel): the
    ACM sampling passed int32 piece indices where the checker passes int64, and numba
    compiled GJK, the closed forms and the halfspace queries a second time for them (12 s
    of a warm-up; the BVH grouping and the traversal's box tests had the same split)."""
    why = _shipped_here()
    if why is not None:
        pytest.skip(f"shipped machine code not usable here ({why})")
    import importlib
    import pkgutil

    from numba.core.registry import CPUDispatcher

    import planning_collision.kernels as kernels

    for m in pkgutil.walk_packages(kernels.__path__, "planning_collision.kernels."):
        importlib.import_module(m.name)
    twice = {}
    shipped = 0
    for module in [v for k, v in sys.modules.items() if k.startswith(kernels.__name__)]:
        for name, d in vars(module).items():
            if isinstance(d, CPUDispatcher) and d.py_func.__module__ == module.__name__:
                sigs = _jit.shipped_signatures(d)
                shipped += bool(sigs)
                if len(sigs) > 1:
                    twice[f"{module.__name__}.{name}"] = sorted(map(str, sigs))
    assert shipped > 50  # the shipped index was read
    assert not twice, twice
