"""The compiled planner against OMPL's RRTConnect through the plugin, on every robot of the
registry: is it faster, and certified, whatever the robot (revolute, continuous and
prismatic joints, 3 to 14 of them)?

For each robot (``--robots``, default all of `robots.available()`): a scene of ``--boxes``
boxes placed at random where its links reach (seeded), ``--n`` start/goal pairs of free
configurations, and for each pair both planners through `make_setup` (the same checker,
certified "dichotomy" edges), ``--repeats`` times interleaved. Medians over repeats per
problem, then over problems; the ratio is the median of per-problem ratios compiled / OMPL.
Every path of the compiled planner is re-checked by the plugin's own validators (each
state and each certified motion), and both planners' paths densely by the checker (states
at most 1 mm of robot motion apart), once all the robot's solves are timed.

    python -m planning_collision.demos.bench.planners               # 7 robots x 10 problems, ~2 min
    python -m planning_collision.demos.bench.planners --robots panda kinova --n 20
"""

from __future__ import annotations

import argparse
import time

import numpy as np

PLANNERS = ("CompiledRRTConnect", "RRTConnect")


def random_world(robot, n_boxes: int, rng):
    """A scene of n_boxes boxes where the robot's links reach (their origins' box over
    random configurations, the base's surroundings left clear)."""
    import planning_collision as pc

    Q = robot.random_configurations(400, rng)
    P = np.array([[T[:3, 3] for T in robot.fk(q).values()] for q in Q]).reshape(-1, 3)
    lo, hi = P.min(axis=0), P.max(axis=0)
    size = float(np.linalg.norm(hi - lo))
    base = np.array([T[:3, 3] for T in robot.fk(Q[0]).values()])[0]
    scene = pc.Scene()
    while len(scene) < n_boxes:
        c = rng.uniform(lo, hi)
        if np.linalg.norm(c - base) < 0.15 * size:
            continue
        T = np.eye(4)
        T[:3, 3] = c
        scene.add(pc.Box(rng.uniform(0.03, 0.12, 3) * size), T)
    return scene


def _free_world(robot, n_boxes: int, rng, tries: int = 20):
    """(scene, checker) of `random_world`, drawn again while none of 512 random
    configurations is free (a box drawn onto a link that barely moves, such as the Panda's
    first, leaves none; Baxter's two arms leave ~1 % free without any box)."""
    import planning_collision as pc

    for _ in range(tries):
        scene = random_world(robot, n_boxes, rng)
        checker = pc.CollisionChecker(robot, scene)
        if checker.is_valid_batch(robot.random_configurations(512, rng)).any():
            return scene, checker
    raise RuntimeError(f"{tries} random worlds of {robot.name} left no free configurations")


def _pairs(robot, checker, n: int, rng, rounds: int = 1000) -> list:
    out = []
    for _ in range(rounds):
        if len(out) >= n:
            return out
        Q = robot.random_configurations(64, rng)
        ok = Q[checker.is_valid_batch(Q)]
        for a, b in zip(ok[0::2], ok[1::2], strict=False):
            if len(out) < n and not checker.edge_free(a, b):  # not the straight motion
                out.append((a, b))
    if len(out) < n:
        raise RuntimeError(f"{len(out)} of {n} start/goal pairs found in {64 * rounds} samples")
    return out


def validators_agree(ss, Q) -> bool:
    """Every state of the path Q valid and every motion valid by the setup's own validators
    (the plugin's: certified motions): what the compiled planner answered is theirs."""
    from planning_collision.plugins.ompl import new_state, validators

    svc, mv = validators(ss)
    si = ss.getSpaceInformation()
    a, b = new_state(si), new_state(si)
    for q0, q1 in zip(Q[:-1], Q[1:], strict=True):
        svc.codec.write(q0, a)
        svc.codec.write(q1, b)
        if not (svc.isValid(a) and svc.isValid(b) and mv.checkMotion(a, b)):
            return False
    return True


def _dense_free(checker, Q, step: float = 0.001) -> bool:
    R = checker.robot.motion_bound_R
    for a, b in zip(Q[:-1], Q[1:], strict=True):
        k = max(2, int(np.ceil(float((R @ np.abs(b - a)).max()) / step)) + 1)
        t = np.linspace(0.0, 1.0, k)[:, None]
        if not checker.is_valid_batch(a + t * (b - a)).all():
            return False
    return True


def run_robot(name: str, args) -> dict:
    from planning_collision import robots
    from planning_collision.plugins.ompl import make_setup, solution_path, solve

    rng = np.random.default_rng(args.seed)
    robot = robots.load(name)
    scene, checker = _free_world(robot, args.boxes, rng)
    pairs = _pairs(robot, checker, args.n, rng)
    for planner in PLANNERS:  # compile or load, outside the clock
        solve(make_setup(robot, scene, *pairs[0], checker=checker, planner=planner), 1.0)
    rows = []
    for k, (a, b) in enumerate(pairs):
        runs = {p: [] for p in PLANNERS}
        for r in range(args.repeats):
            for p in PLANNERS if (k + r) % 2 == 0 else PLANNERS[::-1]:
                ss = make_setup(robot, scene, a, b, checker=checker, planner=p)
                t0 = time.perf_counter()
                ok = bool(solve(ss, args.time))
                dt = time.perf_counter() - t0
                runs[p].append([dt, ok, ss if ok else None])
        rows.append(runs)
    # the paths checked once every solve is timed: checks between solves would leave the
    # next solve's code and data in the processor's caches (the plugin's validators, which
    # OMPL's planner calls, right after a compiled solve), or out of them
    for runs in rows:
        for p, tried in runs.items():
            for run in tried:
                ss, run[2] = run[2], None
                if ss is not None:
                    Q = solution_path(ss)
                    run[2] = _dense_free(checker, Q) and (
                        p != PLANNERS[0] or validators_agree(ss, Q)
                    )
    return {"robot": name, "dof": robot.dof, "continuous": int(robot.continuous.sum()),
            "rows": rows}  # fmt: skip


def table(results, repeats: int) -> str:
    lines = [
        "| robot | joints (continuous) | solved compiled / OMPL | median solve, compiled ms | "
        "median solve, OMPL RRTConnect ms | compiled / OMPL | paths not free |",
        "|---|---|---|---|---|---|---|",
    ]
    for res in results:
        rows = res["rows"]
        med = {p: [np.median([x[0] for x in r[p]]) * 1e3 for r in rows] for p in PLANNERS}
        solved = {p: sum(x[1] for r in rows for x in r[p]) for p in PLANNERS}
        both = [k for k, r in enumerate(rows) if all(all(x[1] for x in r[p]) for p in PLANNERS)]
        ratio = [med[PLANNERS[0]][k] / med[PLANNERS[1]][k] for k in both]
        bad = sum(x[2] is False for r in rows for p in PLANNERS for x in r[p])
        n = len(rows) * repeats
        lines.append(
            f"| {res['robot']} | {res['dof']} ({res['continuous']}) | "
            f"{solved[PLANNERS[0]]}/{n} / {solved[PLANNERS[1]]}/{n} | "
            f"{np.median(med[PLANNERS[0]]):.2f} | {np.median(med[PLANNERS[1]]):.2f} | "
            f"{np.median(ratio) if ratio else float('nan'):.2f}x | {bad} |"
        )
    return "\n".join(lines)


def main(argv=None) -> int:
    from planning_collision import robots

    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--robots", nargs="+", default=None, help="default: robots.available()")
    p.add_argument("--n", type=int, default=10, help="start/goal pairs per robot (default 10)")
    p.add_argument("--boxes", type=int, default=8, help="boxes per scene (default 8)")
    p.add_argument("--repeats", type=int, default=3, help="runs per pair (default 3)")
    p.add_argument("--time", type=float, default=5.0, help="each solve's limit, s (default 5)")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    from ompl import util as ou

    ou.setLogLevel(ou.LOG_NONE)
    ou.RNG.setSeed(args.seed + 1)
    names = args.robots or robots.available()
    bad = sorted(set(names) - set(robots.available()))
    if bad:
        p.error(f"--robots: unknown {bad}; robots.available(): {robots.available()}")
    t0 = time.perf_counter()
    results = [run_robot(n, args) for n in names]
    print(table(results, args.repeats))
    print(
        f"({time.perf_counter() - t0:.0f} s; {args.n} problems per robot, {args.repeats} repeats)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
