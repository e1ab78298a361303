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
