"""Link collision geometry: URDF collision elements -> convex pieces, and their cache.

URDF boxes, cylinders and spheres stay primitives. A mesh becomes convex pieces whose union
contains its whole surface (robot/convexify.py: hulls of near-convex components, V-HACD
pieces of the others, grown until every triangle lies inside the pieces). The report gives,
per link, the mesh and model volumes and the volume the surface cover added.

The result is cached as ``geometry-<hash>.npz``, keyed by the URDF and mesh file contents,
`GEOMETRY_VERSION` and the build settings (`load_link_geometry`; robot/cache.py says where),
with each convex piece's hull faces (geometry/hull.py), so a cached model loads without
qhull (scipy.spatial is not imported).
"""

from __future__ import annotations

import dataclasses
import hashlib
import logging
import math
import time
from pathlib import Path
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from ..geometry import Box, Convex, Cylinder, Shape, Sphere, shape_table
from ..geometry.hull import faces_arrays, faces_from_arrays
from ..geometry.poses import as_pose
from ..io.urdf import URDFData, URDFLinkError
from ..kernels.base import layout as L
from ..kernels.base.tolerances import DEGENERATE_AREA, WORLD_LIMIT
from .cache import read_entry, resolve_cache_dir, write_entry
from .convexify import decompose_mesh, hull_volume, pieces_volume
from .progress import Progress

__all__ = [
    "GEOMETRY_VERSION",
    "MIN_MESH_SIZE",
    "CollisionModel",
    "LinkPiece",
    "build_link_geometry",
    "collision_model",
    "link_radii",
    "load_link_geometry",
    "mesh_problem",
    "read_collision_mesh",
    "shape_volume",
]

log = logging.getLogger(__name__)

# A link mesh smaller than this across (m, scaled) is refused: below the tolerances' scale,
# its pieces' bounding capsules came out of zero radius (a box mesh scaled 1e-8).
MIN_MESH_SIZE = 1e-6

# Bump when the geometry builder changes what it produces or its cache entry holds: old
# caches then miss, and so do the tables derived from them (keyed by the geometry key).
# 3: pieces contain the whole mesh surface, not only its vertices (robot/convexify.py).
# 4: entries hold each convex piece's hull faces, so a cached model loads without qhull.
GEOMETRY_VERSION = 4


class CollisionModel(NamedTuple):
    """Link collision geometry, flat. Pieces are sorted by link; link l owns pieces
    ``link_start[l]:link_start[l+1]`` of `table`, posed in the link frame by `piece_pose`."""

    table: L.ShapeTable
    piece_link: npt.NDArray[np.int32]  # (n_pieces,)
    piece_pose: npt.NDArray[np.float64]  # (n_pieces, 4, 4) T_link_piece
    link_start: npt.NDArray[np.int32]  # (n_links + 1,)


@dataclasses.dataclass(frozen=True, eq=False)
class LinkPiece:
    link: str
    shape: Shape
    pose: np.ndarray  # (4, 4) T_link_piece


def shape_volume(s: Shape) -> float:
    if isinstance(s, Box):
        return float(np.prod(s.extents))
    if isinstance(s, Cylinder):
        return math.pi * s.radius**2 * s.length
    if isinstance(s, Sphere):
        return 4.0 / 3.0 * math.pi * s.radius**3
    if isinstance(s, Convex) and s.radius == 0.0:
        return hull_volume(np.asarray(s.points))
    raise TypeError(f"no volume for {type(s).__name__}")


def _translation(t) -> np.ndarray:
    T = np.eye(4)
    T[:3, 3] = t
    return T


def _geometry_key(data: URDFData, hull_ratio: float, max_pieces: int) -> str:
    h = hashlib.sha256()
    h.update(f"v{GEOMETRY_VERSION} ratio={hull_ratio!r} pieces={max_pieces}".encode())
    h.update(data.path.read_bytes())
    for f in data.mesh_files():
        h.update(f.name.encode())
        h.update(f.read_bytes())
    return h.hexdigest()[:20]


def read_collision_mesh(data: URDFData, link: str, c) -> tuple[np.ndarray, np.ndarray]:
    """(vertices (n, 3) scaled, in the mesh frame; faces (m, 3)) of collision element `c`
    of `link`, read as stored (no vertex merging). URDFLinkError on an unreadable or empty
    file."""
    import trimesh

    try:
        m = trimesh.load(c.filename, force="mesh", process=False)
    except Exception as e:  # trimesh raises many kinds on a bad file
        raise URDFLinkError(
            f"{data.path}: link {link!r}: cannot read mesh {c.filename!r}: {e}"
        ) from e
    if len(m.faces) == 0:
        raise URDFLinkError(f"{data.path}: link {link!r}: mesh {c.filename!r} has no faces")
    v = np.asarray(m.vertices, float) * np.asarray(c.scale, float)
    f = np.asarray(m.faces, np.int64)
    problem = mesh_problem(v, f, c.scale)
    if problem:
        raise URDFLinkError(f"{data.path}: link {link!r}: mesh {c.filename!r}: {problem}")
    return v, f


def mesh_problem(v: np.ndarray, f: np.ndarray, scale=(1.0, 1.0, 1.0)) -> str | None:
    """What makes a link mesh (vertices (n, 3) scaled, faces (m, 3)) no collision geometry,
    or None: a face indexing no vertex, a vertex that is not finite, a size outside the
    working range or below `MIN_MESH_SIZE`, no triangle of positive area."""
    scale = [float(x) for x in scale]
    if f.ndim != 2 or f.shape[1] != 3 or f.min() < 0 or f.max() >= len(v):
        return f"its faces index vertices outside its {len(v)} vertices"
    bad = np.flatnonzero(~np.isfinite(v).all(axis=1))
    if bad.size:
        return f"vertex {int(bad[0])} is {v[bad[0]].tolist()} (not finite)"
    used = v[np.unique(f)]
    lo, hi = used.min(axis=0), used.max(axis=0)
    far = float(np.abs(used).max())
    if far > WORLD_LIMIT:
        return (
            f"scaled by {scale} it reaches {far:g} m, outside the working range "
            f"(+-{WORLD_LIMIT:g} m)"
        )
    size = float(np.linalg.norm(hi - lo))
    if size < MIN_MESH_SIZE:
        return (
            f"scaled by {scale} it is {size:g} m across, below {MIN_MESH_SIZE:g} m (a "
            "scale for millimetres on a mesh in metres?)"
        )
    a, b, c = v[f[:, 0]], v[f[:, 1]], v[f[:, 2]]
    area = 0.5 * np.linalg.norm(np.cross(b - a, c - a), axis=1)
    if not np.any(area > DEGENERATE_AREA):
        return f"none of its {len(f)} triangles has an area (all below {DEGENERATE_AREA:g} m^2)"
    return None


def _centre(p: np.ndarray) -> np.ndarray:
    return 0.5 * (p.min(axis=0) + p.max(axis=0))


def _primitive(c) -> Shape:
    if c.kind == "box":
        return Box(c.size)
    if c.kind == "cylinder":
        return Cylinder(*c.size)
    return Sphere(c.size[0])


def _link_pieces(data: URDFData, lk, hull_ratio: float, max_pieces: int, memo: dict, note):
    """(pieces of link `lk`, its report row). `memo`: {(mesh file, scale): MeshPieces} of
    the meshes this build has decomposed (a robot often uses one mesh several times: the
    SO-101's servo six times); `note`(message): progress within the link."""
    pieces: list[LinkPiece] = []
    mesh_vol = model_vol = vertex_vol = 0.0
    has_mesh = False
    for c in lk.collisions:
        if c.kind != "mesh":
            s = _primitive(c)
            pieces.append(LinkPiece(lk.name, s, c.origin.copy()))
            vol = shape_volume(s)
            mesh_vol, model_vol, vertex_vol = mesh_vol + vol, model_vol + vol, vertex_vol + vol
            continue
        has_mesh = True
        key = (str(c.filename), tuple(float(x) for x in c.scale))
        got = memo.get(key)
        where = f"{data.path}: link {lk.name!r}: mesh {c.filename!r}"
        try:  # a mesh that passed `mesh_problem` and still fails is named, not a traceback
            if got is None:
                v, f = read_collision_mesh(data, lk.name, c)
                name = Path(c.filename).name
                got = memo[key] = decompose_mesh(
                    v, f, hull_ratio, max_pieces, note=lambda m, n=name: note(f"{n}: {m}")
                )
            shapes = [(Convex(p - _centre(p)), _centre(p)) for p in got.pieces]
        except (RuntimeError, ValueError, IndexError) as e:
            if isinstance(e, URDFLinkError):
                raise
            raise URDFLinkError(f"{where}: no convex pieces: {type(e).__name__}: {e}") from e
        mesh_vol += got.mesh_volume
        vertex_vol += pieces_volume(got.vertex_pieces)
        for s, ctr in shapes:
            pieces.append(LinkPiece(lk.name, s, c.origin @ _translation(ctr)))
            model_vol += shape_volume(s)
    row = {
        "mesh_volume": mesh_vol,
        "model_volume": model_vol,
        "has_mesh": has_mesh,
        "vertex_model_volume": vertex_vol,
    }
    return pieces, row


def build_link_geometry(
    data: URDFData,
    hull_ratio: float = 1.1,
    max_pieces: int = 12,
    progress=None,
    label: str | None = None,
):
    """(pieces: list[LinkPiece], report: {link: {"mesh_volume", "model_volume", "has_mesh",
    "vertex_model_volume"}}). ``vertex_model_volume`` is what the model would be with the
    vertex repair alone (robot/convexify.py): ``model_volume`` minus it is what containing
    the whole surface added. `progress`: see robot/progress.py (one step per link, and
    notes within a link: each V-HACD run and every `convexify.CHUNK` triangles scanned);
    `label` names the robot in progress messages (default: the URDF's name). A mesh file
    used several times (at one scale) is decomposed once."""
    pieces: list[LinkPiece] = []
    report: dict[str, dict] = {}
    links = [lk for lk in data.links.values() if lk.collisions]
    t0 = time.perf_counter()
    desc = f"link models of {(label or data.name)!r}"
    memo: dict = {}
    with Progress(progress, len(links), desc, log) as prog:
        for lk in links:
            kinds = [c.kind for c in lk.collisions]
            n_mesh = kinds.count("mesh")
            what = f"{n_mesh} mesh(es) to convexify" if n_mesh else "primitives"
            prog.step(f"link {lk.name!r}: {what}")
            got, report[lk.name] = _link_pieces(
                data, lk, hull_ratio, max_pieces, memo,
                lambda m, n=lk.name: prog.note(f"link {n!r}: {m}"),
            )  # fmt: skip
            pieces.extend(got)
        prog.summary = (
            f"{len(links)} links, {len(pieces)} pieces in {time.perf_counter() - t0:.1f} s"
        )
    return pieces, report


_KIND_OF = {Sphere: L.SPHERE, Box: L.BOX, Cylinder: L.CYLINDER, Convex: L.CONVEX}


_REPORT_COLUMNS = ("mesh_volume", "model_volume", "has_mesh", "vertex_model_volume")


def _geometry_arrays(pieces, report) -> dict:
    """The cache entry's arrays of `pieces` and `report`."""
    n = len(pieces)
    params = np.zeros((n, 3))
    kinds = np.zeros(n, np.int32)
    pstart = np.zeros(n + 1, np.int64)
    pts = []
    for i, pc in enumerate(pieces):
        s = pc.shape
        kinds[i] = _KIND_OF[type(s)]
        if isinstance(s, Box):
            params[i] = s.extents
        elif isinstance(s, (Cylinder,)):
            params[i, :2] = (s.radius, s.length)
        elif isinstance(s, Sphere):
            params[i, 0] = s.radius
        else:
            pts.append(np.asarray(s.points))
        pstart[i + 1] = pstart[i] + (len(s.points) if isinstance(s, Convex) else 0)
    rl = sorted(report)
    return {
        "link": np.array([pc.link for pc in pieces]),
        "kind": kinds,
        "params": params,
        "pose": np.array([pc.pose for pc in pieces]).reshape(n, 4, 4),
        "pstart": pstart,
        "points": np.concatenate(pts) if pts else np.zeros((0, 3)),
        "report_link": np.array(rl),
        "report": np.array(
            [[float(report[k][c]) for c in _REPORT_COLUMNS] for k in rl], np.float64
        ).reshape(-1, len(_REPORT_COLUMNS)),
        **faces_arrays([getattr(pc.shape, "hull_faces", None) for pc in pieces]),
    }


def _geometry_from(z: dict, data: URDFData):
    """(pieces, report) of a cache entry's arrays, every piece built (and so checked) as a
    shape again, on the URDF's links, each convex piece's hull rebuilt from its faces once
    they are proved to be its hull; ValueError when they disagree with each other."""
    n = len(z["link"])
    if not (len(z["kind"]) == len(z["params"]) == len(z["pose"]) == n == len(z["pstart"]) - 1):
        raise ValueError("its piece arrays have different lengths")
    ps = z["pstart"]
    if ps[0] != 0 or np.any(np.diff(ps) < 0) or ps[-1] != len(z["points"]):
        raise ValueError("its piece point ranges do not cover its points")
    if len(z["report_link"]) != len(z["report"]):
        raise ValueError("its report has different lengths")
    faces = faces_from_arrays(z, n)
    links = {lk.name for lk in data.links.values() if lk.collisions}
    pieces = []
    for i, link in enumerate(z["link"]):
        if str(link) not in links:
            raise ValueError(f"piece {i} is on link {str(link)!r}, which has no geometry")
        k, p = int(z["kind"][i]), z["params"][i]
        if k == L.BOX:
            s = Box(p)
        elif k == L.CYLINDER:
            s = Cylinder(p[0], p[1])
        elif k == L.SPHERE:
            s = Sphere(p[0])
        elif k == L.CONVEX:
            s = Convex.with_hull_faces(z["points"][ps[i] : ps[i + 1]], 0.0, faces[i])
        else:
            raise ValueError(f"piece {i} has shape kind {k}")
        if faces[i] is not None and k != L.CONVEX:
            raise ValueError(f"piece {i} has hull faces but is no convex piece")
        pieces.append(LinkPiece(str(link), s, as_pose(z["pose"][i], f"piece {i} pose")))
    report = {
        str(n): {c: float(x) for c, x in zip(_REPORT_COLUMNS, r, strict=True)}
        for n, r in zip(z["report_link"], z["report"], strict=True)
    }
    for row in report.values():
        row["has_mesh"] = bool(row["has_mesh"])
    return pieces, report


def load_link_geometry(
    data: URDFData,
    cache_dir=None,
    hull_ratio: float = 1.1,
    max_pieces: int = 12,
    progress=None,
    label: str | None = None,
):
    """`build_link_geometry` through the on-disk cache. Returns (pieces, report, key).

    `cache_dir`: None for the per-user cache, a directory, or False for none
    (robot/cache.py). A cached model loads quietly; a cache entry that is damaged, of
    another build or not consistent is rebuilt after one warning (robot/cache.py
    `read_entry`), and an unwritable directory only logs a warning.
    """
    key = _geometry_key(data, hull_ratio, max_pieces)
    d = resolve_cache_dir(cache_dir)
    f = None if d is None else d / f"geometry-{key}.npz"
    got: list = []
    if read_entry(f, key, "link models", lambda z: got.append(_geometry_from(z, data))):
        log.debug("link models of %r from %s", label or data.name, f)
        return (*got[0], key)
    pieces, report = build_link_geometry(data, hull_ratio, max_pieces, progress, label)
    if f is not None and write_entry(f, key, _geometry_arrays(pieces, report), compressed=True):
        log.info("link models of %r cached in %s", label or data.name, f)
    return pieces, report, key


def collision_model(pieces: list[LinkPiece], n_links: int, link_index: dict) -> CollisionModel:
    """The flat form of `pieces` (sorted by link, URDF order within a link)."""
    piece_link = np.array([link_index[p.link] for p in pieces], np.int32)
    link_start = np.zeros(n_links + 1, np.int32)
    np.cumsum(np.bincount(piece_link, minlength=n_links), out=link_start[1:])
    return CollisionModel(
        shape_table([p.shape for p in pieces]),
        piece_link,
        np.ascontiguousarray(np.array([p.pose for p in pieces]).reshape(-1, 4, 4)),
        link_start,
    )


def link_radii(model: CollisionModel, n_links: int) -> npt.NDArray[np.float64]:
    """(n_links,) radius about each link's origin of a ball holding its geometry (0 for a
    link without any)."""
    rad = np.zeros(n_links)
    ext = np.linalg.norm(model.piece_pose[:, :3, 3], axis=1) + model.table.brad
    np.maximum.at(rad, model.piece_link, ext)
    return rad


def link_spheres(model: CollisionModel, n_links: int):
    """((n_links, 3) centres in the link frame, (n_links,) radii): a ball holding each link's
    geometry, about the middle of its box (the motion bounds' distances to joint axes are
    measured from it; radius 0 for a link without geometry). A piece counts by its hull's
    vertices plus its sweep radius, or by the corners of its local box."""
    tab = model.table
    centre = np.zeros((n_links, 3))
    radius = np.zeros(n_links)
    for li in range(n_links):
        pts, sweep = [], []
        for p in range(model.link_start[li], model.link_start[li + 1]):
            v = tab.verts[tab.vstart[p] : tab.vstart[p + 1]]
            r = float(tab.params[p, 0])
            if len(v) == 0:
                lo, hi = tab.aabb[p, :3], tab.aabb[p, 3:]
                v = np.array([[x, y, z] for x in (lo[0], hi[0]) for y in (lo[1], hi[1])
                              for z in (lo[2], hi[2])])  # fmt: skip
                r = 0.0
            T = model.piece_pose[p]
            pts.append(v @ T[:3, :3].T + T[:3, 3])
            sweep.append(np.full(len(v), r))
        if not pts:
            continue
        P, w = np.concatenate(pts), np.concatenate(sweep)
        c = 0.5 * (P.min(axis=0) + P.max(axis=0))
        centre[li] = c
        radius[li] = float((np.linalg.norm(P - c, axis=1) + w).max())
    return centre, radius
