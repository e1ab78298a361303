"""Point-cloud kernels: Morton codes and the flat tree a cloud obstacle is searched by.

A sensed cloud is rebuilt every frame, so its tree is built in linear time after one sort
(a linear BVH, Lauterbach et al., *Fast BVH construction on GPUs*, 2009; Karras, *Maximizing
parallelism in the construction of BVHs*, HPG 2012): the points are sorted along a Morton
(Z-order) curve, and a node over the sorted range [a, b) splits where the highest bit in
which the range's first and last codes differ turns from 0 to 1 (its two halves then lie
in two halves of an octree cell), or at the middle when all codes are equal. Ranges of at
most ``leaf`` items are leaves. The nodes come out in the `FlatBVH` layout of kernels/scene/bvh.py
(the scene traversal walks them as one KCD group: kcd.py), parents before children, so the
boxes are made in one backward pass.

Depth: each split strips at least one bit of the 63-bit codes or halves an equal-code range,
so a tree is at most 63 + 31 levels deep: within the traversal's stack (kernels/scene/bvh.py
STACK_SIZE), which the builder checks anyway.
"""

import numpy as np

from .._jit import kernel

MORTON_BITS = 21  # per axis: 63 bits in all, a positive int64


@kernel
def _spread(x):
    """The 21 low bits of x moved to every third bit (bit k to bit 3k)."""
    x &= 0x1FFFFF
    x = (x | (x << 32)) & 0x1F00000000FFFF
    x = (x | (x << 16)) & 0x1F0000FF0000FF
    x = (x | (x << 8)) & 0x100F00F00F00F00F
    x = (x | (x << 4)) & 0x10C30C30C30C30C3
    x = (x | (x << 2)) & 0x1249249249249249
    return x


@kernel
def morton_codes(p, lo, scale, out):
    """Morton codes of points p (n, 3) quantised on a grid from lo (3,) with `scale` cells
    per metre (2**21 cells per axis at most; points outside are clamped), into out (n,)
    int64."""
    top = (1 << MORTON_BITS) - 1
    for i in range(p.shape[0]):
        c = 0
        for k in range(3):
            v = (p[i, k] - lo[k]) * scale
            q = 0
            if v > 0.0:
                q = top if v >= top else np.int64(v)
            c |= _spread(q) << k
        out[i] = c


@kernel
def _split(codes, a, b):
    """Where the sorted range [a, b) splits: the first index whose code has the highest
    differing bit of codes[a] and codes[b - 1] set; the middle when they are equal."""
    x = codes[a] ^ codes[b - 1]
    if x == 0:
        return a + (b - a) // 2
    bit = 0
    while (x >> (bit + 1)) != 0:
        bit += 1
    lo = a + 1
    hi = b - 1
    while lo < hi:  # codes[lo - 1] has the bit clear, codes[hi] has it set
        mid = (lo + hi) // 2
        if (codes[mid] >> bit) & 1:
            hi = mid
        else:
            lo = mid + 1
    return lo


@kernel
def cloud_tree(codes, plo, phi, leaf, nlo, nhi, left, right, first, count):
    """A linear BVH (module doc) over items sorted by their Morton `codes` (n,), with boxes
    plo, phi (n, 3) in that order; leaves of at most `leaf` items. Writes nodes into nlo,
    nhi (>= 2n - 1, 3), left, right, first, count (>= 2n - 1,) int32 (item indices are
    positions in the sorted order). Returns the number of nodes, or -1 when the stack
    limit (kernels/scene/bvh.py STACK_SIZE) would be exceeded."""
    n = codes.shape[0]
    depth_cap = 256
    stack = np.empty((depth_cap, 3), np.int64)
    depth = np.empty(2 * n, np.int64)
    stack[0, 0] = 0
    stack[0, 1] = 0
    stack[0, 2] = n
    depth[0] = 1
    sp = 1
    m = 1
    while sp > 0:
        sp -= 1
        k = stack[sp, 0]
        a = stack[sp, 1]
        b = stack[sp, 2]
        if b - a <= leaf:
            left[k] = -1
            right[k] = -1
            first[k] = a
            count[k] = b - a
            continue
        if depth[k] >= depth_cap - 2:
            return -1
        mid = _split(codes, a, b)
        left[k] = m
        right[k] = m + 1
        first[k] = 0
        count[k] = 0
        depth[m] = depth[k] + 1
        depth[m + 1] = depth[k] + 1
        stack[sp, 0] = m + 1
        stack[sp, 1] = mid
        stack[sp, 2] = b
        stack[sp + 1, 0] = m
        stack[sp + 1, 1] = a
        stack[sp + 1, 2] = mid
        sp += 2
        m += 2
    for k in range(m - 1, -1, -1):  # children after parents: boxes bottom-up
        if count[k] > 0:
            f = first[k]
            for c in range(3):
                lo = plo[f, c]
                hi = phi[f, c]
                for j in range(f + 1, f + count[k]):
                    lo = min(lo, plo[j, c])
                    hi = max(hi, phi[j, c])
                nlo[k, c] = lo
                nhi[k, c] = hi
        else:
            for c in range(3):
                nlo[k, c] = min(nlo[left[k], c], nlo[right[k], c])
                nhi[k, c] = max(nhi[left[k], c], nhi[right[k], c])
    return m


@kernel
def posed_points(p, T, out):
    """Points p (n, 3) posed by T (4, 4) into out (n, 3); returns the box (lo, hi) of
    out as two (3,) arrays."""
    lo = np.full(3, np.inf)
    hi = np.full(3, -np.inf)
    for i in range(p.shape[0]):
        for k in range(3):
            v = T[k, 0] * p[i, 0] + T[k, 1] * p[i, 1] + T[k, 2] * p[i, 2] + T[k, 3]
            out[i, k] = v
            lo[k] = min(lo[k], v)
            hi[k] = max(hi[k], v)
    return lo, hi


@kernel
def fill_cloud(w, order, R, ext, kind, row, half, brad, tab, poses, lo, hi):
    """The primitives of a cloud in curve order: item j is w[order[j]] (world centres, (n,
    3)), rotated by R (3, 3), with world half extents ext (3,). Writes the table's kind,
    params (row, (8,)), aabb (-half..half, half (3,)) and brad, and the poses and world
    boxes lo, hi: one pass over the points (numpy's broadcasts took 5x longer)."""
    for j in range(order.shape[0]):
        i = order[j]
        tab.kind[j] = kind
        for c in range(row.shape[0]):
            tab.params[j, c] = row[c]
        tab.brad[j] = brad
        for k in range(3):
            v = w[i, k]
            tab.aabb[j, k] = -half[k]
            tab.aabb[j, 3 + k] = half[k]
            lo[j, k] = v - ext[k]
            hi[j, k] = v + ext[k]
            poses[j, k, 0] = R[k, 0]
            poses[j, k, 1] = R[k, 1]
            poses[j, k, 2] = R[k, 2]
            poses[j, k, 3] = v
            poses[j, 3, k] = 0.0
        poses[j, 3, 3] = 1.0
