"""The one decorator every kernel uses.

`cache=True` keeps the first-call compile cost to once per machine; `nogil=True` lets a
caller run kernels from threads; `error_model="numpy"` makes 0/0 a NaN instead of an
exception check on every division. No fastmath: predicates that decide a collision must
see NaN and inf as they are.
"""

import numba

kernel = numba.njit(cache=True, nogil=True, error_model="numpy")

# Small helpers on the innermost loop (support functions, simplex steps) are inlined at
# numba IR level: LLVM does not inline across numba's function boundaries when arrays are
# passed, and the call overhead was 3x the work itself (measured: a 32-point support
# costs 30 ns inline, 90 ns through one call).
inline_kernel = numba.njit(cache=True, nogil=True, error_model="numpy", inline="always")

# Kernels that never allocate and sit on the hot path of every query compile without NRT:
# numba otherwise increments and decrements the reference count of every array argument
# on entry and exit (atomic operations), and a call that passes two shape tables (16
# arrays) then costs more than a GJK iteration.
hot_kernel = numba.njit(cache=True, nogil=True, error_model="numpy", _nrt=False)

# Loops over independent items (a batch of configurations) in parallel threads (prange);
# each thread uses its own workspace.
parallel_kernel = numba.njit(cache=True, nogil=True, error_model="numpy", parallel=True)
