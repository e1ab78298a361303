"""Bad input raises ValueError naming the field and the value (conventions.py).

Every case asserts the exception type *and* that the message names the field (e.g.
``Sphere.radius``, ``Tb``) and shows the offending value, so a user can find the mistake
from the message alone. Valid edge values (zero-length capsule, float32-made poses) are
accepted, so the checks are not simply rejecting everything.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

import planning_collision as pc
from planning_collision import Box, Capsule, Cone, Convex, Cylinder, Halfspace, Mesh, Sphere

BAD_SCALARS = [
    (math.nan, "nan"),
    (math.inf, "inf"),
    (-math.inf, "-inf"),
    (-0.1, "-0.1"),
]


def _raises(fn, *fields_and_values):
    """fn() raises ValueError whose message contains each given string (regex-escaped)."""
    with pytest.raises(ValueError) as e:
        fn()
    msg = str(e.value)
    for s in fields_and_values:
        assert re.search(re.escape(s), msg), f"{s!r} not in message {msg!r}"
    return msg


# ---------------------------------------------------------------------------------------
# Shape sizes


@pytest.mark.parametrize("value,shown", BAD_SCALARS + [(0.0, "0.0")])
@pytest.mark.parametrize(
    "make,field",
    [
        (lambda v: Sphere(v), "Sphere.radius"),
        (lambda v: Capsule(v, 0.2), "Capsule.radius"),
        (lambda v: Cylinder(v, 0.2), "Cylinder.radius"),
        (lambda v: Cylinder(0.1, v), "Cylinder.length"),
        (lambda v: Cone(v, 0.2), "Cone.radius"),
        (lambda v: Cone(0.1, v), "Cone.length"),
    ],
    ids=["sphere-r", "capsule-r", "cylinder-r", "cylinder-len", "cone-r", "cone-len"],
)
def test_nonpositive_or_nonfinite_size_names_field_and_value(make, field, value, shown):
    _raises(lambda: make(value), field, shown)


@pytest.mark.parametrize("value,shown", BAD_SCALARS)
def test_capsule_length_and_convex_radius_reject_negative_and_nonfinite(value, shown):
    _raises(lambda: Capsule(0.1, value), "Capsule.length", shown)
    _raises(lambda: Convex([[0, 0, 0]], value), "Convex.radius", shown)


def test_zero_capsule_length_and_zero_convex_radius_are_valid():
    # a zero-length capsule is a sphere; a radius-0 convex is a plain polytope
    assert pc.distance(Capsule(0.1, 0.0), np.eye(4), Sphere(0.1), _tr(0.5)).distance == (
        pytest.approx(0.3, abs=1e-12)
    )
    assert Convex([[0, 0, 0], [1, 0, 0]], 0.0).radius == 0.0


@pytest.mark.parametrize(
    "extents,shown",
    [
        ((0.1, math.nan, 0.1), "nan"),
        ((0.1, 0.1, math.inf), "inf"),
        ((0.1, -0.2, 0.1), "-0.2"),
        ((0.0, 0.1, 0.1), "0.0"),
        ((0.1, 0.1), "(2,)"),
        ((0.1, 0.1, 0.1, 0.1), "(4,)"),
        ("big", "'big'"),
    ],
)
def test_bad_box_extents_name_field_and_value(extents, shown):
    _raises(lambda: Box(extents), "Box.extents", shown)


@pytest.mark.parametrize(
    "points,shown",
    [
        (np.zeros((0, 3)), "0"),
        ([], "(0,)"),
        ([[0, 0, math.nan]], "nan"),
        ([[0, 0, 0], [1, math.inf, 0]], "inf"),
        (np.zeros((4, 2)), "(4, 2)"),
        (np.zeros(3), "(3,)"),
    ],
    ids=["zero-points", "empty-list", "nan", "inf", "2d-points", "flat-vector"],
)
def test_bad_convex_points_name_field_and_value(points, shown):
    _raises(lambda: Convex(points), "Convex.points", shown)


@pytest.mark.parametrize(
    "normal,offset,field,shown",
    [
        ((0, 0, 0), 0.0, "Halfspace.normal", "[0.0, 0.0, 0.0]"),
        ((0, math.nan, 1), 0.0, "Halfspace.normal", "nan"),
        ((0, 0, 1, 0), 0.0, "Halfspace.normal", "(4,)"),
        ((0, 0, 1), math.inf, "Halfspace.offset", "inf"),
        ((0, 0, 1), math.nan, "Halfspace.offset", "nan"),
    ],
)
def test_bad_halfspace_names_field_and_value(normal, offset, field, shown):
    _raises(lambda: Halfspace(normal, offset), field, shown)


TRI_V = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1.0]])


@pytest.mark.parametrize(
    "vertices,faces,field,shown",
    [
        (TRI_V, [[0, 1, 4]], "Mesh.faces[0]", "[0, 1, 4]"),  # index past the vertices
        (TRI_V, [[0, 1, 2], [0, -1, 2]], "Mesh.faces[1]", "[0, -1, 2]"),  # negative index
        (TRI_V, [[0, 1]], "Mesh.faces", "(1, 2)"),  # not triangles
        (TRI_V, np.zeros((0, 3), int), "Mesh.faces", "empty"),
        (TRI_V, [[0, 1, 2.5]], "Mesh.faces", "float64"),  # not integer indices
        (TRI_V, [[0, 1, 2], [0, 0, 1]], "Mesh.faces[1]", "[0, 0, 1]"),  # repeated vertex
        (
            np.array([[0, 0, 0], [1, 0, 0], [2, 0, 0.0]]),
            [[0, 1, 2]],
            "Mesh.faces[0]",
            "degenerate",
        ),  # collinear: zero area
        ([[0, 0, 0], [1, math.nan, 0], [0, 1, 0]], [[0, 1, 2]], "Mesh.vertices", "nan"),
        (np.zeros((3, 2)), [[0, 1, 2]], "Mesh.vertices", "(3, 2)"),
    ],
    ids=[
        "index-too-big",
        "negative-index",
        "two-columns",
        "no-faces",
        "float-index",
        "repeated-vertex",
        "collinear-triangle",
        "nan-vertex",
        "2d-vertices",
    ],
)
def test_bad_mesh_names_field_and_value(vertices, faces, field, shown):
    _raises(lambda: Mesh(vertices, faces), field, shown)


def test_tiny_but_valid_mesh_triangle_is_accepted():
    # 1 mm x 1 mm triangle: area 5e-7 m^2, far above the degeneracy threshold
    Mesh([[0, 0, 0], [1e-3, 0, 0], [0, 1e-3, 0]], [[0, 1, 2]])


# ---------------------------------------------------------------------------------------
# Poses, for every public query and on either argument


def _tr(x):
    T = np.eye(4)
    T[0, 3] = x
    return T


def _rot_z(a):
    T = np.eye(4)
    T[:2, :2] = [[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]]
    return T


def _with(T, idx, value):
    T = np.array(T, dtype=float)
    T[idx] = value
    return T


SCALED = np.diag([2.0, 2.0, 2.0, 1.0])
SHEARED = _with(np.eye(4), (0, 1), 0.3)
REFLECTION = np.diag([1.0, 1.0, -1.0, 1.0])
NONUNIFORM = np.diag([1.0, 1.0, 1.001, 1.0])

BAD_POSES = [
    ("shape-3x3", np.eye(3), "(3, 3)"),
    ("shape-16", np.eye(4).ravel(), "(16,)"),
    ("shape-4x4x1", np.eye(4)[..., None], "(4, 4, 1)"),
    ("shape-nested-list", [[1, 0, 0], [0, 1, 0]], "(2, 3)"),
    ("nan", _with(np.eye(4), (1, 3), math.nan), "nan"),
    ("inf", _with(np.eye(4), (2, 3), math.inf), "inf"),
    ("nan-rotation", _with(np.eye(4), (0, 0), math.nan), "nan"),
    ("last-row", _with(np.eye(4), (3, 0), 0.5), "last row"),
    ("scaled", SCALED, "orthonormal"),
    ("scaled-0.1pct", NONUNIFORM, "orthonormal"),
    ("sheared", SHEARED, "orthonormal"),
    ("reflection", REFLECTION, "det = -1"),
    ("text", "identity", "'identity'"),
]
QUERIES = {
    "collide": pc.collide,
    "distance": pc.distance,
    "penetration": pc.penetration,
}


@pytest.mark.parametrize("query", QUERIES.values(), ids=QUERIES.keys())
@pytest.mark.parametrize("case", BAD_POSES, ids=[c[0] for c in BAD_POSES])
@pytest.mark.parametrize("which", ["Ta", "Tb"])
def test_bad_pose_names_the_argument_and_value(query, case, which):
    _, T, shown = case
    a, b = Sphere(0.1), Box((0.2, 0.2, 0.2))
    good = _tr(0.5)
    if which == "Ta":
        msg = _raises(lambda: query(a, T, b, good), "Ta", shown)
        assert "Tb" not in msg
    else:
        msg = _raises(lambda: query(a, np.eye(4), b, T), "Tb", shown)
        assert "Ta" not in msg


@pytest.mark.parametrize("case", BAD_POSES[:6] + BAD_POSES[8:12], ids=lambda c: c[0])
def test_bad_pose_is_rejected_on_the_mesh_path_too(case):
    _, T, shown = case
    mesh = Mesh(TRI_V, [[0, 1, 2], [0, 1, 3], [0, 2, 3], [1, 2, 3]])
    _raises(lambda: pc.distance(mesh, np.eye(4), Sphere(0.1), T), "Tb", shown)
    _raises(lambda: pc.collide(Sphere(0.1), T, mesh, np.eye(4)), "Ta", shown)


@pytest.mark.parametrize("kind", ["cone", "convex", "halfspace"])
def test_bad_pose_is_rejected_for_every_kind(kind):
    shapes = {
        "cone": Cone(0.1, 0.2),
        "convex": Convex([[0, 0, 0], [0.1, 0, 0], [0, 0.1, 0], [0, 0, 0.1]]),
        "halfspace": Halfspace((0, 0, 1), 0.0),
    }
    _raises(lambda: pc.distance(shapes[kind], SHEARED, Cylinder(0.1, 0.2), np.eye(4)), "Ta")
    _raises(lambda: pc.collide(Cylinder(0.1, 0.2), np.eye(4), shapes[kind], REFLECTION), "Tb")


def test_float32_made_poses_are_accepted():
    # rotations that went through float32 (ROS messages) are rigid to ~1e-7
    T = _rot_z(0.7).astype(np.float32).astype(np.float64)
    T[0, 3] = 0.5
    assert np.abs(T[:3, :3].T @ T[:3, :3] - np.eye(3)).max() > 0.0
    d = pc.distance(Sphere(0.1), np.eye(4), Sphere(0.1), T).distance
    assert d == pytest.approx(0.3, abs=1e-6)
    # integer and list poses are converted
    assert pc.collide(Sphere(0.1), np.eye(4, dtype=int), Sphere(0.1), np.eye(4).tolist())


@pytest.mark.parametrize("margin,shown", BAD_SCALARS)
def test_bad_margin_names_field_and_value(margin, shown):
    _raises(
        lambda: pc.collide(Sphere(0.1), np.eye(4), Sphere(0.1), _tr(1.0), margin), "margin", shown
    )


def test_non_shapes_raise_type_error_naming_the_argument():
    with pytest.raises(TypeError, match=r"\ba\b.*str"):
        pc.distance("sphere", np.eye(4), Sphere(0.1), np.eye(4))
    with pytest.raises(TypeError, match=r"\bb\b.*ndarray"):
        pc.collide(Sphere(0.1), np.eye(4), np.zeros(3), np.eye(4))
