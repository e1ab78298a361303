"""How a first call's compile is helped along (kernels/_jit.py): the garbage collector's
thresholds while numba compiles our kernels, put back after."""

import gc
import types

from planning_collision.kernels import _jit


def _event(module: str):
    f = types.FunctionType((lambda: None).__code__, {})
    f.__module__ = module
    return types.SimpleNamespace(data={"dispatcher": types.SimpleNamespace(py_func=f)})


def test_compiles_of_our_kernels_run_with_the_compile_thresholds_then_the_callers_come_back():
    listener = _jit._CompileGC()
    saved = gc.get_threshold()
    mine = (123, 4, 5)
    gc.set_threshold(*mine)
    try:
        ours, theirs = _event("planning_collision.kernels.gjk"), _event("numpy.linalg")
        listener.on_start(theirs)
        assert gc.get_threshold() == mine  # another library's compile: left alone
        listener.on_end(theirs)
        listener.on_start(ours)
        assert gc.get_threshold() == _jit.COMPILE_GC_THRESHOLD
        listener.on_start(ours)  # a callee compiled inside the first compile
        listener.on_end(ours)
        assert gc.get_threshold() == _jit.COMPILE_GC_THRESHOLD
        listener.on_end(ours)
        assert gc.get_threshold() == mine
        listener.on_end(ours)  # an unmatched end changes nothing
        assert gc.get_threshold() == mine
    finally:
        gc.set_threshold(*saved)


def test_a_kernels_cache_stamp_covers_every_file_of_the_package(tmp_path, monkeypatch):
    """numba keys a cached function on its own file; ours add a digest of kernels/*.py, so
    an edit to an inlined helper or the workspace layout recompiles every kernel."""
    import importlib.util
    import shutil

    from numba.core import caching

    from planning_collision.kernels import motion_bounds

    assert _jit.LOCATORS_INSTALLED
    cache = getattr(motion_bounds.motion_bounds, "_cache", None)
    if cache is None or isinstance(cache, caching.NullCache):  # NUMBA_DISABLE_JIT
        return
    stamp = cache._impl.locator.get_source_stamp()
    assert isinstance(stamp, tuple) and stamp[1] == _jit.package_stamp()
    # a function of another module keeps numba's own stamp
    mod = tmp_path / "elsewhere.py"
    mod.write_text("def f():\n    return 1\n")
    spec = importlib.util.spec_from_file_location("elsewhere", mod)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    loc = caching.CacheImpl._locator_classes[1].from_function(m.f, str(mod))
    assert loc is not None and not isinstance(loc.get_source_stamp(), tuple)
    # the digest follows any file's content, not its own file only
    copy = tmp_path / "kernels"
    shutil.copytree(_jit.KERNELS_DIR, copy, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(_jit, "KERNELS_DIR", copy)
    _jit.package_stamp.cache_clear()
    try:
        before = _jit.package_stamp()
        (copy / "check_types.py").write_text((copy / "check_types.py").read_text() + "\n# x\n")
        _jit.package_stamp.cache_clear()
        assert _jit.package_stamp() != before
    finally:
        monkeypatch.undo()
        _jit.package_stamp.cache_clear()
