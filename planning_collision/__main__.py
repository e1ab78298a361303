"""``python -m planning_collision warm-up``: compile every kernel once after installing
(planning_collision/compiling.py), so that no program of yours pays for it later."""

from __future__ import annotations

import argparse
import sys


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m planning_collision", description=__doc__)
    sub = p.add_subparsers(dest="command", required=True)
    sub.add_parser("warm-up", help="compile (or load from numba's cache) every kernel")
    p.parse_args(argv)
    from .compiling import warm_up

    seconds = warm_up()
    print(f"planning_collision: every kernel ready ({seconds:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
