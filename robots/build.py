"""Rebuild a registered robot's collision model cache and allowed-collision matrix.

    python -m planning_collision.robots.build panda [ur5 ...] [--samples 10000] [--seed 0]

For each robot: builds (or loads) ``robots/<name>/geometry-<hash>.npz``, removes stale
geometry caches, samples ``--samples`` random configurations (MoveIt setup-assistant
style: adjacent, colliding at the default configuration, colliding in >= 95 % of samples,
never colliding) and writes the ACM into ``config.json`` with how it was computed. Joints
listed in the config's ``acm_sample_joints`` ({joint: [lo, hi]}) are sampled too (e.g. the
Panda's finger opening), so the matrix holds for any value in those ranges. Takes seconds
per robot after the first numba compile (plus the V-HACD decomposition when not cached).
"""

from __future__ import annotations

import argparse
import json
import logging
import time
from importlib import metadata

import numpy as np

from planning_collision import robots


def build(name: str, samples: int = 10_000, seed: int = 0) -> dict:
    from planning_collision.robot import Robot

    cfg = robots.config(name)
    kw = robots.robot_kwargs(name)
    kw["acm"] = []  # recompute from scratch
    t0 = time.perf_counter()
    robot = Robot.from_urdf(robots.urdf_path(name), **kw)
    t_model = time.perf_counter() - t0
    keep = {f"geometry-{robot.geometry_key}.npz"}
    for f in robots.robot_dir(name).glob("geometry-*.npz"):
        if f.name not in keep:
            f.unlink()

    extra = cfg.get("acm_sample_joints") or {}
    sampler = robot
    if extra:
        # sample the held joints too: make them active over the given ranges
        skw = dict(kw)
        skw["active_joints"] = list(robot.joint_names) + list(extra)
        skw["fixed_joints"] = {
            k: v for k, v in (kw.get("fixed_joints") or {}).items() if k not in extra
        }
        skw["joint_limits"] = dict(
            kw.get("joint_limits") or {}, **{k: tuple(v) for k, v in extra.items()}
        )
        sampler = Robot.from_urdf(robots.urdf_path(name), **skw)
    # the default configuration: the config's named values (a robot's "home"/"ready" pose),
    # else 0 clipped into the limits; sampled held joints at their held value
    dq = dict(cfg.get("acm_default_q") or {})
    for jn in extra:
        dq.setdefault(jn, robot.held_joints[jn])
    q_def = np.clip(np.zeros(sampler.dof), sampler.lower, sampler.upper)
    for jn, v in dq.items():
        q_def[sampler.joint_names.index(jn)] = v
    summary = sampler.compute_acm(n_samples=samples, seed=seed, default_q=q_def)
    entries = sampler.acm.entries()
    if cfg["urdf"]["source"] == "example-robot-data":
        # the geometry cache is keyed by file contents; this says which release made it
        cfg["urdf"]["built_with"] = f"example-robot-data {metadata.version('example-robot-data')}"
    cfg["acm"] = {
        "method": (
            "MoveIt setup assistant: adjacent links (nearest ancestor with geometry), pairs "
            "colliding at the default configuration (default_q), colliding in >= 95% of "
            "samples (always), colliding in none (never)"
        ),
        "samples": samples,
        "seed": seed,
        "sampled_joints": list(sampler.joint_names),
        "sampled_ranges": [
            [float(a), float(b)] for a, b in zip(sampler.lower, sampler.upper, strict=True)
        ],
        "held_joints": sampler.held_joints,
        "default_q": q_def.tolist(),
        "geometry": f"geometry-{robot.geometry_key}.npz",
        "counts": {k: summary[k] for k in ("default", "always", "never", "checked")},
        "allowed": entries,
    }
    with open(robots.robot_dir(name) / "config.json", "w", encoding="utf-8") as f:
        json.dump(cfg, f, indent=2)
        f.write("\n")
    return {"model_seconds": t_model, **summary, "allowed": len(entries)}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("names", nargs="*", help="robots to rebuild (default: all)")
    p.add_argument("--samples", type=int, default=10_000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("-q", "--quiet", action="store_true", help="no per-link progress lines")
    a = p.parse_args(argv)
    if not a.quiet:  # the builders log each link and each block of ACM samples at INFO
        logging.basicConfig(level=logging.INFO, format="%(message)s")
    for name in a.names or robots.available():
        s = build(name, a.samples, a.seed)
        print(
            f"{name:12s} model {s['model_seconds']:.2f} s, ACM {s['samples']} samples in "
            f"{s['seconds']:.2f} s: "
            f"default {s['default']}, always {s['always']}, never {s['never']}, still checked "
            f"{s['checked']}, "
            f"allowed total {s['allowed']}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
