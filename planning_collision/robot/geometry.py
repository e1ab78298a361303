"""Link collision geometry: URDF collision elements -> convex pieces, and their cache.

URDF boxes, cylinders and spheres stay primitives. A mesh is split into connected
components; a component whose convex hull is within ``hull_ratio`` of its volume becomes its
hull, any other is decomposed (V-HACD through trimesh/vhacdx) and then *repaired*: every
mesh vertex outside all pieces is added to the piece it violates least, so the model
contains every mesh vertex. ``volume_report`` gives mesh and model volumes per link.

The result is cached as ``geometry-<hash>.npz``, keyed by the URDF and mesh file contents
and the build settings (`load_link_geometry`).
"""

from __future__ import annotations

import dataclasses
import hashlib
import logging
import math
from pathlib import Path
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from ..geometry import Box, Convex, Cylinder, Shape, Sphere, shape_table
from ..io.urdf import URDFData, URDFLinkError
from ..kernels import layout as L
from ..kernels.tolerances import CONTAIN_TOL

__all__ = [
    "GEOMETRY_VERSION",
    "CollisionModel",
    "LinkPiece",
    "build_link_geometry",
    "collision_model",
    "convexify_mesh",
    "link_radii",
    "load_link_geometry",
    "shape_volume",
]

log = logging.getLogger(__name__)

# Bump when the geometry builder changes what it produces: old caches then miss.
GEOMETRY_VERSION = 2
# A mesh component whose hull is below this fraction of the mesh's volume is taken as its hull.
SMALL_COMPONENT = 0.02


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


def _hull_eq(points: np.ndarray) -> np.ndarray | None:
    """Facet planes (k, 4) with unit normals, inside where n.x + c <= 0; None if flat."""
    from scipy.spatial import ConvexHull, QhullError

    try:
        return ConvexHull(points).equations
    except QhullError:
        return None


def _violation(eq: np.ndarray | None, points: np.ndarray, verts: np.ndarray) -> np.ndarray:
    """How far each of `verts` lies outside the hull (<= 0 inside); inf for a flat hull
    unless the vertex is one of its points."""
    if eq is None:
        d = np.linalg.norm(verts[:, None, :] - points[None, :, :], axis=2).min(axis=1)
        return np.where(d <= CONTAIN_TOL, 0.0, np.inf)
    return (verts @ eq[:, :3].T + eq[:, 3]).max(axis=1)


def _hull_vertices(points: np.ndarray) -> np.ndarray:
    from scipy.spatial import ConvexHull, QhullError

    try:
        return np.ascontiguousarray(points[ConvexHull(points).vertices])
    except QhullError:
        return np.unique(points, axis=0)


def _hull_volume(points: np.ndarray) -> float:
    from scipy.spatial import ConvexHull, QhullError

    try:
        return float(ConvexHull(points).volume)
    except QhullError:
        return 0.0


def convexify_mesh(vertices, faces, hull_ratio: float = 1.1, max_pieces: int = 12):
    """Convex pieces whose union contains the mesh (vertices (n, 3), faces (m, 3)).

    Returns ``(pieces, mesh_volume)``: a list of (k, 3) point arrays (hull vertices of each
    piece, mesh frame) and the mesh's enclosed volume (|signed volume|; the hull's for an
    open mesh). Components whose hull is within `hull_ratio` of their volume are taken as
    hulls; others are decomposed by V-HACD (at most `max_pieces` pieces) and repaired so
    that every vertex of the component lies inside or on a piece.
    """
    import trimesh

    mesh = trimesh.Trimesh(np.asarray(vertices, float), np.asarray(faces, np.int64), process=True)
    watertight = bool(mesh.is_watertight)
    mesh_volume = abs(float(mesh.volume)) if watertight else _hull_volume(mesh.vertices)
    pieces = []
    for comp in mesh.split(only_watertight=False):
        v = np.asarray(comp.vertices, float)
        hv = _hull_volume(v)
        cv = abs(float(comp.volume)) if comp.is_watertight else 0.0
        # small components (screws, inverted cavity shells) are not worth decomposing:
        # their hull adds at most a few percent of the link's volume
        small = hv <= SMALL_COMPONENT * mesh_volume
        if hv == 0.0 or cv == 0.0 or small or hv <= hull_ratio * cv:
            pieces.append(_hull_vertices(v))
            continue
        try:
            parts = comp.convex_decomposition(maxConvexHulls=max_pieces)
        except ImportError as e:
            raise ImportError(
                "decomposing a non-convex link mesh needs V-HACD: pip install vhacdx"
            ) from e
        if isinstance(parts, trimesh.Trimesh):
            parts = [parts]
        cand = [
            _hull_vertices(np.asarray(p.vertices, float)) for p in parts if len(p.vertices) >= 4
        ]
        if not cand:
            pieces.append(_hull_vertices(v))
            continue
        # repair: V-HACD pieces approximate the component and may leave vertices out
        eqs = [_hull_eq(c) for c in cand]
        viol = np.stack([_violation(e, c, v) for e, c in zip(eqs, cand, strict=True)], axis=1)
        outside = viol.min(axis=1) > CONTAIN_TOL
        if outside.any():
            owner = viol[outside].argmin(axis=1)
            outv = v[outside]
            for k in np.unique(owner):
                cand[k] = _hull_vertices(np.concatenate([cand[k], outv[owner == k]]))
        pieces.extend(cand)
    return pieces, mesh_volume


def shape_volume(s: Shape) -> float:
    if isinstance(s, Box):
        return float(np.prod(s.extents))
    if isinstance(s, Cylinder):
        return math.pi * s.radius**2 * s.length
    if isinstance(s, Sphere):
        return 4.0 / 3.0 * math.pi * s.radius**3
    if isinstance(s, Convex) and s.radius == 0.0:
        return _hull_volume(np.asarray(s.points))
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


def build_link_geometry(data: URDFData, hull_ratio: float = 1.1, max_pieces: int = 12):
    """(pieces: list[LinkPiece], report: {link: {"mesh_volume", "model_volume"}})."""
    import trimesh

    pieces: list[LinkPiece] = []
    report: dict[str, dict] = {}
    for lk in data.links.values():
        mesh_vol = model_vol = 0.0
        has_mesh = False
        for c in lk.collisions:
            if c.kind == "box":
                s = Box(c.size)
                pieces.append(LinkPiece(lk.name, s, c.origin.copy()))
            elif c.kind == "cylinder":
                s = Cylinder(*c.size)
                pieces.append(LinkPiece(lk.name, s, c.origin.copy()))
            elif c.kind == "sphere":
                s = Sphere(c.size[0])
                pieces.append(LinkPiece(lk.name, s, c.origin.copy()))
            else:
                has_mesh = True
                try:
                    m = trimesh.load(c.filename, force="mesh", process=False)
                except Exception as e:  # trimesh raises many kinds on a bad file
                    raise URDFLinkError(
                        f"{data.path}: link {lk.name!r}: cannot read mesh {c.filename!r}: {e}"
                    ) from e
                if len(m.faces) == 0:
                    raise URDFLinkError(
                        f"{data.path}: link {lk.name!r}: mesh {c.filename!r} has no faces"
                    )
                v = np.asarray(m.vertices, float) * np.asarray(c.scale, float)
                parts, mv = convexify_mesh(v, m.faces, hull_ratio, max_pieces)
                mesh_vol += mv
                for p in parts:
                    ctr = 0.5 * (p.min(axis=0) + p.max(axis=0))
                    s = Convex(p - ctr)
                    pieces.append(LinkPiece(lk.name, s, c.origin @ _translation(ctr)))
                    model_vol += shape_volume(s)
                continue
            model_vol += shape_volume(s)
            mesh_vol += shape_volume(s)
        if lk.collisions:
            report[lk.name] = {
                "mesh_volume": mesh_vol,
                "model_volume": model_vol,
                "has_mesh": has_mesh,
            }
    return pieces, report


_KIND_OF = {Sphere: L.SPHERE, Box: L.BOX, Cylinder: L.CYLINDER, Convex: L.CONVEX}


def _save_geometry(path: Path, key: str, pieces, report) -> None:
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
    np.savez_compressed(
        path,
        key=np.array(key),
        link=np.array([pc.link for pc in pieces]),
        kind=kinds,
        params=params,
        pose=np.array([pc.pose for pc in pieces]).reshape(n, 4, 4),
        pstart=pstart,
        points=np.concatenate(pts) if pts else np.zeros((0, 3)),
        report_link=np.array(rl),
        report=np.array(
            [
                [report[k]["mesh_volume"], report[k]["model_volume"], report[k]["has_mesh"]]
                for k in rl
            ]
        ).reshape(-1, 3),
    )


def _load_geometry(path: Path, key: str):
    with np.load(path, allow_pickle=False) as z:
        if str(z["key"]) != key:
            return None
        pieces = []
        for i, link in enumerate(z["link"]):
            k = int(z["kind"][i])
            p = z["params"][i]
            if k == L.BOX:
                s = Box(p)
            elif k == L.CYLINDER:
                s = Cylinder(p[0], p[1])
            elif k == L.SPHERE:
                s = Sphere(p[0])
            else:
                s = Convex(z["points"][z["pstart"][i] : z["pstart"][i + 1]])
            pieces.append(LinkPiece(str(link), s, np.array(z["pose"][i])))
        report = {
            str(n): {
                "mesh_volume": float(r[0]),
                "model_volume": float(r[1]),
                "has_mesh": bool(r[2]),
            }
            for n, r in zip(z["report_link"], z["report"], strict=True)
        }
    return pieces, report


def load_link_geometry(
    data: URDFData, cache_dir=None, hull_ratio: float = 1.1, max_pieces: int = 12
):
    """`build_link_geometry`, through the on-disk cache in `cache_dir` when given.
    Returns (pieces, report, key)."""
    key = _geometry_key(data, hull_ratio, max_pieces)
    if cache_dir is None:
        return (*build_link_geometry(data, hull_ratio, max_pieces), key)
    cache_dir = Path(cache_dir)
    f = cache_dir / f"geometry-{key}.npz"
    if f.is_file():
        got = _load_geometry(f, key)
        if got is not None:
            return (*got, key)
    pieces, report = build_link_geometry(data, hull_ratio, max_pieces)
    try:
        cache_dir.mkdir(parents=True, exist_ok=True)
        _save_geometry(f, key, pieces, report)
    except OSError as e:
        log.warning("could not write the geometry cache %s: %s", f, e)
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
