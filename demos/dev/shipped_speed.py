"""Per-call speed of the shipped machine code against code compiled for this machine.

A wheel ships the entry points compiled for a portable CPU baseline (x86-64-v3:
planning_collision/shipping.py); numba otherwise compiles them for the host's own CPU. This
runs the same work in alternating fresh processes, one loading the shipped code (an empty
numba cache of its own), one the host's (a numba cache compiled here first, shipped code
off), and compares: `is_valid` per configuration (uniform in the joint limits) and
`check_edge` per motion (the motions RRTConnect asks, recorded in each process with one
seed), for the Panda in the first problem of each MotionBenchMaker set. Each process reports
how many kernels it compiled while timing (0 for both when the comparison means anything).

Needs shipped code where the package looks for it: from a clone, first
``python -m planning_collision.shipping planning_collision/kernels/_compiled``.

    python -m planning_collision.demos.dev.shipped_speed              # ~3 min on 2 cores
    python -m planning_collision.demos.dev.shipped_speed --rounds 5 --configs 20000
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

from planning_collision.demos.dev.wheel_start import _PROLOGUE

# the child: wheel_start's compile counter (`_COMPILES`), then the timed work
_CHILD = (
    _PROLOGUE
    + r"""
import json, sys, time
import numpy as np

from planning_collision.demos.bench.checker import DATA, _scenes, record_edges
from planning_collision.kernels._jit import shipped_status
import planning_collision as pc

n_configs, n_edges = int(sys.argv[1]), int(sys.argv[2])
worlds = _scenes(DATA, 1)
edges = record_edges(worlds, n_edges, seed=1)
checkers = [pc.CollisionChecker(r, s) for _, r, s, _ in worlds]
rng = np.random.default_rng(0)
qs = worlds[0][1].random_configurations(n_configs, rng)
for ch in checkers:  # first calls (loading, the thread's workspace) before the clock
    ch.is_valid(qs[0]); ch.check_edge(qs[0], qs[1])
before = _COMPILES[0]
clock = time.perf_counter
state = []
for k, q in enumerate(qs):
    ch = checkers[k % len(checkers)]
    t0 = clock(); ch.is_valid(q); state.append(clock() - t0)
edge = []
for w, q0, q1 in edges:
    ch = checkers[w]
    t0 = clock(); ch.check_edge(q0, q1); edge.append(clock() - t0)
print(json.dumps(dict(
    state_median=float(np.median(state)), state_mean=float(np.mean(state)),
    edge_median=float(np.median(edge)), edge_mean=float(np.mean(edge)),
    edges=len(edge), compiles_timed=_COMPILES[0] - before, compiles=_COMPILES[0],
    shipped=shipped_status()[1],
)))
"""
)


def run(kind: str, host_cache: str, n_configs: int, n_edges: int) -> dict:
    """One child: `kind` "host" (the host-compiled cache, shipped code off) or "shipped"
    (an empty numba cache: what a wheel's user has)."""
    with tempfile.TemporaryDirectory(prefix="pc-shipped-") as empty:
        env = dict(os.environ)
        if kind == "host":
            env.update(NUMBA_CACHE_DIR=host_cache, PLANNING_COLLISION_SHIPPED="0")
        else:
            env.update(NUMBA_CACHE_DIR=empty)
            env.pop("PLANNING_COLLISION_SHIPPED", None)
        r = subprocess.run(
            [sys.executable, "-c", _CHILD, str(n_configs), str(n_edges)],
            env=env, capture_output=True, text=True, timeout=1800,
        )  # fmt: skip
    if r.returncode != 0:
        raise RuntimeError(f"{kind} child failed:\n{r.stderr[-3000:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    p.add_argument("--rounds", type=int, default=3, help="host/shipped pairs, interleaved")
    p.add_argument("--configs", type=int, default=10000)
    p.add_argument("--edges", type=int, default=2000)
    p.add_argument("--host-cache", default=None,
                   help="numba cache of host-compiled code (default: a temporary one)")  # fmt: skip
    a = p.parse_args(argv)
    from planning_collision.kernels._jit import shipped_status

    magic, why = shipped_status()
    if magic is None:
        print(f"no usable shipped machine code: {why}")
        return 2
    with tempfile.TemporaryDirectory(prefix="pc-host-") as tmp:
        host = a.host_cache or tmp
        w = run("host", host, 200, 200)  # compiles the host's code (not timed)
        print(f"host cache ready ({w['compiles']} kernels compiled for it); shipped: {why}")
        rows = {"host": [], "shipped": []}
        for i in range(a.rounds):
            for kind in ("host", "shipped") if i % 2 == 0 else ("shipped", "host"):
                r = run(kind, host, a.configs, a.edges)
                rows[kind].append(r)
                print(f"round {i + 1} {kind:8s} state {r['state_median'] * 1e6:6.2f} us  "
                      f"edge {r['edge_median'] * 1e6:6.2f} us (mean "
                      f"{r['edge_mean'] * 1e6:6.2f})  compiled while timing: "
                      f"{r['compiles_timed']} (in all {r['compiles']})", flush=True)  # fmt: skip
    for key, label in (("state_median", "is_valid median"), ("edge_median", "check_edge median"),
                       ("edge_mean", "check_edge mean")):  # fmt: skip
        ratios = [s[key] / h[key] for s, h in zip(rows["shipped"], rows["host"], strict=True)]
        print(f"{label:18s} shipped / host: {np.median(ratios):.3f} "
              f"(rounds {', '.join(f'{x:.3f}' for x in ratios)})")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
