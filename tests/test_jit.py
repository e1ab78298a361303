"""How a first call's compile is helped along (kernels/_jit.py): the garbage collector's
thresholds while numba compiles our kernels, put back after."""

import gc
import shutil
import types

import pytest

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
        ours, theirs = _event("planning_collision.kernels.convex.gjk"), _event("numpy.linalg")
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
    """numba keys a cached function on its own file; ours add a digest of kernels/**/*.py, so
    an edit to an inlined helper or the workspace layout recompiles every kernel."""
    import importlib.util
    import shutil

    import numba

    from planning_collision.kernels.robot import motion_bounds

    if _jit.JIT_DISABLED:
        pytest.skip("no numba cache: NUMBA_DISABLE_JIT")
    assert _jit.LOCATORS_INSTALLED
    stamp = _jit.source_stamp(motion_bounds.motion_bounds)
    assert isinstance(stamp, tuple) and stamp[1] == _jit.package_stamp()
    # a function of another module keeps numba's own stamp
    mod = tmp_path / "elsewhere.py"
    mod.write_text("def f():\n    return 1\n")
    spec = importlib.util.spec_from_file_location("elsewhere", mod)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    stamp = _jit.source_stamp(numba.njit(cache=True)(m.f))
    assert stamp is not None and not isinstance(stamp, tuple)
    # the digest follows any file's content, not its own file only
    copy = tmp_path / "kernels"
    shutil.copytree(_jit.KERNELS_DIR, copy, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(_jit, "KERNELS_DIR", copy)
    _jit.package_stamp.cache_clear()
    try:
        before = _jit.package_stamp()
        edited = copy / "checker" / "check_types.py"  # a file in a subpackage counts too
        edited.write_text(edited.read_text() + "\n# x\n")
        _jit.package_stamp.cache_clear()
        assert _jit.package_stamp() != before
    finally:
        monkeypatch.undo()
        _jit.package_stamp.cache_clear()


# (kernel, parameter) typed as a literal by design: a traversal's `depth` picks the pair
# query with or without penetration depth (EPA) when it is compiled (kernels/scene/traversal.py)
# `depth` is literal by design: True compiles EPA into the traversal, False leaves it out
WANTED = {("traverse", "depth")}


def test_no_kernel_is_compiled_for_a_literal_constant():
    """A constant int passed from one compiled kernel to another (not inlined) is typed as
    a literal, and numba compiles the callee once per value and once more for a variable:
    the public queries once passed 0 as the shape index, and collide() after a checker
    compiled GJK again (8.2 s; 1.4 with np.int64 constants). After the public queries and
    the checker's calls, no kernel has a literal among its compiled or cached signatures."""
    import importlib
    import inspect
    import pkgutil

    import numpy as np
    import pytest
    from numba import types as nt
    from numba.core.registry import CPUDispatcher

    import planning_collision as pc
    from planning_collision import kernels

    robots = pytest.importorskip("planning_collision.robots")
    T = np.eye(4)
    T[0, 3] = 0.5
    cone, box = pc.Cone(0.1, 0.2), pc.Box((0.2, 0.2, 0.2))
    pc.collide(cone, np.eye(4), box, T)
    pc.distance(cone, np.eye(4), box, T)
    pc.penetration(cone, np.eye(4), box, T)
    scene = pc.Scene()
    scene.add(box, T)
    scene.in_collision(pc.Capsule(0.05, 0.3), np.eye(4))
    scene.min_distance(pc.Capsule(0.05, 0.3), np.eye(4))
    panda = robots.load("panda")
    checker = pc.CollisionChecker(panda, scene)
    q0 = np.clip(np.zeros(panda.dof), panda.lower, panda.upper)
    q1 = np.clip(q0 + 0.3, panda.lower, panda.upper)
    checker.is_valid(q0)
    checker.clearance(q0)
    for method in ("dichotomy", "ca", "discrete"):
        checker.check_edge(q0, q1, method=method)
    literal = []
    for info in pkgutil.walk_packages(kernels.__path__, f"{kernels.__name__}."):
        module = importlib.import_module(info.name)
        for name, k in vars(module).items():
            if not isinstance(k, CPUDispatcher) or k.py_func.__module__ != module.__name__:
                continue
            sigs = _jit.cached_signatures(k)
            params = list(inspect.signature(k.py_func).parameters)
            for s in sigs:
                literal += [
                    (name, params[i], a)
                    for i, a in enumerate(s)
                    if isinstance(a, nt.Literal) and (name, params[i]) not in WANTED
                ]
    assert not literal, literal


def test_numbas_private_surface_is_used_by_one_module_only():
    """kernels/_jit.py is the one door to numba's internals (its docstring lists them): no
    other module of the package imports numba.core or numba.np or passes `_nrt`."""
    import re
    from pathlib import Path

    pkg = Path(_jit.__file__).resolve().parents[1]
    private = re.compile(r"numba\.(core|np)\b|_nrt\s*=|_locator_classes|_load_index|_py_file")
    users = sorted(
        str(f.relative_to(pkg))
        for f in pkg.rglob("*.py")
        if f != Path(_jit.__file__).resolve() and private.search(f.read_text())
    )
    assert users == [], users


def test_the_intrinsics_have_plain_python_twins():
    """What NUMBA_DISABLE_JIT runs in place of the two intrinsics: the address table's view
    gives the arrays the table points to (no copy), the clock reads the same clock."""
    import time

    import numpy as np

    from planning_collision.kernels.base.clock import _python_monotonic_ns
    from planning_collision.kernels.checker.handles import array_table, rows, table_view
    from planning_collision.kernels.scene.scratch import Scratch, new_scratch

    sc = new_scratch(3, 5)
    h = array_table(rows(sc))
    view = table_view(Scratch)
    (back,) = view.python_twin(h, np.int64(0))
    assert type(back) is Scratch
    for a, b in zip(sc, back, strict=True):
        assert a.shape == b.shape and a.dtype == b.dtype
        assert a.ctypes.data == b.ctypes.data or a.size == 0
    back.counts[3] = 7
    assert sc.counts[3] == 7
    t = time.monotonic_ns()
    assert abs(_python_monotonic_ns() - t) < 10**9


def _body_step_outer():
    def step(x):
        return x + 1

    def body(x):
        return step(x) * 2

    def outer(x):
        return body(x) - 1

    step = _jit.inline_kernel(step)
    body = _jit.inline_kernel(body)
    return step, body, outer


def test_a_step_is_inlined_into_the_outermost_function_not_into_an_inline_body_first():
    """`inline_kernel`'s cost model (kernels/_jit.py `_outermost`): a helper called in the body
    of an inline kernel is left for the function that inlines that body (numba's copy of
    a body grows with its blocks x variables: the traversal's steps inlined into it first
    made the checker's `query` ~2 s slower to compile); compiled, the result is the same."""
    import numba
    from numba.core.compiler import run_frontend

    step, body, outer = _body_step_outer()
    if _jit.JIT_DISABLED:
        assert outer(3) == 7
        return
    assert not _jit._outermost(None, run_frontend(body.py_func), None)
    assert _jit._outermost(None, run_frontend(outer), None)
    assert numba.njit(outer)(3) == 7


MAP_CHILD = r"""
import json, sys
from collections import Counter
import numpy as np
from planning_collision.kernels import _jit
_jit.record_machine_code()
from planning_collision.demos.dev.kernel_profile import machine_code_map, numba_symbol
from planning_collision.kernels.convex.sphere_box import sphere_box_distance
out = np.zeros(10)
sphere_box_distance(np.array([0.0, 0.0, 2.0]), 0.5, np.eye(4), 1.0, 1.0, 1.0, out)
rows = machine_code_map()
_, address_of = _jit.machine_code()
once = Counter(n for _, _, n in rows)
agree = [address_of(n) == a for a, _, n in rows if once[n] == 1]
print(json.dumps({
    "distance": out[0],
    "rows": len(rows),
    "sorted": all(r0[0] + r0[1] <= r1[0] for r0, r1 in zip(rows, rows[1:])),
    "agree": sum(agree), "checked": len(agree),
    "named": sorted({numba_symbol(n) for _, _, n in rows} & {
        "planning_collision.kernels.convex.sphere_box.sphere_box_distance"}),
}))
"""


@pytest.mark.skipif(shutil.which("nm") is None, reason="binutils' nm is not installed")
def test_the_machine_code_map_places_each_compiled_function_where_the_engine_has_it():
    """kernel_profile's map (demos/dev/kernel_profile.py): every function of the code numba
    loads after `record_machine_code`, at the address the JIT engine resolves its symbol to
    (the functions placed by their object's load address, not looked up one by one)."""
    import json
    import subprocess
    import sys

    run = subprocess.run([sys.executable, "-c", MAP_CHILD], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    got = json.loads(run.stdout.splitlines()[-1])
    assert got["distance"] == pytest.approx(0.5)  # the kernel ran: 2 - 1 - 0.5
    assert got["rows"] >= 3 and got["sorted"]  # functions do not overlap
    assert got["checked"] >= 3 and got["agree"] == got["checked"]
    assert got["named"] == ["planning_collision.kernels.convex.sphere_box.sphere_box_distance"]
