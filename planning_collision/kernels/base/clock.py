"""A monotonic clock compiled code can read: `monotonic_ns()` (int64 nanoseconds).

`CollisionChecker.stats["seconds"]` is the time inside its compiled calls. Timing a
2 µs state check from Python costs two `time.perf_counter` calls (~140 ns, 5 % of the
check); read inside the kernel, the clock costs ~45 ns. It is the C library's
``clock_gettime(CLOCK_MONOTONIC)`` (the vDSO on Linux, no system call), called by its name
so the compiled code stays cacheable (numba refuses to cache a ctypes function pointer).
Where there is no ``clock_gettime`` (Windows) `HAS_CLOCK` is False and the clock reads 0.
As plain Python (NUMBA_DISABLE_JIT=1) it is `time.monotonic_ns`, the same clock.
"""

import time

from llvmlite import ir
from numba import types

from .._jit import cgutils, intrinsic

HAS_CLOCK = hasattr(time, "CLOCK_MONOTONIC")
_CLOCK_ID = getattr(time, "CLOCK_MONOTONIC", 0)


def _python_monotonic_ns() -> int:
    return time.monotonic_ns() if HAS_CLOCK else 0


@intrinsic(_python_monotonic_ns)
def monotonic_ns(typingctx):
    """Nanoseconds of the monotonic clock (0 where `HAS_CLOCK` is False)."""

    def codegen(context, builder, sig, args):
        i64 = ir.IntType(64)
        if not HAS_CLOCK:
            return i64(0)
        i32 = ir.IntType(32)
        timespec = ir.LiteralStructType([i64, i64])  # (tv_sec, tv_nsec): both long, LP64
        fnty = ir.FunctionType(i32, [i32, timespec.as_pointer()])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "clock_gettime")
        ts = cgutils.alloca_once(builder, timespec)
        builder.call(fn, [i32(_CLOCK_ID), ts])
        sec = builder.load(cgutils.gep_inbounds(builder, ts, 0, 0))
        nsec = builder.load(cgutils.gep_inbounds(builder, ts, 0, 1))
        return builder.add(builder.mul(sec, i64(1_000_000_000)), nsec)

    return types.int64(), codegen
