"""Readers and writers: URDF, scene files, benchmark problem files. Readers return records
(plain data); the engine builds from them (`Scene.from_records`, `Robot.from_urdf`).

- `load_scene(path) -> [ObstacleRecord]` / `save_scene(records, path)`: the project's JSON
  scene format (docs/scene_format.md) and MoveIt's ``.scene`` text format, chosen by
  extension; `Scene.from_file` / `Scene.to_file` call them.
- `load_mbm(path) -> ProblemSet`: a MotionBenchMaker problem file (name, start, goals,
  fixed joints and the obstacle records of each problem).
- URDF: `planning_collision.io.urdf` (used by `Robot.from_urdf`).
"""

from .mbm import Problem, ProblemSet, load_mbm
from .scene_files import ObstacleRecord, load_mesh_file, load_scene, save_scene

__all__ = [
    "ObstacleRecord",
    "Problem",
    "ProblemSet",
    "load_mbm",
    "load_mesh_file",
    "load_scene",
    "save_scene",
]
