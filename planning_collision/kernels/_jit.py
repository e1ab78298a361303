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
  two intrinsics generate code with (kernels/checker/handles.py, kernels/base/clock.py).
- the caller's ``func_id.func`` in the IR numba hands an inlining cost model
  (`inline_kernel`: its ``inline=`` callable is documented, the IR's attributes are not);
- the cache classes ``caching.FunctionCache`` and ``caching.IndexDataCacheFile`` (their
  ``_load_index``, ``_save_index``, ``_load_data``, ``_save_data``, ``_index_key``,
  ``_impl`` and ``_cache_file``), a dispatcher's ``_cache`` and a codegen's
  ``magic_tuple()`` (`PackageCache`: checked cache files, private directories, the shipped
  machine code).
- the code libraries' object-code hooks ``codegen.CPUCodeLibrary._object_compiled_hook``
  and ``_object_getbuffer_hook``, and the JIT engine (a codegen's ``_engine`` and its
  ``set_object_cache``, ``get_function_address``): `record_machine_code`, `machine_code`
  (where each compiled function lies in memory, for a sampling profiler: a dev tool only).

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
import os
import pickle
import warnings
from pathlib import Path

import numba
from numba.core import caching, cgutils, event  # noqa: F401  (cgutils: kernels/base/clock.py)
from numba.core.errors import TypingError  # noqa: F401  (kernels/checker/handles.py)
from numba.extending import intrinsic as _numba_intrinsic
from numba.np.arrayobj import make_array, populate_array  # noqa: F401  (kernels/checker/handles.py)

# NUMBA_DISABLE_JIT=1: kernels are their Python functions
JIT_DISABLED = bool(numba.config.DISABLE_JIT)


def _njit(**options):
    """numba.njit(cache=True, **options) whose dispatchers keep their machine code in
    `PackageCache` (checked files, private directories, the shipped code)."""
    jit = numba.njit(cache=True, **options)

    def decorate(fn):
        return _package_cache(jit(fn))

    return decorate


kernel = _njit(nogil=True, error_model="numpy")

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


_inline_outermost = _njit(nogil=True, error_model="numpy", inline=_outermost)


def inline_kernel(fn):
    """`fn` inlined at numba IR level into the outermost compiled function that calls it
    (the comment above)."""
    _INLINED.add(fn)
    return _inline_outermost(fn)


# Kernels that never allocate and sit on the hot path of every query compile without NRT:
# numba otherwise increments and decrements the reference count of every array argument
# on entry and exit (atomic operations), and a call that passes two shape tables (16
# arrays) then costs more than a GJK iteration.
hot_kernel = _njit(nogil=True, error_model="numpy", _nrt=False)

# Loops over independent items (a batch of configurations) in parallel threads (prange);
# each thread uses its own workspace.
parallel_kernel = _njit(nogil=True, error_model="numpy", parallel=True)

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
# locators below add a digest of every kernels/**/*.py to the stamp of the functions defined
# here: any edit in the package recompiles them all. An installed package is rewritten
# whole on upgrade anyway. Without numba's (private) locator list, numba's default holds.
KERNELS_DIR = Path(__file__).resolve().parent


@functools.lru_cache(maxsize=1)
def package_stamp() -> bytes:
    """sha256 over the paths (within kernels/) and contents of every kernels/**/*.py (once
    per process)."""
    h = hashlib.sha256()
    for f in sorted(KERNELS_DIR.rglob("*.py")):
        h.update(f.relative_to(KERNELS_DIR).as_posix().encode())
        h.update(f.read_bytes())
    return h.digest()


def in_package(py_file) -> bool:
    """Whether the source file `py_file` is one of this package's kernels (kernels/**)."""
    return KERNELS_DIR in Path(py_file).resolve().parents


def _package_locator(base):
    class Locator(base):
        def get_source_stamp(self):
            stamp = super().get_source_stamp()
            if in_package(self._py_file):
                return (stamp, package_stamp())
            return stamp

        def ensure_cache_path(self):
            # made private (0700) where this creates it: `PackageCache` reads no directory
            # that others can write
            os.makedirs(self.get_cache_path(), mode=0o700, exist_ok=True)
            super().ensure_cache_path()

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
            "an edit to one kernels/**/*.py file will not recompile the kernels that inline it. "
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


# ---------------------------------------------------------------------------------------
# The package's numba cache: every file checked before it is used, in directories only the
# user can write, and machine code shipped in the wheel.
#
# numba's cache files are pickles that numba loads as they are: one truncated file failed
# every later process at its first check, and a crafted index ran a command in the
# importing process. `PackageCache` (numba's FunctionCache, its files written by
# `CheckedCacheFile`) frames each file with a checksum and reads none whose checksum fails
# (one warning; the kernel recompiles and the file is written anew) and none in a directory,
# or from a file, that another user can write (one warning; the kernel compiles in the
# process), as ssh treats its keys. Directories this package makes for numba are 0700.
#
# A wheel carries the entry points compiled for a portable CPU (`SHIPPED_DIR`, written by
# planning_collision/shipping.py): when the user's cache has no machine code for a kernel,
# the shipped one is loaded if its manifest matches this process (numba, llvmlite, Python,
# the kernels' sources, the platform) and the CPU has the baseline's features; otherwise
# the kernel compiles (announced) as without it.

_MAGIC = b"planning_collision numba cache 1\n"
SHIPPED_DIR = KERNELS_DIR / "_compiled"
MANIFEST = "manifest.json"
SHIPPED_ENV = "PLANNING_COLLISION_SHIPPED"  # 0: never load shipped machine code
# the x86-64 micro-architecture levels (psABI) as LLVM names their features
CPU_LEVELS = {
    "x86-64": (),
    "x86-64-v2": ("cx16", "popcnt", "sahf", "sse3", "sse4.1", "sse4.2", "ssse3"),
}
CPU_LEVELS["x86-64-v3"] = CPU_LEVELS["x86-64-v2"] + (
    "avx", "avx2", "bmi", "bmi2", "f16c", "fma", "lzcnt", "movbe", "xsave",
)  # fmt: skip
_warned: set = set()


def _warn_once(key, message: str) -> None:
    if key not in _warned:
        _warned.add(key)
        warnings.warn(f"planning_collision: {message}", RuntimeWarning, stacklevel=3)


def private(path, owners=None) -> bool:
    """True when no other user can write `path` (a directory or file): owned by this user
    (or root), neither group- nor world-writable. True where there are no POSIX owners."""
    if not hasattr(os, "getuid"):
        return True
    st = os.stat(path)
    owners = (os.getuid(), 0) if owners is None else owners
    return st.st_uid in owners and not st.st_mode & 0o022


def _frame(payload: bytes) -> bytes:
    return _MAGIC + hashlib.sha256(payload).digest() + payload


class _Foreign(ValueError):
    """A cache file in numba's own format (written without this module): a miss."""


def _unframe(blob: bytes) -> bytes:
    """The payload of a framed file; ValueError when it is not one or its checksum fails
    (`_Foreign` for numba's own pickles)."""
    n = len(_MAGIC)
    if blob[:1] == b"\x80":
        raise _Foreign("numba's own format")
    if not blob.startswith(_MAGIC) or len(blob) < n + 32:
        raise ValueError("not a planning_collision cache file, or truncated")
    payload = blob[n + 32 :]
    if hashlib.sha256(payload).digest() != blob[n : n + 32]:
        raise ValueError("checksum mismatch (truncated or damaged)")
    return payload


class CheckedCacheFile(caching.IndexDataCacheFile):
    """numba's index and data files, framed with a checksum, read only from a directory
    and files no other user can write. A damaged index reads as empty, a damaged data file
    as absent (each with one warning): the kernel compiles and its files are written anew."""

    def _trusted(self, path) -> bool:
        try:
            ok = private(self._cache_path) and (not os.path.exists(path) or private(path))
        except OSError:
            return False
        if not ok:
            _warn_once(
                ("untrusted", self._cache_path),
                f"numba's cache {self._cache_path} (or a file in it) can be written by other "
                "users: its files are not read and the kernels compile in this process. Make "
                "the directory private (chmod 700) or point NUMBA_CACHE_DIR at a private one.",
            )
        return ok

    def _damaged(self, path, e) -> None:
        _warn_once(
            ("damaged", path),
            f"ignoring numba's damaged cache file {path} ({e}); the kernel is compiled again",
        )

    def save(self, key, data):
        if self._trusted(self._index_path):
            super().save(key, data)

    def _load_index(self):
        if not self._trusted(self._index_path):
            return {}
        try:
            with open(self._index_path, "rb") as f:
                payload = _unframe(f.read())
        except (FileNotFoundError, _Foreign):
            return {}
        except (OSError, ValueError) as e:
            self._damaged(self._index_path, e)
            return {}
        try:
            version, stamp, overloads = pickle.loads(payload)
        except Exception as e:  # a checksummed pickle of another layout: rebuilt
            self._damaged(self._index_path, e)
            return {}
        if version != self._version or stamp != self._source_stamp:
            return {}
        return overloads

    def _save_index(self, overloads):
        payload = self._dump((self._version, self._source_stamp, overloads))
        with self._open_for_write(self._index_path) as f:
            f.write(_frame(payload))

    def _load_data(self, name):
        path = self._data_path(name)
        if not self._trusted(path):
            raise OSError(f"untrusted cache file {path}")  # numba's load: a miss
        with open(path, "rb") as f:
            blob = f.read()
        try:
            return pickle.loads(_unframe(blob))
        except _Foreign as e:
            raise OSError(str(e)) from e
        except Exception as e:
            self._damaged(path, e)
            raise OSError(str(e)) from e

    def _save_data(self, name, data):
        with self._open_for_write(self._data_path(name)) as f:
            f.write(_frame(self._dump(data)))


class PackageCache(caching.FunctionCache):
    """numba's per-function cache in `CheckedCacheFile`s, then the shipped machine code."""

    def __init__(self, py_func):
        super().__init__(py_func)
        self._cache_file = CheckedCacheFile(
            self._cache_path, self._impl.filename_base, self._cache_file._source_stamp
        )
        source = getattr(self._impl.locator, "_py_file", None)
        self._shipped = source is not None and in_package(source)

    def load_overload(self, sig, target_context):
        try:
            hit = super().load_overload(sig, target_context)
        except Exception as e:  # a file that unpickles but does not rebuild
            _warn_once(("rebuild", self._cache_path), f"numba's cache {self._cache_path}: {e}")
            hit = None
        if hit is None and self._enabled and self._shipped:
            hit = self._load_shipped(sig, target_context)
        return hit

    def save_overload(self, sig, data):
        try:
            super().save_overload(sig, data)
        except OSError as e:  # a full disk, a directory gone: compiled, not cached
            _warn_once(("save", self._cache_path), f"cannot write numba's cache: {e}")

    def _load_shipped(self, sig, target_context):
        magic = shipped_magic()
        if magic is None:
            return None
        sig_, _, code = self._index_key(sig, target_context.codegen())
        shipped = CheckedCacheFile(
            str(SHIPPED_DIR), self._impl.filename_base, self._cache_file._source_stamp
        )
        data = shipped.load((sig_, magic, code))
        if data is None:
            return None
        try:
            return self._impl.rebuild(target_context, data)
        except Exception as e:
            _warn_once(("rebuild", SHIPPED_DIR), f"shipped machine code not loaded: {e}")
            return None


def _package_cache(dispatcher):
    """`dispatcher` with its machine code kept in a `PackageCache` (unchanged: a plain
    function under NUMBA_DISABLE_JIT, or numba without a cache attribute)."""
    if LOCATORS_INSTALLED and isinstance(getattr(dispatcher, "_cache", None), caching.Cache):
        dispatcher._cache = PackageCache(dispatcher.py_func)
    return dispatcher


def host_magic() -> tuple:
    """What numba's cache keys machine code on for this process's target: (triple, CPU
    name, CPU features)."""
    from numba.core.registry import cpu_target

    return tuple(cpu_target.target_context.codegen().magic_tuple())


def host_features() -> set:
    import llvmlite.binding as ll

    return {k for k, v in ll.get_host_cpu_features().items() if v}


def cache_subpath(directory) -> str:
    """The directory, under NUMBA_CACHE_DIR, where numba keeps the cache of `directory`'s
    source files."""
    return caching._CacheLocator.get_suitable_cache_subpath(str(Path(directory) / "x.py"))


def process_identity() -> dict:
    """What shipped machine code must have been built with to load in this process."""
    import sys

    import llvmlite

    return {
        "numba": numba.__version__,
        "llvmlite": llvmlite.__version__,
        "python": sys.implementation.cache_tag + getattr(sys, "abiflags", ""),
        "package_stamp": package_stamp().hex(),
    }


def identity_mismatch(manifest: dict) -> str | None:
    """Why machine code built as `manifest` says cannot run in this process (numba,
    llvmlite, Python or the kernels' sources differ), or None."""
    for k, v in process_identity().items():
        if manifest.get(k) != v:
            return f"built for {k} {manifest.get(k)}, this process has {v}"
    return None


def numba_cache_dir() -> Path:
    """NUMBA_CACHE_DIR as numba read it (numba.config: the directory its cache files go
    under when set)."""
    return Path(numba.config.CACHE_DIR)


@functools.lru_cache(maxsize=1)
def shipped_status() -> tuple:
    """(magic tuple or None, why): the key the shipped machine code is found under when it
    can run in this process; None, with the reason, when it cannot (or there is none)."""
    import json

    if os.environ.get(SHIPPED_ENV, "1") == "0":
        return None, f"{SHIPPED_ENV}=0"
    f = SHIPPED_DIR / MANIFEST
    if not f.is_file():
        return None, "none shipped (a source checkout or an editable install)"
    try:
        if not (private(SHIPPED_DIR) and private(f)):
            _warn_once(
                ("untrusted", str(SHIPPED_DIR)),
                f"the shipped machine code in {SHIPPED_DIR} can be written by other users: "
                "not loaded; the kernels compile on first use",
            )
            return None, "its directory can be written by other users"
        m = json.loads(f.read_text())
    except (OSError, ValueError) as e:
        return None, f"unreadable manifest ({e})"
    why = identity_mismatch(m)
    if why is not None:
        return None, why
    magic = tuple(m.get("magic", ()))
    if len(magic) != 3 or magic[0] != host_magic()[0]:
        return None, f"built for {magic[:1]}, this process targets {host_magic()[0]}"
    missing = set(m.get("cpu_features", ())) - host_features()
    if missing:
        return None, f"this CPU lacks {sorted(missing)} of {magic[1]}"
    return magic, f"{magic[1]} machine code for numba {m['numba']}"


def shipped_magic():
    magic, why = shipped_status()
    return magic


def cached_signatures(dispatcher) -> set:
    """The argument types `dispatcher` has compiled in this process or finds in numba's
    on-disk cache index or the shipped code's that this process loads (empty for a plain
    function: NUMBA_DISABLE_JIT)."""
    sigs = set(getattr(dispatcher, "signatures", ()))
    cache = getattr(dispatcher, "_cache", None)
    index = getattr(getattr(cache, "_cache_file", None), "_load_index", None)
    if index is not None:
        sigs |= {key[0] for key in index()}
    return sigs | shipped_signatures(dispatcher)


def shipped_signatures(dispatcher) -> set:
    """The argument types of `dispatcher`'s machine code in the shipped code this process
    loads (empty when none is loaded, or for a kernel outside this package)."""
    cache = getattr(dispatcher, "_cache", None)
    if not (isinstance(cache, PackageCache) and cache._shipped) or shipped_magic() is None:
        return set()
    shipped = CheckedCacheFile(
        str(SHIPPED_DIR), cache._impl.filename_base, cache._cache_file._source_stamp
    )
    return {key[0] for key in shipped._load_index() if key[1] == shipped_magic()}


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


def call_checked(kernel, *args):
    """kernel(*args) on the checked path that seals it (`seal`), where several threads may
    make their first call at once: one whose call found no compiled code yet and then
    finds the kernel sealed by another gets RuntimeError('compilation disabled'), though
    the code it needs is there (numba checks the flag before its overloads). Called once
    more, it runs that code."""
    try:
        return kernel(*args)
    except RuntimeError as e:
        if "compilation disabled" not in str(e):
            raise
        return kernel(*args)


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


# ---------------------------------------------------------------------------------------
# where the machine code lies (python -m planning_collision.demos.dev.kernel_profile)

_OBJECTS: list = []  # the object code of each library loaded since `record_machine_code`


def record_machine_code() -> None:
    """Keep the object code (ELF) of every library numba compiles or loads from its cache
    from now on (`machine_code`). Call it before the kernels to profile are first called:
    what was loaded before is not seen."""
    from numba.core import codegen
    from numba.core.registry import cpu_target

    lib = codegen.CPUCodeLibrary
    if getattr(lib, "_pc_recording", False):
        return
    compiled, getbuffer = lib._object_compiled_hook.__func__, lib._object_getbuffer_hook.__func__

    def on_compiled(cls, ll_module, buf):
        _OBJECTS.append(bytes(buf))
        return compiled(cls, ll_module, buf)

    def on_getbuffer(cls, ll_module):
        buf = getbuffer(cls, ll_module)
        if buf:
            _OBJECTS.append(bytes(buf))
        return buf

    lib._object_compiled_hook = classmethod(on_compiled)
    lib._object_getbuffer_hook = classmethod(on_getbuffer)
    lib._pc_recording = True
    # the engine took the hooks when it was made: hand it the new ones
    cpu_target.target_context.codegen()._engine.set_object_cache(
        lib._object_compiled_hook, lib._object_getbuffer_hook
    )


def machine_code() -> tuple:
    """(the object files recorded since `record_machine_code`, the JIT engine's lookup of a
    global symbol: its address in this process, 0 when none is loaded)."""
    from numba.core.registry import cpu_target

    return list(_OBJECTS), cpu_target.target_context.codegen()._engine.get_function_address
