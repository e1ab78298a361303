"""Correct under use: one checker and one scene called from several Python threads at once,
and edited while queries run (docs/architecture.md, "Threads and edits").

Every test here is bounded to a few seconds; `python -m planning_collision.demos.dev.fuzz --parts
threads` runs the same workloads for minutes (docs/reliability.md).
"""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

import planning_collision as pc
from planning_collision.io.urdf import example_robot_data_dir

FINGERS = {"panda_finger_joint1": 0.04, "panda_finger_joint2": 0.04}


@pytest.fixture(scope="module")
def panda():
    try:
        example_robot_data_dir()
    except ImportError as e:
        pytest.skip(str(e))
    from planning_collision import robots

    return robots.load("panda", fixed_joints=FINGERS)


def _bookshelf() -> pc.Scene:
    from importlib.resources import files

    return pc.Scene.from_file(files("planning_collision") / "data" / "bookshelf.json")


def _run_threads(target, n: int) -> list:
    """Run target(k) in n threads at once; their results, re-raising the first error."""
    out: list = [None] * n
    errors: list = []
    start = threading.Barrier(n)

    def run(k):
        try:
            start.wait()
            out[k] = target(k)
        except BaseException as e:  # noqa: BLE001 - re-raised in the caller's thread
            errors.append(e)

    threads = [threading.Thread(target=run, args=(k,)) for k in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    return out


@pytest.mark.parametrize("n_threads", [2, 4])
def test_is_valid_batch_from_several_threads_equals_the_single_threaded_answers(
    panda, n_threads, rng
):
    """Each thread checks its own rows again and again; every answer must be the one a
    lone `is_valid` gives. (With one set of batch workspaces per checker, indexed by the
    numba thread id, two callers' thread 0 shared a workspace: tens to thousands of wrong
    answers per 10^5 in both directions.)"""
    checker = pc.CollisionChecker(panda, _bookshelf())
    Qs = [panda.random_configurations(1500, rng) for _ in range(n_threads)]
    want = [np.array([checker.is_valid(q) for q in Q]) for Q in Qs]
    assert all(w.any() and not w.all() for w in want)  # both answers occur

    def work(k):
        return sum(int((checker.is_valid_batch(Qs[k]) != want[k]).sum()) for _ in range(15))

    assert _run_threads(work, n_threads) == [0] * n_threads


def test_a_query_overlapping_an_edit_answers_for_the_scene_before_or_after_it(panda, rng):
    """Threads query (batch, state, edge, clearance, scene queries) while the main thread
    adds and removes a point cloud in front of the robot every few ms. Each answer must be
    the answer of the scene without the cloud or with it, a batch wholly one or the other
    (it runs on one snapshot), no call may raise, and once the edits stop every call sees
    the last one."""
    scene = _bookshelf()
    checker = pc.CollisionChecker(panda, scene)
    cloud = pc.PointCloud(rng.uniform(-0.25, 0.25, (400, 3)) + (0.45, 0.0, 0.45), 0.01)
    Q = panda.random_configurations(300, rng)
    edges = [panda.random_configurations(2, rng) for _ in range(40)]
    probe = pc.Sphere(0.1)
    T_probe = np.eye(4)
    T_probe[:3, 3] = (0.45, 0.0, 0.45)

    def answers():
        return (
            checker.is_valid_batch(Q),
            np.array([checker.check_edge(a, b).valid for a, b in edges]),
            scene.in_collision(probe, T_probe),
        )

    without = answers()
    cid = scene.add(cloud, name="cloud")
    with_cloud = answers()
    scene.remove(cid)
    assert (without[0] != with_cloud[0]).sum() > 10  # the cloud matters
    assert without[2] is False and with_cloud[2] is True

    stop = threading.Event()
    bad: list = []
    counts = [0, 0, 0, 0]

    def batches(_):
        while not stop.is_set():
            got = checker.is_valid_batch(Q)
            if not (np.array_equal(got, without[0]) or np.array_equal(got, with_cloud[0])):
                bad.append("a batch mixed two scenes")
            counts[0] += 1

    def states_and_edges(_):
        k = 0
        while not stop.is_set():
            i = k % len(Q)
            if checker.is_valid(Q[i]) not in (without[0][i], with_cloud[0][i]):
                bad.append(f"is_valid(Q[{i}])")
            j = k % len(edges)
            if checker.check_edge(*edges[j]).valid not in (without[1][j], with_cloud[1][j]):
                bad.append(f"check_edge {j}")
            d = checker.clearance(Q[i])
            if (d > 0) not in (without[0][i], with_cloud[0][i]):
                bad.append(f"clearance(Q[{i}])")
            k += 1
            counts[1] += 1

    def scene_queries(_):
        while not stop.is_set():
            if scene.in_collision(probe, T_probe) not in (without[2], with_cloud[2]):
                bad.append("in_collision")
            scene.min_distance(probe, T_probe)
            counts[2] += 1

    workers = [
        threading.Thread(target=_catching(f, bad))
        for f in (batches, states_and_edges, scene_queries)
    ]
    for t in workers:
        t.start()
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < 3.0:
        cid = scene.add(cloud, name="cloud")
        time.sleep(0.002)
        scene.remove(cid)
        time.sleep(0.002)
        counts[3] += 1
    stop.set()
    for t in workers:
        t.join()
    assert bad == [], bad[:5]
    assert min(counts) > 0, counts
    # no edit is missed: the checker and the scene see the last one at once
    assert np.array_equal(checker.is_valid_batch(Q), without[0])
    cid = scene.add(cloud, name="cloud")
    assert np.array_equal(checker.is_valid_batch(Q), with_cloud[0])
    assert scene.in_collision(probe, T_probe)


def _catching(f, bad: list):
    def run():
        try:
            f(None)
        except Exception as e:  # noqa: BLE001 - reported by the test
            bad.append(f"{f.__name__} raised {type(e).__name__}: {e}")

    return run


def test_the_first_queries_of_many_threads_build_the_flat_scene_once(rng):
    """`Scene.build` is lazy: threads that query a new snapshot at once share one build."""
    scene = pc.Scene()
    for k in range(40):
        T = np.eye(4)
        T[:3, 3] = rng.uniform(-2, 2, 3)
        scene.add(pc.Box(rng.uniform(0.05, 0.3, 3)), T, name=f"box {k}")
    T = np.eye(4)
    want = [scene.collide_object(pc.Sphere(r), T) for r in (0.5, 1.0, 2.0)]
    snap_ids = []
    for _ in range(5):
        scene.add(pc.Sphere(0.01), _far())  # a new, unbuilt snapshot
        snap = scene.snapshot()

        def first(k, snap=snap):
            r = (0.5, 1.0, 2.0)[k % 3]
            got = scene.collide_object(pc.Sphere(r), T)
            snap_ids.append(id(snap.flat()))
            return got == want[k % 3]

        assert all(_run_threads(first, 6))
        assert len({i for i in snap_ids[-6:]}) == 1


def _far():
    T = np.eye(4)
    T[:3, 3] = (50.0, 50.0, 50.0)
    return T


def test_an_obstacle_pose_read_from_the_scene_is_read_only():
    scene = pc.Scene()
    T = np.eye(4)
    T[0, 3] = 1.0
    oid = scene.add(pc.Box((0.1, 0.1, 0.1)), T, name="box")
    T[0, 3] = 5.0  # the caller's array is not the scene's
    got = scene.get(oid)
    assert got.T[0, 3] == 1.0
    with pytest.raises(ValueError, match="read-only"):
        got.T[0, 3] = 2.0
    part = np.eye(4)
    cid = scene.add([(pc.Sphere(0.1), part)], np.eye(4), name="compound")
    shape = scene.get(cid).shape
    assert isinstance(shape, tuple)
    with pytest.raises(ValueError, match="read-only"):
        shape[0][1][0, 3] = 1.0


def test_a_thread_that_ends_takes_its_workspaces_with_it_and_leaves_its_counts(panda, rng):
    """A server that starts a thread per request must not keep a workspace (~1 MB) per
    thread it ever saw; the counters of the threads that ended stay in `stats`."""
    import gc

    checker = pc.CollisionChecker(panda, _bookshelf())
    Q = panda.random_configurations(40, rng)

    def request(q):
        checker.is_valid(q)
        checker.is_valid_batch(Q[:4])

    for q in Q:
        t = threading.Thread(target=request, args=(q,))
        t.start()
        t.join()
    gc.collect()
    assert len(checker._ws.live) == 0
    assert checker.stats["states"] == len(Q) * 5


def test_a_scene_pickles_for_worker_processes_and_keeps_its_answers(rng):
    import pickle

    s = _bookshelf()
    s.build()
    t = pickle.loads(pickle.dumps(s))
    assert [o.name for o in t] == [o.name for o in s] and t.version != s.version
    probe = pc.Sphere(0.1)
    for _ in range(20):
        T = np.eye(4)
        T[:3, 3] = rng.uniform(-1.0, 1.0, 3)
        assert t.collide_object(probe, T) == s.collide_object(probe, T)
    t.add(pc.Sphere(0.1), None, name="after")  # its lock came back
    assert len(t) == len(s) + 1
