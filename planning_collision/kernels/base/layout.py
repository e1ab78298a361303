"""Flat layout of convex shapes, shared by every kernel.

A set of shapes is a `ShapeTable` (a namedtuple of arrays, which numba accepts as one
argument). Shape `i` of a table:

- ``kind[i]``: one of the kind codes below;
- ``params[i, :]`` (8 floats): ``params[i, 0]`` is always the sweep radius ``r`` (the shape
  is ``core ⊕ ball(r)``, a sphere-swept convex hull); the rest depends on the kind:

  =========  =======================================================================
  SPHERE     core = the origin; r = radius
  CAPSULE    core = segment (0,0,-h)..(0,0,h); [1] = h = length/2; r = radius
  BOX        core = box; [1:4] = half extents; r = 0
  CYLINDER   core = cylinder about z; [1] = radius, [2] = half length; r = 0
  CONE       core = cone about z, apex at +h; [1] = base radius, [2] = h; r = 0
  CONVEX     core = conv(verts[vstart[i]:vstart[i+1]]); r = sweep radius
  HALFSPACE  {x : n.x <= offset}; [1:4] = unit normal n, [4] = offset; r = 0
  =========  =======================================================================

- ``verts[vstart[i]:vstart[i+1]]``: the points of a CONVEX (hull vertices when the hull is
  full-dimensional, else the distinct points); empty for the other kinds;
- ``vsoa``: the same points again, structure-of-arrays per shape: for shape i with
  ``v0 = vstart[i]`` and ``n`` points, ``vsoa[3*v0 : 3*v0+n]`` are the x, the next n the y,
  the next n the z coordinates (see `soa_vertices`). The brute-force support search runs
  on this copy: contiguous coordinates let LLVM vectorise it;
- ``adj[adjstart[g]:adjstart[g+1]]``: for global vertex ``g``, the local indices of its
  neighbours on the hull (CSR), used by hill climbing; empty when the hull is degenerate;
- ``aabb[i, :]``: local-frame AABB ``(lo_x, lo_y, lo_z, hi_x, hi_y, hi_z)`` including the
  sweep radius (±inf for a halfspace);
- ``brad[i]``: radius of a ball about the local origin that contains the shape (inf for a
  halfspace), for motion bounds and cheap rejection.

Kind codes are module constants: numba freezes them at compile time, which is what we want
for immutable codes (they are never reassigned).
"""

import numpy as np

from .records import F1, F2, I1, Field, record

SPHERE = 0
CAPSULE = 1
BOX = 2
CYLINDER = 3
CONE = 4
CONVEX = 5
HALFSPACE = 6

N_PARAMS = 8

# A CONVEX with more vertices than this is searched by hill climbing over hull adjacency;
# at or below, brute force is faster (no branches, vectorisable, no warm start needed).
HILL_CLIMB_MIN_VERTS = 48

ShapeTable = record(
    "ShapeTable",
    __name__,
    "A set of n shapes with nv points in all (module doc).",
    [
        Field("kind", I1, ("n",), "the kind code of each shape"),
        Field("params", F2, ("n", N_PARAMS), "[0] the sweep radius, the rest per kind"),
        Field("vstart", I1, ("n + 1",), "shape i's points: verts[vstart[i]:vstart[i + 1]]"),
        Field("verts", F2, ("nv", 3), "the points of the CONVEX shapes, shape frame"),
        Field("adjstart", I1, ("nv + 1",), "point g's hull neighbours: adj[adjstart[g]:[g+1]]"),
        Field("adj", I1, ("n_adj",), "neighbours as local point indices (CSR)"),
        Field("aabb", F2, ("n", 6), "local box (lo, hi), the sweep radius included"),
        Field("brad", F1, ("n",), "radius of a ball about the local origin holding it"),
        Field("vsoa", F1, ("3 * nv",), "verts again, per shape x.., y.., z.. (soa_vertices)"),
    ],
)


def soa_vertices(verts, vstart):
    """The ``vsoa`` array of a table: per shape, its x block, then y, then z (1-D,
    ``3 * len(verts)`` floats)."""
    verts = np.asarray(verts, np.float64).reshape(-1, 3)
    vstart = np.asarray(vstart, np.int64)
    counts = np.diff(vstart)
    owner_start = np.repeat(vstart[:-1], counts)  # vstart of each vertex's shape
    n = np.repeat(counts, counts)
    local = np.arange(verts.shape[0]) - owner_start
    out = np.empty(3 * verts.shape[0])
    for c in range(3):
        out[3 * owner_start + c * n + local] = verts[:, c]
    return out


# Layout of the `out` array of pair distance kernels.
OUT_DIST = 0
OUT_PA = 1  # 1:4 witness point on a, world frame
OUT_PB = 4  # 4:7 witness point on b, world frame
OUT_N = 7  # 7:10 unit normal from a to b
OUT_SIZE = 10
