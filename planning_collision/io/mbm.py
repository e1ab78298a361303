"""MotionBenchMaker problem files (Chamzas et al., IEEE RA-L 2022; as shipped by VAMP,
Thomason et al., ICRA 2024), in a neutral JSON, one file per problem set.

The four public Panda sets ship with the package (`MBM_SETS`, 100 problems each; source,
licence and schema in ``planning_collision/data/mbm/README.md``); `mbm_path(name)` finds one.

::

    import planning_collision as pc
    from planning_collision.io import load_mbm, mbm_path

    ps = load_mbm(mbm_path("cage"))                    # or any file of the same format
    p = ps.problems[0]
    p.name, p.start, p.goals, p.fixed_joints, p.valid
    scene = pc.Scene.from_records(p.obstacles)  # obstacles in the robot base frame

Obstacles: ``box`` (``size`` = full edge lengths), ``cylinder`` (``radius``, ``length`` along
local z, centred), ``sphere`` (``radius``); poses from ``position`` and ``orientation_xyzw``
(scalar last); each becomes an `ObstacleRecord`. Malformed files, and keys the format does
not define, raise ValueError naming the file, the problem and the obstacle.
"""

from __future__ import annotations

import dataclasses
import json
from importlib import resources
from pathlib import Path

import numpy as np
import numpy.typing as npt

from ..geometry.poses import pose_matrix
from ..geometry.shapes import Box, Cylinder, Sphere
from .scene_files import ObstacleRecord, check_keys

__all__ = ["MBM_SETS", "Problem", "ProblemSet", "load_mbm", "mbm_path", "obstacle_records"]

# the MotionBenchMaker Panda sets shipped in planning_collision/data/mbm/panda
MBM_SETS = ("bookshelf_small", "box", "cage", "table_pick")

_OBSTACLE_KEYS = (
    "type",
    "name",
    "size",
    "half_extents",
    "radius",
    "length",
    "position",
    "orientation_xyzw",
)
_PROBLEM_KEYS = (
    "name",
    "index",
    "start",
    "goals",
    "valid",
    "start_valid",
    "goals_valid",
    "valid_vamp_2024",
    "other_joints",
    "obstacles",
)
_TOP_KEYS = (
    "format",
    "robot",
    "problem_set",
    "source",
    "source_blob",
    "source_members",
    "license",
    "joint_names",
    "frame",
    "self_collision_pairs",
    "conventions",
    "problems",
)


@dataclasses.dataclass(frozen=True, eq=False)
class Problem:
    """One planning problem.

    start : (d,) float64, rad (joint_names order); goals : (k, d) float64, any goal solves it;
    fixed_joints : joints held fixed (e.g. Panda fingers, m); valid : start and a goal are
    collision-free per the file (VAMP's sphere model); obstacles : `ObstacleRecord`s in the
    robot base frame (``Scene.from_records(problem.obstacles)``).
    """

    name: str
    index: int
    start: npt.NDArray[np.float64]
    goals: npt.NDArray[np.float64]
    fixed_joints: dict
    valid: bool
    start_valid: bool | None
    goals_valid: tuple | None
    joint_names: tuple
    obstacles: tuple  # of ObstacleRecord


@dataclasses.dataclass(frozen=True, eq=False)
class ProblemSet:
    name: str
    robot: str
    joint_names: tuple
    frame: str
    self_collision_pairs: tuple
    problems: list

    def __len__(self):
        return len(self.problems)

    def __iter__(self):
        return iter(self.problems)

    def __getitem__(self, k):
        if isinstance(k, str):
            for p in self.problems:
                if p.name == k:
                    return p
            raise KeyError(f"no problem named {k!r} in set {self.name!r}")
        return self.problems[k]


def _obstacle_shape(o: dict, where: str):
    if not isinstance(o, dict):
        raise ValueError(f"{where} must be an object, got {type(o).__name__}")
    check_keys(o, _OBSTACLE_KEYS, where)
    kind = o.get("type")
    try:
        if kind == "box":
            shape = Box(o["size"])
        elif kind == "cylinder":
            shape = Cylinder(o["radius"], o["length"])
        elif kind == "sphere":
            shape = Sphere(o["radius"])
        else:
            raise ValueError(f"unknown obstacle type {kind!r} (box, cylinder, sphere)")
        T = pose_matrix(o["position"], o["orientation_xyzw"], "pose")
    except KeyError as e:
        raise ValueError(f"{where}: missing field {e.args[0]!r}") from None
    except (ValueError, TypeError) as e:
        raise ValueError(f"{where}: {e}") from None
    return shape, T


def obstacle_records(obstacles, where: str = "obstacles") -> tuple:
    """`ObstacleRecord`s of MBM obstacle dicts (named as in the file)."""
    if not isinstance(obstacles, list):
        raise ValueError(f"{where} must be a list")
    out = []
    for k, o in enumerate(obstacles):
        name = o.get("name") if isinstance(o, dict) else None
        w = f"{where}[{k}]" + (f" ({name!r})" if name is not None else "")
        shape, T = _obstacle_shape(o, w)
        out.append(ObstacleRecord(name, shape, T))
    return tuple(out)


def _joints(v, n, where) -> np.ndarray:
    try:
        a = np.asarray(v, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{where} must be {n} numbers, got {v!r}") from None
    if a.shape != (n,) or not np.all(np.isfinite(a)):
        raise ValueError(f"{where} must be {n} finite numbers, got {v!r}")
    return a


def mbm_path(name: str) -> Path:
    """The shipped MotionBenchMaker Panda problem file of set `name` (one of `MBM_SETS`)."""
    if name not in MBM_SETS:
        raise ValueError(f"MotionBenchMaker set must be one of {MBM_SETS}, got {name!r}")
    return Path(str(resources.files("planning_collision") / "data" / "mbm" / "panda")) / (
        f"{name}.json"
    )


def load_mbm(path) -> ProblemSet:
    """Load one MBM problem-set file (``mbm-neutral-v1``) as a `ProblemSet`."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"MotionBenchMaker problem file not found: {path}")
    try:
        doc = json.loads(path.read_text())
    except json.JSONDecodeError as e:
        raise ValueError(f"{path}:{e.lineno}:{e.colno}: invalid JSON: {e.msg}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("problems"), list):
        raise ValueError(f'{path}: not a MotionBenchMaker problem file (no "problems" list)')
    check_keys(doc, _TOP_KEYS, str(path))
    names = doc.get("joint_names")
    if not isinstance(names, list) or not names or not all(isinstance(n, str) for n in names):
        raise ValueError(f'{path}: "joint_names" must be a non-empty list of strings')
    d = len(names)
    problems = []
    for i, p in enumerate(doc["problems"]):
        pname = p.get("name", f"#{i}") if isinstance(p, dict) else f"#{i}"
        where = f"{path}: problem {pname!r}"
        if not isinstance(p, dict):
            raise ValueError(f"{where} must be an object")
        try:
            check_keys(p, _PROBLEM_KEYS, "problem")
            start = _joints(p["start"], d, "start")
            goals_raw = p["goals"]
            if not isinstance(goals_raw, list) or not goals_raw:
                raise ValueError("goals must be a non-empty list")
            goals = np.stack([_joints(g, d, f"goals[{k}]") for k, g in enumerate(goals_raw)])
            fixed = p.get("other_joints", {})
            if not isinstance(fixed, dict):
                raise ValueError("other_joints must be an object")
            fixed = {str(k): float(v) for k, v in fixed.items()}
            obstacles = obstacle_records(p.get("obstacles", []), "obstacles")
        except KeyError as e:
            raise ValueError(f"{where}: missing field {e.args[0]!r}") from None
        except (ValueError, TypeError) as e:
            raise ValueError(f"{where}: {e}") from None
        gv = p.get("goals_valid")
        problems.append(
            Problem(
                name=pname,
                index=int(p.get("index", i)),
                start=start,
                goals=goals,
                fixed_joints=fixed,
                valid=bool(p.get("valid", True)),
                start_valid=p.get("start_valid"),
                goals_valid=tuple(gv) if isinstance(gv, list) else None,
                joint_names=tuple(names),
                obstacles=obstacles,
            )
        )
    return ProblemSet(
        name=str(doc.get("problem_set", path.stem)),
        robot=str(doc.get("robot", "")),
        joint_names=tuple(names),
        frame=str(doc.get("frame", "")),
        self_collision_pairs=tuple(tuple(x) for x in doc.get("self_collision_pairs", [])),
        problems=problems,
    )
