"""Worker processes as users make them: spawn and Ray workers (robots and scenes pickled to
them), fork after `is_valid_batch` has run numba's threads, and numba's workqueue layer from
several threads. Each answers as the parent would, or refuses by name; none aborts."""

from __future__ import annotations

import multiprocessing as mp
import os
import pickle
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import planning_collision as pc
from planning_collision import stamps
from planning_collision.robot.cache import CACHE_ENV

ROOT = Path(__file__).resolve().parents[1]

# link1 against link3 and the fingers: pairs the planar arm checks, which collide in ~3 %
# of its configurations; the parent allows them, the worker checks them again
_PAIRS = [("link1", "link3"), ("link1", "finger_left"), ("link1", "finger_right")]


def _self_free(robot, Q) -> np.ndarray:
    """Per row of Q: no checked self pair of `robot` collides (Robot.count_self_collisions,
    the reference that never goes through a checker)."""
    pairs = robot.self_collision_pairs()
    return np.array([robot.count_self_collisions(q[None], pairs).sum() == 0 for q in Q])


def _disallow_in_worker(blob: bytes) -> tuple:
    """In a worker: a checker on the unpickled robot, then the pairs checked again, the last
    edit taking the version the robot came with when this process's counter is made to
    reach it. Returns (rows where the checker disagrees with the reference after the edit,
    rows where the edit changed the reference)."""
    robot, scene, Q = pickle.loads(blob)
    checker = pc.CollisionChecker(robot, scene, self_tables=False)
    before = checker.is_valid_batch(Q)
    target = robot.version  # as pickled, unless unpickling took a version of this process
    while stamps._COUNTER[0] < target - 2 * len(_PAIRS) + 1:
        stamps.next_stamp()
    for a, b in _PAIRS:
        robot.disallow(a, b)
    truth = _self_free(robot, Q)
    after = checker.is_valid_batch(Q)
    fresh = pc.CollisionChecker(robot, scene, self_tables=False).is_valid_batch(Q)
    return int((after != truth).sum()), int((fresh != truth).sum()), int((before != truth).sum())


def _robot_blob(n: int = 2000) -> bytes:
    from planning_collision import robots

    robot = robots.load("planar_arm")
    for a, b in _PAIRS:
        robot.allow(a, b)
    for _ in range(40):  # a version the worker's own counter would reach
        stamps.next_stamp()
    return pickle.dumps((robot, pc.Scene(), robot.random_configurations(n, 7)))


def test_an_acm_edit_in_a_spawn_worker_reaches_a_checker_built_there():
    """The robot's ACM version was pickled as a number; a spawn worker's own counter could
    give its next edit the same one, and a checker built on the unpickled robot (and the
    robot part cache keyed by that version) saw no change: 48 of 2,000 self-colliding
    configurations called free."""
    blob = _robot_blob()
    with mp.get_context("spawn").Pool(1) as pool:
        wrong, wrong_fresh, changed = pool.apply(_disallow_in_worker, (blob,))
    assert changed > 0  # the edit matters
    assert wrong == 0 and wrong_fresh == 0


def test_an_acm_edit_in_a_ray_worker_reaches_a_checker_built_there():
    ray = pytest.importorskip("ray")
    blob = _robot_blob(500)
    env = {k: os.environ[k] for k in ("NUMBA_CACHE_DIR", CACHE_ENV) if k in os.environ}
    ray.init(
        num_cpus=1,
        include_dashboard=False,
        _node_ip_address="127.0.0.1",
        runtime_env={"env_vars": env},
        log_to_driver=False,
        configure_logging=False,
    )
    try:
        wrong, wrong_fresh, changed = ray.get(ray.remote(_disallow_in_worker).remote(blob))
    finally:
        ray.shutdown()
    assert changed > 0
    assert wrong == 0 and wrong_fresh == 0


def test_an_unpickled_robot_takes_a_version_of_the_receiving_process():
    from planning_collision import robots

    robot = robots.load("planar_arm")
    copy = pickle.loads(pickle.dumps(robot))
    assert copy.version != robot.version and copy.version > robot.version
    assert copy.acm.entries() == robot.acm.entries()
    assert copy.acm.content_key() == robot.acm.content_key()
    copy.allow("link1", "link3")  # the copy's own matrix: the original is unchanged
    assert not robot.acm.is_allowed("link1", "link3") and copy.acm.is_allowed("link1", "link3")


def test_what_a_worker_unpickles_stays_read_only():
    """numpy unpickles arrays writeable: a robot's FK arrays (a writeable model is another
    numba type, so FK compiled a second time in every worker), obstacle poses and shape
    arrays (which a snapshot promises nobody changes) come back read-only."""
    from planning_collision import robots

    robot = pickle.loads(pickle.dumps(robots.load("planar_arm")))
    assert not any(a.flags.writeable for a in robot.model)
    scene = pc.Scene()
    scene.add(pc.Box([0.1, 0.2, 0.3]), np.eye(4), name="box")
    scene.add([(pc.Sphere(0.1), np.eye(4)), (pc.Convex(np.eye(3)), np.eye(4))], name="parts")
    copy = pickle.loads(pickle.dumps(scene))
    box, parts = copy.records()
    assert not box.T.flags.writeable and not box.shape.extents.flags.writeable
    for _, T in parts.shape:
        assert not T.flags.writeable
    assert not parts.shape[1][0].points.flags.writeable


def _run(code: str, **env) -> subprocess.CompletedProcess:
    """`code` in a fresh interpreter (the repository as its directory, `env` added)."""
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        cwd=ROOT,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=900,
    )


_FORKS = """
import multiprocessing as mp, os, threading, time
import numpy as np
import planning_collision as pc
from planning_collision import robots

robot = robots.load("planar_arm")
scene = pc.Scene()
T = np.eye(4)
T[0, 3] = 0.6
scene.add(pc.Box([0.3, 0.3, 0.3]), T)
checker = pc.CollisionChecker(robot, scene)
Q = robot.random_configurations(3000, 3)
want = np.array([checker.is_valid(q) for q in Q])
assert want.any() and not want.all()


def child(report):
    got = checker.is_valid_batch(Q)
    ok = np.array_equal(got, want) and np.array_equal(got, [checker.is_valid(q) for q in Q])
    scene.add(pc.Sphere(0.05), None)  # an edit: the checker rebuilds (its locks)
    checker.is_valid_batch(Q)
    report(ok)


def fork_and_wait(what):
    pid = os.fork()
    if pid == 0:
        child(lambda ok: os._exit(0 if ok else 3))
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            print(what, os.waitstatus_to_exitcode(status), flush=True)
            return
        time.sleep(0.1)
    os.kill(pid, 9)
    os.waitpid(pid, 0)
    print(what, "hung", flush=True)


# a fork while other threads hold the checker's and the scene's locks
held = [checker._rebuilding, checker._ws.lock, scene._edit]
go, done = threading.Event(), threading.Event()


def holder():
    for lock in held:
        lock.acquire()
    go.set()
    done.wait()
    for lock in held:
        lock.release()


t = threading.Thread(target=holder)
t.start()
go.wait()
fork_and_wait("fork with locks held")
done.set()
t.join()
assert np.array_equal(checker.is_valid_batch(Q), want)  # numba's threads have run
fork_and_wait("fork")


def rows(k):
    return checker.is_valid_batch(Q[k::4]).tolist()


with mp.get_context("fork").Pool(2) as pool:  # multiprocessing's default on Linux
    try:
        got = pool.map_async(rows, range(4), chunksize=1).get(120)
        same = all(np.array_equal(g, want[k::4]) for k, g in enumerate(got))
        print("fork pool", int(same), flush=True)
    except mp.TimeoutError:  # a worker died: the pool waits for its result for ever
        print("fork pool hung", flush=True)
"""


def test_a_child_forked_after_is_valid_batch_answers_as_its_parent():
    """After a batch ran on numba's GNU OpenMP threads, a forked child died at its first
    batch ("fork() called from a process already using GNU OpenMP"); a child forked while
    another thread held one of the package's locks would wait for it for ever. Each child
    runs in a time limit and reports 0 when its answers equal the parent's."""
    r = _run(_FORKS)
    lines = [ln for ln in r.stdout.splitlines() if ln]
    assert r.returncode == 0, (r.stdout, r.stderr[-3000:])
    assert lines == ["fork with locks held 0", "fork 0", "fork pool 1"], (lines, r.stderr[-2000:])


_THREADS = """
import threading
import numba, numpy as np
import planning_collision as pc
from planning_collision import robots

robot = robots.load("planar_arm")
checker = pc.CollisionChecker(robot, pc.Scene())
Q = robot.random_configurations(2000, 0)
want = np.array([checker.is_valid(q) for q in Q])
bad = []


def run():
    for _ in range(20):
        if not np.array_equal(checker.is_valid_batch(Q), want):
            bad.append(1)


threads = [threading.Thread(target=run) for _ in range(4)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print(numba.threading_layer(), len(bad))
"""


@pytest.mark.parametrize("layer", ["workqueue", "default"])
def test_batches_from_several_threads_on_every_threading_layer(layer):
    """numba's workqueue layer (its fallback where neither TBB nor GNU OpenMP loads) is not
    thread-safe: batches from four threads aborted the process ("Concurrent access has
    been detected"), though the checker is documented thread-safe."""
    r = _run(_THREADS, NUMBA_THREADING_LAYER=layer)
    assert r.returncode == 0, r.stderr[-3000:]
    got_layer, bad = r.stdout.split()
    assert bad == "0" and (layer == "default" or got_layer == layer)
