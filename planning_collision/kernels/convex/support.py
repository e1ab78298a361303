"""Support functions of shape cores (kernels/base/layout.py): the point of the core farthest
along d.

The sweep radius (``params[0]``) is not included: GJK works on cores and subtracts radii.
Analytic for sphere, capsule, box, cylinder and cone; point sets are searched by brute force
when small and by hill climbing over the hull's vertex adjacency when large, starting from
the previous query's best vertex (Ong & Gilbert's incremental GJK; the "RGJK" of Coulombe &
Lin). On a convex polytope a vertex no neighbour improves is a global maximiser, so hill
climbing is exact, with ties included.

The small brute force is branch-free and vectorised (`points_support_soa`): a compare-and- branch
argmax mispredicts about ln(n) times per call, which cost more than the n dot products themselves
(`python -m planning_collision.demos.bench.queries`, two 32-vertex hulls, separated pairs: 973
ns/pair with the scalar search, 844 ns/pair with this one).
"""

import math

import numpy as np

from .._jit import hot_kernel, inline_kernel
from ..base.layout import BOX, CAPSULE, CONVEX, CYLINDER, HILL_CLIMB_MIN_VERTS, SPHERE

# The vectorised search packs a point's local index into the low KEY_BITS bits of its key.
KEY_BITS = 6
SOA_MAX_VERTS = 1 << KEY_BITS
_KEY_SCALE = 2.0**50


@inline_kernel
def points_support_soa(vsoa, v0, n, brad, dx, dy, dz):
    """Local index of the point of a shape's ``vsoa`` block (first vertex v0, n <= 64
    points, all within brad of the origin) farthest along (dx, dy, dz).

    Each score s = p.d becomes the integer key ``trunc(s * 2^50 / (brad |d|_1)) * 64 +
    (63 - j)`` and the answer is the key maximum, which LLVM vectorises (an integer max
    needs no fast-math; a float argmax does not vectorise). Since |s| <= brad |d|_2 <=
    brad |d|_1, keys stay below 2^57. Scores within one quantum (brad |d|_1 2^-50, about
    1e-15 of the largest score) tie, and the lowest index wins: the point returned is a
    maximiser up to round-off. Slices, not offsets: an index known non-negative spares the
    negative-index wraparound that turned the loads into gathers.
    """
    den = brad * (abs(dx) + abs(dy) + abs(dz))
    if not den > 0.0:  # zero direction, all points at the origin, or NaN: any point
        return 0
    scale = _KEY_SCALE / den
    b = 3 * v0
    xs = vsoa[b : b + n]
    ys = vsoa[b + n : b + 2 * n]
    zs = vsoa[b + 2 * n : b + 3 * n]
    best = np.int64(-(2**62))
    for j in range(n):
        s = xs[j] * dx + ys[j] * dy + zs[j] * dz
        best = max(best, (np.int64(s * scale) << KEY_BITS) | (SOA_MAX_VERTS - 1 - j))
    return SOA_MAX_VERTS - 1 - (best & (SOA_MAX_VERTS - 1))


@inline_kernel
def points_support_brute(verts, v0, v1, dx, dy, dz):
    """Index (global) of the point of verts[v0:v1] farthest along (dx, dy, dz)."""
    best = v0
    bv = verts[v0, 0] * dx + verts[v0, 1] * dy + verts[v0, 2] * dz
    for g in range(v0 + 1, v1):
        s = verts[g, 0] * dx + verts[g, 1] * dy + verts[g, 2] * dz
        if s > bv:
            bv = s
            best = g
    return best


@hot_kernel
def points_support_climb(verts, v0, adjstart, adj, dx, dy, dz, start):
    """Hill climbing from local vertex `start`; returns the local index of a maximiser."""
    cur = start
    cv = verts[v0 + cur, 0] * dx + verts[v0 + cur, 1] * dy + verts[v0 + cur, 2] * dz
    while True:
        moved = False
        g = v0 + cur
        for e in range(adjstart[g], adjstart[g + 1]):
            nb = adj[e]
            s = verts[v0 + nb, 0] * dx + verts[v0 + nb, 1] * dy + verts[v0 + nb, 2] * dz
            if s > cv:
                cv = s
                cur = nb
                moved = True
        if not moved:
            return cur


@inline_kernel
def core_support_local_xyz(arrs, i, dx, dy, dz, hint):
    """Support point of shape i's core in its local frame along (dx, dy, dz).

    arrs: `table_arrays` of the shape's table.

    Returns (new_hint, x, y, z); `hint` is the local vertex to start hill climbing from
    (CONVEX only). Results travel in registers: writing them to an array and reading them
    back made the caller reload everything it had loaded, since numba cannot tell the
    arrays do not alias. Ties (a zero direction component) pick the + side.
    """
    kind, params, verts, vsoa, brad, vstart, adjstart, adj = arrs
    k = kind[i]
    if k == CONVEX:
        v0 = vstart[i]
        v1 = vstart[i + 1]
        n = v1 - v0
        if n <= HILL_CLIMB_MIN_VERTS and n <= SOA_MAX_VERTS:
            # read the point from the same block: GJK then touches one copy of the points
            loc = points_support_soa(vsoa, v0, n, brad[i], dx, dy, dz)
            b = 3 * v0 + loc
            return loc, vsoa[b], vsoa[b + n], vsoa[b + 2 * n]
        if adjstart[v0] == adjstart[v1]:  # a large degenerate point set: no adjacency
            g = points_support_brute(verts, v0, v1, dx, dy, dz)
            loc = g - v0
        else:
            start = hint if (hint >= 0 and hint < n) else np.int64(0)
            loc = points_support_climb(verts, v0, adjstart, adj, dx, dy, dz, start)
            g = v0 + loc
        return loc, verts[g, 0], verts[g, 1], verts[g, 2]
    if k == BOX:
        return (
            0,
            params[i, 1] if dx >= 0.0 else -params[i, 1],
            params[i, 2] if dy >= 0.0 else -params[i, 2],
            params[i, 3] if dz >= 0.0 else -params[i, 3],
        )
    if k == SPHERE:
        return 0, 0.0, 0.0, 0.0
    if k == CAPSULE:
        h = params[i, 1]
        return 0, 0.0, 0.0, (h if dz >= 0.0 else -h)
    if k == CYLINDER:
        r = params[i, 1]
        h = params[i, 2]
        z = h if dz >= 0.0 else -h
        rho = math.sqrt(dx * dx + dy * dy)
        if rho > 0.0:
            return 0, r * dx / rho, r * dy / rho, z
        return 0, 0.0, 0.0, z
    # CONE: apex (0, 0, h) scores dz*h; the base rim scores r*rho - dz*h
    r = params[i, 1]
    h = params[i, 2]
    rho = math.sqrt(dx * dx + dy * dy)
    if dz * h >= r * rho - dz * h:
        return 0, 0.0, 0.0, h
    if rho > 0.0:
        return 0, r * dx / rho, r * dy / rho, -h
    return 0, 0.0, 0.0, -h


@inline_kernel
def core_support_xyz(arrs, i, T, d0, d1, d2, hint):
    """Support of shape i's core posed by T (4x4) along world direction (d0, d1, d2).

    Takes the table's arrays (`table_arrays`) rather than the table: a namedtuple field
    read in a loop costs a reference-count pair. Returns (new_hint, x, y, z) in the world
    frame.
    """
    # d_local = R^T d
    dx = T[0, 0] * d0 + T[1, 0] * d1 + T[2, 0] * d2
    dy = T[0, 1] * d0 + T[1, 1] * d1 + T[2, 1] * d2
    dz = T[0, 2] * d0 + T[1, 2] * d1 + T[2, 2] * d2
    h, lx, ly, lz = core_support_local_xyz(arrs, i, dx, dy, dz, hint)
    return (
        h,
        T[0, 0] * lx + T[0, 1] * ly + T[0, 2] * lz + T[0, 3],
        T[1, 0] * lx + T[1, 1] * ly + T[1, 2] * lz + T[1, 3],
        T[2, 0] * lx + T[2, 1] * ly + T[2, 2] * lz + T[2, 3],
    )


@inline_kernel
def table_arrays(tab):
    """The arrays support functions read, as a plain tuple: (kind, params, verts, vsoa,
    brad, vstart, adjstart, adj)."""
    return (
        tab.kind,
        tab.params,
        tab.verts,
        tab.vsoa,
        tab.brad,
        tab.vstart,
        tab.adjstart,
        tab.adj,
    )


@inline_kernel
def core_support_world(tab, i, T, d0, d1, d2, hint, out, o):
    """`core_support_xyz` on a ShapeTable, writing the world point into out[o:o+3]
    (convenient outside GJK's loop). Returns the new hint."""
    h, x, y, z = core_support_xyz(table_arrays(tab), i, T, d0, d1, d2, hint)
    out[o] = x
    out[o + 1] = y
    out[o + 2] = z
    return h


# Callers say where support_world writes its point (`o`) with kernels/base/codes.py's ZERO, ONE,
# THREE: a constant int passed to a compiled (not inlined) kernel is typed as a literal,
# and numba compiles the kernel once per literal value and once more for a variable.


@hot_kernel
def support_world(tab, i, T, d0, d1, d2, out, o):
    """`core_support_world` (from vertex 0) compiled once, called rather than inlined: for
    callers off GJK's loop, where one more inlined copy of the support switch would cost
    more compile time than the call costs at run time."""
    core_support_world(tab, i, T, d0, d1, d2, 0, out, o)
