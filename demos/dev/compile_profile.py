"""Where the first call's compile time goes: the checker's is_valid + check_edge, compiled
from an empty numba cache in a fresh process, by compiled function.

numba reports a compile event per function (nested: a caller's event contains its callees'
compiles, subtracted here to give each function its own time) and, with
``NUMBA_LLVM_PASS_TIMINGS=1``, LLVM's time per library: function passes, module passes
(after numba has linked every callee's module into the caller's) and code generation. The
rest of a function's own time is numba's front end (typing, IR inlining, lowering).

    python -m planning_collision.demos.dev.compile_profile            # ~90 s on 2 idle cores
    python -m planning_collision.demos.dev.compile_profile --top 30
"""

from __future__ import annotations

import argparse

from planning_collision.demos.dev.cold_start import _COMMON, ENTRY_POINTS, run_fresh

_CHILD = r"""
import gc, json, time
import numpy as np
from numba.core import event
from numba.core.registry import CPUDispatcher

own = {{}}
stack = []

class Listener(event.Listener):
    def on_start(self, e):
        stack.append([time.perf_counter(), 0.0])

    def on_end(self, e):
        t0, inner = stack.pop()
        dt = time.perf_counter() - t0
        if stack:
            stack[-1][1] += dt
        f = e.data["dispatcher"].py_func
        name = f.__module__.split(".")[-1] + "." + f.__qualname__
        own[name] = own.get(name, 0.0) + dt - inner

event.register("numba:compile", Listener())
{setup}
t0 = time.perf_counter()
{call}
total = time.perf_counter() - t0
llvm = {{}}
for d in [o for o in gc.get_objects() if isinstance(o, CPUDispatcher)]:
    f = d.py_func
    name = f.__module__.split(".")[-1] + "." + f.__qualname__
    for md in d.get_metadata().values():
        if md is None:  # an overload numba made without compiling it here
            continue
        parts = [0.0, 0.0, 0.0]
        for rec in md.get("llvm_pass_timings") or []:
            k = 0 if rec.name.startswith("Function") else 1 if rec.name.startswith("Module") else 2
            parts[k] += rec.timings.get_total_time()
        old = llvm.get(name, [0.0, 0.0, 0.0])
        llvm[name] = [a + b for a, b in zip(old, parts, strict=True)]
print(json.dumps({{"total": total, "own": own, "llvm": llvm}}))
"""


def main(argv=None) -> int:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--top", type=int, default=15, help="functions to list")
    a = p.parse_args(argv)
    setup, call = ENTRY_POINTS["is_valid+check_edge"]
    code = _CHILD.format(setup=_COMMON + setup, call=call)
    got = run_fresh(code, "compile_profile", NUMBA_LLVM_PASS_TIMINGS="1")
    own, llvm = got["own"], got["llvm"]
    print(f"is_valid + check_edge from empty caches: {got['total']:.1f} s")
    heads = " ".join(f"{h:>6s}" for h in ("own s", "front", "fpass", "mpass", "code"))
    print(f"{'compiled function':44s} {heads}")
    tot = [0.0] * 5
    for name in sorted(own, key=lambda n: -own[n]):
        fp, mp, cg = llvm.get(name, [0.0, 0.0, 0.0])
        row = [own[name], max(own[name] - fp - mp - cg, 0.0), fp, mp, cg]
        tot = [x + y for x, y in zip(tot, row, strict=True)]
        if a.top > 0:
            a.top -= 1
            print(f"{name:44s} " + " ".join(f"{x:6.2f}" for x in row))
    print(f"{'all ' + str(len(own)) + ' functions':44s} " + " ".join(f"{x:6.2f}" for x in tot))
    print(
        "front: numba's typing, IR inlining and lowering; fpass / mpass: LLVM function and "
        "module passes (the module passes run on the caller with all its callees linked in); "
        "code: LLVM code generation"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
