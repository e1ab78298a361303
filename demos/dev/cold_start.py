"""First-call cost of each public entry point, compiled from an empty numba cache.

A user's first call of a numba entry point compiles it (numba's on-disk cache, ``cache=True``,
makes later processes fast). For each entry point this starts a fresh Python process with an
empty ``NUMBA_CACHE_DIR`` (and an empty per-user model cache, ``PLANNING_COLLISION_CACHE``,
where the checker keeps its self-pair tables), imports the package, and times the first
call (compile + run), then a second call (the warm cost). Each entry point is measured
alone, so its figure is what a user pays when it is the first thing they call.

How long: about 20-40 s per entry point on 2 idle cores (the figures are only meaningful on
an idle machine). Run::

    python -m planning_collision.demos.dev.cold_start                    # every entry point
    python -m planning_collision.demos.dev.cold_start --entries distance collide
    python -m planning_collision.demos.dev.cold_start --list
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import textwrap

# Each entry point sets up (`setup`: building a scene or loading a robot compiles kernels of
# its own, timed apart) and makes one call (`call`), whose first run compiles the query.
_COMMON = """
import numpy as np
import planning_collision as pc
T = np.eye(4); T[0, 3] = 0.5
"""
_CHECKER = (
    "from planning_collision import robots\n"
    "r = robots.load('panda'); s = pc.Scene(); s.add(pc.Box((0.2, 0.2, 0.2)), T)\n"
    "ch = pc.CollisionChecker(r, s)\n"
    "q0 = np.clip(np.zeros(r.dof), r.lower, r.upper); q1 = np.clip(q0 + 0.3, r.lower, r.upper)"
)
ENTRY_POINTS = {
    "distance": ("", "pc.distance(pc.Cone(0.1, 0.2), np.eye(4), pc.Box((0.2, 0.2, 0.2)), T)"),
    "collide": ("", "pc.collide(pc.Cone(0.1, 0.2), np.eye(4), pc.Box((0.2, 0.2, 0.2)), T)"),
    "penetration": (
        "",
        "pc.penetration(pc.Cone(0.1, 0.2), np.eye(4), pc.Box((0.2, 0.2, 0.2)), T)",
    ),
    "pair_distance_batch": (
        "from planning_collision.geometry import shape_table\n"
        "from planning_collision.kernels.convex.pair import pair_distance_batch\n"
        "tab = shape_table([pc.Cone(0.1, 0.2), pc.Box((0.2, 0.2, 0.2))])\n"
        "ia, ib, out = np.array([0]), np.array([1]), np.empty((1, 10))",
        "pair_distance_batch(tab, ia, np.eye(4)[None], tab, ib, T[None], np.inf, out)",
    ),
    "Scene.in_collision": (
        "s = pc.Scene(); s.add(pc.Box((0.2, 0.2, 0.2)), T); s.build()",
        "s.in_collision(pc.Capsule(0.05, 0.3), np.eye(4))",
    ),
    "Scene.min_distance": (
        "s = pc.Scene(); s.add(pc.Box((0.2, 0.2, 0.2)), T); s.build()",
        "s.min_distance(pc.Capsule(0.05, 0.3), np.eye(4))",
    ),
    "CollisionChecker.is_valid": (_CHECKER, "ch.is_valid(q0)"),
    "CollisionChecker.check_edge": (_CHECKER, "ch.check_edge(q0, q1)"),
    "is_valid+check_edge": (_CHECKER, "ch.is_valid(q0); ch.check_edge(q0, q1)"),
    # what the queries cost once a planner's checker is compiled (the setup): the kernels
    # they share with it (GJK, the pair queries) are not compiled again
    "collide+distance after the checker": (
        _CHECKER + "\nch.is_valid(q0); ch.check_edge(q0, q1)",
        "pc.collide(pc.Cone(0.1, 0.2), np.eye(4), pc.Box((0.2, 0.2, 0.2)), T)\n"
        "pc.distance(pc.Cone(0.1, 0.2), np.eye(4), pc.Box((0.2, 0.2, 0.2)), T)",
    ),
    "Robot.fk": (
        "from planning_collision import robots; r = robots.load('planar_arm'); q = np.zeros(r.dof)",
        "r.fk(q)",
    ),
}

_CHILD = """
import json, time
t0 = time.perf_counter()
{common}
t_import = time.perf_counter() - t0
t0 = time.perf_counter()
{setup}
t_setup = time.perf_counter() - t0
t0 = time.perf_counter()
{call}
t_first = time.perf_counter() - t0
t0 = time.perf_counter()
{call}
t_second = time.perf_counter() - t0
print(json.dumps({{"import": t_import, "setup": t_setup, "first": t_first, "second": t_second}}))
"""


def run_fresh(code: str, label: str, **env) -> dict:
    """Run `code` in a fresh Python process with an empty numba cache (plus `env`); returns
    the JSON object its last line of output prints. The shipped machine code is not loaded
    (``PLANNING_COLLISION_SHIPPED=0``): what is measured is a compile, as in a clone without
    it (a wheel's start: demos/dev/wheel_start.py)."""
    with tempfile.TemporaryDirectory(prefix="numba-cold-") as cache:
        # an empty per-user model cache too: the checker's self-pair tables are built (with
        # a distance kernel compiled for it) on the first call, as on a fresh machine
        env = dict(
            os.environ, NUMBA_CACHE_DIR=cache, PLANNING_COLLISION_CACHE=cache,
            PLANNING_COLLISION_SHIPPED="0", **env,
        )  # fmt: skip
        r = subprocess.run(
            [sys.executable, "-c", textwrap.dedent(code)],
            env=env,
            capture_output=True,
            text=True,
            timeout=900,
        )
    if r.returncode != 0:
        raise RuntimeError(f"{label}: the child process failed:\n{r.stderr[-2000:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def measure(name: str) -> dict:
    """Run entry point `name` in a fresh process with an empty numba cache."""
    setup, call = ENTRY_POINTS[name]
    return run_fresh(_CHILD.format(common=_COMMON, setup=setup, call=call), name)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--entries", nargs="*", choices=list(ENTRY_POINTS), default=list(ENTRY_POINTS))
    p.add_argument("--list", action="store_true", help="list the entry points and exit")
    a = p.parse_args(argv)
    if a.list:
        for k, (_, call) in ENTRY_POINTS.items():
            print(f"{k:22s} {call}")
        return 0
    print("first call from an empty numba cache, one fresh process per entry point")
    w = max(len(n) for n in a.entries + ["entry point"])
    print(
        f"{'entry point':{w}s} {'import [s]':>10s} {'setup [s]':>10s} {'first call [s]':>15s} "
        f"{'second [us]':>12s}"
    )
    for name in a.entries:
        m = measure(name)
        print(
            f"{name:{w}s} {m['import']:10.2f} {m['setup']:10.1f} {m['first']:15.1f} "
            f"{m['second'] * 1e6:12.1f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
