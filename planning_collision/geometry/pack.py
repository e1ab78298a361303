"""Python shapes -> the flat `ShapeTable` kernels read (kernels/base/layout.py).

Each convex shape describes its own row (`ConvexShape.table_row`, in shapes.py); this module
only assembles rows into tables, so it imports no shape class (shapes.py imports it).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from ..kernels.base import layout as L


class TableRow(NamedTuple):
    """One convex shape as the kernels see it (kernels/base/layout.py)."""

    kind: int  # a kind code of kernels/base/layout.py
    params: npt.NDArray[np.float64]  # (N_PARAMS,)
    points: npt.NDArray[np.float64]  # (k, 3) core points (CONVEX), else (0, 3)
    adjstart: npt.NDArray[np.int32]  # (k + 1,) CSR hull adjacency
    adj: npt.NDArray[np.int32]
    aabb: npt.NDArray[np.float64]  # (6,) local AABB with the sweep radius
    brad: float  # radius of a ball about the local origin holding the shape


def point_less_row(kind: int, params, aabb, brad: float) -> TableRow:
    """The row of a shape without core points (sphere, capsule, box, cylinder, ...)."""
    return TableRow(
        kind,
        np.asarray(params, np.float64),
        np.zeros((0, 3)),
        np.zeros(1, np.int32),
        np.zeros(0, np.int32),
        np.asarray(aabb, np.float64),
        float(brad),
    )


def shape_table(shapes: Sequence) -> L.ShapeTable:
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
        row = s.table_row()
        kind[i], params[i], aabb[i], brad[i] = row.kind, row.params, row.aabb, row.brad
        verts.append(row.points)
        adjstarts.append(row.adjstart[:-1] + na)
        adjs.append(row.adj)
        nv += row.points.shape[0]
        na += row.adj.size
        vstart[i + 1] = nv
    adjstart = np.concatenate(adjstarts + [np.array([na], np.int32)]).astype(np.int32)
    verts = np.ascontiguousarray(np.concatenate(verts) if verts else np.zeros((0, 3)))
    adj = np.concatenate(adjs) if adjs else np.zeros(0, np.int32)
    return L.ShapeTable(
        kind,
        params,
        vstart,
        verts,
        np.ascontiguousarray(adjstart),
        np.ascontiguousarray(adj).astype(np.int32),
        aabb,
        brad,
        L.soa_vertices(verts, vstart),
    )


def pack_single(tab: L.ShapeTable) -> tuple[np.ndarray, np.ndarray]:
    """A one-shape table as two arrays, ``ints`` (int32) and ``floats`` (float64), laid out
    as `kernels.convex.public.unpack_single` reads them::

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
