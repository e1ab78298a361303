"""Never a wrong answer, never a crash: the public API fed a million inputs as users (and
their bugs) make them, for minutes; docs/reliability.md quotes its figures.

Parts (all by default; the Panda, self-collision on, in the shipped bookshelf scene):

- ``configs``: configurations for `is_valid`, `is_valid_batch`, `clearance`,
  `link_distances`, `check_edge` (three methods): random ones within the limits, whose
  answers must agree (is_valid = the batch's row = clearance > 0 = every link distance >
  0), and bad ones (NaN, inf, 1e300, complex, bools, strings, wrong shapes, outside the
  limits, float32, read-only, strided), which must be refused by a ValueError naming the
  argument or answered as their float64 twin.
- ``floors``: the configurations where a halfspace and a box meet one robot: a random
  configuration, a 1 cm box at one of its pieces and a floor just under the pieces after
  it (their outer hulls may graze it): `is_valid` = the batch's row = clearance > 0. (A
  state check once tested halfspaces for every piece before the rest of the scene, and
  called 35 of 20,000 of these free.)
- ``edges``: RRT-like motions checked by the certified methods; each motion called free is
  sampled densely (no two states more than 0.001 rad apart in any joint) and must have no
  colliding state.
- ``planner``: the compiled planner, alone and through OMPL, given free starts and goals (one
  or several), colliding ones and the odd configurations above: refused by a ValueError
  naming "start" or "goal", or a path that begins at a start, ends at a goal and is
  certified free by the checker, edge by edge.
- ``shapes``: every shape built from random arguments (sizes from 1e-9 to 1e300, negative,
  NaN, bools, strings, complex, wrong shapes) and added to a scene at random poses: built
  and answered, or refused by a ValueError or TypeError naming the field.
- ``files``: the bookshelf scene file (JSON, or MoveIt's .scene) with a value replaced by
  anything it can hold or its bytes corrupted: loaded, or refused by a ValueError naming
  the file (demos/dev/fuzz_io.py).
- ``threads``: ``--seconds`` of threads calling batches, states, edges and scene queries
  while the main thread adds and removes a point cloud every few ms: every answer must be
  the answer without the cloud or with it (a batch wholly one or the other), and the
  process must survive.
- ``processes`` and ``caches``: worker processes (fork after numba's threads and with locks
  held, spawn and Ray workers editing a pickled robot's ACM, the workqueue threading layer)
  and damaged or foreign model-cache entries: demos/dev/fuzz_io.py says how.
- ``memory``: 1,000 solves (a new setup each, one checker), 500 checkers built and dropped,
  2,000 scene edits with a query after each, each in four rounds: the memory Python and
  numpy hold after each round (tracemalloc; more than 1 MB of growth from the second round
  to the last is a violation) and the resident set size (the allocator may keep freed
  pages once).

    python -m planning_collision.demos.dev.fuzz                    # ~10^6 inputs, ~7 min on 2 cores
    python -m planning_collision.demos.dev.fuzz --parts threads --seconds 20 --repeats 3
"""

from __future__ import annotations

import argparse
import math
import threading
import time
from importlib.resources import files as _files

import numpy as np

from planning_collision.demos.dev.fuzz_io import Tally, fuzz_caches, fuzz_files, fuzz_processes

PARTS = ("configs", "floors", "edges", "planner", "shapes", "files", "threads", "memory")
PARTS += ("processes", "caches")
FINGERS = {"panda_finger_joint1": 0.04, "panda_finger_joint2": 0.04}


def _world():
    import planning_collision as pc
    from planning_collision import robots

    robot = robots.load("panda", fixed_joints=FINGERS)
    scene = pc.Scene.from_file(_files("planning_collision") / "data" / "bookshelf.json")
    return robot, scene, pc.CollisionChecker(robot, scene)


def _refused(t: Tally, fn, names: tuple, what: str) -> None:
    """fn() must raise ValueError/TypeError whose message starts with one of `names`."""
    try:
        fn()
    except (ValueError, TypeError) as e:
        if str(e).startswith(names):
            t.ok("refused by name")
        else:
            t.bad(f"{what}: {type(e).__name__} does not name {names}: {e}")
    except Exception as e:  # noqa: BLE001 - the fuzzer reports every kind
        t.bad(f"{what}: {type(e).__name__}: {e}")
    else:
        t.bad(f"{what}: accepted")


# ---- configs -------------------------------------------------------------------------


def _bad_configs(robot, rng, q):
    """(label, bad q, answerable): odd inputs and whether they have a float64 twin."""
    n = robot.dof
    k = int(rng.integers(n))
    out = []
    for v in (math.nan, math.inf, -math.inf, 1e300, -1e300):
        b = q.copy()
        b[k] = v
        out.append((f"q[{k}]={v}", b, False))
    out += [
        ("complex", q + 1e-3j, False),
        ("bools", np.ones(n, bool), False),
        ("strings", [str(x) for x in q], False),
        ("too short", q[:-1], False),
        ("too long", np.r_[q, 0.0], False),
        ("2-D", q[None], False),
        ("None", None, False),
        ("outside limits", np.where(np.arange(n) == k, robot.upper + 0.1, q), False),
        ("float32", q.astype(np.float32), True),
        ("list", list(q), True),
        ("strided", np.repeat(q, 2)[::2], True),
    ]
    ro = q.copy()
    ro.setflags(write=False)
    out.append(("read-only", ro, True))
    return out


CALLS = ("is_valid", "check_edge", "discrete", "batch")


def _call(checker, call: str, q, b):
    """`call` with the odd input b (q: a valid configuration beside it)."""
    if call == "is_valid":
        return checker.is_valid(b)
    if call == "check_edge":
        return checker.check_edge(q, b).valid
    if call == "discrete":
        return checker.check_edge(b, q, "discrete").valid
    return checker.is_valid_batch([b, b])


def fuzz_configs(n: int, rng) -> Tally:
    t = Tally("configs")
    robot, _, checker = _world()
    checker.warm_up(batch=True)
    names = ("q", "Q", "q0", "q1")
    done = 0
    while done < n:
        Q = robot.random_configurations(1000, rng)
        batch = checker.is_valid_batch(Q)
        for i, q in enumerate(Q[:200]):
            v = checker.is_valid(q)
            c = checker.clearance(q)
            ld = checker.link_distances(q)["distance"]
            if not (v == batch[i] == (c > 0) == bool(np.all(ld > 0))):
                t.bad(f"disagree at {q.tolist()}: is_valid {v}, batch {batch[i]}, clearance {c}")
            else:
                t.ok("consistent")
        t.counts["consistent (batch rows)"] += len(Q) - 200
        done += len(Q) + 200
        for q in Q[:60]:
            for label, b, answerable in _bad_configs(robot, rng, q):
                for call in CALLS:
                    done += 1
                    if not answerable:
                        _refused(
                            t,
                            lambda c=call, b=b, q=q: _call(checker, c, q, b),
                            names,
                            f"{call}({label})",
                        )
                        continue
                    try:
                        got = _call(checker, call, q, b)
                    except Exception as e:  # noqa: BLE001
                        t.bad(f"{call}({label}) raised {type(e).__name__}: {e}")
                        continue
                    want = _call(checker, call, q, np.array(b, dtype=np.float64))
                    if np.array_equal(got, want):
                        t.ok("answered as float64")
                    else:
                        t.bad(f"{call}({label}): {got} but {want} for its float64 twin")
    return t


# ---- floors --------------------------------------------------------------------------


def _lowest(shape, T) -> float:
    """At most the lowest world z of a piece: its core points (their hull holds the core)
    less its sweep radius."""
    from planning_collision.checker.bounds import core_points, sweep_radius

    return float((core_points(shape) @ T[2, :3] + T[2, 3]).min() - sweep_radius(shape))


def fuzz_floors(n: int, rng) -> Tally:
    import planning_collision as pc

    t = Tally("floors")
    robot = _world()[0]
    box = pc.Box((0.01, 0.01, 0.01))
    for _ in range(n):
        q = robot.random_configurations(1, rng)[0]
        P = robot.piece_poses(q)
        k = int(rng.integers(0, len(P) - 1))
        low = min(_lowest(p.shape, P[i]) for i, p in enumerate(robot.pieces) if i > k)
        scene = pc.Scene()
        scene.add(pc.Halfspace((0.0, 0.0, 1.0), low - rng.uniform(0.0, 0.03)), name="floor")
        T = np.eye(4)
        T[:3, 3] = P[k][:3, 3]
        scene.add(box, T, name="box")
        checker = pc.CollisionChecker(robot, scene)
        v, c = checker.is_valid(q), checker.clearance(q)
        b = bool(checker.is_valid_batch(q[None])[0])
        if v == b == (c > 0.0):
            t.ok("consistent")
        else:
            t.bad(f"disagree at {q.tolist()} (box at piece {k}): is_valid {v}, batch {b}, "
                  f"clearance {c}")  # fmt: skip
    return t


# ---- edges ---------------------------------------------------------------------------


def fuzz_edges(n: int, rng) -> Tally:
    from planning_collision.testing.edges import rrt_edges

    t = Tally("edges")
    robot, _, checker = _world()
    for method in ("dichotomy", "ca"):
        for q0, q1 in rrt_edges(checker, rng, n // 2, step=(0.01, 1.5)):
            r = checker.check_edge(q0, q1, method)
            if not r.valid:
                t.ok(f"{method} colliding")
                continue
            steps = max(2, math.ceil(float(np.abs(q1 - q0).max()) / 1e-3))
            s = np.linspace(0.0, 1.0, steps + 1)[:, None]
            Q = np.clip(q0 + s * (q1 - q0), robot.lower, robot.upper)
            if checker.is_valid_batch(Q).all():
                t.ok(f"{method} free, dense states free")
            else:
                t.bad(f"{method} called {q0.tolist()} -> {q1.tolist()} free")
    return t


# ---- planner -------------------------------------------------------------------------


def _path_ok(checker, Q, starts, goals) -> str | None:
    """Why Q is not a path from one of starts to one of goals ((k, dof) each), certified free
    edge by edge, or None."""
    Q = np.asarray(Q)
    if Q.ndim != 2 or len(Q) < 2 or not any(np.array_equal(Q[0], s) for s in starts):
        return "does not begin at a start"
    if not any(np.array_equal(Q[-1], g) for g in goals):
        return "does not end at a goal"
    if not checker.check_path(Q).valid:
        return "has an edge or a state the checker does not certify free"
    return None


def fuzz_planner(n: int, rng) -> Tally:
    """The compiled planner, alone (`RRTConnect.solve`, with its settings and lazy at every
    turn) and through OMPL (`make_setup(planner="CompiledRRTConnect")`), given free starts
    and goals (one or several), colliding ones and the odd configurations of `configs`: a
    refusal names
    "start" or "goal", a returned path begins at the start, ends at a goal and is certified
    free by the checker, edge by edge."""
    from ompl import util as ou

    import planning_collision as pc
    from planning_collision.plugins.ompl import make_setup, solution_path, solve

    ou.setLogLevel(ou.LOG_NONE)
    t = Tally("planner")
    robot, scene, checker = _world()
    Q = robot.random_configurations(4 * n + 64, rng)
    ok = checker.is_valid_batch(Q)
    free, hit = Q[ok], Q[~ok]
    alone = pc.RRTConnect(checker, seed=int(rng.integers(2**31)))
    # lazy from the first motion, probing at range spacing: solutions refuted by their
    # certificate (branches removed) at every turn
    lazy = pc.RRTConnect(checker, seed=int(rng.integers(2**31)), lazy=1, lazy_after=0,
                         lazy_failures=10**6)  # fmt: skip
    for i in range(n):
        a, b = free[rng.integers(len(free), size=2)]
        goal = b if i % 3 else free[rng.integers(len(free), size=3)]
        odd = None
        if i % 4 == 1 and len(hit):  # a colliding start or goal
            odd = ("colliding", hit[rng.integers(len(hit))], False)
        elif i % 4 == 2:
            bad = _bad_configs(robot, rng, a)
            odd = bad[int(rng.integers(len(bad)))]
        where = "goal" if odd is not None and i % 8 >= 4 else "start"
        if odd is not None:
            a, goal = (odd[1], goal) if where == "start" else (a, odd[1])
        for how in ("alone", "lazy", "ompl"):

            def run(a=a, goal=goal, how=how):
                if how != "ompl":
                    r = (alone if how == "alone" else lazy).solve(a, goal, 0.2)
                    return r.path if r.solved else None
                ss = make_setup(robot, scene, a, goal, checker=checker,
                                planner="CompiledRRTConnect")  # fmt: skip
                return solution_path(ss) if solve(ss, 0.2) else None

            # one configuration as a (1, dof) row: k goals, or k starts for the planner alone
            answerable = odd is None or odd[2] or (
                odd[0] == "2-D" and (where == "goal" or how != "ompl"))  # fmt: skip
            if not answerable:  # (None: make_setup's "not given"; solve says which is missing)
                _refused(t, run, (where, f"no {where}"), f"{how}: {odd[0]} {where}")
                continue
            try:
                path = run()
            except Exception as e:  # noqa: BLE001 - the fuzzer reports every kind
                t.bad(f"{how}: {type(e).__name__}: {e}")
                continue
            if path is None:
                t.ok(f"{how} not solved in 0.2 s")
                continue
            rows = [np.asarray(x, float).reshape(-1, robot.dof) for x in (a, goal)]
            why = _path_ok(checker, path, *rows)
            if why is None:
                t.ok(f"{how} path certified")
            else:
                t.bad(f"{how}: the path from {rows[0].tolist()} {why}")
    return t


# ---- shapes --------------------------------------------------------------------------


def _odd_scalar(rng):
    k = int(rng.integers(12))
    return [
        lambda: float(10.0 ** rng.uniform(-9, 3)),
        lambda: float(10.0 ** rng.uniform(3, 300)),
        lambda: -float(rng.uniform(0, 1)),
        lambda: math.nan,
        lambda: math.inf,
        lambda: True,
        lambda: "0.1",
        lambda: 0.1 + 0.1j,
        lambda: None,
        lambda: [0.1],
        lambda: 0,
        lambda: int(rng.integers(1, 10)),
    ][k]()


def _odd_points(rng, n=None):
    n = int(rng.integers(0, 8)) if n is None else n
    k = int(rng.integers(8))
    if k == 0:
        return rng.normal(size=(n, 3)) * 10.0 ** rng.uniform(-6, 6)
    if k == 1:
        return rng.normal(size=(n, 2))
    if k == 2:
        p = rng.normal(size=(n, 3))
        if n:
            p[0, 0] = math.nan
        return p
    if k == 3:
        return (rng.normal(size=(n, 3)) + 1j).tolist()
    if k == 4:
        return [[True, False, True]] * n
    if k == 5:
        return rng.normal(size=(n, 3)) * 1e300
    return rng.normal(size=(n, 3)) * 0.3


def fuzz_shapes(n: int, rng) -> Tally:
    import planning_collision as pc

    t = Tally("shapes")
    makers = {
        "Sphere": lambda: pc.Sphere(_odd_scalar(rng)),
        "Box": lambda: pc.Box([_odd_scalar(rng) for _ in range(3)]),
        "Capsule": lambda: pc.Capsule(_odd_scalar(rng), _odd_scalar(rng)),
        "Cylinder": lambda: pc.Cylinder(_odd_scalar(rng), _odd_scalar(rng)),
        "Cone": lambda: pc.Cone(_odd_scalar(rng), _odd_scalar(rng)),
        "Convex": lambda: pc.Convex(
            _odd_points(rng), _odd_scalar(rng) if rng.random() < 0.3 else 0
        ),
        "Halfspace": lambda: pc.Halfspace(
            np.asarray(_odd_points(rng, 1)).reshape(-1)[:3], _odd_scalar(rng)
        ),
        "PointCloud": lambda: pc.PointCloud(_odd_points(rng), _odd_scalar(rng)),
        "VoxelGrid": lambda: pc.VoxelGrid(
            rng.integers(-(10 ** int(rng.integers(1, 19))), 10 ** int(rng.integers(1, 19)), (3, 3)),
            _odd_scalar(rng),
        ),
    }
    scene = pc.Scene()
    probe = pc.Sphere(0.2)
    for k in range(n):
        name = list(makers)[k % len(makers)]
        try:
            shape = makers[name]()
        except (ValueError, TypeError) as e:
            if str(e).startswith(name) or str(e).startswith(f"{name}."):
                t.ok("refused by name")
            else:
                t.bad(f"{name}: {type(e).__name__} not naming the field: {e}")
            continue
        except Exception as e:  # noqa: BLE001
            t.bad(f"{name}: {type(e).__name__}: {e}")
            continue
        T = np.eye(4)
        T[:3, 3] = rng.normal(size=3) * 10.0 ** rng.uniform(-1, 5)
        try:
            oid = scene.add(shape, T, name=name)
        except ValueError as e:
            if "obstacle" in str(e):
                t.ok("refused by the scene, named")
            else:
                t.bad(f"scene.add({name}): {e}")
            continue
        except Exception as e:  # noqa: BLE001
            t.bad(f"scene.add({name}): {type(e).__name__}: {e}")
            continue
        try:
            hit = scene.in_collision(probe, T)
            d = scene.distances(probe, T)
            t.ok("built and answered")
            if not hit and any(r.distance <= 0 for _, r in d):
                t.bad(f"{name}: in_collision False but a distance <= 0")
        except Exception as e:  # noqa: BLE001
            t.bad(f"query near {name}: {type(e).__name__}: {e}")
        scene.remove(oid)
    return t


# ---- threads -------------------------------------------------------------------------


def fuzz_threads(seconds: float, rng) -> Tally:
    import planning_collision as pc

    t = Tally("threads")
    robot, scene, checker = _world()
    checker.warm_up(batch=True)
    cloud = pc.PointCloud(rng.uniform(-0.25, 0.25, (300, 3)) + (0.45, 0.0, 0.45), 0.01)
    Q = robot.random_configurations(500, rng)
    edges = [robot.random_configurations(2, rng) for _ in range(50)]
    truth = []
    for with_cloud in (False, True):
        cid = scene.add(cloud, name="cloud") if with_cloud else None
        truth.append(
            (checker.is_valid_batch(Q), [checker.check_edge(a, b).valid for a, b in edges])
        )
        if cid is not None:
            scene.remove(cid)
    stop = threading.Event()
    lock = threading.Lock()

    def count(ok: bool, what: str):
        with lock:
            t.ok(what) if ok else t.bad(what)

    def batches():
        while not stop.is_set():
            got = checker.is_valid_batch(Q)
            count(any(np.array_equal(got, w[0]) for w in truth), "batch of one snapshot")

    def states():
        k = 0
        while not stop.is_set():
            i, j = k % len(Q), k % len(edges)
            count(checker.is_valid(Q[i]) in (truth[0][0][i], truth[1][0][i]), "state")
            count(checker.check_edge(*edges[j]).valid in (truth[0][1][j], truth[1][1][j]), "edge")
            k += 1

    def queries():
        probe, T = pc.Sphere(0.1), np.eye(4)
        T[:3, 3] = (0.45, 0.0, 0.45)
        while not stop.is_set():
            scene.in_collision(probe, T)
            scene.min_distance(probe, T)
            count(True, "scene query")

    def guard(f):
        def run():
            try:
                f()
            except Exception as e:  # noqa: BLE001
                count(False, f"{f.__name__} raised {type(e).__name__}: {e}")

        return run

    workers = [threading.Thread(target=guard(f)) for f in (batches, states, queries)]
    for w in workers:
        w.start()
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        cid = scene.add(cloud, name="cloud")
        time.sleep(0.003)
        scene.remove(cid)
        time.sleep(0.003)
        t.ok("edit")
    stop.set()
    for w in workers:
        w.join()
    return t


def fuzz_memory(n: int, rng) -> Tally:
    import gc
    import tracemalloc

    from ompl import util as ou

    import planning_collision as pc
    from planning_collision.demos.dev.prm_memory import rss_mb
    from planning_collision.demos.scenes import panda_shelf
    from planning_collision.plugins.ompl import make_setup, solve

    ou.setLogLevel(ou.LOG_WARN)
    t = Tally("memory")
    robot, scene, start, goal = panda_shelf()
    checker = pc.CollisionChecker(robot, scene)
    checker.warm_up(methods=("dichotomy",))

    def solves(k):
        for _ in range(k):
            solve(make_setup(robot, scene, start, goal, checker=checker), 1.0)

    def checkers(k):
        for _ in range(k):
            c = pc.CollisionChecker(robot, scene)
            c.is_valid(start)
            c.check_edge(start, goal)

    def edits(k):
        cloud = pc.PointCloud(rng.uniform(-0.2, 0.2, (500, 3)) + (0.5, 0.0, 0.5), 0.01)
        for _ in range(k):
            cid = scene.add(cloud, name="cloud")
            checker.is_valid(start)
            scene.remove(cid)

    for what, f, count in (
        ("solves", solves, n),
        ("checkers", checkers, n // 2),
        ("edits", edits, 2 * n),
    ):
        # four rounds: a leak grows every round; what Python and numpy hold (tracemalloc)
        # must not, the resident size may once (the allocator keeps freed pages)
        tracemalloc.start()
        held, rss = [], []
        for _ in range(4):
            f(count // 4)
            gc.collect()
            held.append(tracemalloc.get_traced_memory()[0] / 2**20)
            rss.append(rss_mb())
        tracemalloc.stop()
        label = (
            f"{what}: 4 x {count // 4}, held after each "
            f"{', '.join(f'{x:.1f}' for x in held)} MB (resident "
            f"{', '.join(f'{x:.0f}' for x in rss)} MB)"
        )
        t.ok(label) if held[-1] - held[1] < 1.0 else t.bad(f"{label}: still growing")
    return t


def main(argv=None) -> int:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--parts", nargs="+", choices=PARTS, default=list(PARTS))
    p.add_argument("--configs", type=int, default=600_000, help="configuration inputs")
    p.add_argument("--floors", type=int, default=20_000, help="floor-and-box configurations")
    p.add_argument("--edges", type=int, default=6_000, help="certified edges (both methods)")
    p.add_argument("--planner", type=int, default=400, help="planning problems (both ways)")
    p.add_argument("--shapes", type=int, default=300_000, help="shape constructions")
    p.add_argument("--files", type=int, default=20_000, help="mutated scene files")
    p.add_argument("--seconds", type=float, default=20.0, help="per threads run (default 20)")
    p.add_argument("--repeats", type=int, default=3, help="threads runs (default 3)")
    p.add_argument("--memory", type=int, default=1_000, help="solves (memory part)")
    p.add_argument("--processes", type=int, default=40, help="fork and spawn rounds")
    p.add_argument("--caches", type=int, default=300, help="damaged cache entries")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    total, violations = 0, 0
    for part in args.parts:
        runs = args.repeats if part == "threads" else 1
        for _ in range(runs):
            t0 = time.perf_counter()
            if part == "threads":
                t = fuzz_threads(args.seconds, rng)
            else:
                run = {"processes": fuzz_processes, "caches": fuzz_caches, "files": fuzz_files}
                run = run.get(part)
                t = (run or globals()[f"fuzz_{part}"])(getattr(args, part), rng)
            print(t.report(), f"[{time.perf_counter() - t0:.0f} s]", flush=True)
            total += t.inputs
            violations += t.counts["VIOLATION"]
    print(f"total: {total:,} inputs, {violations} violations")
    return 1 if violations else 0


if __name__ == "__main__":
    raise SystemExit(main())
