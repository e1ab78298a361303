"""Scene files: JSON round trip, MoveIt .scene (old and new layouts), mesh files, errors."""

from __future__ import annotations

import json

import numpy as np
import pytest
import trimesh

import planning_collision as pc
from planning_collision.geometry.clouds import PointCloud, VoxelGrid
from planning_collision.geometry.poses import matrix_to_quaternion, quat_xyzw_to_matrix
from planning_collision.scene import Scene
from planning_collision.testing.sampling import random_pose, random_rotation


def every_kind_scene(rng) -> Scene:
    s = Scene()
    s.add(pc.Sphere(0.1), random_pose(rng), "sphere")
    s.add(pc.Box((0.1, 0.2, 0.3)), random_pose(rng), "box")
    s.add(pc.Capsule(0.05, 0.3), random_pose(rng), "capsule")
    s.add(pc.Cylinder(0.05, 0.3), random_pose(rng), "cylinder")
    s.add(pc.Cone(0.05, 0.3), random_pose(rng), "cone")
    s.add(pc.Convex(rng.normal(size=(12, 3)) * 0.1, 0.01), random_pose(rng), "convex")
    s.add(pc.Halfspace((0.1, 0.2, 1.0), -2.0), None, "floor")
    s.add(pc.Mesh.from_trimesh(trimesh.creation.icosphere(1, 0.2)), random_pose(rng), "mesh")
    s.add(PointCloud(rng.normal(size=(20, 3)) * 0.1, 0.02), random_pose(rng), "cloud")
    s.add(VoxelGrid(rng.integers(0, 4, (10, 3)), 0.05, (0.1, 0, 0)), random_pose(rng), "grid")
    s.add(
        [
            (pc.Box((0.3, 0.05, 0.05)), random_pose(rng, 0.1)),
            (pc.Sphere(0.05), random_pose(rng, 0.1)),
        ],
        random_pose(rng),
        "compound",
    )
    s.add(pc.Sphere(0.2), random_pose(rng))  # no name
    return s


def same_answers(a: Scene, b: Scene, rng, n=40):
    for _ in range(n):
        q, T = pc.Box(rng.uniform(0.05, 0.6, 3)), random_pose(rng, 1.2)
        da = [(r.distance) for _, r in a.distances(q, T)]
        db = [(r.distance) for _, r in b.distances(q, T)]
        assert np.allclose(da, db, atol=1e-9)
        assert len(a.collide_object(q, T)) == len(b.collide_object(q, T))


def test_quaternion_round_trip_is_xyzw(rng):
    assert np.allclose(
        quat_xyzw_to_matrix([0, 0, np.sin(0.25), np.cos(0.25)]),
        [[np.cos(0.5), -np.sin(0.5), 0], [np.sin(0.5), np.cos(0.5), 0], [0, 0, 1]],
    )
    for _ in range(50):
        R = random_rotation(rng)
        assert np.allclose(quat_xyzw_to_matrix(matrix_to_quaternion(R)), R, atol=1e-12)


def test_json_round_trip_keeps_every_kind_names_and_answers(tmp_path, rng):
    s = every_kind_scene(rng)
    s.to_file(tmp_path / "s.json")
    t = Scene.from_file(tmp_path / "s.json")
    assert [o.name for o in t] == [o.name for o in s]
    for a, b in zip(s, t, strict=False):
        assert type(a.shape) is type(b.shape)
        assert np.allclose(a.T, b.T, atol=1e-12)
        if isinstance(a.shape, pc.Halfspace):  # re-normalised on construction: round-off
            assert np.allclose(a.shape.normal, b.shape.normal, atol=1e-15)
            assert abs(a.shape.offset - b.shape.offset) < 1e-14
        elif not isinstance(a.shape, (list, tuple)):
            assert a.shape == b.shape
    same_answers(s, t, rng)


def test_moveit_scene_round_trip_for_the_kinds_it_expresses(tmp_path, rng):
    s = Scene()
    for o in every_kind_scene(rng):
        kinds = [p for p, _ in o.shape] if isinstance(o.shape, (list, tuple)) else [o.shape]
        if all(
            isinstance(k, (pc.Sphere, pc.Box, pc.Cylinder, pc.Cone, pc.Halfspace, pc.Mesh))
            for k in kinds
        ):
            s.add(o.shape, o.T, o.name)
    s.to_file(tmp_path / "s.scene")
    t = Scene.from_file(tmp_path / "s.scene")
    assert len(t) == len(s) == 8
    same_answers(s, t, rng)


def test_moveit_scene_write_refuses_shapes_without_a_moveit_form(tmp_path):
    s = Scene()
    s.add(pc.Capsule(0.1, 0.2), None, "pill")
    with pytest.raises(ValueError, match="'pill'.*Capsule"):
        s.to_file(tmp_path / "x.scene")
    with pytest.raises(ValueError, match=".json or .scene"):
        s.to_file(tmp_path / "x.yaml")


OLD_FORMAT = """my_scene
* table
1
box
1.0 2.0 0.1
0.5 0 0.4
0 0 0 1
0 0 0 0
* pole
2
cylinder
0.05 1.0
0 0 0.5
0 0 0 1
0.2 0.2 0.2 1
sphere
0.1
0 0 1.1
0 0 0 1
0 0 0 0
.
"""

NEW_FORMAT = """my_scene
* table top
1.0 0.0 0.0
0 0 0.7071067811865476 0.7071067811865476
1
box
1.0 2.0 0.1
0 0 0.4
0 0 0 1
0 0 0 0
1
corner
0.5 1 0.45
0 0 0 1
* ground
0 0 0
0 0 0 1
1
plane
0 0 1 0.5
0 0 0
0 0 0 1
0 0 0 0
0
.
"""


def test_moveit_old_format_objects_and_shape_poses(tmp_path):
    (tmp_path / "a.scene").write_text(OLD_FORMAT)
    s = Scene.from_file(tmp_path / "a.scene")
    assert [o.name for o in s] == ["table", "pole"]
    q = pc.Sphere(0.01)
    T = np.eye(4)
    T[:3, 3] = (0.5, 0.9, 0.4)  # inside the 1 x 2 table box centred at (0.5, 0, 0.4)
    assert s.collide_object(q, T) == s.find("table")
    T[:3, 3] = (0, 0, 1.15)
    assert s.collide_object(q, T) == s.find("pole")


def test_moveit_new_format_object_pose_subframes_and_plane(tmp_path):
    (tmp_path / "b.scene").write_text(NEW_FORMAT)
    s = Scene.from_file(tmp_path / "b.scene")
    assert [o.name for o in s] == ["table top", "ground"]
    q = pc.Sphere(0.01)
    T = np.eye(4)
    # the table is rotated 90 deg about z at (1, 0, 0): its 2 m side now lies along x
    T[:3, 3] = (1.9, 0.0, 0.4)
    assert s.collide_object(q, T) == s.find("table top")
    T[:3, 3] = (1.0, 0.9, 0.4)
    assert s.collide_object(q, T) == []
    # plane 0 0 1 0.5: z + 0.5 <= 0 is solid
    T[:3, 3] = (5, 5, -0.495)
    assert s.collide_object(q, T) == s.find("ground")


@pytest.mark.parametrize(
    "text, match",
    [
        ("s\n* a\n1\nbox\n1 2 q\n0 0 0\n0 0 0 1\n0 0 0 0\n.\n", r":5: expected box size .* 'q'"),
        ("s\n* a\n1\ntorus\n1 2\n0 0 0\n0 0 0 1\n0 0 0 0\n.\n", r":4: unknown shape type 'torus'"),
        ("s\n* a\n1\nbox\n1 2 3\n0 0 0\n0 0 0 1\n", r":7: unexpected end of file"),
        ("s\n* a\n1\nbox\n1 2 3\n0 0 0\n0 0 0 1\n0 0 0 0\n", r"expected '\* name' or '.'"),
        ("s\n* a\n1\nbox\n1 2 3\n0 0 0\n0 0 0 0\n0 0 0 0\n.\n", r":7: .*non-zero quaternion"),
        (
            "s\n* a\n1\nbox\n1 -2 3\n0 0 0\n0 0 0 1\n0 0 0 0\n.\n",
            r":4: box: Box.extents must be > 0",
        ),
        (
            "s\n* a\n1\nsphere\nnan\n0 0 0\n0 0 0 1\n0 0 0 0\n.\n",
            r":5: sphere radius must be finite",
        ),
        ("s\nbox\n.\n", r":2: expected '\* object name' or '.', got 'box'"),
        ("", r":1: empty scene file"),
        (
            "s\n* a\n1\nmesh\n3 1\n0 0 0\n1 0 0\n2 0 0\n0 1 2\n0 0 0\n0 0 0 1\n0 0 0 0\n.\n",
            r":4: mesh: Mesh.faces\[0\].*degenerate",
        ),
        (  # a TypeError from numpy's isfinite before
            "s\n* a\n1\nmesh\n3 1\n0 0 0\n1 0 0\n0 1 0\n0 1 100000000000000000000\n"
            "0 0 0\n0 0 0 1\n0 0 0 0\n.\n",
            r":4: mesh: Mesh.faces\[0\] = \[0.0, 1.0, 1e\+20\] indexes outside the 3 vertices",
        ),
    ],
)
def test_malformed_moveit_scene_errors_name_the_line(tmp_path, text, match):
    p = tmp_path / "bad.scene"
    p.write_text(text)
    with pytest.raises(ValueError, match=match):
        Scene.from_file(p)


def _json(tmp_path, objects, **top):
    doc = {"format": "planning_collision.scene", "version": 1, "objects": objects, **top}
    p = tmp_path / "s.json"
    p.write_text(json.dumps(doc, indent=1))
    return p


@pytest.mark.parametrize(
    "objects, match",
    [
        (
            [{"name": "ball", "shape": {"type": "sphere", "radius": -1}}],
            r"objects\[0\] \('ball'\): Sphere.radius",
        ),
        (
            [{"shape": {"type": "sphere", "radius": 1}}, {"name": "x", "shape": {"type": "torus"}}],
            r"objects\[1\] \('x'\): shape.type 'torus' is unknown",
        ),
        (
            [{"name": "b", "shape": {"type": "box"}}],
            r"objects\[0\] \('b'\): shape \(box\) is missing 'extents'",
        ),
        ([{"name": "b"}], "exactly one of"),
        (
            [
                {
                    "name": "b",
                    "shape": {"type": "sphere", "radius": 1},
                    "pose": {"position": [0, 0, "x"]},
                }
            ],
            r"\('b'\): pose.position",
        ),
        (
            [
                {
                    "name": "b",
                    "shape": {"type": "sphere", "radius": 1},
                    "pose": {"orientation_xyzw": [0, 0, 0, 0]},
                }
            ],
            "non-zero quaternion",
        ),
        ([{"name": "m", "shape": {"type": "mesh", "vertices": [], "faces": []}}], r"\('m'\): Mesh"),
        (
            [
                {
                    "name": "m",
                    "shape": {
                        "type": "mesh",
                        "vertices": [[0, 0, 0], [1, 0, 0], [2, 0, 0]],
                        "faces": [[0, 1, 2]],
                    },
                }
            ],
            r"\('m'\): Mesh.faces\[0\].*degenerate",
        ),
        ([{"name": "c", "shapes": []}], r"\('c'\): \"shapes\" must be a non-empty list"),
        (
            [{"name": "c", "shapes": [{"type": "sphere", "radius": 1, "pose": [[1, 0], [0, 1]]}]}],
            r"shapes\[0\].pose must have shape",
        ),
        ([{"name": "p", "shape": {"type": "pointcloud", "points": []}}], "PointCloud.points"),
        (  # a typo must not load as the identity rotation
            [
                {
                    "name": "b",
                    "shape": {"type": "sphere", "radius": 1},
                    "pose": {"orientation": [0, 0, 1, 0]},
                }
            ],
            r"\('b'\): pose: unknown key 'orientation' \(known: orientation_xyzw, position\)",
        ),
        (
            [{"name": "b", "shape": {"type": "box", "extents": [1, 1, 1], "size": [2, 2, 2]}}],
            r"\('b'\): shape: unknown key 'size'",
        ),
        (
            [{"name": "b", "shape": {"type": "sphere", "radius": 1}, "colour": "red"}],
            r"\('b'\): object: unknown key 'colour'",
        ),
        (  # only a compound's parts take a pose
            [{"name": "b", "shape": {"type": "sphere", "radius": 1, "pose": [0, 0, 1]}}],
            r"\('b'\): shape: unknown key 'pose'",
        ),
    ],
)
def test_malformed_json_scene_errors_name_the_object(tmp_path, objects, match):
    with pytest.raises(ValueError, match=match):
        Scene.from_file(_json(tmp_path, objects))


def test_json_syntax_errors_name_the_line_and_bad_headers_are_refused(tmp_path):
    p = tmp_path / "a.json"
    p.write_text('{"format": "planning_collision.scene",\n "objects": [\n  {"shape": 1},]\n}')
    with pytest.raises(ValueError, match=r"a.json:3:\d+: invalid JSON"):
        Scene.from_file(p)
    p.write_text('{"objects": []}')
    with pytest.raises(ValueError, match="not a scene file"):
        Scene.from_file(p)
    with pytest.raises(ValueError, match="version 7"):
        Scene.from_file(_json(tmp_path, [], version=7))
    with pytest.raises(ValueError, match="unknown key 'obstacles'"):
        Scene.from_file(_json(tmp_path, [], obstacles=[]))
    with pytest.raises(FileNotFoundError, match="nope.json"):
        Scene.from_file(tmp_path / "nope.json")


def test_mesh_files_load_as_obstacles_directly_and_from_json(tmp_path, rng):
    m = trimesh.creation.box((0.4, 0.4, 0.4))
    m.export(tmp_path / "cube.stl")
    s = Scene.from_file(tmp_path / "cube.stl")
    assert len(s) == 1 and isinstance(s.get(0).shape, pc.Mesh)
    assert s.get(0).shape.faces.shape == (12, 3)
    p = _json(
        tmp_path,
        [
            {
                "name": "c",
                "shape": {"type": "mesh", "file": "cube.stl", "scale": 2.0},
                "pose": {"position": [1, 0, 0]},
            }
        ],
    )
    t = Scene.from_file(p)
    T = np.eye(4)
    T[:3, 3] = (1.39, 0, 0)  # the scaled cube's face is at x = 1.4: a surface, so only near it
    assert t.collide_object(pc.Sphere(0.02), T) == [0]
    T[:3, 3] = (1.0, 0, 0)  # at the centre of the (hollow) surface: no contact
    assert t.collide_object(pc.Sphere(0.02), T) == []
    with pytest.raises(FileNotFoundError, match=r"objects\[0\].*missing.stl"):
        Scene.from_file(_json(tmp_path, [{"shape": {"type": "mesh", "file": "missing.stl"}}]))
    (tmp_path / "junk.stl").write_text("solid nothing\nendsolid\n")
    with pytest.raises(ValueError, match="junk.stl"):
        Scene.from_file(tmp_path / "junk.stl")


@pytest.mark.parametrize("suffix", [".json", ".scene"])
def test_an_object_crossing_the_working_range_in_a_file_is_refused_naming_the_file(
    tmp_path, suffix
):
    """Refused before, but without the file's name: 'obstacle 'wall' reaches from ...'."""
    x = 9999.8  # the pose is in range, the box's far side is not
    f = tmp_path / f"far{suffix}"
    if suffix == ".json":
        box = {"type": "box", "extents": [1, 1, 1]}
        wall = {"name": "wall", "pose": {"position": [x, 0, 0]}, "shape": box}
        f.write_text(json.dumps({"format": "planning_collision.scene", "version": 1,
                                 "objects": [wall]}))  # fmt: skip
    else:
        f.write_text(f"s\n* wall\n{x} 0 0\n0 0 0 1\n1\nbox\n1 1 1\n0 0 0\n0 0 0 1\n"
                     "0 0 0 0\n0\n.\n")  # fmt: skip
    with pytest.raises(ValueError, match=rf"{f}: obstacle 'wall' reaches from .* working range"):
        Scene.from_file(f)
