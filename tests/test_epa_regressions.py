"""EPA on symmetric, coincident-centre configurations (found by the property tests).

When two shapes share a centre, D = A - B is symmetric and its nearest boundary is often a
flat region (box against cylinder) or a whole ring (sphere in a cylinder with radius equal
to its half length). Support points then land within round-off of existing faces; the
polytope must stay convex and the answer must be the exact depth.
"""

import numpy as np
import pytest

import planning_collision as pc

R_X = np.array([[-1.0, 0, 0, 0], [0, -0.6, 0.8, 0], [0, 0.8, 0.6, 0], [0, 0, 0, 1]])
NEAR_90 = np.array(
    [[-1.0, 0, 0, 0], [0, 2.22044605e-16, 1, 0], [0, 1, -2.22044605e-16, 0], [0, 0, 0, 1]]
)
CUBE = np.array([[x, y, z] for x in (-0.25, 0.25) for y in (-0.25, 0.25) for z in (-0.25, 0.25)])


@pytest.mark.parametrize(
    "a,b,T,tol",
    [
        (pc.Box((0.5, 0.5, 0.5)), pc.Cylinder(0.25, 0.5), R_X, 1e-7),
        (pc.Convex(CUBE), pc.Cylinder(0.25, 0.5), R_X, 1e-7),
        # the nearest boundary is a whole ring plus two caps: EPA refines a ring of faces
        (pc.Sphere(0.25), pc.Cylinder(0.25, 0.5), NEAR_90, 5e-4),
        (pc.Cylinder(0.25, 0.5), pc.Sphere(0.25), NEAR_90, 5e-4),
    ],
)
def test_coincident_centres_give_the_exact_depth(a, b, T, tol):
    r = pc.distance(a, T, b, T)
    assert r.distance == pytest.approx(-0.5, abs=tol)
    # the witness points realise the depth along the normal
    np.testing.assert_allclose(r.point_b - r.point_a, r.distance * r.normal, atol=1e-9)
    # and moving b out along the normal by the depth (plus a hair) separates the pair
    Tb = T.copy()
    Tb[:3, 3] += (-r.distance + 1e-3) * r.normal
    assert pc.distance(a, T, b, Tb).distance > 0.0
