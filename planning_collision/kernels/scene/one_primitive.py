"""Objects that are each one sphere, capsule, box, cylinder or cone, many at once: their
table rows, world boxes and the flat form's trees, written by two compiled loops.

A MotionBenchMaker problem is 7-30 such objects, and a planner that takes a new scene per
problem builds them for every problem: as numpy calls by kind (~60 of them) and per-object
concatenations they cost ~0.5 ms, as these loops a few microseconds. Both the per-object
path (scene.py `add_many`, kcd.flatten) and the array path (scene.py `from_arrays`,
`replace_all`) call them, so the two build the same arrays, bit for bit.

- `primitive_rows`: each object's `ShapeTable` row (kernels/base/layout.py) and its world AABB,
  exact for spheres, capsules, cylinders and boxes, the rotated local box for cones (the
  formulas of primitives.convex_block_from_table);
- `one_node_flat`: the group BVH forest (one leaf per object) and the KCD tree (one group
  leaf per object, a wide SAH tree over them: kernels/scene/bvh.py `wide_tree`) of the flat form
  (kernels/scene/traversal.py `FlatScene`), as kcd.flatten joins one-node objects;
- `first_bad_pose`: the poses' validation (geometry/poses.py `as_poses`) in one loop: ~1 us
  for a problem's poses instead of ~20 of numpy calls.
"""

import math

import numpy as np

from .._jit import kernel
from ..base.layout import BOX, CAPSULE, CYLINDER, N_PARAMS, SPHERE
from .bvh import wide_tree


@kernel
def primitive_rows(kind, size, poses, params, aabb, brad, lo, hi):
    """Rows and world boxes of n one-primitive shapes (validated by the caller).

    kind : (n,) int32 layout codes (SPHERE, CAPSULE, BOX, CYLINDER, CONE);
    size : (n, 3) float64, m: a box's full extents, a sphere's (radius, ., .), a capsule's,
        cylinder's or cone's (radius, length, .);
    poses : (n, 4, 4) float64, T_world_shape.
    Writes params (n, N_PARAMS), aabb (n, 6) (local box with the sweep radius), brad (n,)
    (a ball about the local origin holding the shape) and lo, hi (n, 3) (world AABB).
    A box's brad is sqrt(hx^2 + hy^2 + hz^2) summed in that order, as Box.table_row."""
    for i in range(kind.shape[0]):
        k = kind[i]
        for c in range(N_PARAMS):
            params[i, c] = 0.0
        # half sizes of the local box the world box is taken from (box, cone), and the
        # radius and half length of the round kinds
        r = size[i, 0]
        h = 0.5 * size[i, 1]
        hx, hy, hz = r, r, h
        if k == BOX:
            hx, hy, hz = 0.5 * size[i, 0], 0.5 * size[i, 1], 0.5 * size[i, 2]
            params[i, 1], params[i, 2], params[i, 3] = hx, hy, hz
            lx, ly, lz, b = hx, hy, hz, math.sqrt(hx * hx + hy * hy + hz * hz)
        elif k == SPHERE:
            params[i, 0] = r
            lx, ly, lz, b = r, r, r, r
        elif k == CAPSULE:
            params[i, 0], params[i, 1] = r, h
            lx, ly, lz, b = r, r, h + r, h + r
        else:  # CYLINDER, CONE
            params[i, 1], params[i, 2] = r, h
            lx, ly, lz, b = r, r, h, np.hypot(r, h)
        aabb[i, 0], aabb[i, 1], aabb[i, 2] = -lx, -ly, -lz
        aabb[i, 3], aabb[i, 4], aabb[i, 5] = lx, ly, lz
        brad[i] = b
        for c in range(3):
            az = abs(poses[i, c, 2])
            if k == SPHERE:
                e = r
            elif k == CAPSULE:
                e = az * h + r
            elif k == CYLINDER:
                e = az * h + r * np.sqrt(max(0.0, 1.0 - az * az))
            else:  # the local box rotated: exact for a box, conservative for a cone
                e = abs(poses[i, c, 0]) * hx + abs(poses[i, c, 1]) * hy + az * hz
            t = poses[i, c, 3]
            lo[i, c] = t - e
            hi[i, c] = t + e


@kernel
def one_node_flat(lo, hi, reverse, width):
    """The trees of the flat form of n >= 1 objects that are each one bounded primitive
    (world boxes lo, hi (n, 3); object i is slot i and primitive i), as kcd.flatten
    builds them: each object one group-BVH leaf and one KCD group leaf (node i); for n >= 2
    a wide SAH tree (`wide_tree`, `width` children a node) over the group leaves, in
    reverse slot order when `reverse` (the order kcd.open_tops leaves them in), its nodes
    numbered from n, its root the flat form's root.

    Returns (ids, none, ones, kt_lo, kt_hi, kt_cstart, kt_child, kt_clo, kt_chi,
    kt_cgroup, kt_group, kt_obj, kt_root): the FlatScene fields (kernels/scene/traversal.py) of
    the KCD tree, and three (n,) int32 arrays the others are made of (ids: 0..n-1, none:
    -1, ones: 1; the group BVH of leaf i is node i over primitive i, lo[i] to hi[i]). Few
    arrays: each one returned costs ~1 us to box."""
    n = lo.shape[0]
    # plain loops and allocations (no fancy indexing, no slices of slices): numba compiles
    # this in seconds where those took several more of a user's first call
    tops = np.empty(n, np.int64)
    tlo = np.empty((n, 3))
    thi = np.empty((n, 3))
    for i in range(n):
        tops[i] = n - 1 - i if reverse else i
        for a in range(3):
            tlo[i, a] = lo[tops[i], a]
            thi[i, a] = hi[tops[i], a]
    if n == 1:
        nlo = np.empty((0, 3))
        nhi = np.empty((0, 3))
        cc = np.zeros(0, np.int64)
        ch = np.zeros(0, np.int64)
        is_node = np.zeros(0, np.bool_)
    else:
        nlo, nhi, cc, ch, is_node = wide_tree(tlo, thi, width)
    nw = nlo.shape[0]
    K = n + nw
    E = ch.shape[0]
    kt_lo = np.empty((K, 3))
    kt_hi = np.empty((K, 3))
    for k in range(K):
        for a in range(3):
            kt_lo[k, a] = lo[k, a] if k < n else nlo[k - n, a]
            kt_hi[k, a] = hi[k, a] if k < n else nhi[k - n, a]
    cstart = np.zeros(K + 1, np.int32)
    for k in range(nw):
        cstart[n + k + 1] = cstart[n + k] + cc[k]
    child = np.empty(E, np.int32)
    for e in range(E):
        child[e] = n + ch[e] if is_node[e] else tops[ch[e]]
    ids = np.empty(n, np.int32)
    none = np.empty(n, np.int32)
    ones = np.empty(n, np.int32)
    kt_group = np.empty(K, np.int32)
    kt_obj = np.empty(K, np.int32)
    for k in range(K):
        if k < n:
            ids[k], none[k], ones[k] = k, -1, 1
        kt_group[k] = k if k < n else -1
        kt_obj[k] = k if k < n else -1
    for k in range(nw):  # a top node whose children are all one object keeps it
        first = cstart[n + k]
        o = child[first] if child[first] < n else -1
        for e in range(first + 1, cstart[n + k + 1]):
            if child[e] != o:
                o = -1
        kt_obj[n + k] = o
    clo = np.empty((E, 3))
    chi = np.empty((E, 3))
    cgroup = np.empty(E, np.int32)
    for e in range(E):
        for a in range(3):
            clo[e, a] = kt_lo[child[e], a]
            chi[e, a] = kt_hi[child[e], a]
        cgroup[e] = kt_group[child[e]]
    root = np.empty(1, np.int32)
    root[0] = n if n > 1 else 0
    return ids, none, ones, kt_lo, kt_hi, cstart, child, clo, chi, cgroup, kt_group, kt_obj, root


@kernel
def first_bad_pose(P, last_row_tol, rotation_tol, world_limit):
    """The index of the first of the poses P (k, 4, 4) that is not a rigid transform in
    the working range, or -1: finite, last row (0, 0, 0, 1) within last_row_tol, R^T R = I
    within rotation_tol, det R > 0, translation within +-world_limit (the checks of
    geometry/poses.py `as_poses`, which names the bad one)."""
    for i in range(P.shape[0]):
        for a in range(4):
            for b in range(4):
                if not np.isfinite(P[i, a, b]):
                    return i
        if (
            abs(P[i, 3, 0]) > last_row_tol
            or abs(P[i, 3, 1]) > last_row_tol
            or abs(P[i, 3, 2]) > last_row_tol
            or abs(P[i, 3, 3] - 1.0) > last_row_tol
        ):
            return i
        for a in range(3):
            if abs(P[i, a, 3]) > world_limit:
                return i
            for b in range(3):
                g = P[i, 0, a] * P[i, 0, b] + P[i, 1, a] * P[i, 1, b] + P[i, 2, a] * P[i, 2, b]
                if abs(g - (1.0 if a == b else 0.0)) > rotation_tol:
                    return i
        det = (
            (P[i, 1, 0] * P[i, 2, 1] - P[i, 2, 0] * P[i, 1, 1]) * P[i, 0, 2]
            + (P[i, 2, 0] * P[i, 0, 1] - P[i, 0, 0] * P[i, 2, 1]) * P[i, 1, 2]
            + (P[i, 0, 0] * P[i, 1, 1] - P[i, 1, 0] * P[i, 0, 1]) * P[i, 2, 2]
        )
        if not det > 0.0:
            return i
    return -1
