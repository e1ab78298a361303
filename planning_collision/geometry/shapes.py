"""Shapes: frozen dataclasses, validated on construction (conventions.py).

Sizes are full sizes (FCL, MoveIt, trimesh): ``Box(extents)`` are side lengths;
``Cylinder``, ``Cone`` and ``Capsule`` lie along local z, centred at the origin, and
``length`` is the full length (for a capsule, between the two sphere centres); a cone's
apex is at ``+length/2``. A ``Convex`` is the sphere-swept hull ``conv(points) ⊕ ball(r)``.
A ``Halfspace`` is the solid ``{x : normal . x <= offset}`` (FCL's convention). A ``Mesh`` is
a surface (FCL semantics: a shape wholly inside a closed mesh does not touch it).
"""

from __future__ import annotations

import dataclasses
import functools
import math

import numpy as np
import numpy.typing as npt

from ..kernels.base import layout as L
from ..kernels.base.tolerances import DEGENERATE_AREA, MIN_DIRECTION_NORM
from .hull import HullFaces, convex_hull, hull_from_faces, hull_with_faces
from .pack import TableRow, pack_single, point_less_row, shape_table
from .validate import (
    coordinate_scalar,
    finite_array,
    finite_scalar,
    length_array,
    length_scalar,
)

__all__ = [
    "Shape",
    "ConvexShape",
    "Sphere",
    "Box",
    "Capsule",
    "Cylinder",
    "Cone",
    "Convex",
    "Halfspace",
    "Mesh",
]


def _frozen_array(a: np.ndarray) -> np.ndarray:
    a = np.array(a, dtype=a.dtype, copy=True, order="C")
    a.setflags(write=False)
    return a


class Shape:
    """Base of every shape."""

    __slots__ = ()

    def __setstate__(self, state: dict) -> None:
        # unpickled (in a worker process): numpy unpickles arrays writeable; read-only again
        for k, v in state.items():
            object.__setattr__(self, k, _frozen_array(v) if isinstance(v, np.ndarray) else v)


class ConvexShape(Shape):
    """Base of the shapes GJK handles directly."""

    __slots__ = ()

    def table_row(self) -> TableRow:
        """This shape as one row of a kernel `ShapeTable` (kernels/base/layout.py says what each
        kind's parameters mean)."""
        raise NotImplementedError

    @functools.cached_property
    def flat(self) -> tuple:
        """This shape alone as a one-shape `ShapeTable` packed into two arrays
        ``(ints, floats)`` (see `geometry.pack.pack_single`); cached, shapes are
        immutable. The public queries pass it straight to the compiled call, where numba's
        dispatch cost grows with the number of array arguments."""
        return pack_single(shape_table([self]))


def _params(**at) -> np.ndarray:
    """A kernel parameter row: ``at`` maps an index (as "i<k>") to a value or sequence."""
    p = np.zeros(L.N_PARAMS)
    for k, v in at.items():
        i = int(k[1:])
        v = np.atleast_1d(np.asarray(v, np.float64))
        p[i : i + v.size] = v
    return p


@dataclasses.dataclass(frozen=True)
class Sphere(ConvexShape):
    radius: float

    def __post_init__(self):
        object.__setattr__(self, "radius", length_scalar("Sphere.radius", self.radius))

    def table_row(self) -> TableRow:
        r = self.radius
        return point_less_row(L.SPHERE, _params(i0=r), [-r, -r, -r, r, r, r], r)


@dataclasses.dataclass(frozen=True, eq=False)
class Box(ConvexShape):
    """Axis-aligned in its frame, centred; ``extents`` = full side lengths (x, y, z)."""

    extents: npt.NDArray[np.float64]

    def __post_init__(self):
        e = length_array("Box.extents", self.extents, (3,))
        if np.any(e <= 0.0):
            raise ValueError(f"Box.extents must be > 0, got {e.tolist()}")
        object.__setattr__(self, "extents", _frozen_array(e))

    def table_row(self) -> TableRow:
        he = 0.5 * self.extents
        x, y, z = (float(v) for v in he)  # summed in this order, as kernels/scene/one_primitive.py
        return point_less_row(
            L.BOX, _params(i1=he), np.concatenate([-he, he]), math.sqrt(x * x + y * y + z * z)
        )

    def __eq__(self, other):
        return type(other) is Box and bool(np.array_equal(self.extents, other.extents))

    def __hash__(self):
        return hash((Box, self.extents.tobytes()))


@dataclasses.dataclass(frozen=True)
class Capsule(ConvexShape):
    """Segment along z from -length/2 to +length/2, swept by a ball of ``radius``."""

    radius: float
    length: float

    def __post_init__(self):
        object.__setattr__(self, "radius", length_scalar("Capsule.radius", self.radius))
        object.__setattr__(
            self, "length", length_scalar("Capsule.length", self.length, allow_zero=True)
        )

    def table_row(self) -> TableRow:
        r, h = self.radius, 0.5 * self.length
        return point_less_row(L.CAPSULE, _params(i0=r, i1=h), [-r, -r, -h - r, r, r, h + r], h + r)


@dataclasses.dataclass(frozen=True)
class Cylinder(ConvexShape):
    radius: float
    length: float

    def __post_init__(self):
        object.__setattr__(self, "radius", length_scalar("Cylinder.radius", self.radius))
        object.__setattr__(self, "length", length_scalar("Cylinder.length", self.length))

    def table_row(self) -> TableRow:
        return _axial_row(L.CYLINDER, self.radius, 0.5 * self.length)


@dataclasses.dataclass(frozen=True)
class Cone(ConvexShape):
    """Base disc of ``radius`` at z = -length/2, apex at z = +length/2."""

    radius: float
    length: float

    def __post_init__(self):
        object.__setattr__(self, "radius", length_scalar("Cone.radius", self.radius))
        object.__setattr__(self, "length", length_scalar("Cone.length", self.length))

    def table_row(self) -> TableRow:
        return _axial_row(L.CONE, self.radius, 0.5 * self.length)


def _axial_row(kind: int, r: float, h: float) -> TableRow:
    """Cylinder and cone: radius r, half length h along z."""
    return point_less_row(kind, _params(i1=(r, h)), [-r, -r, -h, r, r, h], float(np.hypot(r, h)))


@dataclasses.dataclass(frozen=True, eq=False)
class Convex(ConvexShape):
    """Sphere-swept convex hull of ``points`` (n >= 1), ``conv(points) ⊕ ball(radius)``.

    Flat, needle-like, single-point and duplicate-point sets are all valid: the hull is
    computed once (``hull_vertices``), and degenerate sets keep their distinct points.
    """

    points: npt.NDArray[np.float64]
    radius: float = 0.0

    def __post_init__(self):
        p = length_array("Convex.points", self.points, (-1, 3))
        if p.shape[0] < 1:
            raise ValueError("Convex.points must hold at least one point, got 0")
        object.__setattr__(self, "points", _frozen_array(p))
        object.__setattr__(
            self, "radius", length_scalar("Convex.radius", self.radius, allow_zero=True)
        )

    @classmethod
    def with_hull_faces(cls, points, radius: float = 0.0, faces: HullFaces | None = None):
        """``Convex(points, radius)`` whose hull is rebuilt from `faces` (its `hull_faces`,
        as a cache entry stores them) without qhull; ValueError when they are not the
        points' hull (geometry.hull `hull_from_faces`). Without faces, a plain Convex."""
        s = cls(points, radius)
        if faces is not None:
            s.__dict__["hull"], used = hull_from_faces(s.points, faces)
            if used is not None:
                s.__dict__["hull_faces"] = used
        return s

    @functools.cached_property
    def hull(self):
        """`HullData` (vertices and CSR adjacency) of the points; see geometry.hull."""
        return convex_hull(self.points)

    @functools.cached_property
    def hull_faces(self) -> HullFaces | None:
        """What `with_hull_faces` rebuilds `hull` from without qhull (None when it needs
        none or cannot: geometry.hull `hull_with_faces`)."""
        hull, faces = hull_with_faces(self.points)
        self.__dict__.setdefault("hull", hull)
        return faces

    def table_row(self) -> TableRow:
        v, r = self.hull.vertices, self.radius
        aabb = np.concatenate([v.min(axis=0) - r, v.max(axis=0) + r])
        brad = float(np.sqrt((v * v).sum(axis=1)).max()) + r
        return TableRow(L.CONVEX, _params(i0=r), v, self.hull.adjstart, self.hull.adj, aabb, brad)

    def __eq__(self, other):
        return (
            type(other) is Convex
            and self.radius == other.radius
            and bool(np.array_equal(self.points, other.points))
        )

    def __hash__(self):
        return hash((Convex, self.radius, self.points.tobytes()))


@dataclasses.dataclass(frozen=True, eq=False)
class Halfspace(ConvexShape):
    """The solid ``{x : normal . x <= offset}`` in its frame; ``normal`` is normalised."""

    normal: npt.NDArray[np.float64]
    offset: float = 0.0

    def __post_init__(self):
        n = finite_array("Halfspace.normal", self.normal, (3,))
        scale = float(np.abs(n).max())  # |n| without overflow for huge components
        unit = n / scale if scale > 0.0 else n
        norm = scale * float(np.linalg.norm(unit))
        if norm < MIN_DIRECTION_NORM:
            raise ValueError(f"Halfspace.normal must be non-zero, got {n.tolist()}")
        off = finite_scalar("Halfspace.offset", self.offset)
        off = coordinate_scalar("Halfspace.offset / |normal|", off / norm)
        object.__setattr__(self, "normal", _frozen_array(unit / np.linalg.norm(unit)))
        object.__setattr__(self, "offset", off)

    def table_row(self) -> TableRow:
        inf = np.inf
        params = _params(i1=self.normal, i4=self.offset)
        return point_less_row(L.HALFSPACE, params, [-inf, -inf, -inf, inf, inf, inf], inf)

    def __eq__(self, other):
        return (
            type(other) is Halfspace
            and self.offset == other.offset
            and bool(np.array_equal(self.normal, other.normal))
        )

    def __hash__(self):
        return hash((Halfspace, self.offset, self.normal.tobytes()))


@dataclasses.dataclass(frozen=True, eq=False)
class Mesh(Shape):
    """A triangle surface: ``vertices (n, 3)`` metres, ``faces (m, 3)`` vertex indices."""

    vertices: npt.NDArray[np.float64]
    faces: npt.NDArray[np.int32]

    def __post_init__(self):
        v = length_array("Mesh.vertices", self.vertices, (-1, 3))
        try:
            f_raw = np.asarray(self.faces)
        except (TypeError, ValueError):
            raise ValueError(
                f"Mesh.faces must be an integer array of shape (m, 3), got {self.faces!r}"
            ) from None
        if f_raw.ndim != 2 or f_raw.shape[1] != 3:
            raise ValueError(f"Mesh.faces must have shape (m, 3), got {f_raw.shape}")
        if f_raw.shape[0] == 0:
            raise ValueError("Mesh.faces is empty: a mesh needs at least one triangle")
        if f_raw.dtype.kind == "O":  # Python ints beyond int64 (a file's 10^20), or worse
            try:
                f_raw = np.asarray(f_raw.tolist(), dtype=np.float64)
            except (TypeError, ValueError, OverflowError):
                what = f"integer vertex indices, got {self.faces!r}"
                raise ValueError(f"Mesh.faces must hold {what}") from None
        if f_raw.dtype.kind not in "iuf" or (
            f_raw.dtype.kind == "f"
            and not (np.all(np.isfinite(f_raw)) and np.all(f_raw == np.round(f_raw)))
        ):
            raise ValueError(
                f"Mesh.faces must hold integer vertex indices, got dtype {f_raw.dtype}"
            )
        # the range before the conversion: an index beyond int64 would wrap around
        bad = np.flatnonzero((f_raw < 0).any(axis=1) | (f_raw >= v.shape[0]).any(axis=1))
        if bad.size:
            raise ValueError(
                f"Mesh.faces[{bad[0]}] = {f_raw[bad[0]].tolist()} indexes outside the "
                f"{v.shape[0]} vertices"
            )
        f = np.ascontiguousarray(f_raw, dtype=np.int64)
        tri = v[f]
        area2 = np.linalg.norm(np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0]), axis=1)
        bad = np.flatnonzero(area2 < 2.0 * DEGENERATE_AREA)
        if bad.size:
            raise ValueError(
                f"Mesh.faces[{bad[0]}] = {f[bad[0]].tolist()} is degenerate (area "
                f"{area2[bad[0]] / 2:.3g} m^2; {bad.size} such faces); clean the mesh, e.g. "
                f"Mesh.from_trimesh(mesh, drop_degenerate=True)"
            )
        object.__setattr__(self, "vertices", _frozen_array(v))
        object.__setattr__(self, "faces", _frozen_array(f.astype(np.int32)))

    @classmethod
    def from_trimesh(cls, mesh, drop_degenerate: bool = True) -> Mesh:
        """From a `trimesh.Trimesh`; with `drop_degenerate`, zero-area faces are removed."""
        v = np.asarray(mesh.vertices, dtype=np.float64)
        f = np.asarray(mesh.faces, dtype=np.int64)
        if drop_degenerate and f.size:
            tri = v[f]
            area2 = np.linalg.norm(np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0]), axis=1)
            f = f[area2 >= 2.0 * DEGENERATE_AREA]
        return cls(v, f)

    def __eq__(self, other):
        return (
            type(other) is Mesh
            and bool(np.array_equal(self.vertices, other.vertices))
            and bool(np.array_equal(self.faces, other.faces))
        )

    def __hash__(self):
        return hash((Mesh, self.vertices.tobytes(), self.faces.tobytes()))
