"""The robot registry: named robots with their configs, collision models and ACMs.

::

    from planning_collision import robots

    robots.available()   # ['free_flyer', 'kinova', 'panda', 'planar_arm', 'ur5', 'xarm7']
    panda = robots.load("panda")       # 7 arm joints; fingers held at 0.04 m
    panda = robots.load("panda", fixed_joints={"panda_finger_joint1": 0.065,
                                               "panda_finger_joint2": 0.065})

Each robot lives in ``robots/<name>/``: ``config.json`` (where the URDF comes from, which
joints are active and which are held fixed, build settings, and the allowed-collision
matrix with how it was computed), and the cached collision model ``geometry-<hash>.npz``
(keyed by the URDF and mesh file contents, so a different example-robot-data release is
rebuilt rather than trusted). ``python -m planning_collision.robots.build <name>`` rebuilds both.

URDF sources: ``{"source": "package", "path": ...}`` is a file in ``robots/<name>/``;
``{"source": "example-robot-data", "path": ...}`` is relative to example-robot-data's
``share/example-robot-data`` (``pip install example-robot-data``; no network is used).
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

__all__ = ["available", "config", "load", "robot_dir", "urdf_path"]


def robot_dir(name: str) -> Path:
    """``robots/<name>/`` as a filesystem path."""
    d = Path(str(resources.files(__name__) / name))
    if not (d / "config.json").is_file():
        raise ValueError(f"unknown robot {name!r}; available: {available()}")
    return d


def available() -> list[str]:
    """Names of the registered robots (sorted)."""
    root = Path(str(resources.files(__name__)))
    return sorted(p.parent.name for p in root.glob("*/config.json"))


def config(name: str) -> dict:
    """The parsed ``robots/<name>/config.json``."""
    with open(robot_dir(name) / "config.json", encoding="utf-8") as f:
        return json.load(f)


def urdf_path(name: str) -> Path:
    """The URDF file robot `name` is built from."""
    src = config(name)["urdf"]
    if src["source"] == "package":
        return robot_dir(name) / src["path"]
    if src["source"] == "example-robot-data":
        from planning_collision.io.urdf import example_robot_data_dir

        return example_robot_data_dir() / src["path"]
    raise ValueError(f"robots/{name}/config.json: unknown URDF source {src['source']!r}")


def robot_kwargs(name: str) -> dict:
    """`Robot.from_urdf` keyword arguments the config gives (before user overrides)."""
    cfg = config(name)
    kw = {
        "name": name,
        "cache_dir": robot_dir(name),
        "active_joints": cfg.get("active_joints"),
        "fixed_joints": cfg.get("fixed_joints") or None,
        "acm": cfg.get("acm", {}).get("allowed", []),
    }
    for k in ("joint_limits", "floating_base", "base_bounds", "hull_ratio", "max_pieces"):
        if k in cfg:
            kw[k] = cfg[k]
    return kw


def load(name: str, **overrides):
    """Robot `name`, built by `Robot.from_urdf` from its config; `overrides` replace config
    arguments (``fixed_joints`` entries are merged into the config's; joints named in an
    ``active_joints`` override are no longer held)."""
    from planning_collision.robot import Robot

    kw = robot_kwargs(name)
    if overrides.get("active_joints") and kw.get("fixed_joints"):
        # a joint the caller makes active is no longer held at the config's value
        act = set(overrides["active_joints"])
        kw["fixed_joints"] = {k: v for k, v in kw["fixed_joints"].items() if k not in act}
    if "fixed_joints" in overrides and kw.get("fixed_joints"):
        merged = dict(kw["fixed_joints"])
        merged.update(overrides.pop("fixed_joints") or {})
        kw["fixed_joints"] = merged
    kw.update(overrides)
    return Robot.from_urdf(urdf_path(name), **kw)
