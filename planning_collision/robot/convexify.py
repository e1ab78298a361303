"""A link mesh -> convex pieces whose union contains the whole mesh surface.

The pieces are built in three steps (`decompose_mesh`):

1. **Components.** The mesh is split into connected components. A component whose convex
   hull is within ``hull_ratio`` of its volume, is open or flat, or is small (its hull under
   `SMALL_COMPONENT` of the mesh's volume) becomes its hull, which holds all of it.
2. **Decomposition.** Any other component is decomposed by V-HACD (trimesh/vhacdx, at most
   ``max_pieces`` pieces) and *vertex-repaired*: every vertex of the component outside all
   of its pieces is added to the piece it violates least. This model holds every mesh
   vertex but not every face: a triangle whose vertices lie in different pieces can cross
   the gap between them (on the UR5's ``upper_arm_link`` by up to 2.8 mm).
3. **Surface cover.** Every mesh triangle is tiled: a triangle within ``GROW_REL`` of the
   mesh's size of one piece (see below for "within") is a tile; any other is split into four
   at its edge midpoints, again and again, down to tiles whose longest edge is under
   ``SPLIT_REL`` of the mesh's size (or `MAX_DEPTH` splits). Then every tile that is not
   inside one piece has its three vertices added to the piece it violates least, and that
   piece's hull is recomputed; this repeats until every tile is inside a piece.

Why the result is sound: a convex set contains a triangle iff it contains its three
vertices, so a tile inside one piece is covered whole; the tiles of a triangle cover it
exactly (midpoint splits); hence the whole mesh surface lies in the union of the pieces.
Pieces only ever grow (a hull of more points), so a covered tile stays covered, and one
round covers every tile in exact arithmetic (a later round only mops up qhull round-off).
"Inside" is ``n . x + c <= COVER_TOL`` for every facet plane of the piece; `COVER_TOL` is a
tenth of `CONTAIN_TOL`, so a check in another frame (a test in the link frame) has room for
the round-off of the transform. The solid's interior is not claimed: an obstacle can only
reach a link's interior through its surface, and the surface is covered.

Why tiles and not whole triangles: CAD meshes carry long sliver triangles (145 mm on the
xArm7 base) that span several pieces; growing one piece to hold such a triangle whole added
up to 84 % of a link's volume, while tiles along the gaps add a few percent. The piece count
never changes (the checker's speed depends on few pieces); pieces gain hull vertices where
they grew (``demos/dev/model_containment.py`` prints both, per link).

"How far a triangle violates a piece" is the largest ``n . x + c`` over its vertices and
the piece's facet planes (`kernels.convex.containment.triangle_piece_violation`): 0 or less when
inside, otherwise an upper bound on the outward growth that holding it takes.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ..kernels.base.tolerances import CONTAIN_TOL
from ..kernels.convex.containment import triangle_piece_violation
from .vhacd import convex_decomposition

__all__ = [
    "COVER_TOL",
    "GROW_REL",
    "MAX_DEPTH",
    "SMALL_COMPONENT",
    "SPLIT_REL",
    "MeshPieces",
    "convexify_mesh",
    "cover_surface",
    "decompose_mesh",
    "distinct_faces",
    "hull_planes",
    "hull_vertices",
    "hull_volume",
    "pieces_volume",
    "surface_tiles",
]

# A mesh component whose hull is below this fraction of the mesh's volume is taken as its hull.
SMALL_COMPONENT = 0.02
# A triangle within this fraction of the mesh's bounding-box diagonal of one piece is a tile
# (0.5 mm on a 25 cm link): the piece grows by at most about that much to hold it.
GROW_REL = 0.002
# Tiles are not split below this fraction of the diagonal (5 mm on a 25 cm link): where the
# surface itself runs outside the pieces, finer tiles add hull vertices, not safety.
SPLIT_REL = 0.02
# At most this many midpoint splits of one triangle (4^8 tiles).
MAX_DEPTH = 8
# A tile is inside a piece when no facet plane is violated by more than this (metres).
COVER_TOL = 0.1 * CONTAIN_TOL
# Rounds of growing pieces before giving up (1 in exact arithmetic; see the docstring).
_MAX_ROUNDS = 6
# Triangles per containment scan between two progress notes (a dense link's scans take
# seconds: ~0.5 s per chunk against a 1,000-vertex piece).
CHUNK = 16384


class MeshPieces(NamedTuple):
    """What `decompose_mesh` built, each step kept for reports and comparisons."""

    pieces: list  # of (k, 3) hull vertices: the final model (whole surface inside)
    vertex_pieces: list  # the model after the vertex repair only (step 2)
    mesh_volume: float  # |signed volume| when watertight, else the hull's
    n_tiles: int  # tiles the surface cover checked (>= number of faces)


def hull_vertices(points: np.ndarray) -> np.ndarray:
    """The extreme points of `points` (n, 3) (all distinct points when flat)."""
    from scipy.spatial import ConvexHull, QhullError

    try:
        return np.ascontiguousarray(points[ConvexHull(points).vertices])
    except QhullError:
        return np.unique(points, axis=0)


def hull_volume(points: np.ndarray) -> float:
    """Volume of the convex hull of `points` (n, 3); 0 when flat."""
    from scipy.spatial import ConvexHull, QhullError

    try:
        return float(ConvexHull(points).volume)
    except QhullError:
        return 0.0


def hull_planes(points: np.ndarray) -> np.ndarray:
    """(k, 4) planes ``(n, c)`` with unit normals, the hull is where ``n . x + c <= 0``.

    A flat set gets its polygon: the plane both ways plus the outward edge planes. A
    collinear set or a point gets none (k = 0): nothing is inside it but itself.
    """
    from scipy.spatial import ConvexHull, QhullError

    p = np.asarray(points, np.float64).reshape(-1, 3)
    try:
        return ConvexHull(p).equations
    except (QhullError, ValueError):
        pass
    if len(p) < 3:
        return np.zeros((0, 4))
    c = p.mean(axis=0)
    _, s, vt = np.linalg.svd(p - c, full_matrices=False)
    if s[1] <= 1e-9 * s[0]:
        return np.zeros((0, 4))
    u, v, w = vt
    uv = np.stack([(p - c) @ u, (p - c) @ v], axis=1)
    try:
        eq2 = ConvexHull(uv).equations  # (m, 3): a u + b v + d <= 0
    except QhullError:
        return np.zeros((0, 4))
    n = eq2[:, :1] * u + eq2[:, 1:2] * v  # in-plane outward normals (unit: u, v orthonormal)
    edges = np.concatenate([n, (eq2[:, 2] - n @ c)[:, None]], axis=1)
    return np.concatenate([[[*w, -w @ c], [*-w, w @ c]], edges])


def _plane_table(pieces: list) -> tuple[np.ndarray, np.ndarray]:
    eqs = [hull_planes(p) for p in pieces]
    start = np.zeros(len(eqs) + 1, np.int64)
    np.cumsum([len(e) for e in eqs], out=start[1:])
    planes = np.ascontiguousarray(np.concatenate(eqs) if eqs else np.zeros((0, 4)))
    return planes, start


def _least_violated(
    tris: np.ndarray, table, tol: float, hint=None, note=None, what: str = "tiles"
) -> tuple[np.ndarray, np.ndarray]:
    """`triangle_piece_violation` of `tris` (m, 3, 3) in chunks of `CHUNK`, `note`(message)
    called after each chunk but the last (a progress report inside a link's build);
    `hint` (m,) the piece to try first per triangle (-1: the previous triangle's)."""
    m = len(tris)
    tris = np.ascontiguousarray(tris, np.float64)
    hint = np.full(m, -1, np.int64) if hint is None else np.ascontiguousarray(hint, np.int64)
    best = np.empty(m)
    arg = np.empty(m, np.int64)
    for s in range(0, m, CHUNK):
        e = min(m, s + CHUNK)
        triangle_piece_violation(tris[s:e], table[0], table[1], tol, hint[s:e], best[s:e], arg[s:e])
        if note is not None and e < m:
            note(f"{what}: {e:,} of {m:,} scanned")
    return best, arg


def _split4(t: np.ndarray) -> np.ndarray:
    """(m, 3, 3) triangles -> (4m, 3, 3): the four midpoint children of each."""
    a, b, c = t[:, 0], t[:, 1], t[:, 2]
    ab, bc, ca = (a + b) / 2, (b + c) / 2, (c + a) / 2
    kids = [(a, ab, ca), (ab, b, bc), (ca, bc, c), (ab, bc, ca)]
    return np.concatenate([np.stack(k, axis=1) for k in kids])


def _tiles(pieces, tris, grow_tol, split_len, max_depth, note):
    """`surface_tiles` and, per tile, the piece it was found within `grow_tol` of (else
    the least violated one, -1 when none)."""
    table = _plane_table(pieces)
    out, found = [], []
    cur = np.ascontiguousarray(tris, np.float64).reshape(-1, 3, 3)
    hint = np.full(len(cur), -1, np.int64)
    for depth in range(max_depth + 1):
        what = "surface tiles" + (f" (split {depth} times)" if depth else "")
        best, arg = _least_violated(cur, table, grow_tol, hint, note, what)
        edge = np.linalg.norm(cur - cur[:, [1, 2, 0]], axis=2).max(axis=1)
        tile = (best <= grow_tol) | (edge <= split_len) | (depth == max_depth)
        out.append(cur[tile])
        found.append(arg[tile])
        cur = _split4(cur[~tile])
        hint = np.tile(arg[~tile], 4)  # a child starts where its parent was nearest
        if not len(cur):
            break
        if note is not None:
            note(f"{what}: {int(tile.sum()):,} tiles, {len(cur):,} more to scan")
    return np.concatenate(out), np.concatenate(found)


def surface_tiles(
    pieces: list,
    tris: np.ndarray,
    grow_tol: float,
    split_len: float,
    max_depth: int = MAX_DEPTH,
    note=None,
) -> np.ndarray:
    """(q, 3, 3) tiles of the triangles `tris` (m, 3, 3): each triangle within `grow_tol` of
    one of `pieces`, with its longest edge at most `split_len`, or split `max_depth` times
    is a tile; any other is replaced by its four midpoint children. `note`(message): told
    how the scan goes, every `CHUNK` triangles (a build's progress)."""
    return _tiles(pieces, tris, grow_tol, split_len, max_depth, note)[0]


def cover_surface(pieces: list, tiles: np.ndarray, hint=None, note=None) -> list:
    """`pieces` grown until every tile (q, 3, 3) lies inside one of them: each tile outside
    all pieces adds its vertices to the piece it violates least. A round scans only the
    tiles the last one left outside: pieces only grow, so a tile inside stays inside (the
    hull of more points holds the old hull exactly; qhull's round-off, ~1e-16 m, is far
    below the margin between `COVER_TOL` and `CONTAIN_TOL`). `hint` (q,): the piece to
    try first per tile; `note` as in `surface_tiles`. Raises RuntimeError if round-off
    keeps a tile out after `_MAX_ROUNDS` rounds (not seen in practice)."""
    pieces = list(pieces)
    check = np.arange(len(tiles))  # the tiles not yet found inside a piece
    hint = np.full(len(tiles), -1, np.int64) if hint is None else np.array(hint, np.int64)
    for r in range(_MAX_ROUNDS):
        what = f"surface cover, round {r + 1}"
        best, arg = _least_violated(
            tiles[check], _plane_table(pieces), COVER_TOL, hint[check], note, what
        )
        out = best > COVER_TOL
        if not out.any():
            return pieces
        arg = np.where(arg < 0, 0, arg)  # no piece with planes at all: grow the first
        grow = tiles[check[out]]
        for k in np.unique(arg[out]):
            add = grow[arg[out] == k].reshape(-1, 3)
            pieces[k] = hull_vertices(np.concatenate([pieces[k], add]))
        check = check[out]
        hint[check] = arg[out]  # where it went: the piece to try first next round
        if note is not None:
            note(f"{what}: {len(check):,} tiles grew {len(np.unique(arg[out]))} pieces")
    raise RuntimeError(
        f"surface cover: {int(out.sum())} tiles still outside every piece after "
        f"{_MAX_ROUNDS} rounds (worst {float(best.max()):.3g} m)"
    )


def _violation(points: np.ndarray, piece: np.ndarray) -> np.ndarray:
    """How far each of `points` lies outside the hull of `piece` (<= 0 inside); inf for a
    flat piece unless the point is one of its points."""
    from scipy.spatial import ConvexHull, QhullError

    try:
        eq = ConvexHull(piece).equations
    except QhullError:
        d = np.linalg.norm(points[:, None, :] - piece[None, :, :], axis=2).min(axis=1)
        return np.where(d <= CONTAIN_TOL, 0.0, np.inf)
    return (points @ eq[:, :3].T + eq[:, 3]).max(axis=1)


def _cover_vertices(cand: list, v: np.ndarray) -> list:
    """Step 2: each vertex of `v` outside all `cand` pieces joins the least violated one."""
    viol = np.stack([_violation(v, c) for c in cand], axis=1)
    outside = viol.min(axis=1) > CONTAIN_TOL
    if outside.any():
        owner = viol[outside].argmin(axis=1)
        outv = v[outside]
        for k in np.unique(owner):
            cand[k] = hull_vertices(np.concatenate([cand[k], outv[owner == k]]))
    return cand


def _volume(mesh) -> float:
    """|volume| of a closed trimesh. trimesh computes it with the centre of mass, which it
    divides by the volume: a closed shell enclosing none (a flat, doubled-up component, as in
    the UR10's meshes) made numpy warn "invalid value encountered in divide". Only the volume
    is read here, so that one warning is silenced here, and only here."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return abs(float(mesh.volume))


def _component_pieces(
    comp, mesh_volume: float, hull_ratio: float, max_pieces: int, note=None
) -> list:
    """Steps 1 and 2 for one connected component (a trimesh.Trimesh); `note`(message) is
    told before V-HACD runs."""
    v = np.asarray(comp.vertices, float)
    hv = hull_volume(v)
    cv = _volume(comp) if comp.is_watertight else 0.0
    # small components (screws, inverted cavity shells) are not worth decomposing:
    # their hull adds at most a few percent of the link's volume
    small = hv <= SMALL_COMPONENT * mesh_volume
    if hv == 0.0 or cv == 0.0 or small or hv <= hull_ratio * cv:
        return [hull_vertices(v)]
    if note is not None:
        note(f"V-HACD of {len(comp.faces):,} triangles (at most {max_pieces} pieces)")
    try:
        parts = convex_decomposition(comp, max_pieces)
    except ImportError as e:
        raise ImportError(
            "decomposing a non-convex link mesh needs V-HACD: pip install vhacdx"
        ) from e
    cand = [hull_vertices(np.asarray(p.vertices, float)) for p in parts if len(p.vertices) >= 4]
    if not cand:
        return [hull_vertices(v)]
    return _cover_vertices(cand, v)


def distinct_faces(v: np.ndarray, f: np.ndarray) -> np.ndarray:
    """The faces f (m, 3) without repeats: a triangle of the same three points (however its
    vertices are indexed or ordered) is kept once, the first time, in order. A mesh of one
    triangle repeated 64k times was 64k components, so 64k pieces in 91 s."""
    if len(f) < 2:
        return f
    _, point = np.unique(v[f].reshape(-1, 3), axis=0, return_inverse=True)
    key = np.sort(point.reshape(-1, 3), axis=1)
    _, first = np.unique(key, axis=0, return_index=True)
    return f if len(first) == len(f) else f[np.sort(first)]


def decompose_mesh(
    vertices,
    faces,
    hull_ratio: float = 1.1,
    max_pieces: int = 12,
    cover: bool = True,
    note=None,
) -> MeshPieces:
    """Convex pieces holding the mesh (vertices (n, 3), faces (m, 3) int), as the module
    docstring says; ``cover=False`` stops after the vertex repair (then ``pieces`` is
    ``vertex_pieces``). `note`: None or a callable(message) told where the build is, before
    each V-HACD run and every `CHUNK` triangles of the containment scans (robot/geometry.py
    turns it into progress within a link)."""
    import trimesh

    note = note if note is not None else (lambda message: None)
    v_in = np.asarray(vertices, np.float64).reshape(-1, 3)
    f_in = distinct_faces(v_in, np.asarray(faces, np.int64).reshape(-1, 3))
    mesh = trimesh.Trimesh(v_in, f_in, process=True)
    mesh_volume = _volume(mesh) if mesh.is_watertight else hull_volume(mesh.vertices)
    pieces = []
    comps = mesh.split(only_watertight=False)
    for i, comp in enumerate(comps):
        where = f"component {i + 1} of {len(comps)}: " if len(comps) > 1 else ""
        pieces.extend(
            _component_pieces(
                comp, mesh_volume, hull_ratio, max_pieces, lambda m, w=where: note(w + m)
            )
        )
    vertex_pieces = list(pieces)
    if not cover or not len(f_in):
        return MeshPieces(vertex_pieces, vertex_pieces, mesh_volume, len(f_in))
    size = float(np.linalg.norm(v_in.max(axis=0) - v_in.min(axis=0)))
    note(f"surface tiles of {len(f_in):,} triangles")
    tiles, found = _tiles(pieces, v_in[f_in], GROW_REL * size, SPLIT_REL * size, MAX_DEPTH, note)
    note(f"surface cover of {len(tiles):,} tiles")
    pieces = cover_surface(pieces, tiles, found, note)
    return MeshPieces(pieces, vertex_pieces, mesh_volume, len(tiles))


def convexify_mesh(vertices, faces, hull_ratio: float = 1.1, max_pieces: int = 12):
    """Convex pieces whose union contains the whole mesh surface (see the module docstring).

    vertices (n, 3), faces (m, 3). Returns ``(pieces, mesh_volume)``: a list of (k, 3) point
    arrays (hull vertices of each piece, mesh frame) and the mesh's enclosed volume
    (|signed volume|; the hull's for an open mesh).
    """
    got = decompose_mesh(vertices, faces, hull_ratio, max_pieces)
    return got.pieces, got.mesh_volume


def pieces_volume(pieces: list) -> float:
    """Sum of the pieces' hull volumes (overlaps counted twice)."""
    return math.fsum(hull_volume(p) for p in pieces)
