"""Obstacles given as arrays (`ObstacleArrays`, `Scene.from_arrays`, `Scene.replace_all`)
build the scene `Scene.from_records` builds, array for array and verdict for verdict; bad
arrays are refused naming the argument, the obstacle and the value; a scene replaced while
other threads query answers for one problem or the other; a checker that follows a replaced
scene answers as a new one would, in the workspace it already has."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import planning_collision as pc
from planning_collision.io import MBM_SETS, load_mbm, mbm_path
from planning_collision.io.scene_files import ObstacleRecord
from planning_collision.kernels.base.tolerances import WORLD_LIMIT
from planning_collision.testing.sampling import random_pose
from tests.conftest import load_panda

FINGERS = {"panda_finger_joint1": 0.065, "panda_finger_joint2": 0.065}


def _arrays(flat) -> list:
    out = []
    for f in flat:
        out += _arrays(f) if isinstance(f, tuple) else [f]
    return out


def _same_scene(a: pc.Scene, b: pc.Scene) -> None:
    """a and b hold the same obstacles (ids, names, shapes, poses) and flat form, bit for
    bit."""
    for x, y in zip(_arrays(a.flat), _arrays(b.flat), strict=True):
        assert x.dtype == y.dtype and x.shape == y.shape and np.array_equal(x, y)
    assert np.array_equal(a.slot_ids, b.slot_ids)
    assert [(o.id, o.name, o.shape) for o in a] == [(o.id, o.name, o.shape) for o in b]
    assert all(np.array_equal(o.T, p.T) for o, p in zip(a, b, strict=True))


def _records(rng, n: int) -> list:
    makers = [
        lambda: pc.Sphere(rng.uniform(0.01, 0.3)),
        lambda: pc.Box(rng.uniform(0.01, 0.6, 3)),
        lambda: pc.Capsule(rng.uniform(0.01, 0.2), rng.uniform(0.0, 0.5)),
        lambda: pc.Cylinder(rng.uniform(0.01, 0.2), rng.uniform(0.01, 0.5)),
        lambda: pc.Cone(rng.uniform(0.01, 0.2), rng.uniform(0.01, 0.5)),
    ]
    out = []
    for k in range(n):
        shape = makers[int(rng.integers(len(makers)))]()
        out.append(ObstacleRecord(f"o{k}" if k % 3 else None, shape, random_pose(rng, 1.5)))
    return out


@pytest.mark.parametrize("name", MBM_SETS)
def test_the_motionbenchmaker_scenes_from_arrays_are_the_scenes_from_records(name):
    for p in load_mbm(mbm_path(name)).problems:
        arrays = pc.ObstacleArrays.from_records(p.obstacles)
        _same_scene(pc.Scene.from_records(p.obstacles), pc.Scene.from_arrays(arrays))


@given(st.integers(0, 2**31), st.integers(1, 40))
def test_random_primitives_from_arrays_build_the_scene_and_answers_of_records(seed, n):
    rng = np.random.default_rng(seed)
    records = _records(rng, n)
    old = pc.Scene.from_records(records)
    new = pc.Scene()
    new.add(pc.Sphere(1.0), name="replaced")  # replace_all: every obstacle goes, ids go on
    ids = new.replace_all(pc.ObstacleArrays.from_records(records))
    assert ids == list(range(1, n + 1)) and len(new) == n and new.find("replaced") == []
    for x, y in zip(_arrays(old.flat), _arrays(new.flat), strict=True):
        assert x.dtype == y.dtype and np.array_equal(x, y)
    assert [o.name for o in new] == [o.name for o in old]
    for _ in range(6):
        q, T = pc.Capsule(rng.uniform(0.02, 0.2), rng.uniform(0, 0.4)), random_pose(rng, 1.5)
        assert [i - 1 for i in new.collide_object(q, T)] == old.collide_object(q, T)
        want = [(i, r.distance) for i, r in old.distances(q, T)]
        assert [(i - 1, r.distance) for i, r in new.distances(q, T)] == want


def test_the_array_kinds_build_the_scene_of_their_shapes(rng):
    T = np.stack([random_pose(rng, 1.0) for _ in range(10)])
    parts = [
        (pc.ObstacleArrays.boxes([[0.1, 0.2, 0.3], [1, 1, 1]], T[:2], ["a", "b"]),
         [pc.Box((0.1, 0.2, 0.3)), pc.Box((1, 1, 1))]),
        (pc.ObstacleArrays.spheres([0.1, 0.2], T[2:4]), [pc.Sphere(0.1), pc.Sphere(0.2)]),
        (pc.ObstacleArrays.capsules([0.1, 0.05], [0.0, 0.3], T[4:6]),
         [pc.Capsule(0.1, 0.0), pc.Capsule(0.05, 0.3)]),
        (pc.ObstacleArrays.cylinders([0.1, 0.05], [0.2, 0.3], T[6:8]),
         [pc.Cylinder(0.1, 0.2), pc.Cylinder(0.05, 0.3)]),
        (pc.ObstacleArrays.cones([0.1, 0.05], [0.2, 0.3], T[8:10]),
         [pc.Cone(0.1, 0.2), pc.Cone(0.05, 0.3)]),
    ]  # fmt: skip
    arrays = sum((a for a, _ in parts[1:]), parts[0][0])
    shapes = [s for _, ss in parts for s in ss]
    names = ["a", "b"] + [None] * 8
    assert len(arrays) == 10 and arrays.names == tuple(names)
    assert [arrays.shape(k) for k in range(10)] == shapes
    general = pc.ObstacleArrays(arrays.kind_names(), arrays.size, arrays.T, names)
    for field in ("kind", "size", "T"):
        assert np.array_equal(getattr(general, field), getattr(arrays, field))
    records = [ObstacleRecord(n, s, t) for n, s, t in zip(names, shapes, T, strict=True)]
    _same_scene(pc.Scene.from_records(records), pc.Scene.from_arrays(arrays))
    with pytest.raises(ValueError, match="read-only"):
        arrays.T[0, 0, 3] = 1.0
    with pytest.raises(AttributeError):
        arrays.names = ()


def _fails(match, fn, *args, **kw):
    with pytest.raises((ValueError, TypeError), match=match):
        fn(*args, **kw)


def test_bad_arrays_are_refused_naming_the_argument_the_obstacle_and_the_value():
    A = pc.ObstacleArrays
    eye = np.eye(4)[None].repeat(2, axis=0)
    _fails(
        r"extents\[1\] must be > 0, got \[0.1, 0.0, 0.1\]", A.boxes, [[1, 1, 1], [0.1, 0, 0.1]], eye
    )
    _fails(
        r"extents must be finite, got .*nan.* at index",
        A.boxes,
        [[1, 1, np.nan], [1, 1, 1]],
        eye,
    )
    _fails(r"extents must have shape \(n, 3\)", A.boxes, [1, 1, 1], eye[:1])
    _fails(r"extents must be a numeric array .* got booleans", A.boxes, [[True] * 3], eye[:1])
    _fails(r"extents must lie within", A.boxes, [[1, 1, 2 * WORLD_LIMIT]], eye[:1])
    _fails(r"radii\[0\] must be > 0, got -0.1", A.spheres, [-0.1], eye[:1])
    _fails(r"lengths\[1\] must be >= 0, got -1.0", A.capsules, [0.1, 0.1], [0, -1], eye)
    _fails(r"lengths\[0\] must be > 0, got 0.0", A.cylinders, [0.1], [0.0], eye[:1])
    _fails(r"lengths has 1 entries for 2 radii", A.cones, [0.1, 0.1], [0.2], eye)
    _fails(r"T has 2 poses for 1 obstacles", A.spheres, [0.1], eye)
    skew = eye.copy()
    skew[1, 0, 1] = 0.5
    _fails(r"T\[1\] rotation must be orthonormal", A.spheres, [0.1, 0.1], skew)
    far = eye.copy()
    far[0, 0, 3] = 2 * WORLD_LIMIT
    _fails(r"T\[0\] translation .* outside the working range", A.spheres, [0.1, 0.1], far)
    _fails(r"T\[0\] must be finite", A.spheres, [0.1], [np.full((4, 4), np.nan)])
    _fails(r"names has 1 entries for 2", A.spheres, [0.1, 0.1], eye, names=["a"])
    _fails(r"names\[0\] must be a str or None, got int", A.spheres, [0.1], eye[:1], names=[3])
    _fails(
        r"size\[1\] \(a box: extents\) must be > 0",
        A,
        ["sphere", "box"],
        [[1, 0, 0], [1, 0, 1]],
        eye,
    )
    _fails(r"size\[0\] \(a cylinder: radius, length\) must be > 0", A, [3], [[1, 0, 0]], eye[:1])
    _fails(r"kind must be a sequence of sphere, capsule", A, ["mesh"], [[1, 1, 1]], eye[:1])
    mesh = pc.Mesh(np.eye(3), np.array([[0, 1, 2]]))
    _fails(r"records\[1\] \('m'\) is a Mesh", A.from_records, [
        ObstacleRecord("s", pc.Sphere(0.1), None), ObstacleRecord("m", mesh, None)])  # fmt: skip
    bad = ObstacleRecord("s", pc.Sphere(0.1), np.zeros((4, 4)))
    _fails(r"T\[0\] must have last row", A.from_records, [bad])
    _fails(r"replace_all takes ObstacleArrays, got list", pc.Scene().replace_all, [])


def test_an_obstacle_outside_the_working_range_is_named_and_the_scene_is_unchanged():
    scene = pc.Scene()
    ids = scene.replace_all(pc.ObstacleArrays.spheres([0.1], np.eye(4)[None], ["kept"]))
    T = np.eye(4)[None].repeat(2, axis=0)
    T[1, 0, 3] = WORLD_LIMIT - 0.5  # its centre is inside, its far side is not
    arrays = pc.ObstacleArrays.boxes([[1, 1, 1], [2, 2, 2]], T, ["fine", "edge of the world"])
    v = scene.version
    with pytest.raises(ValueError, match="obstacle 'edge of the world' reaches .* outside the"):
        scene.replace_all(arrays)
    assert scene.version == v and scene.ids() == ids and scene.get(ids[0]).name == "kept"
    with pytest.raises(ValueError, match=r"obstacles\[0\] reaches"):
        pc.Scene.from_arrays(pc.ObstacleArrays.boxes([[2, 2, 2]], T[1:]))


def test_a_scene_of_arrays_reads_edits_and_pickles_as_any_scene(rng):
    import pickle

    records = _records(rng, 12)
    scene = pc.Scene.from_arrays(pc.ObstacleArrays.from_records(records))
    ref = pc.Scene.from_records(records)
    assert 5 in scene and 12 not in scene and True not in scene and len(scene) == 12
    o = scene.get(5)
    assert (o.id, o.name, o.shape) == (5, records[5].name, records[5].shape)
    with pytest.raises(ValueError, match="read-only"):
        o.T[0, 3] = 1.0
    assert scene.find("o4") == [4] and scene.name_of(0) == "#0"
    assert all(np.array_equal(a, b) for a, b in zip(scene.aabb(3), ref.aabb(3), strict=True))
    assert scene.stats()["objects"] == 12
    back = pickle.loads(pickle.dumps(scene))
    _same_scene(back, ref)
    scene.remove(3)
    ref.remove(3)
    scene.replace(4, pc.Sphere(0.3), np.eye(4))
    ref.replace(4, pc.Sphere(0.3), np.eye(4))
    assert scene.add(pc.Box((1, 1, 1))) == ref.add(pc.Box((1, 1, 1))) == 12
    _same_scene(scene, ref)


def test_the_detail_filter_scene_from_arrays_is_the_one_from_records(rng):
    records = _records(rng, 15)
    a = pc.Scene.from_records(records, min_size=0.2)
    b = pc.Scene.from_arrays(pc.ObstacleArrays.from_records(records), min_size=0.2)
    assert a.stats()["replaced_by_detail_filter"] > 0
    _same_scene(a, b)


def test_an_empty_array_set_empties_the_scene():
    scene = pc.Scene.from_arrays(pc.ObstacleArrays.spheres([0.1], np.eye(4)[None]))
    assert scene.replace_all(pc.ObstacleArrays.concat([])) == [] and len(scene) == 0
    assert scene.min_distance(pc.Sphere(0.1), np.eye(4)).id is None


def _problems(n_per_set: int = 3) -> list:
    out = []
    for name in MBM_SETS:
        out += [p for p in load_mbm(mbm_path(name)).problems if p.valid][:n_per_set]
    return out


def test_a_checker_following_replaced_scenes_answers_as_new_checkers_in_one_workspace(rng):
    panda = load_panda(FINGERS)
    scene = pc.Scene()
    checker = pc.CollisionChecker(panda, scene)
    Q = panda.random_configurations(120, rng)
    workspaces = set()
    for p in _problems():
        scene.replace_all(pc.ObstacleArrays.from_records(p.obstacles))
        fresh = pc.CollisionChecker(panda, pc.Scene.from_records(p.obstacles))
        assert [checker.is_valid(q) for q in Q] == [fresh.is_valid(q) for q in Q]
        edges = [(Q[i], Q[i + 1]) for i in range(0, 40, 2)]
        assert [checker.check_edge(a, b).valid for a, b in edges] == [
            fresh.check_edge(a, b).valid for a, b in edges
        ]
        assert np.array_equal(checker.is_valid_batch(Q), fresh.is_valid_batch(Q))
        assert checker.clearance(p.start) == fresh.clearance(p.start)
        workspaces.add(id(checker._ws.mine.ws))
    assert len(workspaces) == 1  # handed on from scene to scene, never made again


def test_a_held_workspace_is_never_handed_to_the_next_scene(rng):
    """`bound` holds the thread's workspace: a scene replaced and a check made in the same
    thread meanwhile (a planner's stop callback) get another one, and the holder's caches
    are left as they were; `bind` pins it for good."""
    panda = load_panda(FINGERS)
    p, q = _problems(2)[:2]
    scene = pc.Scene.from_arrays(pc.ObstacleArrays.from_records(p.obstacles))
    checker = pc.CollisionChecker(panda, scene)
    checker.check_edge(p.start, p.goals[0])
    with checker.bound() as (model, ws):
        ec = ws.buffers.ec_q.copy()
        scene.replace_all(pc.ObstacleArrays.from_records(q.obstacles))
        checker.is_valid(q.start)
        assert checker._ws.mine.ws is not ws and np.array_equal(ws.buffers.ec_q, ec, equal_nan=True)
        assert model is not checker.model
    other = checker._ws.mine.ws
    scene.replace_all(pc.ObstacleArrays.from_records(p.obstacles))
    checker.is_valid(p.start)
    assert checker._ws.mine.ws is other  # free again: handed on
    _, pinned = checker.bind()
    scene.replace_all(pc.ObstacleArrays.from_records(q.obstacles))
    checker.is_valid(q.start)
    assert checker._ws.mine.ws is not pinned


def test_queries_during_replacements_answer_for_one_problem_or_the_other(rng):
    """Two problems' scenes swapped in while two threads check states: every answer is
    the answer of one of the two scenes (a batch: all rows of one)."""
    panda = load_panda(FINGERS)
    p, q = _problems(1)[1:3]
    arrays = [pc.ObstacleArrays.from_records(x.obstacles) for x in (p, q)]
    refs = [pc.CollisionChecker(panda, pc.Scene.from_arrays(a)) for a in arrays]
    Q = panda.random_configurations(16, rng)
    want = [refs[k].is_valid_batch(Q) for k in range(2)]
    assert not np.array_equal(want[0], want[1])
    scene = pc.Scene.from_arrays(arrays[0])
    checker = pc.CollisionChecker(panda, scene)
    stop = threading.Event()
    bad = []

    def query():
        i = 0
        while not stop.is_set():
            got = checker.is_valid_batch(Q)
            if not any(np.array_equal(got, w) for w in want):
                bad.append(got)
            i = (i + 1) % len(Q)
            if checker.is_valid(Q[i]) not in (want[0][i], want[1][i]):
                bad.append(i)

    threads = [threading.Thread(target=query) for _ in range(2)]
    for t in threads:
        t.start()
    for k in range(300):
        scene.replace_all(arrays[k % 2])
    stop.set()
    for t in threads:
        t.join()
    assert bad == []
