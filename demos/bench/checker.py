"""The checker side by side with what Python users have today, on MotionBenchMaker scenes.

For the Panda (fingers at 0.065 m, self-collision on) in the first ``--problems`` scenes of
each MotionBenchMaker set (shipped in planning_collision/data/mbm):

1. **States.** `is_valid` from Python, one call per configuration (configurations uniform in
   the joint limits), against the python-fcl pipeline (exact meshes, DynamicAABBTree, FK in
   numpy; planning_collision.testing.fcl_robot) and its coal twin (testing.coal_robot) on the
   same configurations, and `is_valid_batch` on one thread. Medians per configuration; the
   answers are compared (the checker's link models contain the meshes, so it may call a
   grazing state colliding, never the reverse); then where the batch's time goes on free
   states (posing, the scene, the self pairs: `batch_split`), and its time per answer
   (free, colliding with the scene, colliding with itself only: `batch_by_answer`).
2. **Edges**, drawn as RRTConnect draws them: the motions OMPL's RRTConnect asked the plugin
   to check while solving these problems (recorded, then replayed). Per method: µs per edge (median
   and mean), distance queries per edge, beside OMPL's own DiscreteMotionValidator over the
   python-fcl state checker at its default resolution (KCD's table: stepwise vs dichotomy vs
   distance); then the same split into the edges found free and colliding (about two thirds of
   RRTConnect's collide, and most of those are rejected by a few boolean probes: the free ones are
   what a certificate costs). Then OMPL's own time per solve (outside the validators) through
   `ss.solve(1.0)` and through `planning_collision.plugins.ompl.solve(ss, 1.0)` (no timer thread),
   with validators that accept everything and take a fixed time (`bench_solve_overhead`); and how
   much tighter the local motion rates are than the global bound at the middle of the edges
   (`bound_ratios`).
3. **Caches**: the same edge sequence with ``cache=True`` (endpoint distances, GJK warm
   starts), with front lists added (``front_lists=True``) and with ``cache=False``: BV
   tests, distance queries and time per edge.
4. ``--cold``: the first `is_valid` + `check_edge` from an empty numba cache, in a fresh
   process (demos/dev/cold_start.py).

JIT warm-up is done (and reported) before anything is timed. Times are medians over the
configurations or edges of one run; peers run on the same inputs in the same process.

    python -m planning_collision.demos.bench.checker                    # ~5 min
    python -m planning_collision.demos.bench.checker --configs 2000 --edges 2000 --problems 2
"""

from __future__ import annotations

import argparse
import math
import time
from pathlib import Path

import numpy as np

from planning_collision.io import mbm_path

DATA = mbm_path("box").parent  # the shipped MotionBenchMaker Panda sets
SETS = ("bookshelf_small", "box", "cage", "table_pick")


def _scenes(data: Path, per_set: int):
    """[(name, robot, scene)] of the first per_set problems of each set."""
    import planning_collision as pc
    from planning_collision import robots
    from planning_collision.io import load_mbm

    out, robot = [], None
    for s in SETS:
        ps = load_mbm(str(data / f"{s}.json"))
        for p in ps.problems[:per_set]:
            robot = robot or robots.load("panda", fixed_joints=p.fixed_joints)
            out.append((f"{s}/{p.name}", robot, pc.Scene.from_records(p.obstacles), p))
    return out


def _timed(f, xs):
    """Per-call seconds of f over xs (perf_counter around each call)."""
    t = np.empty(len(xs))
    pc = time.perf_counter
    for k, x in enumerate(xs):
        t0 = pc()
        f(x)
        t[k] = pc() - t0
    return t


def batch_split(world, n_configs: int, rng) -> dict:
    """Where `is_valid_batch`'s time goes on free states (one thread, the first world):
    posing alone (no scene, no self pairs), then the scene, then the self pairs added, as
    µs per state (medians of 5 batches)."""
    import numba

    import planning_collision as pc

    _, robot, scene, _ = world
    full = pc.CollisionChecker(robot, scene)
    Q = robot.random_configurations(4 * n_configs, rng)
    Q = Q[full.is_valid_batch(Q)][:n_configs]
    threads = numba.get_num_threads()
    numba.set_num_threads(1)
    t = {}
    for name, sc, self_c in (
        ("pose", pc.Scene(), False),
        ("+ scene", scene, False),
        ("+ self pairs", scene, True),
    ):
        ch = pc.CollisionChecker(robot, sc, self_collision=self_c)
        ch.is_valid_batch(Q[:2])
        reps = []
        for _ in range(5):
            t0 = time.perf_counter()
            ch.is_valid_batch(Q)
            reps.append((time.perf_counter() - t0) / len(Q))
        t[name] = np.median(reps) * 1e6
    numba.set_num_threads(threads)
    return t


def batch_by_answer(worlds, n_configs: int, rng) -> dict:
    """`is_valid_batch` (one thread) per answer, over all worlds: µs per state on the free
    states, those colliding with the scene, and those colliding only with the robot itself
    (a collision is confirmed by GJK: what it costs shows here); medians of 5 batches,
    weighted by the states of each kind per world; and how many of each."""
    import numba

    import planning_collision as pc

    per = max(1, n_configs // len(worlds))
    threads = numba.get_num_threads()
    numba.set_num_threads(1)
    tot = {"free": [0, 0.0], "scene": [0, 0.0], "self only": [0, 0.0]}
    for _, robot, scene, _ in worlds:
        ch = pc.CollisionChecker(robot, scene)
        alone = pc.CollisionChecker(robot, scene, self_collision=False)
        Q = robot.random_configurations(per, rng)
        v, vs = ch.is_valid_batch(Q), alone.is_valid_batch(Q)
        for k, sel in (("free", v), ("scene", ~vs), ("self only", vs & ~v)):
            if sel.any():
                G = Q[sel]
                reps = []
                for _ in range(5):
                    t0 = time.perf_counter()
                    ch.is_valid_batch(G)
                    reps.append(time.perf_counter() - t0)
                tot[k][0] += len(G)
                tot[k][1] += float(np.median(reps))
    numba.set_num_threads(threads)
    return {k: (n, t / n * 1e6 if n else math.nan) for k, (n, t) in tot.items()}


def bench_states(worlds, n_configs: int, n_peer: int, rng) -> dict:
    import numba

    import planning_collision as pc
    from planning_collision.testing.coal_robot import CoalRobot
    from planning_collision.testing.fcl_robot import FclRobot

    per = max(1, n_configs // len(worlds))
    per_peer = max(1, n_peer // len(worlds))
    ours, batch, fcl_t, coal_t = [], [], [], []
    disagree = {"ours colliding, meshes free": 0, "ours free, meshes colliding": 0}
    threads = numba.get_num_threads()
    for _, robot, scene, _ in worlds:
        ch = pc.CollisionChecker(robot, scene)
        ch.warm_up(batch=True)
        Q = robot.random_configurations(per, rng)
        ch.is_valid_batch(Q[:2])
        ours.append(_timed(ch.is_valid, Q))
        numba.set_num_threads(1)
        reps = []
        for _ in range(5):
            t0 = time.perf_counter()
            ch.is_valid_batch(Q)
            reps.append((time.perf_counter() - t0) / len(Q))
        numba.set_num_threads(threads)
        batch.append(np.median(reps))
        fr, cr = FclRobot(robot, scene), CoalRobot(robot, scene)
        P = Q[:per_peer]
        fcl_t.append(_timed(fr.collides, P))
        coal_t.append(_timed(cr.collides, P))
        a = ch.is_valid_batch(P)
        b = np.array([not fr.collides(q) for q in P])
        disagree["ours colliding, meshes free"] += int(np.sum(~a & b))
        disagree["ours free, meshes colliding"] += int(np.sum(a & ~b))
    ours, fcl_t, coal_t = (np.concatenate(x) * 1e6 for x in (ours, fcl_t, coal_t))
    return {
        "is_valid (Python)": np.median(ours),
        "is_valid_batch, 1 thread": np.median(batch) * 1e6,
        "python-fcl pipeline": np.median(fcl_t),
        "coal pipeline": np.median(coal_t),
        "n": len(ours),
        "n_peer": len(fcl_t),
        "disagree": disagree,
    }


def record_edges(worlds, n_edges: int, seed: int, time_limit: float = 1.0):
    """[(world index, q0, q1)]: the motions RRTConnect asks the plugin to check, solving each
    world's problem (repeatedly, from its start to its goal) until n_edges are recorded."""
    from ompl import util as ou

    from planning_collision.plugins.ompl import make_setup, solve, validators

    ou.setLogLevel(ou.LOG_NONE)
    ou.RNG.setSeed(seed)
    edges = []
    per = max(1, n_edges // len(worlds))
    for w, (_, robot, scene, p) in enumerate(worlds):
        import planning_collision as pc

        ch = pc.CollisionChecker(robot, scene)
        got = []
        for _ in range(50):
            ss = make_setup(robot, scene, p.start, p.goals[0], checker=ch)
            _, mv = validators(ss)
            orig = mv.checkMotion

            def rec(s1, s2, orig=orig, mv=mv, got=got, w=w):
                q0, q1 = mv._qs(s1, s2)
                got.append((w, q0.copy(), q1.copy()))
                return orig(s1, s2)

            mv.checkMotion = rec  # the instance attribute: Python calls go through it
            solve(ss, time_limit)
            if len(got) >= per:
                break
        edges += got[:per]
    return edges


def bench_edges(worlds, edges, n_peer: int, rng) -> dict:
    from ompl import base as ob

    import planning_collision as pc
    from planning_collision.plugins.ompl import StateCodec, make_state_space, new_state
    from planning_collision.testing.fcl_robot import FclRobot

    res = {
        m: {"t": [], "nq": [], "ok": [], "valid": 0, "peer_t": [], "work": []}
        for m in ("dichotomy", "ca", "discrete")
    }
    configs = {  # CollisionChecker keywords of each cache setting
        "cache=True": {"cache": True},
        "cache=True, front_lists=True": {"cache": True, "front_lists": True},
        "cache=False": {"cache": False},
    }
    cache = {c: {"t": [], "bv": 0, "dq": 0} for c in configs}
    peer = {"t": [], "valid": 0}
    peer_idx = set(rng.choice(len(edges), min(n_peer, len(edges)), replace=False).tolist())
    for w, (_, robot, scene, _) in enumerate(worlds):
        mine = [(k, a, b) for k, (wi, a, b) in enumerate(edges) if wi == w]
        if not mine:
            continue
        checkers = {c: pc.CollisionChecker(robot, scene, **kw) for c, kw in configs.items()}
        for c in checkers.values():
            c.warm_up()
        ch = checkers["cache=True"]
        for m, r in res.items():
            ch.forget()
            for k, a, b in mine:
                ch.reset_stats()
                t0 = time.perf_counter()
                e = ch.check_edge(a, b, m, check_start=False)
                r["t"].append(time.perf_counter() - t0)
                st = ch.stats  # what the edge cost, beyond its time (`free_edge_bands`)
                r["work"].append([st[key] for key in WORK])
                if k in peer_idx:  # the peer's edges, for a ratio on the same work
                    r["peer_t"].append(r["t"][-1])
                r["nq"].append(e.n_queries)
                r["ok"].append(e.valid)
                r["valid"] += e.valid
        for c, chk in checkers.items():  # the sequence as the planner made it
            chk.forget()
            chk.reset_stats()
            t0 = time.perf_counter()
            for _, a, b in mine:
                chk.edge_free(a, b)
            cache[c]["t"].append((time.perf_counter() - t0) / len(mine))
            st = chk.stats
            cache[c]["bv"] += st["bv_tests"]
            cache[c]["dq"] += st["distance_queries"]
        # OMPL's DiscreteMotionValidator over python-fcl states, at its default resolution
        sel = [(a, b) for k, a, b in mine if k in peer_idx]
        if sel:
            fr = FclRobot(robot, scene)
            space = make_state_space(robot)
            si = ob.SpaceInformation(space)
            codec = StateCodec(space, robot.continuous)
            si.setStateValidityChecker(lambda s, fr=fr, codec=codec: not fr.collides(codec.read(s)))
            si.setup()
            s1, s2 = new_state(si), new_state(si)
            for a, b in sel:
                codec.write(a, s1)
                codec.write(b, s2)
                t0 = time.perf_counter()
                peer["valid"] += bool(si.checkMotion(s1, s2))
                peer["t"].append(time.perf_counter() - t0)
    n = len(edges)
    return {"methods": res, "cache": cache, "peer": peer, "n": n}


def edge_floor(worlds, edges, repeats: int = 3) -> dict:
    """What a certified free edge costs with nothing to check: the recorded edges through
    `edge_free` (dichotomy) over each world's scene, over no obstacle, and over no obstacle
    without self-collision, each edge's best of `repeats` (us). Returns, per setting, the
    mean and median over the edges free in it, and their count."""
    import planning_collision as pc

    settings = {
        "the scene": lambda robot, scene: pc.CollisionChecker(robot, scene),
        "no obstacle": lambda robot, scene: pc.CollisionChecker(robot, pc.Scene()),
        "no obstacle, no self-collision": lambda robot, scene: pc.CollisionChecker(
            robot, pc.Scene(), self_collision=False
        ),
    }
    out = {}
    for name, make in settings.items():
        free = []
        for w, (_, robot, scene, _) in enumerate(worlds):
            mine = [(a, b) for wi, a, b in edges if wi == w]
            if not mine:
                continue
            ch = make(robot, scene)
            ch.warm_up()
            ok = [ch.edge_free(a, b) for a, b in mine]
            best = [math.inf] * len(mine)
            for _ in range(repeats):
                ch.forget()  # each repeat as the planner met them: its cache from empty
                for i, (a, b) in enumerate(mine):
                    t0 = time.perf_counter()
                    ch.edge_free(a, b)
                    best[i] = min(best[i], time.perf_counter() - t0)
            free += [t * 1e6 for t, good in zip(best, ok, strict=True) if good]
        out[name] = (float(np.mean(free)), float(np.median(free)), len(free)) if free else None
    return out


# The checker's counts kept per edge (CollisionChecker.stats), for `free_edge_bands`.
WORK = ("states", "distance_queries", "bv_tests", "narrowphase_pairs")
BANDS = ((0.0, 0.5), (0.5, 0.9), (0.9, 1.0))


def free_edge_bands(r: dict) -> list:
    """The free edges of one method's results, cheapest first, in BANDS of their count:
    per band (lo, hi, mean us, share of the free edges' time, mean of each WORK count)."""
    t, ok, work = np.array(r["t"]) * 1e6, np.array(r["ok"], bool), np.array(r["work"], float)
    order = np.argsort(t[ok])
    t, work = t[ok][order], work[ok][order]
    out = []
    for lo, hi in BANDS:
        sel = slice(int(lo * len(t)), int(hi * len(t)))
        if len(t[sel]):
            share = t[sel].sum() / t.sum()
            out.append((lo, hi, t[sel].mean(), share, *work[sel].mean(axis=0)))
    return out


def bound_ratios(worlds, edges, n: int = 2000) -> dict:
    """How much tighter the local rates are than the global bound mu at the middle of the
    recorded edges (kernels/robot/motion_bounds.py): medians of mu / A and mu / S over the moving
    bodies, links against the scene and self pairs apart."""
    import planning_collision as pc
    from planning_collision.kernels.robot.motion_bounds import rate

    out = {"links": ([], []), "self pairs": ([], [])}
    checkers = {}
    for w, q0, q1 in edges[:n]:
        _, robot, scene, _ = worlds[w]
        if w not in checkers:
            checkers[w] = pc.CollisionChecker(robot, scene).model.robot
        r = checkers[w]
        dqa, dq = np.abs(q1 - q0), q1 - q0
        poses = robot.fk_array(0.5 * (q0 + q1))
        mu = r.R @ dqa
        nl = r.body_link.shape[0]
        for b in range(r.R.shape[0]):
            if mu[b] <= 0.0:
                continue
            A, S = rate(
                r.term_start, r.term, r.term_w, r.sphere_c, r.sphere_r, r.model.axis, poses,
                dqa, dq, b,
            )  # fmt: skip
            kind = out["links" if b < nl else "self pairs"]
            kind[0].append(mu[b] / A)
            kind[1].append(mu[b] / S)
    return {k: (float(np.median(a)), float(np.median(v))) for k, (a, v) in out.items() if a}


def bench_solve_overhead(world, spins=(0.0, 1e-4, 1e-3), repeats: int = 40) -> dict:
    """OMPL's own time per solve (outside the validators), through `ss.solve(1.0)` (OMPL's timer
    thread) and `planning_collision.plugins.ompl.solve(ss, 1.0)`, alternately: RRTConnect on the
    world's problem with validators that accept everything, each motion check spinning for `spin`
    seconds (a solve at once then lasts a few motion checks). {spin: (median ms of each)}."""
    from ompl import base as ob
    from ompl import geometric as og
    from ompl import util as ou

    from planning_collision.plugins.ompl import StateCodec, make_state_space, new_state, solve

    ou.setLogLevel(ou.LOG_NONE)
    _, robot, _, p = world
    spin = [0.0]
    inside = [0.0]

    class Free(ob.StateValidityChecker):
        def isValid(self, state):
            return True

    class FreeMotion(ob.MotionValidator):
        def checkMotion(self, s1, s2):
            t0 = time.perf_counter()
            while time.perf_counter() < t0 + spin[0]:
                pass
            inside[0] += time.perf_counter() - t0
            return True

    space = make_state_space(robot)
    ss = og.SimpleSetup(space)
    si = ss.getSpaceInformation()
    ss.setStateValidityChecker(Free(si))
    si.setMotionValidator(FreeMotion(si))
    ss.setPlanner(og.RRTConnect(si))
    codec = StateCodec(space, robot.continuous)
    s, g = new_state(si), new_state(si)
    codec.write(p.start, s)
    codec.write(p.goals[0], g)
    ss.setStartAndGoalStates(s, g, 1e-6)
    ss.setup()
    out = {}
    for spin[0] in spins:
        a, b = [], []
        for _ in range(repeats):
            for t, f in ((a, lambda: ss.solve(1.0)), (b, lambda: solve(ss, 1.0))):
                ss.clear()
                inside[0] = 0.0
                t0 = time.perf_counter()
                ok = f()
                t.append(time.perf_counter() - t0 - inside[0])
                assert ok
        out[spin[0]] = (1e3 * np.median(a), 1e3 * np.median(b))
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--data", default=str(DATA))
    p.add_argument("--problems", type=int, default=5, help="problems per set (default 5)")
    p.add_argument("--configs", type=int, default=10000)
    p.add_argument("--peer-configs", type=int, default=1000)
    p.add_argument("--edges", type=int, default=10000)
    p.add_argument("--peer-edges", type=int, default=300)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--cold", action="store_true", help="also time the first call, cold")
    a = p.parse_args(argv)
    data = Path(a.data)
    if not data.is_dir():
        p.error(f"no MotionBenchMaker data at {data} (--data)")
    rng = np.random.default_rng(a.seed)
    t0 = time.perf_counter()
    worlds = _scenes(data, a.problems)
    import planning_collision as pc

    warm = pc.CollisionChecker(worlds[0][1], worlds[0][2]).warm_up(batch=True)
    print(f"JIT warm-up (compile or cache load): {warm:.1f} s; {len(worlds)} scenes")

    s = bench_states(worlds, a.configs, a.peer_configs, rng)
    print(
        f"\nStates: Panda + self-collision, {s['n']} configurations ({s['n_peer']} for the peers)"
    )
    print(f"{'checker':28s} {'median us/config':>17s} {'vs is_valid':>12s}")
    base = s["is_valid (Python)"]
    for k in (
        "is_valid (Python)",
        "is_valid_batch, 1 thread",
        "python-fcl pipeline",
        "coal pipeline",
    ):
        print(f"{k:28s} {s[k]:17.2f} {s[k] / base:11.1f}x")
    print(f"answers vs python-fcl on the meshes: {s['disagree']}")
    b = batch_split(worlds[0], min(a.configs, 5000), rng)
    print(
        "is_valid_batch on free states, 1 thread, as parts are added: "
        + ", ".join(f"{k} {v:.2f} us" for k, v in b.items())
    )
    by = batch_by_answer(worlds, a.configs, rng)
    print(
        "is_valid_batch by answer, 1 thread: "
        + ", ".join(f"{k} {t:.2f} us ({n})" for k, (n, t) in by.items())
    )

    t1 = time.perf_counter()
    edges = record_edges(worlds, a.edges, a.seed)
    dt = time.perf_counter() - t1
    print(f"\nEdges: {len(edges)} motions RRTConnect asked to check (recorded in {dt:.0f} s)")
    e = bench_edges(worlds, edges, a.peer_edges, rng)
    ratios = bound_ratios(worlds, edges)
    print(
        "motion bounds at the middle of the edges, median mu / A and mu / S (A: the local "
        "rate, S: the link's speed as a rigid body): "
        + ", ".join(f"{k} {x:.2f}x, {y:.2f}x" for k, (x, y) in ratios.items())
    )
    peer_med = np.median(e["peer"]["t"]) * 1e6 if e["peer"]["t"] else float("nan")
    print(
        f"{'method':40s} {'median us':>10s} {'mean us':>9s} {'queries/edge':>13s} {'valid':>7s} "
        f"{'vs peer':>8s}"
    )
    print("(vs peer: the peer's median over its edges / the method's median over the same edges)")
    for m, r in e["methods"].items():
        t = np.array(r["t"]) * 1e6
        print(
            f"{m + (' (certified)' if m != 'discrete' else ' (1 % states)'):40s} "
            f"{np.median(t):10.1f} "
            f"{t.mean():9.1f} {np.mean(r['nq']):13.1f} {r['valid'] / len(t):7.1%} "
            f"{peer_med / (1e6 * np.median(r['peer_t'])) if r['peer_t'] else float('nan'):7.1f}x"
        )
    print("split by the answer (median us, queries per edge):")
    for m, r in e["methods"].items():
        t, ok, nq = np.array(r["t"]) * 1e6, np.array(r["ok"], bool), np.array(r["nq"])
        part = [
            f"{name} {np.median(t[sel]):7.1f} us {nq[sel].mean():6.1f} q ({sel.sum()})"
            for name, sel in (("free", ok), ("colliding", ~ok))
            if sel.any()
        ]
        print(f"  {m:10s} " + "   ".join(part))
    print(
        "dichotomy's free edges by cost (edges ranked by time; mean per edge: us, share of the "
        "free edges' time, " + ", ".join(WORK) + "):"
    )
    for lo, hi, us, share, *work in free_edge_bands(e["methods"]["dichotomy"]):
        counts = ", ".join(f"{x:.1f}" for x in work)
        print(f"  {lo:4.0%}-{hi:4.0%}: {us:7.1f} us, {share:4.0%} of the time; {counts}")
    floor = edge_floor(worlds, edges)
    print(
        "free certified edges (edge_free, best of 3 per edge), mean / median us: "
        + ", ".join(f"over {k} {v[0]:.1f} / {v[1]:.1f} ({v[2]})" for k, v in floor.items() if v)
        + " (with nothing to check: posing the probes and end states, bounding the motion)"
    )
    pt = np.array(e["peer"]["t"]) * 1e6
    if len(pt):
        print(
            f"{'OMPL DiscreteMotionValidator + python-fcl':40s} {np.median(pt):10.1f} "
            f"{pt.mean():9.1f} "
            f"{'':13s} {e['peer']['valid'] / len(pt):7.1%}  ({len(pt)} edges)"
        )
    print(
        "OMPL's own time per solve (outside the validators; RRTConnect solving at once, "
        "motion checks taking 0 / 0.1 / 1 ms), ss.solve(1.0) vs "
        "planning_collision.plugins.ompl.solve(ss, 1.0):"
    )
    for spin, (x, y) in bench_solve_overhead(worlds[0]).items():
        print(f"  {1e3 * spin:3.1f} ms per motion check: {x:6.3f} vs {y:6.3f} ms (median)")
    c = e["cache"]
    print("\nCaches (endpoint distances, GJK warm starts; front lists apart), dichotomy, in order:")
    for on in c:
        print(
            f"  {on:29s} {np.mean(c[on]['t']) * 1e6:8.1f} us/edge  "
            f"BV tests {c[on]['bv'] / e['n']:8.0f}/edge  "
            f"distance queries {c[on]['dq'] / e['n']:6.1f}/edge"
        )
    off = c["cache=False"]
    for on in ("cache=True", "cache=True, front_lists=True"):
        print(
            f"  {on}: {off['bv'] / max(c[on]['bv'], 1):.2f}x fewer BV tests, "
            f"{off['dq'] / max(c[on]['dq'], 1):.2f}x fewer distance queries, "
            f"{np.mean(off['t']) / np.mean(c[on]['t']):.2f}x less time than cache=False"
        )
    if a.cold:
        from planning_collision.demos.dev.cold_start import measure

        m = measure("is_valid+check_edge")
        print(
            "\nFirst is_valid + check_edge from an empty numba cache (fresh process): "
            f"{m['first']:.1f} s (robot load and checker build {m['setup']:.1f} s apart)"
        )
    print(f"\n(total {time.perf_counter() - t0:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
