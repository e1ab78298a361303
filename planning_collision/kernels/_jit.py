"""The one decorator every kernel uses, and how a first call's compile is helped along.

`cache=True` keeps the first-call compile cost to once per machine; `nogil=True` lets a
caller run kernels from threads; `error_model="numpy"` makes 0/0 a NaN instead of an
exception check on every division. No fastmath: predicates that decide a collision must
see NaN and inf as they are.
"""

import functools
import gc
import hashlib
from pathlib import Path

import numba
from numba.core import caching, event

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

# While numba compiles one of these kernels (a user's first call: tens of seconds), Python's
# cyclic garbage collector runs less often. numba's compiler makes millions of objects,
# and each full collection walks all of them: 16 % of the checker's first is_valid +
# check_edge (perf; 43.2 s with the default thresholds, 38.8 s with these, 36.4 s with the
# collector off, which doubled the peak memory: 0.53 -> 1.03 GB; these: 0.61 GB).
COMPILE_GC_THRESHOLD = (20_000, 50, 50)


class _CompileGC(event.Listener):
    """Sets COMPILE_GC_THRESHOLD from the start of the outermost compile of a
    planning_collision kernel to its end, then puts the caller's thresholds back."""

    def __init__(self):
        self.depth = 0
        self.saved = None

    def on_start(self, ev):
        if not _ours(ev):
            return
        if self.depth == 0:
            self.saved = gc.get_threshold()
            gc.set_threshold(*COMPILE_GC_THRESHOLD)
        self.depth += 1

    def on_end(self, ev):
        if not _ours(ev) or self.depth == 0:
            return
        self.depth -= 1
        if self.depth == 0:
            gc.set_threshold(*self.saved)


def _ours(ev) -> bool:
    f = getattr(ev.data.get("dispatcher"), "py_func", None)
    return getattr(f, "__module__", "").startswith("planning_collision.")


event.register("numba:compile", _CompileGC())


# numba keys a cached function on its own source file only: a kernel inlines helpers and
# constants from the other files of this package (and reads the workspace layout that
# check_types.py declares), so an edit there would leave it loading stale machine code, with
# an old layout or an old bound (an editable install after a pull, a developer's tree). The
# locators below add a digest of every kernels/*.py to the stamp of the functions defined
# here: any edit in the package recompiles them all. An installed package is rewritten
# whole on upgrade anyway. Without numba's (private) locator list, numba's default holds.
KERNELS_DIR = Path(__file__).resolve().parent


@functools.lru_cache(maxsize=1)
def package_stamp() -> bytes:
    """sha256 over the names and contents of kernels/*.py (once per process)."""
    h = hashlib.sha256()
    for f in sorted(KERNELS_DIR.glob("*.py")):
        h.update(f.name.encode())
        h.update(f.read_bytes())
    return h.digest()


def _package_locator(base):
    class Locator(base):
        def get_source_stamp(self):
            stamp = super().get_source_stamp()
            if Path(self._py_file).resolve().parent == KERNELS_DIR:
                return (stamp, package_stamp())
            return stamp

    Locator.__name__ = Locator.__qualname__ = f"Package{base.__name__}"
    return Locator


def _install_locators() -> bool:
    try:
        classes = caching.CacheImpl._locator_classes
        mixin = caching._SourceFileBackedLocatorMixin
    except AttributeError:
        return False
    if any(c.__name__.startswith("Package") for c in classes):
        return True
    caching.CacheImpl._locator_classes = [
        _package_locator(c) if issubclass(c, mixin) else c for c in classes
    ]
    return True


LOCATORS_INSTALLED = _install_locators()
