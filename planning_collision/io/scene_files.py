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

Malformed files raise ValueError naming the file and the line (``.scene``) or the object
(``.json``); missing files FileNotFoundError.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

from ..geometry.clouds import PointCloud, VoxelGrid
from ..geometry.shapes import Box, Capsule, Cone, Convex, Cylinder, Halfspace, Mesh, Sphere

__all__ = [
    "load_scene",
    "save_scene",
    "load_json_scene",
    "save_json_scene",
    "load_moveit_scene",
    "save_moveit_scene",
    "load_mesh_file",
    "quat_xyzw_to_matrix",
    "pose_matrix",
    "FORMAT",
]

FORMAT = "planning_collision.scene"
VERSION = 1


def quat_xyzw_to_matrix(q, where: str = "orientation_xyzw") -> np.ndarray:
    """(3, 3) rotation of a quaternion ``(x, y, z, w)`` (normalised here; zero raises)."""
    try:
        q = np.asarray(q, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{where} must be 4 numbers (x, y, z, w), got {q!r}") from None
    if q.shape != (4,) or not np.all(np.isfinite(q)):
        raise ValueError(f"{where} must be 4 finite numbers (x, y, z, w), got {q.tolist()}")
    n = float(np.linalg.norm(q))
    if n < 1e-9:
        raise ValueError(f"{where} must be a non-zero quaternion, got {q.tolist()}")
    x, y, z, w = q / n
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
        ]
    )


def matrix_to_quat_xyzw(R) -> np.ndarray:
    """Unit quaternion (x, y, z, w), w >= 0, of a rotation matrix (Shepperd's method)."""
    R = np.asarray(R, dtype=np.float64)
    tr = R[0, 0] + R[1, 1] + R[2, 2]
    if tr > 0:
        s = 2.0 * math.sqrt(tr + 1.0)
        q = [(R[2, 1] - R[1, 2]) / s, (R[0, 2] - R[2, 0]) / s, (R[1, 0] - R[0, 1]) / s, 0.25 * s]
    elif R[0, 0] > R[1, 1] and R[0, 0] > R[2, 2]:
        s = 2.0 * math.sqrt(1.0 + R[0, 0] - R[1, 1] - R[2, 2])
        q = [0.25 * s, (R[0, 1] + R[1, 0]) / s, (R[0, 2] + R[2, 0]) / s, (R[2, 1] - R[1, 2]) / s]
    elif R[1, 1] > R[2, 2]:
        s = 2.0 * math.sqrt(1.0 + R[1, 1] - R[0, 0] - R[2, 2])
        q = [(R[0, 1] + R[1, 0]) / s, 0.25 * s, (R[1, 2] + R[2, 1]) / s, (R[0, 2] - R[2, 0]) / s]
    else:
        s = 2.0 * math.sqrt(1.0 + R[2, 2] - R[0, 0] - R[1, 1])
        q = [(R[0, 2] + R[2, 0]) / s, (R[1, 2] + R[2, 1]) / s, 0.25 * s, (R[1, 0] - R[0, 1]) / s]
    q = np.array(q)
    q /= np.linalg.norm(q)
    return -q if q[3] < 0 else q


def pose_matrix(position, orientation_xyzw, where: str = "pose") -> np.ndarray:
    """(4, 4) pose from a position (3,) and a quaternion (x, y, z, w)."""
    try:
        p = np.asarray(position, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{where}.position must be 3 numbers, got {position!r}") from None
    if p.shape != (3,) or not np.all(np.isfinite(p)):
        raise ValueError(f"{where}.position must be 3 finite numbers, got {position!r}")
    T = np.eye(4)
    T[:3, :3] = quat_xyzw_to_matrix(orientation_xyzw, f"{where}.orientation_xyzw")
    T[:3, 3] = p
    return T


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
    s = np.broadcast_to(np.asarray(scale, dtype=np.float64), (3,))
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


def load_scene(path, min_size=None):
    """A `Scene` from ``.json``, ``.scene`` or a mesh file (see the module doc)."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"scene file not found: {path}")
    suffix = path.suffix.lower()
    if suffix == ".json":
        return load_json_scene(path, min_size=min_size)
    if suffix == ".scene":
        return load_moveit_scene(path, min_size=min_size)
    from ..scene import Scene

    scene = Scene(min_size=min_size)
    scene.add(load_mesh_file(path), np.eye(4), name=path.stem)
    return scene


def save_scene(scene, path) -> None:
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix == ".json":
        return save_json_scene(scene, path)
    if suffix == ".scene":
        return save_moveit_scene(scene, path)
    raise ValueError(f"cannot write scene file {path}: use a .json or .scene suffix")


# ---------------------------------------------------------------------------------------
# JSON


def _req(d: dict, key: str, where: str):
    if not isinstance(d, dict):
        raise ValueError(f"{where} must be a JSON object, got {type(d).__name__}")
    if key not in d:
        raise ValueError(f"{where} is missing {key!r}")
    return d[key]


def _json_pose(d, where) -> np.ndarray:
    if d is None:
        return np.eye(4)
    if isinstance(d, list):  # a 4x4 matrix
        from ..geometry.validate import as_pose

        return as_pose(d, where)
    if not isinstance(d, dict):
        raise ValueError(f"{where} must be an object with position/orientation_xyzw or a 4x4 list")
    return pose_matrix(
        d.get("position", [0.0, 0.0, 0.0]), d.get("orientation_xyzw", [0, 0, 0, 1]), where
    )


def _json_shape(d, where: str, base: Path):
    kind = _req(d, "type", where)
    if not isinstance(kind, str):
        raise ValueError(f"{where}.type must be a string, got {kind!r}")
    kind = kind.lower()
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
    if kind == "convex":
        return Convex(g("points"), d.get("radius", 0.0))
    if kind == "halfspace":
        return Halfspace(g("normal"), d.get("offset", 0.0))
    if kind == "mesh":
        if "file" in d:
            f = Path(d["file"])
            return load_mesh_file(f if f.is_absolute() else base / f, d.get("scale", 1.0))
        return Mesh(g("vertices"), g("faces"))
    if kind == "pointcloud":
        return PointCloud(g("points"), d.get("radius", 0.0))
    if kind == "voxelgrid":
        return VoxelGrid(g("cells"), g("voxel_size"), d.get("origin", [0.0, 0.0, 0.0]))
    raise ValueError(
        f"{where}.type {kind!r} is unknown (sphere, box, capsule, cylinder, cone, convex, "
        f"halfspace, mesh, pointcloud, voxelgrid)"
    )


def load_json_scene(path, min_size=None):
    """A `Scene` from the project's JSON format (docs/scene_format.md)."""
    from ..scene import Scene

    path = Path(path)
    text = path.read_text()
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise ValueError(f"{path}:{e.lineno}:{e.colno}: invalid JSON: {e.msg}") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise ValueError(f'{path}: not a scene file (expected "format": "{FORMAT}" at top level)')
    if doc.get("version", VERSION) != VERSION:
        raise ValueError(
            f"{path}: scene format version {doc.get('version')!r} is not supported "
            f"(expected {VERSION})"
        )
    objs = doc.get("objects")
    if not isinstance(objs, list):
        raise ValueError(f'{path}: "objects" must be a list')
    scene = Scene(min_size=min_size)
    for i, o in enumerate(objs):
        name = o.get("name") if isinstance(o, dict) else None
        where = f"objects[{i}]" + (f" ({name!r})" if name is not None else "")
        try:
            if not isinstance(o, dict):
                raise ValueError("must be a JSON object")
            if name is not None and not isinstance(name, str):
                raise ValueError(f"name must be a string, got {name!r}")
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
                        _json_shape(p, f"shapes[{k}]", path.parent),
                        _json_pose(
                            p.get("pose") if isinstance(p, dict) else None, f"shapes[{k}].pose"
                        ),
                    )
                    for k, p in enumerate(parts)
                ]
            scene.add(shape, T, name=name)
        except FileNotFoundError as e:
            raise FileNotFoundError(f"{path}: {where}: {e}") from None
        except (ValueError, TypeError, KeyError) as e:
            raise ValueError(f"{path}: {where}: {e}") from None
    return scene


def _pose_json(T) -> dict:
    return {
        "position": [float(x) for x in T[:3, 3]],
        "orientation_xyzw": [float(x) for x in matrix_to_quat_xyzw(T[:3, :3])],
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


def save_json_scene(scene, path) -> None:
    """Write `scene` in the project's JSON format (meshes inline)."""
    objs = []
    for ob in scene:
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


def load_moveit_scene(path, min_size=None):
    """A `Scene` from MoveIt's ``.scene`` text format (module doc)."""
    from ..scene import Scene

    path = Path(path)
    lines = path.read_text().splitlines()
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
    scene = Scene(min_size=min_size)
    while True:
        got = tk.next_line()
        if got is None:
            raise ValueError(
                f"{path}:{len(lines)}: unexpected end of file, expected '* name' or '.'"
            )
        s, ln = got
        if s == ".":
            return scene
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
            try:
                scene.add(parts, T, name=name)
            except (ValueError, TypeError) as e:
                raise ValueError(f"{path}:{ln + 1}: object {name!r}: {e}") from None


def save_moveit_scene(scene, path, name: str = "(noname)") -> None:
    """Write `scene` as a MoveIt ``.scene`` file (new format, with object poses). Capsules,
    Convex, PointCloud and VoxelGrid have no MoveIt text form: ValueError names the object."""
    fmt = lambda xs: " ".join(repr(float(x)) for x in xs)  # noqa: E731
    out = [name]

    def pose(T):
        out.append(fmt(T[:3, 3]))
        out.append(fmt(matrix_to_quat_xyzw(T[:3, :3])))

    for ob in scene:
        parts = ob.shape if isinstance(ob.shape, list | tuple) else [(ob.shape, np.eye(4))]
        label = ob.name if ob.name is not None else f"obstacle_{ob.id}"
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
