"""VAMP's planner on MotionBenchMaker Panda problems: the fastest public planner a Python user
can install (Thomason, Kingston, Kavraki, ICRA 2024; ``vamp-planner``, Apache-2.0). It
checks SIMD-vectorised sphere models of the robot against the obstacles at sampled states
along each edge; it does not certify edges.

`VampPanda` plans with VAMP's benchmark settings (``configure_robot_and_planner_with_kwargs
("panda", "rrtc")``: RRTConnect, range 1.0, 10^6 samples; its Halton sampler, reset per
problem). Obstacles go in as VAMP's own MotionBenchMaker loader puts them
(``vamp.problem_dict_to_vamp``): boxes as cuboids of half extents, cylinders as capsules, and
in the ``box`` set as cuboids of half extents (r, r, L/2). Euler angles are VAMP's "xyz":
R = Rz(c) Ry(b) Rx(a).

VAMP is not a dependency of this project: build it into your environment with its sdist
(it needs a C++ compiler and Eigen); ``available()`` says whether it imports.
"""

from __future__ import annotations

import math
import time

import numpy as np


def available() -> bool:
    try:
        import vamp  # noqa: F401
    except ImportError:
        return False
    return True


def euler_xyz(R: np.ndarray) -> list[float]:
    """(a, b, c) with R = Rz(c) Ry(b) Rx(a): VAMP's "xyz" Euler angles (closed form; at
    b = +-pi/2 the split between a and c is arbitrary: a = 0)."""
    sb = -float(R[2, 0])
    b = math.asin(max(-1.0, min(1.0, sb)))
    if abs(sb) < 1.0 - 1e-12:
        return [math.atan2(R[2, 1], R[2, 2]), b, math.atan2(R[1, 0], R[0, 0])]
    return [0.0, b, math.atan2(-R[0, 1], R[1, 1])]


class VampPanda:
    """VAMP's Panda RRTConnect (module doc). `samples`: VAMP's sample and iteration budget
    (None: its benchmark settings, 10^6, whose buffers it allocates before its timer starts;
    10^5 is its fastest from Python, with the same paths on these problems)."""

    def __init__(self, samples: int | None = None):
        import vamp

        self.vamp = vamp
        m, planner, plan_settings, simplify_settings = vamp.configure_robot_and_planner_with_kwargs(
            "panda", "rrtc"
        )
        if samples is not None:
            plan_settings.max_samples = plan_settings.max_iterations = int(samples)
        self.samples = int(plan_settings.max_samples)
        self.module, self.planner, self.settings = m, planner, plan_settings
        self.sampler = m.halton()

    def environment(self, obstacles, set_name: str):
        """A `vamp.Environment` of MotionBenchMaker obstacle records (Box, Cylinder shapes
        posed by T), as VAMP's loader builds it for set `set_name`."""
        import planning_collision as pc

        vamp = self.vamp
        env = vamp.Environment()
        for ob in obstacles:
            s, T = ob.shape, np.asarray(ob.T)
            centre, angles = T[:3, 3].tolist(), euler_xyz(T[:3, :3])
            if isinstance(s, pc.Box):
                env.add_cuboid(vamp.Cuboid(centre, angles, (0.5 * s.extents).tolist()))
            elif isinstance(s, pc.Cylinder) and set_name == "box":
                half = [s.radius, s.radius, 0.5 * s.length]
                env.add_cuboid(vamp.Cuboid(centre, angles, half))
            elif isinstance(s, pc.Cylinder):
                env.add_capsule(vamp.Cylinder(centre, angles, s.radius, s.length))
            else:
                raise TypeError(
                    f"VAMP's MotionBenchMaker loader takes boxes and cylinders, got {s}"
                )
        return env

    def solve(self, problem, set_name: str) -> dict:
        """Obstacles in, path out: the environment built, then RRTConnect. Returns times (s):
        ``setup`` (the environment), ``solve`` (the planner call, wall), ``total``; VAMP's
        own planning time ``vamp_ns``; ``solved``, ``path`` ((n, 7) or None) and ``checks``
        (its planner's iterations)."""
        t0 = time.perf_counter()
        env = self.environment(problem.obstacles, set_name)
        t1 = time.perf_counter()
        self.sampler.reset()
        r = self.planner(problem.start, [problem.goals[0]], env, self.settings, self.sampler)
        t2 = time.perf_counter()
        path = np.asarray(r.path.numpy(), float).reshape(-1, 7) if r.solved else None
        return {
            "setup": t1 - t0,
            "solve": t2 - t1,
            "total": t2 - t0,
            "vamp_ns": int(r.nanoseconds),
            "solved": bool(r.solved),
            "path": path,
            "checks": int(r.iterations),
        }
