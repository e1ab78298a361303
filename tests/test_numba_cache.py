"""numba's cache as this package keeps it (kernels/_jit.py `PackageCache`): damaged files
recompile with one warning, directories and files others can write are never read (numba's
index is a pickle), two processes compiling into one cache at once, and the machine code a
wheel ships (planning_collision/shipping.py): loaded when everything matches, never when
the sources, numba or the CPU differ.

Each case runs fresh Python processes on a one-function module, compiled with the package's
`kernel` decorator (a fraction of a second), so no test here compiles the package's kernels;
the module's first compile and its shipped build are made once and copied to each case that
damages them."""

import json
import os
import pickle
import shutil
import subprocess
import sys
import textwrap

import pytest

from planning_collision.kernels import _jit

pytestmark = pytest.mark.skipif(_jit.JIT_DISABLED, reason="no numba cache: NUMBA_DISABLE_JIT")

MODULE = textwrap.dedent(
    """
    from planning_collision.kernels._jit import kernel


    @kernel
    def f(x):
        return 2.0 * x + 1.0
    """
)

# a child: imports the module (after pointing the package's kernel directory and shipped
# code at the test's, when asked), calls f, and prints what numba did
CHILD = textwrap.dedent(
    """
    import json, sys, warnings
    warnings.simplefilter("always")
    from planning_collision.kernels import _jit
    mod_dir, shipped, collect = sys.argv[1], sys.argv[2], sys.argv[3]
    if shipped != "-":
        from pathlib import Path
        _jit.KERNELS_DIR = Path(mod_dir).resolve()
        _jit.SHIPPED_DIR = Path(shipped)
        _jit.package_stamp.cache_clear()
    sys.path.insert(0, mod_dir)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        import kmod
        y = kmod.f(3.0)
    if collect != "-":
        from planning_collision.shipping import collect as ship
        ship(collect, _jit.host_magic()[1])
    d = kmod.f
    print(json.dumps({
        "y": y,
        "hits": sum(d.stats.cache_hits.values()),
        "misses": sum(d.stats.cache_misses.values()),
        "warnings": [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)],
        "shipped": _jit.shipped_status()[1],
    }))
    """
)


@pytest.fixture
def mod(tmp_path):
    d = tmp_path / "mod"
    d.mkdir()
    (d / "kmod.py").write_text(MODULE)
    return d


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    """One module directory and the numba cache one process compiled it into: the tests
    that damage or replace its files start from a copy (numba's cache for a source file
    lives under a path made of the file's directory, so the module stays where it is)."""
    root = tmp_path_factory.mktemp("compiled")
    d = root / "mod"
    d.mkdir()
    (d / "kmod.py").write_text(MODULE)
    first = run(d, root / "cache")
    assert first["misses"] == 1 and first["hits"] == 0 and not first["warnings"]
    return d, root / "cache"


def cache_copy(compiled, tmp_path):
    cache = tmp_path / "cache"
    shutil.copytree(compiled[1], cache)
    return cache


def run(mod, cache, shipped="-", collect="-", **env) -> dict:
    e = dict(os.environ, NUMBA_CACHE_DIR=str(cache), **env)
    e.pop("PLANNING_COLLISION_SHIPPED", None)
    r = subprocess.run(
        [sys.executable, "-c", CHILD, str(mod), str(shipped), str(collect)],
        env=e, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr[-3000:]
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert out["y"] == 7.0
    return out


def files(cache, suffix):
    return sorted(p for p in cache.rglob(f"kmod.f-*{suffix}"))


def test_a_cached_kernel_loads_in_the_next_process(compiled, tmp_path):
    mod, cache = compiled[0], cache_copy(compiled, tmp_path)  # compiled: one miss, no warning
    second = run(mod, cache)
    assert second["hits"] == 1 and second["misses"] == 0 and not second["warnings"]
    # the directory made for it is private
    (index,) = files(cache, ".nbi")
    assert index.parent.stat().st_mode & 0o777 == 0o700


@pytest.mark.parametrize("what", [".nbc", ".nbi"])
@pytest.mark.parametrize("damage", ["truncated", "empty", "flipped"])
def test_a_damaged_cache_file_recompiles_once_with_one_warning(compiled, tmp_path, what, damage):
    """A truncated, empty or altered index or data file: the kernel compiles again (right
    answer, one warning naming the file), its files are written anew, and the process after
    that loads them quietly."""
    mod, cache = compiled[0], cache_copy(compiled, tmp_path)
    (f,) = files(cache, what)
    blob = f.read_bytes()
    if damage == "truncated":
        f.write_bytes(blob[: len(blob) // 2])
    elif damage == "empty":
        f.write_bytes(b"")
    else:
        f.write_bytes(blob[:-10] + bytes(b ^ 0xFF for b in blob[-10:]))
    hurt = run(mod, cache)
    assert hurt["hits"] == 0 and hurt["misses"] == 1
    assert len(hurt["warnings"]) == 1 and "damaged" in hurt["warnings"][0]
    assert f.name in hurt["warnings"][0]
    healed = run(mod, cache)
    assert healed["hits"] == 1 and not healed["warnings"]


class _Payload:
    """Unpickling this creates a file: a crafted cache index running code."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (open, (self.marker, "w"))


def _craft(index, marker, framed: bool):
    payload = pickle.dumps(_Payload(str(marker)))
    if framed:  # a well-formed file of ours (checksum right) whose content runs code
        import numba

        payload = pickle.dumps((numba.__version__, _Payload(str(marker)), {}))
        index.write_bytes(_jit._frame(payload))
    else:
        index.write_bytes(payload)


def test_a_cache_others_can_write_is_never_read(compiled, tmp_path):
    """numba's index is a pickle: a directory (or a file) that other users can write is
    not read (one warning; the kernel compiles in the process), so a crafted index planted
    there runs nothing."""
    mod, cache = compiled[0], cache_copy(compiled, tmp_path)
    (index,) = files(cache, ".nbi")
    marker = tmp_path / "ran"
    _craft(index, marker, framed=True)
    index.parent.chmod(0o777)
    got = run(mod, cache)
    assert not marker.exists()
    assert got["hits"] == 0 and len(got["warnings"]) == 1
    assert "other users" in got["warnings"][0]
    # a private directory, the index file itself writable by others: not read either
    index.parent.chmod(0o700)
    _craft(index, marker, framed=True)
    index.chmod(0o666)
    got = run(mod, cache)
    assert not marker.exists() and got["hits"] == 0 and "other users" in got["warnings"][0]


def test_an_index_in_numbas_own_format_is_not_unpickled(compiled, tmp_path):
    """A file that is not one of ours (numba's own pickle, or one planted in a private
    directory by another program) is a miss: never unpickled."""
    mod, cache = compiled[0], cache_copy(compiled, tmp_path)
    (index,) = files(cache, ".nbi")
    marker = tmp_path / "ran"
    _craft(index, marker, framed=False)
    got = run(mod, cache)
    assert not marker.exists() and got["hits"] == 0 and not got["warnings"]


def test_two_processes_compiling_into_one_cache_at_once(mod, tmp_path):
    cache = tmp_path / "cache"
    e = dict(os.environ, NUMBA_CACHE_DIR=str(cache))
    procs = [
        subprocess.Popen([sys.executable, "-c", CHILD, str(mod), "-", "-"], env=e,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(3)
    ]  # fmt: skip
    for p in procs:
        out, err = p.communicate(timeout=600)
        assert p.returncode == 0, err[-3000:]
        got = json.loads(out.strip().splitlines()[-1])
        assert got["y"] == 7.0 and not got["warnings"]
    after = run(mod, cache)
    assert after["hits"] == 1 and not after["warnings"]


# ---------------------------------------------------------------------------------------
# shipped machine code


@pytest.fixture(scope="module")
def shipped_once(tmp_path_factory):
    """The module compiled for x86-64-v2 into a shipped directory, as the wheel's build
    does (a process targeting the baseline, then `shipping.collect`)."""
    root = tmp_path_factory.mktemp("shipped")
    d = root / "mod"
    d.mkdir()
    (d / "kmod.py").write_text(MODULE)
    out = root / "shipped"
    got = run(
        d, root / "build-cache", shipped=root / "none", collect=out,
        NUMBA_CPU_NAME="x86-64-v2", NUMBA_CPU_FEATURES="",
    )  # fmt: skip
    assert got["misses"] == 1
    m = json.loads((out / _jit.MANIFEST).read_text())
    assert m["magic"][1] == "x86-64-v2" and m["files"] == 2
    return out


@pytest.fixture
def shipped(shipped_once, mod, tmp_path):
    """A copy of `shipped_once` for one test (which may damage it), beside its own copy of
    the module (`mod`): shipped code is found by the sources' contents, not their place."""
    out = tmp_path / "shipped"
    shutil.copytree(shipped_once, out)
    out.chmod(0o700)
    return out


def _host_has(level):
    return set(_jit.CPU_LEVELS[level]) <= _jit.host_features()


def test_shipped_machine_code_loads_without_compiling(mod, tmp_path, shipped):
    if not _host_has("x86-64-v2"):
        pytest.skip("this CPU lacks x86-64-v2")
    got = run(mod, tmp_path / "user-cache", shipped=shipped)
    assert got["hits"] == 1 and got["misses"] == 0 and not got["warnings"], got
    assert "x86-64-v2" in got["shipped"]
    assert not files(tmp_path / "user-cache", ".nbi")  # nothing compiled, nothing written


def test_shipped_machine_code_loads_from_a_read_only_install(mod, tmp_path, shipped):
    if not _host_has("x86-64-v2"):
        pytest.skip("this CPU lacks x86-64-v2")
    if os.getuid() == 0:
        pytest.skip("root writes anywhere")
    for d in (mod, shipped):
        d.chmod(0o555)
    try:
        got = run(mod, tmp_path / "user-cache", shipped=shipped)
        assert got["hits"] == 1 and got["misses"] == 0
    finally:
        for d in (mod, shipped):
            d.chmod(0o755)


def test_shipped_machine_code_is_not_used_for_changed_sources(mod, tmp_path, shipped):
    (mod / "kmod.py").write_text(MODULE + "\n# edited\n")
    got = run(mod, tmp_path / "user-cache", shipped=shipped)
    assert got["hits"] == 0 and got["misses"] == 1
    assert "package_stamp" in got["shipped"]


@pytest.mark.parametrize(
    "field,value,why",
    [
        ("numba", "0.0.1", "numba 0.0.1"),
        ("llvmlite", "0.0.1", "llvmlite 0.0.1"),
        ("python", "cpython-39", "python cpython-39"),
        ("cpu_features", ["avx2", "no-such-feature"], "lacks"),
    ],
)
def test_shipped_machine_code_is_not_used_by_another_numba_or_cpu(
    mod, tmp_path, shipped, field, value, why
):
    m = json.loads((shipped / _jit.MANIFEST).read_text())
    m[field] = value
    (shipped / _jit.MANIFEST).write_text(json.dumps(m))
    got = run(mod, tmp_path / "user-cache", shipped=shipped)
    assert got["hits"] == 0 and got["misses"] == 1 and why in got["shipped"]


def test_a_damaged_shipped_file_compiles_with_one_warning(mod, tmp_path, shipped):
    if not _host_has("x86-64-v2"):
        pytest.skip("this CPU lacks x86-64-v2")
    (data,) = sorted(shipped.glob("*.nbc"))
    data.write_bytes(data.read_bytes()[:100])
    got = run(mod, tmp_path / "user-cache", shipped=shipped)
    assert got["hits"] == 0 and got["misses"] == 1
    assert len(got["warnings"]) == 1 and "damaged" in got["warnings"][0]


def test_shipped_code_others_can_write_is_not_loaded(mod, tmp_path, shipped):
    shipped.chmod(0o777)
    got = run(mod, tmp_path / "user-cache", shipped=shipped)
    assert got["hits"] == 0 and "other users" in got["shipped"]


# ---------------------------------------------------------------------------------------
# a wheel's build keeps a clone's compiled code only when it is this build's


@pytest.fixture
def as_package(mod, monkeypatch):
    """This process sees the test's module as the package's kernels (as `shipped` built it)."""
    from pathlib import Path

    monkeypatch.setattr(_jit, "KERNELS_DIR", Path(mod).resolve())
    _jit.package_stamp.cache_clear()
    yield
    _jit.package_stamp.cache_clear()


def test_a_wheel_build_keeps_compiled_code_that_is_its_own(mod, shipped, as_package):
    from planning_collision.shipping import up_to_date

    assert up_to_date(shipped, "x86-64-v2") is None
    assert "not x86-64-v3" in up_to_date(shipped, "x86-64-v3")  # another baseline: compiled


@pytest.mark.parametrize("change", ["source", "package", "numba", "file", "manifest"])
def test_a_wheel_build_compiles_again_past_anything_else(mod, shipped, as_package, change):
    from planning_collision.shipping import up_to_date

    if change == "source":  # the kernels changed since: another package stamp
        (mod / "kmod.py").write_text(MODULE + "\n# edited\n")
        _jit.package_stamp.cache_clear()
    elif change in ("numba", "package"):  # another numba; other package sources (the warm-up)
        m = json.loads((shipped / _jit.MANIFEST).read_text())
        edit = {"numba": "0.1"} if change == "numba" else {"build_stamp": "0" * 64}
        (shipped / _jit.MANIFEST).write_text(json.dumps(dict(m, **edit)))
    elif change == "file":  # a copy cut short
        sorted(shipped.glob("*.nbc"))[0].unlink()
    else:
        (shipped / _jit.MANIFEST).write_text("{")
    why = up_to_date(shipped, "x86-64-v2")
    expected = {"source": "package_stamp", "numba": "numba 0.1", "file": "1 files where",
                "manifest": "no readable manifest", "package": "other package sources",
                }[change]  # fmt: skip
    assert why is not None and expected in why, why
