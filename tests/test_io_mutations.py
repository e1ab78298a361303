"""Scene files mutated as files get mutated (a value replaced by anything JSON holds, bytes cut or
corrupted, nesting, numbers past float64): the readers load them, or refuse them with a ValueError
or FileNotFoundError that names the file. Never another exception, never a scene that then fails to
build for another reason (`python -m planning_collision.demos.dev.fuzz --parts files` runs many
more)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

import planning_collision as pc
from planning_collision.io.scene_files import load_scene
from planning_collision.testing.sampling import random_pose

# what a mutation puts where a value was
ODD_VALUES = st.one_of(
    st.booleans(),
    st.none(),
    st.text(max_size=4),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.just(10**400),
    st.floats(allow_nan=True, allow_infinity=True),
    st.just(1e300),
    st.lists(st.floats(-5, 5), max_size=5),
    st.lists(st.lists(st.integers(-3, 3), max_size=4), max_size=4),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)


def _scene_doc() -> dict:
    rng = np.random.default_rng(7)
    s = pc.Scene()
    s.add(pc.Sphere(0.1), random_pose(rng), "sphere")
    s.add(pc.Box((0.1, 0.2, 0.3)), random_pose(rng), "box")
    s.add(pc.Capsule(0.05, 0.3), random_pose(rng), "capsule")
    s.add(pc.Cone(0.05, 0.3), random_pose(rng), "cone")
    s.add(pc.Convex(rng.normal(size=(6, 3)) * 0.1, 0.01), random_pose(rng), "convex")
    s.add(pc.Halfspace((0.0, 0.0, 1.0), -2.0), None, "floor")
    v = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]], float) * 0.2
    s.add(pc.Mesh(v, [[0, 1, 2], [0, 1, 3], [0, 2, 3], [1, 2, 3]]), random_pose(rng), "mesh")
    s.add(pc.PointCloud(rng.normal(size=(5, 3)) * 0.1, 0.02), random_pose(rng), "cloud")
    s.add(pc.VoxelGrid([[0, 0, 0], [1, 2, 3]], 0.05, (0.1, 0, 0)), random_pose(rng), "grid")
    s.add([(pc.Sphere(0.05), random_pose(rng, 0.1))], random_pose(rng), "compound")
    return {
        "format": "planning_collision.scene",
        "version": 1,
        "objects": [
            {
                "name": o.name,
                "pose": {"position": o.T[:3, 3].tolist(), "orientation_xyzw": [0, 0, 0, 1]},
                **_shape_of(o.shape),
            }
            for o in s
        ],
    }


def _shape_of(shape) -> dict:
    from planning_collision.io.scene_files import _shape_json

    if isinstance(shape, tuple):
        return {"shapes": [dict(_shape_json(p), pose=[[*r] for r in T]) for p, T in shape]}
    return {"shape": _shape_json(shape)}


DOC = _scene_doc()


def _paths(v, at=()):
    """Every path (tuple of keys and indices) into a JSON value."""
    yield at
    if isinstance(v, dict):
        for k, x in v.items():
            yield from _paths(x, (*at, k))
    elif isinstance(v, list):
        for i, x in enumerate(v[:4]):  # long lists: their first entries stand for the rest
            yield from _paths(x, (*at, i))


PATHS = [p for p in _paths(DOC) if p]


def _replace(doc, path, value):
    doc = json.loads(json.dumps(doc))
    d = doc
    for k in path[:-1]:
        d = d[k]
    d[path[-1]] = value
    return doc


def _load_named(path) -> None:
    """Load and build; the property: a scene, or a named ValueError/FileNotFoundError."""
    try:
        records = load_scene(path)
    except (ValueError, FileNotFoundError) as e:
        assert str(path) in str(e), f"the error does not name the file: {e}"
        return
    pc.Scene.from_records(records)  # what loaded builds (or raises ValueError naming it)


@given(st.sampled_from(PATHS), ODD_VALUES)
@example(("objects", 1, "shape", "extents", 0), True)
@example(("objects", 0, "shape", "radius"), 10**400)
@example(("objects", 8, "shape", "cells", 0, 2), 1e19)
def test_a_json_scene_with_any_value_replaced_loads_or_is_refused_by_name(
    tmp_path_factory, path, value
):
    f = tmp_path_factory.mktemp("mut") / "scene.json"
    text = json.dumps(_replace(DOC, path, value), allow_nan=True)
    f.write_text(text)
    try:
        _load_named(f)
    except ValueError as e:  # from building: it must name the obstacle
        assert "obstacle" in str(e), e


@given(st.data())
def test_json_scene_bytes_cut_or_corrupted_are_refused_by_name(tmp_path_factory, data):
    raw = json.dumps(DOC).encode()
    cut = data.draw(st.integers(0, len(raw)))
    junk = data.draw(st.binary(max_size=8))
    mutated = raw[:cut] + junk + raw[cut + data.draw(st.integers(0, 8)) :]
    f = tmp_path_factory.mktemp("bytes") / "scene.json"
    f.write_bytes(mutated)
    try:
        _load_named(f)
    except ValueError as e:
        assert "obstacle" in str(e), e


@pytest.mark.parametrize(
    "text, match",
    [
        ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
        ('{"format": "planning_collision.scene", "objects": [' + "1" * 5000 + "]}", "invalid JSON"),
        (b"\xff\xfe\x00\x00 not text", "not UTF-8 text"),
    ],
)
def test_json_files_python_cannot_parse_are_refused_by_name(tmp_path, text, match):
    f = tmp_path / "scene.json"
    if isinstance(text, bytes):
        f.write_bytes(text)
    else:
        f.write_text(text)
    with pytest.raises(ValueError, match=match) as e:
        load_scene(f)
    assert str(f) in str(e.value)


MOVEIT = """shelf
* board
1
box
0.3 0.6 0.02
0.5 0 0.4
0 0 0 1
0 0 0 0
.
"""


@given(st.data())
def test_a_moveit_scene_with_a_token_replaced_loads_or_is_refused_by_name(tmp_path_factory, data):
    lines = MOVEIT.splitlines()
    i = data.draw(st.integers(1, len(lines) - 1))
    tokens = lines[i].split()
    j = data.draw(st.integers(0, len(tokens) - 1))
    tokens[j] = data.draw(
        st.sampled_from(["nan", "inf", "1e400", "-1", "0", "x", "true", "1e19", "*", ".", ""])
    )
    lines[i] = " ".join(tokens)
    text = "\n".join(lines) + "\n"
    f = tmp_path_factory.mktemp("moveit") / "shelf.scene"
    f.write_text(text)
    try:
        _load_named(f)
    except ValueError as e:
        assert "obstacle" in str(e), e


@pytest.mark.parametrize(
    "path, value, match",
    [
        (("objects", 1, "shape", "extents", 0), True, r"extents must hold numbers, got true"),
        (("objects", 0, "shape", "radius"), True, r"radius must hold numbers, got true"),
        (("objects", 0, "shape", "radius"), 10**1000, r"radius must be a finite number"),
        (("objects", 1, "shape", "extents", 2), 10**1000, r"Box\.extents must be"),
        (("objects", 8, "shape", "cells", 0, 2), 1e19, r"VoxelGrid\.cells\[0\]"),
        (("objects", 0, "pose", "position", 0), 1e300, r"position must lie within"),
        (("objects", 0, "pose", "orientation_xyzw"), [1e300, 0, 0, 1e300], None),
        (("objects", 0, "shape", "radius"), "0.1", r"radius must be a real number"),
    ],
)
def test_values_that_are_not_what_a_field_holds_are_refused_by_name(tmp_path, path, value, match):
    f = tmp_path / "scene.json"
    f.write_text(json.dumps(_replace(DOC, path, value)))
    if match is None:  # a quaternion of huge entries is a rotation like any other
        T = load_scene(f)[0].T
        assert np.allclose(T[:3, :3], [[1, 0, 0], [0, 0, -1], [0, 1, 0]])
        return
    with pytest.raises(ValueError, match=match) as e:
        load_scene(f)
    assert str(f) in str(e.value) and "objects[" in str(e.value)
