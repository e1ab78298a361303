"""The planning benchmark's inputs: problem sets, each one OMPL experiment.

Two sources, one shape (`BenchSet`: a robot, start/goal queries, a scene per query):

- `mbm_set(path)`: a MotionBenchMaker problem file (the four Panda sets ship in
  planning_collision/data/mbm): the Panda with the file's finger joints, a scene per problem;
- `problem_file(path)`: a user's problem file (JSON, docs/benchmark.md), for example::

    {
      "name": "my_cell",
      "robot": {"urdf": "arm.urdf", "srdf": "arm.srdf", "fixed_joints": {"gripper": 0.0}},
      "scene": "cell.json",
      "problems": [
        {"name": "reach", "start": [0, 0, 0, 0, 0, 0], "goal": [1, -0.5, 0.8, 0, 0.3, 0]}
      ],
      "planners": ["RRTConnect", "BITstar"],
      "validators": ["dichotomy", "fcl"],
      "time": 1.0
    }

  ``robot`` is a registry name (``"panda"``), ``{"name": ..., "fixed_joints": ...}``, or a URDF
  (``urdf``, optional ``srdf``, ``fixed_joints``, ``active_joints``, ``joint_limits``,
  ``package_dirs``); paths are relative to the problem file. ``scene`` is any file
  `Scene.from_file` reads. ``planners``, ``validators`` and ``time`` are optional defaults that
  the command line overrides.

A malformed file raises ValueError naming the file, the field and the value (a missing file,
FileNotFoundError).
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np

_FILE_KEYS = ("name", "description", "robot", "scene", "problems", "planners", "validators", "time")
_ROBOT_KEYS = ("name", "urdf", "srdf", "fixed_joints", "active_joints", "joint_limits")
_ROBOT_KEYS += ("package_dirs",)
_PROBLEM_KEYS = ("name", "start", "goal")
# the benchmark's validators (demos/bench/planning.py says what each is)
VALIDATORS = ("dichotomy", "ca", "discrete", "fcl", "mplib", "vamp")


@dataclasses.dataclass(frozen=True, eq=False)
class Query:
    """One start/goal pair; `obstacles` are its own scene's records (MotionBenchMaker), or
    None when the set's scene file serves every query."""

    name: str
    start: np.ndarray
    goal: np.ndarray
    obstacles: tuple | None = None


@dataclasses.dataclass(frozen=True, eq=False)
class BenchSet:
    """A problem set: one OMPL experiment of the benchmark."""

    name: str
    description: str
    robot_spec: dict  # {"name": registry name} or {"urdf": path}, + Robot.from_urdf arguments
    queries: list
    scene_file: Path | None = None
    planners: tuple | None = None  # the file's defaults (None: the command line's)
    validators: tuple | None = None
    time: float | None = None
    mbm: bool = False  # MotionBenchMaker Panda problems (what the MPlib baseline takes)

    def robot(self):
        """The robot, built from its spec (registry robots from their cached models)."""
        spec = dict(self.robot_spec)
        if "urdf" in spec:
            from planning_collision.robot import Robot

            return Robot.from_urdf(spec.pop("urdf"), **spec)
        from planning_collision import robots

        return robots.load(spec.pop("name"), **spec)

    def scene(self, index: int):
        """The scene of query `index`."""
        import planning_collision as pc

        q = self.queries[index]
        if q.obstacles is not None:
            return pc.Scene.from_records(q.obstacles)
        return pc.Scene.from_file(self.scene_file)


def mbm_set(path) -> BenchSet:
    """A MotionBenchMaker problem file as a `BenchSet` (its first goal per problem)."""
    from planning_collision.io import load_mbm

    ps = load_mbm(path)
    fixed = ps.problems[0].fixed_joints if ps.problems else {}
    if any(p.fixed_joints != fixed for p in ps.problems):
        raise ValueError(f"{path}: the problems hold different fixed joints; one robot per set")
    return BenchSet(
        name=ps.name,
        description=f"MotionBenchMaker {ps.name}, {ps.robot or 'panda'}",
        robot_spec={"name": ps.robot or "panda", "fixed_joints": dict(fixed)},
        queries=[Query(p.name, p.start, p.goals[0], p.obstacles) for p in ps],  # "set/0001"
        mbm=True,
    )


def _where(path: Path, field: str) -> str:
    return f"{path}: {field}"


def _names(doc: dict, key: str, allowed, path: Path) -> tuple | None:
    v = doc.get(key)
    if v is None:
        return None
    if not isinstance(v, list) or not v or not all(isinstance(x, str) for x in v):
        raise ValueError(f"{_where(path, key)} must be a non-empty list of names, got {v!r}")
    bad = [x for x in v if x not in allowed]
    if bad:
        raise ValueError(f"{_where(path, key)}: unknown {bad} (known: {', '.join(allowed)})")
    return tuple(v)


def _robot_spec(v, path: Path) -> dict:
    """The ``robot`` field as Robot.from_urdf / robots.load arguments (paths resolved)."""
    from planning_collision import robots

    if isinstance(v, str):
        v = {"name": v}
    if not isinstance(v, dict):
        raise ValueError(f"{_where(path, 'robot')} must be a registry name or an object, got {v!r}")
    extra = [k for k in v if k not in _ROBOT_KEYS]
    if extra:
        raise ValueError(f"{_where(path, 'robot')}: unknown keys {extra} (known: {_ROBOT_KEYS})")
    if ("name" in v) == ("urdf" in v):
        raise ValueError(f"{_where(path, 'robot')} needs exactly one of 'name' or 'urdf', got {v}")
    spec = dict(v)
    if "name" in spec:
        if spec["name"] not in robots.available():
            raise ValueError(
                f"{_where(path, 'robot.name')}: no robot {spec['name']!r} in the registry "
                f"(known: {', '.join(robots.available())}); give a URDF with 'urdf'"
            )
        if "srdf" in spec or "package_dirs" in spec:
            raise ValueError(f"{_where(path, 'robot')}: 'srdf' and 'package_dirs' need 'urdf'")
    for key in ("urdf", "srdf"):
        if key in spec:
            if not isinstance(spec[key], str):
                raise ValueError(
                    f"{_where(path, 'robot.' + key)} must be a path, got {spec[key]!r}"
                )
            f = (path.parent / spec[key]).resolve()
            if not f.is_file():
                raise FileNotFoundError(f"{_where(path, 'robot.' + key)}: no file {f}")
            spec[key] = f
    for key in ("fixed_joints", "joint_limits", "package_dirs"):
        if key in spec and not isinstance(spec[key], dict):
            raise ValueError(f"{_where(path, 'robot.' + key)} must be an object, got {spec[key]!r}")
    if "package_dirs" in spec:
        spec["package_dirs"] = {k: str(path.parent / d) for k, d in spec["package_dirs"].items()}
    return spec


def _joints(v, where: str) -> np.ndarray:
    try:
        a = np.asarray(v, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{where} must be a list of numbers (rad or m), got {v!r}") from None
    if a.ndim != 1 or a.size == 0 or not np.all(np.isfinite(a)):
        raise ValueError(f"{where} must be a non-empty list of finite numbers, got {v!r}")
    return a


def problem_file(path) -> BenchSet:
    """A user's problem file (module doc) as a `BenchSet`."""
    from planning_collision.plugins.ompl import PLANNERS

    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"problem file not found: {path}")
    try:
        doc = json.loads(path.read_text())
    except json.JSONDecodeError as e:
        raise ValueError(f"{path}:{e.lineno}:{e.colno}: invalid JSON: {e.msg}") from None
    if not isinstance(doc, dict):
        raise ValueError(f"{path}: a problem file is a JSON object, got {type(doc).__name__}")
    extra = [k for k in doc if k not in _FILE_KEYS]
    if extra:
        raise ValueError(f"{path}: unknown keys {extra} (known: {', '.join(_FILE_KEYS)})")
    for key in ("robot", "scene", "problems"):
        if key not in doc:
            raise ValueError(f"{path}: missing field {key!r}")
    if not isinstance(doc["scene"], str):
        raise ValueError(f"{_where(path, 'scene')} must be a path, got {doc['scene']!r}")
    scene = (path.parent / doc["scene"]).resolve()
    if not scene.is_file():
        raise FileNotFoundError(f"{_where(path, 'scene')}: no file {scene}")
    if not isinstance(doc["problems"], list) or not doc["problems"]:
        raise ValueError(f"{_where(path, 'problems')} must be a non-empty list")
    queries = []
    for i, p in enumerate(doc["problems"]):
        where = _where(path, f"problems[{i}]")
        if not isinstance(p, dict):
            raise ValueError(f"{where} must be an object with start and goal, got {p!r}")
        extra = [k for k in p if k not in _PROBLEM_KEYS]
        if extra or "start" not in p or "goal" not in p:
            raise ValueError(f"{where} needs 'start' and 'goal' (and an optional 'name'), got {p}")
        start, goal = _joints(p["start"], f"{where}.start"), _joints(p["goal"], f"{where}.goal")
        if start.shape != goal.shape:
            raise ValueError(f"{where}: start has {start.size} values, goal {goal.size}")
        queries.append(Query(str(p.get("name", f"{i + 1:04d}")), start, goal))
    t = doc.get("time")
    if t is not None and (not isinstance(t, (int, float)) or not t > 0):
        raise ValueError(f"{_where(path, 'time')} must be a number of seconds > 0, got {t!r}")
    name = str(doc.get("name", path.stem))
    return BenchSet(
        name=name,
        description=str(doc.get("description", f"{name}: {path.name}")),
        robot_spec=_robot_spec(doc["robot"], path),
        queries=[dataclasses.replace(q, name=f"{name}/{q.name}") for q in queries],
        scene_file=scene,
        planners=_names(doc, "planners", PLANNERS, path),
        validators=_names(doc, "validators", VALIDATORS, path),
        time=None if t is None else float(t),
    )
