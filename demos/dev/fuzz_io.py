"""The fuzzer's parts for what comes from outside the process: files, worker processes and
the model cache (`python -m planning_collision.demos.dev.fuzz --parts files processes caches`;
demos/dev/fuzz.py has the others).

- ``files``: the bookshelf scene file with a JSON value replaced by anything JSON holds, its
  bytes corrupted, or (as MoveIt's .scene) a token replaced by an odd number (10^20 as a
  triangle index or count, NaN, inf, negative): loaded, or refused by a ValueError naming
  the file.
- ``processes``: the planar arm among boxes, its answers on 400 configurations known in the
  parent. Rounds of: a child forked after a batch ran (numba's threads), a child forked while
  other threads hold random locks of the package (the checker's, the scene's, the ACM
  stamps'), editing the scene and checking again; a spawn worker given the robot pickled
  after random ACM edits, whose own counter is moved to the robot's version before it edits
  the ACM again (a checker built there must follow: Robot.count_self_collisions is the
  reference); then once each, four threads of batches on numba's workqueue layer and, when
  Ray is installed, a Ray worker doing the spawn round. Every answer must be the parent's
  (or the reference's), and every process must end, in a time limit.
- ``caches``: a robot's cache entries (the planar arm's link models, sampled ACM and
  self-pair tables; the piano's outer hulls) damaged at random: truncated, emptied, bytes
  flipped, an array's values changed (its checksum left as it was), an array's rows dropped
  (its checksum redone: the entry must still be found inconsistent), swapped for another
  entry, opened to other users. After each, the robot and a checker are built again as a
  new process would: their answers must be the intact cache's, with at most one warning
  naming the file (or, opened to others, its directory). (Values changed with a checksum
  redone, by whoever can write the directory, are what its permissions rule out: no
  checksum tells them from the builder's.)
"""

from __future__ import annotations

import collections
import json
import logging
import os
import pickle
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from importlib.resources import files
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
_PAIRS = [("link1", "link3"), ("link1", "finger_left"), ("link1", "finger_right")]


class Tally:
    """Counts per outcome, and the first few violations in full."""

    def __init__(self, name: str):
        self.name = name
        self.counts = collections.Counter()
        self.violations: list[str] = []

    def ok(self, what: str) -> None:
        self.counts[what] += 1

    def bad(self, what: str) -> None:
        self.counts["VIOLATION"] += 1
        if len(self.violations) < 10:
            self.violations.append(what)

    @property
    def inputs(self) -> int:
        return sum(self.counts.values())

    def report(self) -> str:
        parts = ", ".join(f"{k} {v:,}" for k, v in sorted(self.counts.items()))
        lines = [f"{self.name}: {self.inputs:,} inputs ({parts})"]
        lines += [f"    violation: {v}" for v in self.violations]
        return "\n".join(lines)


def _arm_world(rng):
    import planning_collision as pc
    from planning_collision import robots

    robot = robots.load("planar_arm")
    scene = pc.Scene()
    for _ in range(4):
        T = np.eye(4)
        T[:3, 3] = (*rng.uniform(-0.8, 0.8, 2), 0.0)
        scene.add(pc.Box(rng.uniform(0.05, 0.3, 3)), T)
    return robot, scene


def _self_free(robot, Q) -> np.ndarray:
    pairs = robot.self_collision_pairs()
    return np.array([robot.count_self_collisions(q[None], pairs).sum() == 0 for q in Q])


def _acm_round(blob: bytes, seed: int) -> tuple[int, int]:
    """In a worker: the pickled robot's ACM edited again after this process's counter has
    reached the robot's version; (rows where a checker built before the edits disagrees
    with the reference, rows)."""
    import planning_collision as pc
    from planning_collision import stamps

    robot, Q = pickle.loads(blob)
    rng = np.random.default_rng(seed)
    checker = pc.CollisionChecker(robot, pc.Scene(), self_tables=False)
    checker.is_valid_batch(Q)
    edits = [p for p in _PAIRS if rng.random() < 0.7] or _PAIRS[:1]
    while stamps._COUNTER[0] < robot.version - 2 * len(edits) + 1:
        stamps.next_stamp()
    for a, b in edits:
        robot.disallow(a, b) if robot.acm.is_allowed(a, b) else robot.allow(a, b)
    return int((checker.is_valid_batch(Q) != _self_free(robot, Q)).sum()), len(Q)


def _fork_round(t, checker, scene, Q, want, hold: list) -> None:
    """A child forked (while a thread holds `hold`) checks Q, edits the scene, checks again."""
    import planning_collision as pc

    go, done = threading.Event(), threading.Event()

    def holder():
        for lock in hold:
            lock.acquire()
        go.set()
        done.wait()
        for lock in hold:
            lock.release()

    th = threading.Thread(target=holder)
    th.start()
    go.wait()
    pid = os.fork()
    if pid == 0:  # the child: report by exit code only
        ok = np.array_equal(checker.is_valid_batch(Q), want)
        cid = scene.add(pc.Sphere(0.01), np.eye(4))  # an edit, then the checker follows it
        scene.remove(cid)
        ok = ok and np.array_equal(checker.is_valid_batch(Q), want)
        os._exit(0 if ok else 3)
    done.set()
    th.join()
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        got, status = os.waitpid(pid, os.WNOHANG)
        if got:
            code = os.waitstatus_to_exitcode(status)
            label = f"fork ({len(hold)} locks held)"
            t.ok(label) if code == 0 else t.bad(f"{label}: child ended with {code}")
            return
        time.sleep(0.05)
    os.kill(pid, 9)
    os.waitpid(pid, 0)
    t.bad(f"fork ({len(hold)} locks held): the child hung")


_WORKQUEUE = """
import threading, numpy as np, planning_collision as pc
from planning_collision import robots
robot = robots.load("planar_arm")
checker = pc.CollisionChecker(robot, pc.Scene())
Q = robot.random_configurations(2000, 0)
want = np.array([checker.is_valid(q) for q in Q])
bad = []
def run():
    for _ in range(20):
        bad.append(not np.array_equal(checker.is_valid_batch(Q), want))
threads = [threading.Thread(target=run) for _ in range(4)]
[x.start() for x in threads]
[x.join() for x in threads]
print(sum(bad), len(bad))
"""


def _workqueue_round(t) -> None:
    r = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(_WORKQUEUE)],
        cwd=ROOT, env={**os.environ, "NUMBA_THREADING_LAYER": "workqueue"},
        capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    if r.returncode != 0:
        t.bad(f"workqueue layer, 4 threads: exit {r.returncode}: {r.stderr[-300:]}")
    else:
        bad, n = (int(x) for x in r.stdout.split())
        t.ok("workqueue batches") if bad == 0 else t.bad(f"workqueue: {bad} of {n} wrong")


def fuzz_processes(n: int, rng):
    import multiprocessing as mp

    import planning_collision as pc
    from planning_collision import robots, stamps

    t = Tally("processes")
    robot, scene = _arm_world(rng)
    checker = pc.CollisionChecker(robot, scene)
    Q = robot.random_configurations(400, rng)
    want = np.array([checker.is_valid(q) for q in Q])
    checker.is_valid_batch(Q)  # numba's threads have run: a fork after this must cope
    locks = [checker._ws.lock, checker._rebuilding, scene._edit, stamps._lock]
    with mp.get_context("spawn").Pool(2) as pool:
        for k in range(n):
            if k % 2 == 0:
                hold = [x for x in locks if rng.random() < 0.5]
                _fork_round(t, checker, scene, Q, want, hold)
                continue
            arm = robots.load("planar_arm")  # a robot of its own, edited here and there
            for a, b in _PAIRS:
                if rng.random() < 0.7:
                    arm.allow(a, b)
            blob = pickle.dumps((arm, Q))
            wrong, rows = pool.apply_async(_acm_round, (blob, int(rng.integers(1 << 30)))).get(600)
            t.ok("spawn worker ACM edits") if wrong == 0 else t.bad(f"spawn: {wrong}/{rows} wrong")
    _workqueue_round(t)
    try:
        import ray
    except ImportError:
        return t
    ray.init(num_cpus=1, include_dashboard=False, _node_ip_address="127.0.0.1",
             log_to_driver=False, configure_logging=False)  # fmt: skip
    try:
        blob = pickle.dumps((robot, Q))
        wrong, rows = ray.get(ray.remote(_acm_round).remote(blob, 1))
        t.ok("ray worker ACM edits") if wrong == 0 else t.bad(f"ray: {wrong}/{rows} wrong")
    finally:
        ray.shutdown()
    return t


# ---- files ---------------------------------------------------------------------------


def fuzz_files(n: int, rng):
    import planning_collision as pc

    t = Tally("files")
    shelf = files("planning_collision") / "data" / "bookshelf.json"
    doc = json.loads(shelf.read_text())
    paths = list(_json_paths(doc))
    odd = [True, False, None, "x", 10**400, 1e300, -1.0, 0, [], {}, [[1, 2]], [True] * 3, "NaN"]
    with tempfile.TemporaryDirectory() as d:
        moveit = Path(d) / "shelf.scene"
        pc.Scene.from_file(shelf).to_file(moveit)
        tokens = moveit.read_text().split(" ")
        odd_tokens = ["100000000000000000000", "1e20", "-7", "nan", "inf", "x", "2.5", "0"]
        for _ in range(n):
            f = Path(d) / "scene.json"
            u = rng.random()
            if u < 0.2:  # a .scene token replaced (counts, indices, sizes, poses)
                f = Path(d) / "scene.scene"
                k = int(rng.integers(len(tokens)))
                tok = odd_tokens[int(rng.integers(len(odd_tokens)))]
                raw = " ".join(tokens[:k] + [tok] + tokens[k + 1 :]).encode()
            elif u < 0.8:
                path = paths[int(rng.integers(len(paths)))]
                v = odd[int(rng.integers(len(odd)))]
                raw = json.dumps(_replaced(doc, path, v)).encode()
            else:
                raw = json.dumps(doc).encode()
                i = int(rng.integers(len(raw)))
                raw = (
                    raw[:i]
                    + rng.bytes(int(rng.integers(0, 6)))
                    + raw[i + int(rng.integers(0, 6)) :]
                )
            f.write_bytes(raw)
            try:
                pc.Scene.from_file(f)
                t.ok("loaded")
            except (ValueError, FileNotFoundError) as e:
                if str(f) in str(e):
                    t.ok("refused by name")
                else:
                    t.bad(f"not naming the file: {e}")
            except Exception as e:  # noqa: BLE001
                t.bad(f"{type(e).__name__}: {e}")
    return t


def _json_paths(v, at=()):
    if at:
        yield at
    if isinstance(v, dict):
        for k, x in v.items():
            yield from _json_paths(x, (*at, k))
    elif isinstance(v, list):
        for i, x in enumerate(v[:3]):
            yield from _json_paths(x, (*at, i))


def _replaced(doc, path, value):
    doc = json.loads(json.dumps(doc))
    d = doc
    for k in path[:-1]:
        d = d[k]
    d[path[-1]] = value
    return doc


# ---- caches --------------------------------------------------------------------------


class _Warnings(logging.Handler):
    def __init__(self):
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record):
        self.messages.append(record.getMessage())


def _forget() -> None:
    """What a new process would not have: the tables, hulls and warnings kept in memory."""
    from planning_collision.checker import bounds, model, self_tables
    from planning_collision.robot import cache

    self_tables._TABLES.clear()
    model._BOUNDS.clear()
    bounds._OUTER.clear()
    bounds._CAPSULES.clear()
    cache._warned.clear()


def _damage(f: Path, rng, others: list) -> str:
    """Damage entry file f one random way; returns how."""
    from planning_collision.robot.cache import write_entry

    data = f.read_bytes()
    how = ["truncated", "emptied", "bytes flipped", "opened", "edited", "redone"]
    how += ["swapped"] if others else []
    if f.suffix == ".json":
        how = [h for h in how if h not in ("edited", "redone")]
    what = how[int(rng.integers(len(how)))]
    if what == "truncated":
        f.write_bytes(data[: int(rng.integers(len(data)))])
    elif what == "emptied":
        f.write_bytes(b"")
    elif what == "bytes flipped":
        b = bytearray(data)
        for i in rng.integers(0, len(b), int(rng.integers(1, 8))):
            b[i] ^= int(rng.integers(1, 256))
        f.write_bytes(bytes(b))
    elif what == "swapped":
        f.write_bytes(others[int(rng.integers(len(others)))].read_bytes())
    elif what == "opened":
        os.chmod(f if rng.random() < 0.5 else f.parent, 0o777)
    else:  # an array changed, its checksum left as it was, or rows dropped and it redone
        with np.load(f) as z:
            a = {k: z[k] for k in z.files}
        names = [k for k in a if k not in ("key", "checksum") and a[k].ndim and len(a[k])]
        name = names[int(rng.integers(len(names)))]
        x = a[name]
        if what == "edited" and x.dtype.kind in "iuf":
            x = x * rng.choice([0.5, 2.0, -1.0]) + (x.dtype.kind == "f") * rng.normal(0, 0.01)
        else:  # values a checksum cannot tell from the builder's, as shapes must be checked
            x = x[: max(0, len(x) - int(rng.integers(1, 4)))]
        a[name] = np.asarray(x, a[name].dtype)
        if what == "edited":
            np.savez(f, **a)
        else:
            key = str(a.pop("key"))
            a.pop("checksum")
            write_entry(f, key, a)
    return what


def fuzz_caches(n: int, rng):
    import planning_collision as pc
    from planning_collision import robots

    t = Tally("caches")
    log = _Warnings()
    logging.getLogger("planning_collision").addHandler(log)
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp) / "cache"
        old = os.environ.get("PLANNING_COLLISION_CACHE")
        os.environ["PLANNING_COLLISION_CACHE"] = str(d)  # the derived entries go there too
        try:
            arm_urdf = robots.urdf_path("planar_arm")
            piano_scene = pc.Scene()
            piano_scene.add(pc.Box([1.0, 1.0, 1.0]), np.eye(4))

            def build():
                arm = pc.Robot.from_urdf(
                    arm_urdf, cache_dir=d, fixed_joints={"finger_joint": 0.015}
                )
                piano = robots.load("free_flyer")
                a = pc.CollisionChecker(arm, pc.Scene()).is_valid_batch(QA)
                b = pc.CollisionChecker(piano, piano_scene).is_valid_batch(QP)
                return arm.acm.entries(), a.tolist(), b.tolist()

            QA = robots.load("planar_arm").random_configurations(300, rng)
            QP = robots.load("free_flyer").random_configurations(300, rng)
            _forget()
            want = build()
            entries = sorted(p for p in d.iterdir() if p.suffix in (".npz", ".json"))
            intact = {p: p.read_bytes() for p in entries}
            for _ in range(n):
                f = entries[int(rng.integers(len(entries)))]
                what = _damage(f, rng, [p for p in entries if p.suffix == f.suffix and p != f])
                _forget()
                log.messages.clear()
                try:
                    got = build()
                except Exception as e:  # noqa: BLE001 - every kind is a violation here
                    t.bad(f"{f.name} {what}: {type(e).__name__}: {e}")
                    got = None
                named = sum(str(f) in m or str(f.parent) in m for m in log.messages)
                if got is not None and got != want:
                    t.bad(f"{f.name} {what}: other answers")
                elif got is not None and named > 1:
                    t.bad(f"{f.name} {what}: {named} warnings")
                elif got is not None:
                    t.ok(f"rebuilt after '{what}'")
                os.chmod(f.parent, 0o700)
                if f.exists():
                    os.chmod(f, 0o644)
                f.write_bytes(intact[f])  # the next round damages an intact cache
        finally:
            logging.getLogger("planning_collision").removeHandler(log)
            if old is None:
                os.environ.pop("PLANNING_COLLISION_CACHE", None)
            else:
                os.environ["PLANNING_COLLISION_CACHE"] = old
    return t
