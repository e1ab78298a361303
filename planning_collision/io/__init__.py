"""Readers and writers: URDF, scene files, benchmark problem files.

- `load_scene(path)` / `save_scene(scene, path)`: the project's JSON scene format
  (docs/scene_format.md) and MoveIt's ``.scene`` text format, chosen by extension.
- `load_mbm(path) -> ProblemSet`: a MotionBenchMaker problem file (name, start, goals,
  fixed joints and the scene of each problem).
- URDF: `planning_collision.io.urdf` (used by `Robot.from_urdf`).
"""

from .mbm import Problem, ProblemSet, load_mbm
from .scene_files import load_mesh_file, load_scene, save_scene

__all__ = ["Problem", "ProblemSet", "load_mbm", "load_mesh_file", "load_scene", "save_scene"]
