"""The reference engines, coal and python-fcl, behind one small interface in our conventions.

Every wrapper takes our shapes and 4x4 poses and returns plain floats / arrays:

- ``coal_distance(a, Ta, b, Tb) -> (d, pa, pb, normal)``: signed, witness points in the world
  frame, normal from a to b, ``pb - pa == d * normal`` (coal's own convention, checked in
  ``tests/test_queries_oracle.py::test_peer_conventions_match_ours``).
- ``coal_penetration(a, Ta, b, Tb) -> (depth, normal, pa, pb)``: coal's EPA.
- ``coal_collide``, ``fcl_collide -> bool``; ``fcl_distance -> float``.

What each peer is trusted for (measured here, coal 3.0.3, python-fcl 0.7.0.11):

- **coal, separated pairs**: GJK with the duality-gap stopping rule and an absolute tolerance
  of 1e-10 m, so its separation distance is certified to ~1e-10 m, far inside the 1e-6 m
  criterion. (Its default relative 1e-6 criterion is off by up to ~1e-6 m: not usable.)
- **coal, penetrating pairs**: EPA at its *default* tolerance (1e-6). Tighter EPA tolerances
  make coal's EPA fail on cylinder/cone pairs (it returns -DBL_MAX, or a depth 2-10x too
  deep); at 1e-6 it is consistent to ~1e-6 m with its own converged runs, far inside the
  1e-3 m depth criterion. So a penetrating pair is queried a second time with those settings.
- **coal, flat and needle hulls**: ``Convex.convexHull`` segfaults (qhull) on a flat set, so
  hulls are built here (``naive.hull_of``, scipy) and passed as vertices + triangles; a flat
  polygon gets a fan, a segment becomes a Capsule, a point a Sphere (with the sweep radius,
  or 1e-12 m when it has none).
- **python-fcl**: the oracle uses its verdicts only (``fcl_collide``); ``fcl_distance`` is
  here for experiments. Its GJK (libccd or "indep") stops at a relative tolerance: a point
  0.8 m below a cone's base reports 0.806 m; separations on random pairs are off by up to
  6e-4 m; penetration via ``distance`` is approximate (or -1). Its halfspace-cone
  ``collide`` reports cones up to 6 cm above the plane as colliding (24 of 300 random pairs).
  ``fcl.distance`` with a Halfspace segfaults: never called. It has no swept sphere radius:
  a Convex with ``radius > 0`` or a degenerate hull is not converted (None).
"""

from __future__ import annotations

import numpy as np

from planning_collision import Box, Capsule, Cone, Convex, Cylinder, Halfspace, Mesh, Sphere

from .naive import hull_of

try:  # the test extra installs both; import lazily-failing so the module always imports
    import coal
except ImportError:  # pragma: no cover
    coal = None
try:
    import fcl
except ImportError:  # pragma: no cover
    fcl = None

# coal's separated-distance accuracy (absolute duality gap, metres).
COAL_GJK_TOL = 1e-10
# The point "sphere" used for a radius-0 single-point Convex.
_POINT_RADIUS = 1e-12


# ---------------------------------------------------------------------------------------
# coal


def coal_transform(T):
    """A coal Transform3s of a 4x4 pose."""
    return _coal_tf(T)


def _coal_tf(T):
    T = np.asarray(T, dtype=np.float64)
    return coal.Transform3s(np.ascontiguousarray(T[:3, :3]), np.ascontiguousarray(T[:3, 3]))


def _vec3s(points):
    v = coal.StdVec_Vec3s()
    for p in np.asarray(points, dtype=np.float64):
        v.append(p)
    return v


def _convex_frame(points):
    """A segment hull as (length, T_local_capsule) for the Capsule stand-in."""
    a, b = points
    c = 0.5 * (a + b)
    z = b - a
    length = float(np.linalg.norm(z))
    z = z / length
    x = np.cross(z, [1.0, 0.0, 0.0])
    if np.linalg.norm(x) < 0.5:
        x = np.cross(z, [0.0, 1.0, 0.0])
    x /= np.linalg.norm(x)
    y = np.cross(z, x)
    T = np.eye(4)
    T[:3, :3] = np.stack([x, y, z], axis=1)
    T[:3, 3] = c
    return length, T


def to_coal(shape, T):
    """(coal geometry, 4x4 pose) for one of our shapes at pose T.

    The pose may differ from T when the shape is stood in for (a segment hull → a Capsule
    along the segment)."""
    T = np.asarray(T, dtype=np.float64)
    if isinstance(shape, Sphere):
        return coal.Sphere(shape.radius), T
    if isinstance(shape, Box):
        return coal.Box(*map(float, shape.extents)), T
    if isinstance(shape, Capsule):
        return coal.Capsule(shape.radius, shape.length), T
    if isinstance(shape, Cylinder):
        return coal.Cylinder(shape.radius, shape.length), T
    if isinstance(shape, Cone):
        return coal.Cone(shape.radius, shape.length), T
    if isinstance(shape, Halfspace):
        return coal.Halfspace(np.asarray(shape.normal, dtype=np.float64), float(shape.offset)), T
    if isinstance(shape, Mesh):  # a triangle BVH (OBBRSS): a surface, as ours
        m = coal.BVHModelOBBRSS()
        m.beginModel(shape.faces.shape[0], shape.vertices.shape[0])
        m.addVertices(np.ascontiguousarray(shape.vertices))
        m.addTriangles(np.ascontiguousarray(shape.faces))
        m.endModel()
        return m, T
    if isinstance(shape, Convex):
        v, tri, dim = hull_of(shape.points)
        if dim == 0:
            return coal.Sphere(max(shape.radius, _POINT_RADIUS)), T @ _translation(v[0])
        if dim == 1:
            length, Tl = _convex_frame(v)
            return coal.Capsule(max(shape.radius, _POINT_RADIUS), length), T @ Tl
        tris = coal.StdVec_Triangle()
        for t in tri:
            tris.append(coal.Triangle(int(t[0]), int(t[1]), int(t[2])))
        g = coal.Convex(_vec3s(v), tris)
        if shape.radius > 0.0:
            g.setSweptSphereRadius(float(shape.radius))
        return g, T
    raise TypeError(f"no coal conversion for {type(shape).__name__}")


def _translation(p):
    T = np.eye(4)
    T[:3, 3] = p
    return T


def _coal_request(separated: bool):
    req = coal.DistanceRequest()
    req.enable_signed_distance = True
    if separated:
        req.gjk_convergence_criterion = coal.GJKConvergenceCriterion.DualityGap
        req.gjk_convergence_criterion_type = coal.GJKConvergenceCriterionType.Absolute
        req.gjk_tolerance = COAL_GJK_TOL
        req.gjk_max_iterations = 10_000
    # else: coal's defaults (see the module docstring: tighter EPA settings break EPA)
    return req


def _coal_call(a, Ta, b, Tb, separated):
    ga, Ta2 = to_coal(a, Ta)
    gb, Tb2 = to_coal(b, Tb)
    res = coal.DistanceResult()
    d = coal.distance(ga, _coal_tf(Ta2), gb, _coal_tf(Tb2), _coal_request(separated), res)
    return (
        float(d),
        np.array(res.getNearestPoint1(), dtype=np.float64),
        np.array(res.getNearestPoint2(), dtype=np.float64),
        np.array(res.normal, dtype=np.float64),
    )


def coal_distance(a, Ta, b, Tb):
    """Signed distance by coal: (d, pa, pb, normal a→b), world frame.

    Separated pairs: the tight GJK run. Penetrating pairs: re-run with coal's default EPA
    settings (the robust ones). A failed EPA (|d| huge) is returned as NaN so a caller can
    tell it apart from an answer."""
    out = _coal_call(a, Ta, b, Tb, separated=True)
    if out[0] <= 0.0:
        out = _coal_call(a, Ta, b, Tb, separated=False)
    if not abs(out[0]) < 1e6:
        return (np.nan, out[1], out[2], out[3])
    return out


def coal_penetration(a, Ta, b, Tb):
    """coal's EPA: (depth >= 0, normal a→b, pa, pb); depth 0 when the pair is apart."""
    d, pa, pb, n = coal_distance(a, Ta, b, Tb)
    return max(-d, 0.0) if np.isfinite(d) else np.nan, n, pa, pb


def coal_collide(a, Ta, b, Tb) -> bool:
    ga, Ta2 = to_coal(a, Ta)
    gb, Tb2 = to_coal(b, Tb)
    req = coal.CollisionRequest()
    res = coal.CollisionResult()
    return bool(coal.collide(ga, _coal_tf(Ta2), gb, _coal_tf(Tb2), req, res))


# ---------------------------------------------------------------------------------------
# python-fcl


def _fcl_tf(T):
    T = np.asarray(T, dtype=np.float64)
    return fcl.Transform(np.ascontiguousarray(T[:3, :3]), np.ascontiguousarray(T[:3, 3]))


def to_fcl(shape):
    """python-fcl geometry for one of our shapes, or None where fcl cannot represent it
    exactly (a swept-sphere or degenerate Convex)."""
    if isinstance(shape, Sphere):
        return fcl.Sphere(shape.radius)
    if isinstance(shape, Box):
        return fcl.Box(*map(float, shape.extents))
    if isinstance(shape, Capsule):
        return fcl.Capsule(shape.radius, shape.length)
    if isinstance(shape, Cylinder):
        return fcl.Cylinder(shape.radius, shape.length)
    if isinstance(shape, Cone):
        return fcl.Cone(shape.radius, shape.length)
    if isinstance(shape, Halfspace):
        return fcl.Halfspace(np.asarray(shape.normal, dtype=np.float64), float(shape.offset))
    if isinstance(shape, Mesh):  # a triangle BVH (OBBRSS): a surface, as ours
        m = fcl.BVHModel()
        m.beginModel(shape.faces.shape[0], shape.vertices.shape[0])
        m.addSubModel(np.ascontiguousarray(shape.vertices), np.ascontiguousarray(shape.faces))
        m.endModel()
        return m
    if isinstance(shape, Convex):
        if shape.radius > 0.0:
            return None
        v, tri, dim = hull_of(shape.points)
        if dim < 3:
            return None
        faces = np.hstack([np.full((tri.shape[0], 1), 3), tri]).ravel().astype(np.int64)
        return fcl.Convex(np.ascontiguousarray(v), int(tri.shape[0]), faces)
    raise TypeError(f"no fcl conversion for {type(shape).__name__}")


def fcl_objects(a, Ta, b, Tb):
    ga, gb = to_fcl(a), to_fcl(b)
    if ga is None or gb is None:
        return None
    return fcl.CollisionObject(ga, _fcl_tf(Ta)), fcl.CollisionObject(gb, _fcl_tf(Tb))


def fcl_collide(a, Ta, b, Tb):
    """python-fcl's verdict, or None when a shape has no exact fcl counterpart."""
    objs = fcl_objects(a, Ta, b, Tb)
    if objs is None:
        return None
    return bool(fcl.collide(*objs, fcl.CollisionRequest(), fcl.CollisionResult()))


def fcl_distance(a, Ta, b, Tb):
    """python-fcl's unsigned separation (GJK, its own tolerance), or None when not
    representable; never for a Halfspace (segfaults in python-fcl 0.7)."""
    if isinstance(a, Halfspace) or isinstance(b, Halfspace):
        return None
    objs = fcl_objects(a, Ta, b, Tb)
    if objs is None:
        return None
    req = fcl.DistanceRequest(enable_nearest_points=True, enable_signed_distance=True)
    return float(fcl.distance(*objs, req, fcl.DistanceResult()))
