"""The one decorator every kernel uses (STYLE §2).

`cache=True` keeps the first-call compile cost to once per machine; `nogil=True` lets a
caller run kernels from threads; `error_model="numpy"` makes 0/0 a NaN instead of an
exception check on every division. No fastmath: predicates that decide a collision must
see NaN and inf as they are.
"""

import numba

kernel = numba.njit(cache=True, nogil=True, error_model="numpy")
