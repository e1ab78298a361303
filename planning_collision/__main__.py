"""``python -m planning_collision warm-up``: compile every kernel once after installing
(planning_collision/compiling.py), so that no program of yours pays for it later; with
``--urdf my.urdf [--srdf my.srdf]``, also build what your robot needs (its link models and
self-collision tables, cached per user)."""

from __future__ import annotations

import argparse
import os
import sys


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m planning_collision", description=__doc__)
    sub = p.add_subparsers(dest="command", required=True)
    w = sub.add_parser("warm-up", help="compile (or load from numba's cache) every kernel")
    w.add_argument("--urdf", help="your robot's URDF: its models and tables are built too")
    w.add_argument("--srdf", help="its SRDF (the allowed-collision matrix), with --urdf")
    w.add_argument(
        "--jobs", type=int, default=min(2, os.cpu_count() or 1),
        help="processes compiling at once (default: 2 where there are 2 cores)",
    )  # fmt: skip
    a = p.parse_args(argv)
    if a.srdf and not a.urdf:
        p.error("--srdf needs --urdf")
    for name in ("urdf", "srdf"):
        f = getattr(a, name)
        if f and not os.path.isfile(f):
            p.error(f"--{name}: no such file: {f}")
    if a.jobs < 1:
        p.error(f"--jobs must be at least 1, got {a.jobs}")
    from .compiling import warm_up
    from .kernels._jit import shipped_status

    magic, why = shipped_status()
    seconds = warm_up(jobs=a.jobs, urdf=a.urdf, srdf=a.srdf)
    print(f"planning_collision: every kernel ready ({seconds:.1f} s)")
    if magic or not why.startswith("none shipped"):  # a wheel's: was it usable here?
        print(
            f"planning_collision: shipped machine code: {'used' if magic else 'not used'} ({why})"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
