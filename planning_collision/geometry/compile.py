"""Python shapes -> the flat `ShapeTable` kernels read (kernels/layout.py)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..kernels import layout as L
from .shapes import Box, Capsule, Cone, Convex, Cylinder, Halfspace, Shape, Sphere

_INF = np.inf


def _params_and_points(s: Shape):
    """(kind, params (8,), points (k,3), adjstart (k+1,), adj, local aabb (6,), brad)."""
    p = np.zeros(L.N_PARAMS)
    empty = np.zeros((0, 3)), np.zeros(1, np.int32), np.zeros(0, np.int32)
    if isinstance(s, Sphere):
        p[0] = s.radius
        r = s.radius
        return (L.SPHERE, p, *empty, np.array([-r, -r, -r, r, r, r]), r)
    if isinstance(s, Capsule):
        p[0] = s.radius
        p[1] = 0.5 * s.length
        r, h = s.radius, 0.5 * s.length
        return (L.CAPSULE, p, *empty, np.array([-r, -r, -h - r, r, r, h + r]), h + r)
    if isinstance(s, Box):
        he = 0.5 * np.asarray(s.extents)
        p[1:4] = he
        return (L.BOX, p, *empty, np.concatenate([-he, he]), float(np.linalg.norm(he)))
    if isinstance(s, (Cylinder, Cone)):
        r, h = s.radius, 0.5 * s.length
        p[1] = r
        p[2] = h
        kind = L.CYLINDER if isinstance(s, Cylinder) else L.CONE
        return (kind, p, *empty, np.array([-r, -r, -h, r, r, h]), float(np.hypot(r, h)))
    if isinstance(s, Convex):
        hull = s.hull
        p[0] = s.radius
        v = hull.vertices
        r = s.radius
        aabb = np.concatenate([v.min(axis=0) - r, v.max(axis=0) + r])
        brad = float(np.sqrt((v * v).sum(axis=1)).max()) + r
        return (L.CONVEX, p, v, hull.adjstart, hull.adj, aabb, brad)
    if isinstance(s, Halfspace):
        p[1:4] = s.normal
        p[4] = s.offset
        return (L.HALFSPACE, p, *empty, np.array([-_INF] * 3 + [_INF] * 3), _INF)
    raise TypeError(f"{type(s).__name__} is not a convex shape the kernels handle directly")


def shape_table(shapes: Sequence[Shape]) -> L.ShapeTable:
    """Pack convex shapes into one `ShapeTable` (shape i = shapes[i])."""
    n = len(shapes)
    kind = np.zeros(n, np.int32)
    params = np.zeros((n, L.N_PARAMS))
    aabb = np.zeros((n, 6))
    brad = np.zeros(n)
    vstart = np.zeros(n + 1, np.int32)
    verts, adjstarts, adjs = [], [], []
    nv = 0
    na = 0
    for i, s in enumerate(shapes):
        k, p, v, astart, a, box, br = _params_and_points(s)
        kind[i], params[i], aabb[i], brad[i] = k, p, box, br
        verts.append(v)
        adjstarts.append(astart[:-1] + na)
        adjs.append(a)
        nv += v.shape[0]
        na += a.size
        vstart[i + 1] = nv
    adjstart = np.concatenate(adjstarts + [np.array([na], np.int32)]).astype(np.int32)
    verts = np.ascontiguousarray(np.concatenate(verts) if verts else np.zeros((0, 3)))
    return L.ShapeTable(
        kind,
        params,
        vstart,
        verts,
        np.ascontiguousarray(adjstart),
        np.ascontiguousarray(np.concatenate(adjs) if adjs else np.zeros(0, np.int32)).astype(
            np.int32
        ),
        aabb,
        brad,
        L.soa_vertices(verts, vstart),
    )


def pack_single(tab: L.ShapeTable) -> tuple[np.ndarray, np.ndarray]:
    """A one-shape table as two arrays, ``ints`` (int32) and ``floats`` (float64), laid out
    as `kernels.public.unpack_single` reads them::

        ints   = [kind, vstart[0], vstart[1], adjstart (nv + 1), adj]
        floats = [params (8), aabb (6), brad (1), verts (3 nv), vsoa (3 nv)]
    """
    if tab.kind.shape[0] != 1:
        raise ValueError(f"pack_single takes a one-shape table, got {tab.kind.shape[0]} shapes")
    ints = np.concatenate([tab.kind, tab.vstart, tab.adjstart, tab.adj]).astype(np.int32)
    floats = np.concatenate(
        [tab.params.ravel(), tab.aabb.ravel(), tab.brad, tab.verts.ravel(), tab.vsoa]
    )
    return np.ascontiguousarray(ints), np.ascontiguousarray(floats, dtype=np.float64)
