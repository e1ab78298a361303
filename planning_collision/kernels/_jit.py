"""numba's one door: the decorators every kernel uses, and every use of numba beyond its
documented API, so that one file says what a numba upgrade may break.

`cache=True` keeps the first-call compile cost to once per machine; `nogil=True` lets a
caller run kernels from threads; `error_model="numpy"` makes 0/0 a NaN instead of an
exception check on every division. No fastmath: predicates that decide a collision must
see NaN and inf as they are.

numba's private surface, all of it here (pyproject.toml pins numba to the versions it was
tested with; `tests/test_jit.py` fails when one of these moves):

- the njit option ``_nrt=False`` (`hot_kernel`);
- the cache locators' class list ``caching.CacheImpl._locator_classes``, their mixin
  ``caching._SourceFileBackedLocatorMixin`` and a locator's ``_py_file`` (the package-wide
  cache stamp below; when they move, a warning says so and numba's own stamp holds);
- a dispatcher's ``_cache._cache_file._load_index()`` and ``_cache._impl.locator``
  (`cached_signatures`, `source_stamp`: what tests read of numba's cache);
- ``numba.np.arrayobj.make_array``, ``populate_array`` and ``numba.core.cgutils``, which the
  two intrinsics generate code with (kernels/handles.py, kernels/clock.py).
- the caller's ``func_id.func`` in the IR numba hands an inlining cost model
  (`inline_kernel`: its ``inline=`` callable is documented, the IR's attributes are not).

The rest is numba's documented API: `numba.njit`, `numba.extending.intrinsic` and
`overload`, `numba.literally`, the event API (`numba.core.event`), a dispatcher's
`disable_compile`.

**Plain Python.** With ``NUMBA_DISABLE_JIT=1`` every kernel runs as the Python it is
written in (a debugger steps through it), the checker included: the intrinsics have
Python twins (`intrinsic`), and `seal` does nothing.
"""

import functools
import gc
import hashlib
import warnings
from pathlib import Path

import numba
from numba.core import caching, cgutils, event  # noqa: F401  (cgutils: kernels/clock.py)
from numba.core.errors import TypingError  # noqa: F401  (kernels/handles.py)
from numba.extending import intrinsic as _numba_intrinsic
from numba.np.arrayobj import make_array, populate_array  # noqa: F401  (kernels/handles.py)

# NUMBA_DISABLE_JIT=1: kernels are their Python functions
JIT_DISABLED = bool(numba.config.DISABLE_JIT)

kernel = numba.njit(cache=True, nogil=True, error_model="numpy")

# Small helpers on the innermost loop (support functions, simplex steps, the traversal's
# steps) are inlined at numba IR level: LLVM does not inline across numba's function
# boundaries when arrays are passed, and the call overhead was 3x the work itself
# (measured: a 32-point support costs 30 ns inline, 90 ns through one call).
#
# Each is inlined into the outermost compiled function, never into the body of another
# inline kernel first. numba copies an inlined body block by block into its caller, each
# block's copy with all the body's variables (its scope): the cost grows with blocks x
# variables, and a body holding its own inlined helpers is copied whole at every level.
# The scene traversal's body with its steps inlined first (209 blocks, 2169 variables)
# took ~2 s of the checker's first call to copy into `query`; body and steps copied one by
# one into `query`, 0.65 s. Against inlining level by level, interleaved: `distance()`'s
# first call 15.2-16.2 s instead of 18.5-18.9, the checker's first `is_valid` + `check_edge`
# 0.5-2.5 s shorter, the same machine code speed.

# The Python functions of inline kernels: the bodies numba copies into callers.
_INLINED: set = set()


def _outermost(expr, caller_ir, callee_ir) -> bool:
    """numba's inlining cost model (the documented ``inline=`` callable) of
    `inline_kernel`: inline the call unless its caller is itself an inline body, which
    numba is preparing to copy into its own caller; the call is then inlined there, by that
    caller's pass."""
    return caller_ir.func_id.func not in _INLINED


_inline_outermost = numba.njit(cache=True, nogil=True, error_model="numpy", inline=_outermost)


def inline_kernel(fn):
    """`fn` inlined at numba IR level into the outermost compiled function that calls it
    (the comment above)."""
    _INLINED.add(fn)
    return _inline_outermost(fn)


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
        if not isinstance(classes, list) or not hasattr(mixin, "get_source_stamp"):
            raise AttributeError("numba's locator list changed shape")
    except AttributeError as e:
        warnings.warn(
            f"planning_collision: numba {numba.__version__} moved its cache locators ({e}); "
            "an edit to one kernels/*.py file will not recompile the kernels that inline it. "
            "After editing kernels, clear numba's cache (the __pycache__ directories of "
            "planning_collision/kernels, or NUMBA_CACHE_DIR).",
            RuntimeWarning,
            stacklevel=2,
        )
        return False
    if any(c.__name__.startswith("Package") for c in classes):
        return True
    caching.CacheImpl._locator_classes = [
        _package_locator(c) if issubclass(c, mixin) else c for c in classes
    ]
    return True


LOCATORS_INSTALLED = _install_locators()


def cached_signatures(dispatcher) -> set:
    """The argument types `dispatcher` has compiled in this process or finds in numba's
    on-disk cache index (empty for a plain function: NUMBA_DISABLE_JIT)."""
    sigs = set(getattr(dispatcher, "signatures", ()))
    cache = getattr(dispatcher, "_cache", None)
    index = getattr(getattr(cache, "_cache_file", None), "_load_index", None)
    if index is not None:
        sigs |= {key[0] for key in index()}
    return sigs


def source_stamp(dispatcher):
    """What numba's cache keys `dispatcher`'s machine code on besides its types (the
    package stamp included for kernels of this package); None without a cache."""
    impl = getattr(getattr(dispatcher, "_cache", None), "_impl", None)
    return None if impl is None else impl.locator.get_source_stamp()


def seal(dispatcher) -> bool:
    """From now on `dispatcher` compiles for no new argument types: a call with others
    raises TypeError (the checker's hot paths pass arguments unchecked once sealed and
    check them on that TypeError). False, and nothing done, for a plain Python function
    (NUMBA_DISABLE_JIT): it raises no TypeError, so its callers must keep checking."""
    if JIT_DISABLED or not hasattr(dispatcher, "disable_compile"):
        return False
    dispatcher.disable_compile()
    return True


def with_python_twin(python_twin):
    """A kernel whose plain-Python run (NUMBA_DISABLE_JIT) is `python_twin` instead: for the
    rare kernel whose Python reading differs from its compiled one (int64 arithmetic that
    wraps compiled and grows as Python integers)."""

    def wrap(fn):
        return python_twin if JIT_DISABLED else fn

    return wrap


def intrinsic(python_twin):
    """`numba.extending.intrinsic`, or `python_twin` (the same function in plain Python)
    under NUMBA_DISABLE_JIT, where an intrinsic cannot run."""

    def wrap(fn):
        return python_twin if JIT_DISABLED else _numba_intrinsic(fn)

    return wrap
