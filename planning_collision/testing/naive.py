"""Obviously-correct numpy references: slow, closed form, no GJK.

Everything here works on one query at a time in plain numpy, and every formula is the
textbook one (Ericson, *Real-Time Collision Detection*, §5.1). They serve two purposes:

- a third opinion on the pairs that have a closed form (sphere-sphere, sphere-box,
  capsule-capsule and sphere-capsule via a segment-segment bounded least squares,
  polytope-polytope by feature enumeration), independent of both our GJK and coal's;
- the *witness check* of every test: ``shape_sdf(shape, T, p)`` is the exact signed distance
  from a world point to any convex shape, so a witness point is "on its shape" when its sdf
  is ~0 and "realises the distance" when its sdf to the other shape equals the distance.

Shapes are the package's dataclasses; only their fields are read.
"""

from __future__ import annotations

import functools

import numpy as np
from scipy.spatial import ConvexHull, QhullError

from planning_collision import Box, Capsule, Cone, Convex, Cylinder, Halfspace, Sphere

# ---------------------------------------------------------------------------------------
# Hull of a point set, computed independently of planning_collision.geometry.hull.


def hull_of(points: np.ndarray):
    """(vertices, triangles, dim) of conv(points); cached by value (see `_hull_of`)."""
    p = np.ascontiguousarray(points, dtype=np.float64).reshape(-1, 3)
    return _hull_cached(p.tobytes())


@functools.lru_cache(maxsize=4096)
def _hull_cached(key: bytes):
    v, tri, dim = _hull_of(np.frombuffer(key, dtype=np.float64).reshape(-1, 3))
    v.setflags(write=False)  # shared by every caller of the cache
    tri.setflags(write=False)
    return v, tri, dim


def _hull_of(points: np.ndarray):
    """(vertices (k,3), triangles (m,3) outward-oriented, dim) of conv(points).

    dim 3: a polytope with outward triangles. dim 2: a flat polygon (vertices in ring order,
    triangles = a fan, both orientations irrelevant). dim 1: a segment (2 vertices). dim 0:
    one point. Flatness is decided relative to the set's extent (1e-9), as a human would.
    """
    p = np.unique(np.asarray(points, dtype=np.float64).reshape(-1, 3), axis=0)
    if p.shape[0] == 1:
        return p, np.zeros((0, 3), np.int64), 0
    c = p.mean(axis=0)
    _, s, vt = np.linalg.svd(p - c, full_matrices=False)
    if s[1] <= 1e-9 * s[0]:
        t = (p - c) @ vt[0]
        return p[[int(np.argmin(t)), int(np.argmax(t))]], np.zeros((0, 3), np.int64), 1
    if s.size < 3 or s[2] <= 1e-9 * s[0]:
        return _flat(p, c, vt)
    try:
        h = ConvexHull(p)
    except QhullError:
        return _flat(p, c, vt)
    verts = h.vertices
    remap = -np.ones(p.shape[0], np.int64)
    remap[verts] = np.arange(verts.size)
    v = p[verts]
    tri = remap[h.simplices]
    # orient outward: qhull's equations give the outward normal of each simplex
    n = np.cross(v[tri[:, 1]] - v[tri[:, 0]], v[tri[:, 2]] - v[tri[:, 0]])
    flip = np.einsum("ij,ij->i", n, h.equations[:, :3]) < 0
    tri[flip] = tri[flip][:, [0, 2, 1]]
    return v, tri, 3


def _flat(p, c, vt):
    uv = (p - c) @ vt[:2].T
    ring = ConvexHull(uv).vertices
    v = p[ring]
    k = v.shape[0]
    tri = np.stack([np.zeros(k - 2, np.int64), np.arange(1, k - 1), np.arange(2, k)], axis=1)
    return v, tri, 2


# ---------------------------------------------------------------------------------------
# Point / segment / triangle primitives (Ericson §5.1.2, §5.1.5, §5.1.9).


def point_segment(p, a, b):
    """Closest point to p on segment ab (a == b allowed)."""
    ab = b - a
    den = float(ab @ ab)
    t = 0.0 if den == 0.0 else float(np.clip((p - a) @ ab / den, 0.0, 1.0))
    return a + t * ab


def segment_segment(p0, p1, q0, q1):
    """Closest points (x on p0p1, y on q0q1) by bounded linear least squares in (s, t).

    min |p0 + s (p1-p0) - q0 - t (q1-q0)|^2, s, t in [0, 1]: a convex box-constrained
    problem; enumerating the interior stationary point and the four edges s/t in {0,1}
    (each a clamped 1-D projection) finds the exact minimiser (Ericson §5.1.9 proof).
    """
    u, v = p1 - p0, q1 - q0
    cands = []
    A = np.array([[u @ u, -(u @ v)], [-(u @ v), v @ v]])
    rhs = np.array([u @ (q0 - p0), -(v @ (q0 - p0))])
    if abs(np.linalg.det(A)) > 1e-14 * max(1.0, float(np.abs(A).max()) ** 2):
        s, t = np.linalg.solve(A, rhs)
        if 0.0 <= s <= 1.0 and 0.0 <= t <= 1.0:
            cands.append((p0 + s * u, q0 + t * v))
    for x in (p0, p1):
        cands.append((x, point_segment(x, q0, q1)))
    for y in (q0, q1):
        cands.append((point_segment(y, p0, p1), y))
    d = [float(np.linalg.norm(a - b)) for a, b in cands]
    return cands[int(np.argmin(d))]


def point_triangle(p, a, b, c):
    """Closest point to p on triangle abc (Ericson §5.1.5, Voronoi regions)."""
    ab, ac, ap = b - a, c - a, p - a
    d1, d2 = ab @ ap, ac @ ap
    if d1 <= 0 and d2 <= 0:
        return a
    bp = p - b
    d3, d4 = ab @ bp, ac @ bp
    if d3 >= 0 and d4 <= d3:
        return b
    vc = d1 * d4 - d3 * d2
    if vc <= 0 and d1 >= 0 and d3 <= 0:
        return a + d1 / (d1 - d3) * ab
    cp = p - c
    d5, d6 = ab @ cp, ac @ cp
    if d6 >= 0 and d5 <= d6:
        return c
    vb = d5 * d2 - d1 * d6
    if vb <= 0 and d2 >= 0 and d6 <= 0:
        return a + d2 / (d2 - d6) * ac
    va = d3 * d6 - d5 * d4
    if va <= 0 and (d4 - d3) >= 0 and (d5 - d6) >= 0:
        w = (d4 - d3) / ((d4 - d3) + (d5 - d6))
        return b + w * (c - b)
    den = 1.0 / (va + vb + vc)
    return a + ab * (vb * den) + ac * (vc * den)


# ---------------------------------------------------------------------------------------
# Signed distance from a point to a shape (exact, closed form).


def _local(T, p):
    return T[:3, :3].T @ (np.asarray(p, float) - T[:3, 3])


def _polygon2d_sdf(q, poly, boundary_edges=None):
    """Signed distance from 2-D point q to a convex 2-D polygon (ccw vertices).

    Only edges i in `boundary_edges` (default: all; edge i runs from vertex i to i+1) count
    as boundary: a meridian section's edge on the axis of revolution is not a surface."""
    k = len(poly)
    dmin = np.inf
    inside = True
    for i in range(k):
        a, b = poly[i], poly[(i + 1) % k]
        e = b - a
        t = np.clip((q - a) @ e / (e @ e), 0.0, 1.0)
        if boundary_edges is None or i in boundary_edges:
            dmin = min(dmin, float(np.linalg.norm(q - (a + t * e))))
        if e[0] * (q[1] - a[1]) - e[1] * (q[0] - a[0]) < 0:
            inside = False
    return -dmin if inside else dmin


def hull_sdf(v, tri, dim, p):
    """Signed distance from p to conv(v) (no sweep radius)."""
    if dim == 0:
        return float(np.linalg.norm(p - v[0]))
    if dim == 1:
        return float(np.linalg.norm(p - point_segment(p, v[0], v[1])))
    dmin = min(float(np.linalg.norm(p - point_triangle(p, *v[t]))) for t in tri)
    if dim == 2:
        return dmin
    n = np.cross(v[tri[:, 1]] - v[tri[:, 0]], v[tri[:, 2]] - v[tri[:, 0]])
    n /= np.linalg.norm(n, axis=1)[:, None]
    plane = np.einsum("ij,ij->i", n, p - v[tri[:, 0]])
    if np.all(plane <= 0.0):
        # inside: the distance to the boundary is the distance to the nearest facet plane
        return float(plane.max())
    return dmin


def shape_sdf(shape, T, p) -> float:
    """Exact signed distance (m) from world point p to `shape` at pose T."""
    q = _local(T, p)
    if isinstance(shape, Sphere):
        return float(np.linalg.norm(q)) - shape.radius
    if isinstance(shape, Box):
        h = 0.5 * np.asarray(shape.extents)
        d = np.abs(q) - h
        return float(np.linalg.norm(np.maximum(d, 0.0)) + min(d.max(), 0.0))
    if isinstance(shape, Capsule):
        h = 0.5 * shape.length
        z = np.clip(q[2], -h, h)
        return float(np.linalg.norm(q - np.array([0.0, 0.0, z]))) - shape.radius
    if isinstance(shape, (Cylinder, Cone)):
        # a solid of revolution: the 3-D distance is the 2-D distance, in the meridian
        # half-plane (rho >= 0, z), to the generating polygon's edges other than the one on
        # the axis (the last, from (0, h) back to (0, -h))
        h = 0.5 * shape.length
        rho = float(np.hypot(q[0], q[1]))
        r = shape.radius
        if isinstance(shape, Cylinder):
            poly = np.array([[0.0, -h], [r, -h], [r, h], [0.0, h]])
        else:
            poly = np.array([[0.0, -h], [r, -h], [0.0, h]])
        return _polygon2d_sdf(np.array([rho, q[2]]), poly, range(len(poly) - 1))
    if isinstance(shape, Convex):
        v, tri, dim = hull_of(shape.points)
        return hull_sdf(v, tri, dim, q) - shape.radius
    if isinstance(shape, Halfspace):
        return float(np.asarray(shape.normal) @ q - shape.offset)
    raise TypeError(type(shape).__name__)


# ---------------------------------------------------------------------------------------
# Closed-form pair distances (signed where the closed form is, separation only otherwise).


def _w(T, p):
    return T[:3, :3] @ p + T[:3, 3]


def sphere_sphere(a: Sphere, Ta, b: Sphere, Tb) -> float:
    return float(np.linalg.norm(Tb[:3, 3] - Ta[:3, 3])) - a.radius - b.radius


def sphere_box(a: Sphere, Ta, b: Box, Tb) -> float:
    """Signed: box sdf at the centre minus the radius (exact for a sphere)."""
    return shape_sdf(b, Tb, Ta[:3, 3]) - a.radius


def _axis_segment(c: Capsule, T):
    h = 0.5 * c.length
    return _w(T, np.array([0.0, 0.0, -h])), _w(T, np.array([0.0, 0.0, h]))


def capsule_capsule(a: Capsule, Ta, b: Capsule, Tb) -> float:
    """Signed: segment-segment distance minus both radii (exact, including overlap)."""
    x, y = segment_segment(*_axis_segment(a, Ta), *_axis_segment(b, Tb))
    return float(np.linalg.norm(x - y)) - a.radius - b.radius


def sphere_capsule(a: Sphere, Ta, b: Capsule, Tb) -> float:
    p0, p1 = _axis_segment(b, Tb)
    c = Ta[:3, 3]
    return float(np.linalg.norm(c - point_segment(c, p0, p1))) - a.radius - b.radius


def polytope_points(shape, T):
    """World vertices of a Box or a radius-0 Convex's hull, with its triangles and dim."""
    if isinstance(shape, Box):
        h = 0.5 * np.asarray(shape.extents)
        local = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)]) * h
    else:
        local = np.asarray(shape.points)
    v, tri, dim = hull_of(local)
    return v @ T[:3, :3].T + T[:3, 3], tri, dim


def polytope_separation(a, Ta, b, Tb) -> float:
    """Distance between two *separated* polytopes (Box or Convex, sweep radii subtracted).

    For disjoint convex polytopes the closest pair is realised by vertex-face, face-vertex
    or edge-edge features, so the minimum over all such feature pairs is exact. O(n m);
    for tests only. Returns the separation of the cores minus the radii; meaningless (too
    large) when the cores overlap, which the caller rules out with another reference.
    """
    va, ta, da = polytope_points(a, Ta)
    vb, tb, db = polytope_points(b, Tb)
    best = np.inf
    for v, (w, t, dim) in ((va, (vb, tb, db)), (vb, (va, ta, da))):
        for p in v:
            best = min(best, hull_sdf(w, t, dim, p) if dim < 3 else _surface_dist(w, t, p))
    for e in _edges(va, ta, da):
        for f in _edges(vb, tb, db):
            x, y = segment_segment(*e, *f)
            best = min(best, float(np.linalg.norm(x - y)))
    ra = a.radius if isinstance(a, Convex) else 0.0
    rb = b.radius if isinstance(b, Convex) else 0.0
    return best - ra - rb


def _surface_dist(v, tri, p):
    return min(float(np.linalg.norm(p - point_triangle(p, *v[t]))) for t in tri)


def _edges(v, tri, dim):
    if dim == 0:
        return [(v[0], v[0])]
    if dim == 1:
        return [(v[0], v[1])]
    e = np.concatenate([tri[:, [0, 1]], tri[:, [1, 2]], tri[:, [2, 0]]])
    e = np.unique(np.sort(e, axis=1), axis=0)
    return [(v[i], v[j]) for i, j in e]


# ---------------------------------------------------------------------------------------
# Support points and the halfspace closed form.


def support(shape, T, d) -> np.ndarray:
    """World point of `shape` at pose T farthest along world direction d (closed form)."""
    R = T[:3, :3]
    u = R.T @ (np.asarray(d, float) / np.linalg.norm(d))
    if isinstance(shape, Sphere):
        p = shape.radius * u
    elif isinstance(shape, Box):
        p = np.where(u >= 0.0, 0.5, -0.5) * np.asarray(shape.extents)
    elif isinstance(shape, Capsule):
        p = np.array([0.0, 0.0, np.copysign(0.5 * shape.length, u[2])]) + shape.radius * u
    elif isinstance(shape, (Cylinder, Cone)):
        h, r = 0.5 * shape.length, shape.radius
        rho = float(np.hypot(u[0], u[1]))
        rim = np.array([r * u[0] / rho, r * u[1] / rho]) if rho > 0 else np.zeros(2)
        if isinstance(shape, Cylinder):
            p = np.array([rim[0], rim[1], np.copysign(h, u[2])])
        else:
            apex, base = np.array([0.0, 0.0, h]), np.array([rim[0], rim[1], -h])
            p = apex if apex @ u >= base @ u else base
    elif isinstance(shape, Convex):
        pts = np.asarray(shape.points)
        p = pts[int(np.argmax(pts @ u))] + shape.radius * u
    else:
        raise TypeError(type(shape).__name__)
    return R @ p + T[:3, 3]


def halfspace_distance(h: Halfspace, Th, shape, Ts) -> float:
    """Signed distance halfspace-shape: the shape's lowest point along the world normal,
    measured from the plane (exact: a convex shape's extreme point is its support point)."""
    n = Th[:3, :3] @ np.asarray(h.normal)
    p0 = Th[:3, :3] @ (np.asarray(h.normal) * h.offset) + Th[:3, 3]
    return float(n @ (support(shape, Ts, -n) - p0))
