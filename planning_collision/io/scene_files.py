"""Scene files: the project's JSON format, MoveIt's ``.scene`` text format, mesh files.

- ``.json``: docs/scene_format.md (every shape kind, compound objects, meshes inline or by
  file). Read and written.
- ``.scene``: MoveIt's plain-text planning-scene geometry (``PlanningScene::saveGeometryToStream``),
  both the old layout (no object pose) and the new one (object pose and subframes, detected as
  MoveIt does: the line after the first ``* name`` holds spaces). Shapes ``box`` (full sizes),
  ``sphere``, ``cylinder``, ``cone`` (radius, length), ``mesh`` and ``plane`` (``a b c d``,
  read as the solid halfspace ``a x + b y + c z + d <= 0``). Colours and subframes are read and
  ignored. Written for the shapes it can express.
- anything else trimesh loads (``.stl``, ``.obj``, ``.ply``, ``.dae``, ``.glb``...): one `Mesh`
  obstacle (a multi-geometry file is concatenated).

Readers return `ObstacleRecord`s (name, shape, pose); `Scene.from_file` and
`Scene.from_records` build scenes from them, and writers take records back (anything with
``name``, ``shape`` and ``T``, so a scene's own `Obstacle`s too). Malformed files raise
ValueError naming the file and the line (``.scene``) or the object (``.json``); a JSON key
the format does not define is refused by name (a typo must not load as a default);
missing files raise FileNotFoundError.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import NamedTuple

import numpy as np

from ..geometry.clouds import PointCloud, VoxelGrid
from ..geometry.poses import as_pose, matrix_to_quaternion, pose_matrix
from ..geometry.shapes import Box, Capsule, Cone, Convex, Cylinder, Halfspace, Mesh, Sphere
from ..geometry.validate import real_array

__all__ = [
    "ObstacleRecord",
    "check_keys",
    "load_scene",
    "save_scene",
    "load_json_scene",
    "save_json_scene",
    "load_moveit_scene",
    "save_moveit_scene",
    "load_mesh_file",
    "FORMAT",
]

FORMAT = "planning_collision.scene"
VERSION = 1


class ObstacleRecord(NamedTuple):
    """One obstacle as a file holds it: ``shape`` a Shape or a compound list of
    ``(Shape, T_object_part)`` pairs, ``T (4, 4)`` T_world_object."""

    name: str | None
    shape: object
    T: np.ndarray


def check_keys(d: dict, allowed, where: str) -> None:
    """ValueError naming the keys of `d` that are not in `allowed` (and the ones that are)."""
    extra = [k for k in d if k not in allowed]
    if extra:
        raise ValueError(
            f"{where}: unknown key{'s' if len(extra) > 1 else ''} "
            f"{', '.join(repr(k) for k in extra)} (known: {', '.join(sorted(allowed))})"
        )


def load_mesh_file(path, scale=1.0) -> Mesh:
    """A trimesh-loadable file as one `Mesh` (scaled; degenerate faces dropped)."""
    import trimesh

    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"mesh file not found: {path}")
    try:
        m = trimesh.load(str(path), force="mesh")
    except Exception as e:  # trimesh raises many kinds for unreadable files
        raise ValueError(
            f"{path}: trimesh cannot read this mesh file ({type(e).__name__}: {e})"
        ) from e
    if not isinstance(m, trimesh.Trimesh) or len(m.faces) == 0:
        raise ValueError(f"{path}: no triangles in this mesh file")
    s = real_array(f"{path}: mesh scale", scale, "a number or 3 numbers")
    if s.shape not in ((), (1,), (3,)):
        raise ValueError(f"{path}: mesh scale must be a number or 3 numbers, got {scale!r}")
    s = np.broadcast_to(s, (3,))
    if not np.all(np.isfinite(s)) or np.any(s == 0):
        raise ValueError(f"{path}: mesh scale must be finite and non-zero, got {scale!r}")
    v = np.asarray(m.vertices, dtype=np.float64) * s
    f = np.asarray(m.faces, dtype=np.int64)
    if np.prod(s) < 0:  # a mirror flips the winding
        f = f[:, ::-1]
    try:
        return Mesh.from_trimesh(trimesh.Trimesh(v, f, process=False), drop_degenerate=True)
    except ValueError as e:
        raise ValueError(f"{path}: {e}") from None


# ---------------------------------------------------------------------------------------
# dispatch


def load_scene(path) -> list[ObstacleRecord]:
    """The obstacles of a ``.json``, ``.scene`` or mesh file (see the module doc)."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"scene file not found: {path}")
    suffix = path.suffix.lower()
    if suffix == ".json":
        return load_json_scene(path)
    if suffix == ".scene":
        return load_moveit_scene(path)
    return [ObstacleRecord(path.stem, load_mesh_file(path), np.eye(4))]


def save_scene(records, path) -> None:
    """Write obstacle records (anything with ``name``, ``shape``, ``T``: a scene's
    `Scene.records()`) as ``.json`` or ``.scene``, chosen by the suffix."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix == ".json":
        return save_json_scene(records, path)
    if suffix == ".scene":
        return save_moveit_scene(records, path)
    raise ValueError(f"cannot write scene file {path}: use a .json or .scene suffix")


# ---------------------------------------------------------------------------------------
# JSON


def _read_text(path: Path) -> str:
    """The file as UTF-8 text, or ValueError naming it."""
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        raise ValueError(
            f"{path}: not UTF-8 text ({e.reason} at byte {e.start}): not a scene file"
        ) from None


def _no_bools(value, where: str):
    """`value` (a JSON number or nested lists of them) unchanged, or ValueError when it
    holds a JSON true/false, which numpy would read as 1/0."""
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, bool):
            raise ValueError(f"{where} must hold numbers, got {json.dumps(v)}")
        if isinstance(v, list):
            stack.extend(v)
    return value


def _req(d: dict, key: str, where: str):
    if not isinstance(d, dict):
        raise ValueError(f"{where} must be a JSON object, got {type(d).__name__}")
    if key not in d:
        raise ValueError(f"{where} is missing {key!r}")
    return _no_bools(d[key], f"{where}.{key}")


def _opt(d: dict, key: str, default, where: str):
    """An optional numeric field of `d` (its `default` when absent)."""
    return _no_bools(d.get(key, default), f"{where}.{key}")


_POSE_KEYS = ("position", "orientation_xyzw")
# the keys each shape type takes besides "type" (and "pose" in a compound's part)
_SHAPE_KEYS = {
    "sphere": ("radius",),
    "box": ("extents",),
    "capsule": ("radius", "length"),
    "cylinder": ("radius", "length"),
    "cone": ("radius", "length"),
    "convex": ("points", "radius"),
    "halfspace": ("normal", "offset"),
    "mesh": ("vertices", "faces", "file", "scale"),
    "pointcloud": ("points", "radius"),
    "voxelgrid": ("cells", "voxel_size", "origin"),
}
_OBJECT_KEYS = ("name", "pose", "shape", "shapes")
_TOP_KEYS = ("format", "version", "objects", "name", "frame", "meta")


def _json_pose(d, where) -> np.ndarray:
    if d is None:
        return np.eye(4)
    if isinstance(d, list):  # a 4x4 matrix
        return as_pose(_no_bools(d, where), where)
    if not isinstance(d, dict):
        raise ValueError(f"{where} must be an object with position/orientation_xyzw or a 4x4 list")
    check_keys(d, _POSE_KEYS, where)
    return pose_matrix(
        _opt(d, "position", [0.0, 0.0, 0.0], where),
        _opt(d, "orientation_xyzw", [0, 0, 0, 1], where),
        where,
    )


def _json_shape(d, where: str, base: Path, part: bool = False):
    kind = _req(d, "type", where)
    if not isinstance(kind, str):
        raise ValueError(f"{where}.type must be a string, got {kind!r}")
    kind = kind.lower()
    if kind in _SHAPE_KEYS:
        check_keys(d, ("type", *_SHAPE_KEYS[kind], *(("pose",) if part else ())), where)
    g = lambda k: _req(d, k, f"{where} ({kind})")  # noqa: E731
    if kind == "sphere":
        return Sphere(g("radius"))
    if kind == "box":
        return Box(g("extents"))
    if kind == "capsule":
        return Capsule(g("radius"), g("length"))
    if kind == "cylinder":
        return Cylinder(g("radius"), g("length"))
    if kind == "cone":
        return Cone(g("radius"), g("length"))
    o = lambda k, default: _opt(d, k, default, f"{where} ({kind})")  # noqa: E731
    if kind == "convex":
        return Convex(g("points"), o("radius", 0.0))
    if kind == "halfspace":
        return Halfspace(g("normal"), o("offset", 0.0))
    if kind == "mesh":
        if "file" in d:
            if not isinstance(d["file"], str):
                raise ValueError(f"{where} (mesh).file must be a string, got {d['file']!r}")
            f = Path(d["file"])
            return load_mesh_file(f if f.is_absolute() else base / f, o("scale", 1.0))
        return Mesh(g("vertices"), g("faces"))
    if kind == "pointcloud":
        return PointCloud(g("points"), o("radius", 0.0))
    if kind == "voxelgrid":
        return VoxelGrid(g("cells"), g("voxel_size"), o("origin", [0.0, 0.0, 0.0]))
    raise ValueError(
        f"{where}.type {kind!r} is unknown (sphere, box, capsule, cylinder, cone, convex, "
        f"halfspace, mesh, pointcloud, voxelgrid)"
    )


def load_json_scene(path) -> list[ObstacleRecord]:
    """The obstacles of a file in the project's JSON format (docs/scene_format.md)."""
    path = Path(path)
    text = _read_text(path)
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise ValueError(f"{path}:{e.lineno}:{e.colno}: invalid JSON: {e.msg}") from None
    except RecursionError:
        raise ValueError(f"{path}: JSON nested too deeply to be a scene file") from None
    except ValueError as e:  # e.g. an integer literal longer than Python converts
        raise ValueError(f"{path}: invalid JSON: {e}") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise ValueError(f'{path}: not a scene file (expected "format": "{FORMAT}" at top level)')
    if doc.get("version", VERSION) != VERSION:
        raise ValueError(
            f"{path}: scene format version {doc.get('version')!r} is not supported "
            f"(expected {VERSION})"
        )
    check_keys(doc, _TOP_KEYS, str(path))
    objs = doc.get("objects")
    if not isinstance(objs, list):
        raise ValueError(f'{path}: "objects" must be a list')
    records = []
    for i, o in enumerate(objs):
        name = o.get("name") if isinstance(o, dict) else None
        where = f"objects[{i}]" + (f" ({name!r})" if name is not None else "")
        try:
            if not isinstance(o, dict):
                raise ValueError("must be a JSON object")
            if name is not None and not isinstance(name, str):
                raise ValueError(f"name must be a string, got {name!r}")
            check_keys(o, _OBJECT_KEYS, "object")
            T = _json_pose(o.get("pose"), "pose")
            if ("shape" in o) == ("shapes" in o):
                raise ValueError('needs exactly one of "shape" or "shapes"')
            if "shape" in o:
                shape = _json_shape(o["shape"], "shape", path.parent)
            else:
                parts = o["shapes"]
                if not isinstance(parts, list) or not parts:
                    raise ValueError('"shapes" must be a non-empty list')
                shape = [
                    (
                        _json_shape(p, f"shapes[{k}]", path.parent, part=True),
                        _json_pose(
                            p.get("pose") if isinstance(p, dict) else None, f"shapes[{k}].pose"
                        ),
                    )
                    for k, p in enumerate(parts)
                ]
            records.append(ObstacleRecord(name, shape, T))
        except FileNotFoundError as e:
            raise FileNotFoundError(f"{path}: {where}: {e}") from None
        except (ValueError, TypeError, KeyError, OverflowError, RecursionError) as e:
            raise ValueError(f"{path}: {where}: {e}") from None
    return records


def _pose_json(T) -> dict:
    return {
        "position": [float(x) for x in T[:3, 3]],
        "orientation_xyzw": [float(x) for x in matrix_to_quaternion(T[:3, :3])],
    }


def _shape_json(s) -> dict:
    if isinstance(s, Sphere):
        return {"type": "sphere", "radius": s.radius}
    if isinstance(s, Box):
        return {"type": "box", "extents": s.extents.tolist()}
    if isinstance(s, (Capsule, Cylinder, Cone)):
        return {"type": type(s).__name__.lower(), "radius": s.radius, "length": s.length}
    if isinstance(s, Convex):
        return {"type": "convex", "points": s.points.tolist(), "radius": s.radius}
    if isinstance(s, Halfspace):
        return {"type": "halfspace", "normal": s.normal.tolist(), "offset": s.offset}
    if isinstance(s, Mesh):
        return {"type": "mesh", "vertices": s.vertices.tolist(), "faces": s.faces.tolist()}
    if isinstance(s, PointCloud):
        return {"type": "pointcloud", "points": s.points.tolist(), "radius": s.radius}
    if isinstance(s, VoxelGrid):
        return {
            "type": "voxelgrid",
            "cells": s.cells.tolist(),
            "voxel_size": s.voxel_size,
            "origin": s.origin.tolist(),
        }
    raise TypeError(f"cannot write a {type(s).__name__} to a scene file")


def save_json_scene(records, path) -> None:
    """Write obstacle records in the project's JSON format (meshes inline)."""
    objs = []
    for ob in records:
        d = {"name": ob.name, "pose": _pose_json(ob.T)}
        if ob.name is None:
            del d["name"]
        if isinstance(ob.shape, list | tuple):
            d["shapes"] = [
                dict(_shape_json(s), pose=_pose_json(np.asarray(Tl, float))) for s, Tl in ob.shape
            ]
        else:
            d["shape"] = _shape_json(ob.shape)
        objs.append(d)
    doc = {"format": FORMAT, "version": VERSION, "objects": objs}
    Path(path).write_text(json.dumps(doc, indent=1) + "\n")


# ---------------------------------------------------------------------------------------
# MoveIt .scene


class _Tokens:
    """Whitespace tokens of a text file with their line numbers."""

    def __init__(self, lines, path):
        self.lines = lines
        self.path = path
        self.line = 0  # index of the next line to split
        self.buf: list[str] = []
        self.buf_line = 0

    def error(self, msg, line=None):
        return ValueError(f"{self.path}:{(line if line is not None else self.buf_line) + 1}: {msg}")

    def next_line(self) -> tuple[str, int] | None:
        """The next non-empty raw line (for names), discarding any pending tokens."""
        self.buf = []
        while self.line < len(self.lines):
            s = self.lines[self.line].strip()
            self.line += 1
            if s:
                return s, self.line - 1
        return None

    def token(self, what: str) -> str:
        while not self.buf:
            if self.line >= len(self.lines):
                raise self.error(f"unexpected end of file, expected {what}", len(self.lines) - 1)
            self.buf = self.lines[self.line].split()
            self.buf_line = self.line
            self.line += 1
        return self.buf.pop(0)

    def number(self, what: str) -> float:
        t = self.token(what)
        try:
            x = float(t)
        except ValueError:
            raise self.error(f"expected {what} (a number), got {t!r}") from None
        if not math.isfinite(x):
            raise self.error(f"{what} must be finite, got {t!r}")
        return x

    def integer(self, what: str) -> int:
        t = self.token(what)
        try:
            return int(t)
        except ValueError:
            raise self.error(f"expected {what} (an integer), got {t!r}") from None

    def pose(self, what: str) -> np.ndarray:
        p = [self.number(f"{what} position") for _ in range(3)]
        q = [self.number(f"{what} orientation (x y z w)") for _ in range(4)]
        line = self.buf_line
        try:
            return pose_matrix(p, q, what)
        except ValueError as e:
            raise self.error(str(e), line) from None


def _moveit_shape(tk: _Tokens):
    kind = tk.token("a shape type")
    line = tk.buf_line
    try:
        if kind == "box":
            return Box([tk.number("box size") for _ in range(3)])
        if kind == "sphere":
            return Sphere(tk.number("sphere radius"))
        if kind == "cylinder":
            return Cylinder(tk.number("cylinder radius"), tk.number("cylinder length"))
        if kind == "cone":
            return Cone(tk.number("cone radius"), tk.number("cone length"))
        if kind == "plane":
            a, b, c, d = (tk.number("plane coefficient") for _ in range(4))
            return Halfspace((a, b, c), -d)
        if kind == "mesh":
            nv = tk.integer("mesh vertex count")
            nt = tk.integer("mesh triangle count")
            if nv <= 0 or nt <= 0:
                raise tk.error(
                    f"mesh needs vertices and triangles, got {nv} vertices, {nt} triangles"
                )
            v = [[tk.number("mesh vertex coordinate") for _ in range(3)] for _ in range(nv)]
            f = [[tk.integer("mesh triangle index") for _ in range(3)] for _ in range(nt)]
            return Mesh(np.array(v), np.array(f))
    except ValueError as e:
        if str(e).startswith(str(tk.path)):
            raise
        raise tk.error(f"{kind}: {e}", line) from None
    raise tk.error(f"unknown shape type {kind!r} (box, sphere, cylinder, cone, plane, mesh)", line)


def load_moveit_scene(path) -> list[ObstacleRecord]:
    """The obstacles of a file in MoveIt's ``.scene`` text format (module doc)."""
    path = Path(path)
    lines = _read_text(path).splitlines()
    tk = _Tokens(lines, path)
    head = tk.next_line()
    if head is None:
        raise ValueError(f"{path}:1: empty scene file (expected the scene name)")
    # MoveIt's own version test: in the new format the line after "* name" is a position
    new_format = False
    for k in range(tk.line, len(lines)):
        if lines[k].strip().startswith("*"):
            nxt = next((s.strip() for s in lines[k + 1 :] if s.strip()), "")
            new_format = " " in nxt
            break
    records = []
    while True:
        got = tk.next_line()
        if got is None:
            raise ValueError(
                f"{path}:{len(lines)}: unexpected end of file, expected '* name' or '.'"
            )
        s, ln = got
        if s == ".":
            return records
        if not s.startswith("*"):
            raise tk.error(f"expected '* object name' or '.', got {s!r}", ln)
        name = s[1:].strip()
        if not name:
            raise tk.error("object without a name after '*'", ln)
        T = tk.pose(f"object {name!r} pose") if new_format else np.eye(4)
        n = tk.integer(f"object {name!r} shape count")
        if n < 0:
            raise tk.error(f"object {name!r}: negative shape count {n}")
        parts = []
        for _ in range(n):
            shape = _moveit_shape(tk)
            Tl = tk.pose(f"object {name!r} shape pose")
            for _c in range(4):
                tk.number(f"object {name!r} colour (r g b a)")
            parts.append((shape, Tl))
        if new_format:
            for _s in range(tk.integer(f"object {name!r} subframe count")):
                tk.token("subframe name")
                tk.pose(f"object {name!r} subframe pose")
        if parts:
            records.append(ObstacleRecord(name, parts, T))


def save_moveit_scene(records, path, name: str = "(noname)") -> None:
    """Write obstacle records as a MoveIt ``.scene`` file (new format, with object poses).
    Capsules, Convex, PointCloud and VoxelGrid have no MoveIt text form: ValueError names
    the object."""
    fmt = lambda xs: " ".join(repr(float(x)) for x in xs)  # noqa: E731
    out = [name]

    def pose(T):
        out.append(fmt(T[:3, 3]))
        out.append(fmt(matrix_to_quaternion(T[:3, :3])))

    for k, ob in enumerate(records):
        parts = ob.shape if isinstance(ob.shape, list | tuple) else [(ob.shape, np.eye(4))]
        label = ob.name if ob.name is not None else f"obstacle_{getattr(ob, 'id', k)}"
        out.append(f"* {label}")
        pose(ob.T)
        out.append(str(len(parts)))
        for s, Tl in parts:
            if isinstance(s, Box):
                out += ["box", fmt(s.extents)]
            elif isinstance(s, Sphere):
                out += ["sphere", fmt([s.radius])]
            elif isinstance(s, (Cylinder, Cone)):
                out += [type(s).__name__.lower(), fmt([s.radius, s.length])]
            elif isinstance(s, Halfspace):
                out += ["plane", fmt([*s.normal, -s.offset])]
            elif isinstance(s, Mesh):
                out += ["mesh", f"{s.vertices.shape[0]} {s.faces.shape[0]}"]
                out += [fmt(v) for v in s.vertices]
                out += [" ".join(str(int(i)) for i in f) for f in s.faces]
            else:
                raise ValueError(
                    f"obstacle {label!r}: a {type(s).__name__} has no MoveIt .scene form; "
                    f"write .json instead"
                )
            pose(np.asarray(Tl, float))
            out.append("0 0 0 0")
        out.append("0")
    out.append(".")
    Path(path).write_text("\n".join(out) + "\n")
