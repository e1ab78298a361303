"""Readers and writers: URDF, scene files, benchmark problem files. Readers return records
(plain data); the engine builds from them (`Scene.from_records`, `Robot.from_urdf`).

- `load_scene(path) -> [ObstacleRecord]` / `save_scene(records, path)`: the project's JSON
  scene format (docs/scene_format.md) and MoveIt's ``.scene`` text format, chosen by
  extension; `Scene.from_file` / `Scene.to_file` call them.
- `load_mbm(path) -> ProblemSet`: a MotionBenchMaker problem file (name, start, goals,
  fixed joints and the obstacle records of each problem); `mbm_path(name)` is the file of
  one of the shipped Panda sets (`MBM_SETS`).
- URDF: `planning_collision.io.urdf` (used by `Robot.from_urdf`).
- `read_srdf(path, link_names=None, strict=False) -> SRDFData`: a MoveIt SRDF's
  ``disable_collisions`` pairs (`Robot.from_urdf(..., srdf=path)` allows them); pairs naming
  links the robot lacks are skipped with one warning, or refused with ``strict=True``;
  `write_srdf(path, name, entries)` writes an allowed-collision matrix as MoveIt's setup
  assistant does (``robot.write_srdf(path)``), read back with the same pairs and reasons.
"""

from .mbm import MBM_SETS, Problem, ProblemSet, load_mbm, mbm_path
from .scene_files import ObstacleRecord, load_mesh_file, load_scene, save_scene
from .srdf import DisabledCollision, SRDFData, SRDFError, read_srdf, write_srdf

__all__ = [
    "MBM_SETS",
    "DisabledCollision",
    "ObstacleRecord",
    "Problem",
    "ProblemSet",
    "SRDFData",
    "SRDFError",
    "load_mbm",
    "mbm_path",
    "load_mesh_file",
    "load_scene",
    "read_srdf",
    "save_scene",
    "write_srdf",
]
