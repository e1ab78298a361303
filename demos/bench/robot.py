"""Robot benchmark: forward kinematics speed, model load time, ACM sampling time.

Shows, for a registered robot (default: the Panda, 13 links):

- FK per configuration inside numba (`fk_batch` over many configurations, one compiled
  call; target <= 1 us for the Panda), next to the Python-level calls: our `robot.fk(q)`
  (validation + dict) and yourdfpy's FK (`update_cfg` + `get_transform` of every link), the
  peer that parses the same URDF. Pinocchio is not installed here, so no C++ peer is shown.
- load time of the cached collision model (`robots.load(name)`, warm imports), and
- self-collision sampling for the ACM (FK + pair_overlap per link pair, 10,000 samples).

JIT warm-up (first calls: compile or numba-cache load) is reported apart. Figures are
medians of `--repeats` runs. Takes ~10 s (plus ~30 s of compiling on a cold numba cache).

    python -m planning_collision.demos.bench.robot [--robot panda] [--configs 100000] [--repeats 5]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np


def _median_time(fn, repeats: int) -> float:
    ts = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t)
    return statistics.median(ts)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--robot", default="panda", help="registered robot name (robots.available())")
    p.add_argument("--configs", type=int, default=100_000, help="configurations per numba FK run")
    p.add_argument(
        "--python-configs", type=int, default=300, help="configurations for Python-level FK"
    )
    p.add_argument("--samples", type=int, default=10_000, help="ACM sampling configurations")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args(argv)

    from planning_collision import robots
    from planning_collision.kernels.robot.fk import fk_batch

    t = time.perf_counter()
    robot = robots.load(a.robot)
    t_first_load = time.perf_counter() - t
    t_load = _median_time(lambda: robots.load(a.robot), a.repeats)

    rng = np.random.default_rng(a.seed)
    Q = robot.random_configurations(a.configs, rng=rng)
    out = np.empty((a.configs, len(robot.link_names), 4, 4))
    t = time.perf_counter()
    fk_batch(robot.model, Q[:2], out[:2])
    t_jit_fk = time.perf_counter() - t
    t_fk = _median_time(lambda: fk_batch(robot.model, Q, out), a.repeats) / a.configs

    Qp = Q[: a.python_configs]
    t_fk_py = _median_time(lambda: [robot.fk(q) for q in Qp], a.repeats) / len(Qp)

    t_ydf = None
    try:
        import yourdfpy

        u = yourdfpy.URDF.load(str(robot.urdf_path), build_scene_graph=True, load_meshes=False)
        held = robot.held_joints

        def ydf_cfg(q):
            vals = dict(zip(robot.joint_names, q, strict=True))
            vals.update(held)
            return np.array([vals[n] for n in u.actuated_joint_names])

        cfgs = [ydf_cfg(q) for q in Qp]

        def ydf():
            for c in cfgs:
                u.update_cfg(c)
                for ln in robot.link_names:
                    u.get_transform(ln)

        t_ydf = _median_time(ydf, max(1, a.repeats // 2)) / len(Qp)
    except ImportError:
        pass

    t = time.perf_counter()
    robot.count_self_collisions(Q[:2])
    t_jit_acm = time.perf_counter() - t
    pairs = robot.self_collision_pairs()
    Qs = (
        Q[: a.samples]
        if a.samples <= a.configs
        else robot.random_configurations(a.samples, rng=rng)
    )
    every = robot.all_link_pairs()
    t_acm = _median_time(lambda: robot.count_self_collisions(Qs, every), max(1, a.repeats // 2))
    t_chk = _median_time(lambda: robot.count_self_collisions(Qs, pairs), max(1, a.repeats // 2))

    print(
        f"robot {robot.name!r}: {robot.dof} joints, {len(robot.link_names)} links, "
        f"{len(robot.pieces)} convex pieces"
    )
    print(
        f"JIT warm-up (compile or cache load): fk {t_jit_fk:.2f} s, self-collision sampling "
        f"{t_jit_acm:.2f} s"
    )
    print(f"first robots.load (imports included) {t_first_load:.3f} s")
    print()
    print(f"{'what':58s} {'median':>14s}")
    print(f"{'FK per configuration, numba fk_batch':58s} {t_fk * 1e9:11.0f} ns")
    print(f"{'FK per configuration, robot.fk(q) from Python (dict)':58s} {t_fk_py * 1e6:11.1f} us")
    if t_ydf is not None:
        print(
            f"{'FK per configuration, yourdfpy update_cfg+get_transform':58s} {t_ydf * 1e6:11.1f} "
            "us"
        )
        print(f"{'  ratio yourdfpy / numba fk':58s} {t_ydf / t_fk:11.0f} x")
    print(
        f"{'robots.load(' + repr(a.robot) + ') from the cached model':58s} {t_load * 1e3:11.1f} ms"
    )
    label = (
        f"self-collision counts, all {robot.collision_links.size} links pairwise, {len(Qs)} samples"
    )
    print(f"{label:58s} {t_acm:11.3f} s")
    print(
        f"{f'self-collision counts, {len(pairs)} checked pairs, {len(Qs)} samples':58s} "
        f"{t_chk:11.3f} s"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
