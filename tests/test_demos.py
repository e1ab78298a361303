"""Every demo runs with small arguments (each has `main(argv=None) -> int`), imports as a
module of the installed `planning_collision.demos` package, and edits no sys.path."""

import importlib
import subprocess
import sys
from pathlib import Path

import pytest

from planning_collision.demos import viewing


@pytest.mark.parametrize(
    "name,argv",
    [
        ("planning_collision.demos.query_demo", ["--pairs", "200"]),
        (
            "planning_collision.demos.bench.queries",
            ["--pairs", "50", "--python-pairs", "10", "--repeats", "1", "--types", "box-box"],
        ),
        (  # the hull row also counts GJK's rounds and times their floor
            "planning_collision.demos.bench.queries",
            ["--pairs", "60", "--python-pairs", "5", "--repeats", "1", "--types", "hull32-hull32"],
        ),
        ("planning_collision.demos.dev.oracle_sweep", ["--pairs", "3", "--jobs", "1"]),
        ("planning_collision.demos.dev.cold_start", ["--list"]),
        (
            "planning_collision.demos.dev.model_containment",
            ["--robots", "free_flyer", "--samples", "500"],
        ),
        # the README's first command
        ("planning_collision.demos.plan_shelf", ["--runs", "2", "--time", "2"]),
        ("planning_collision.demos.pick_place", ["--time", "2"]),
        ("planning_collision.demos.dev.prm_memory", ["--seconds", "2", "--every", "1"]),
        (
            "planning_collision.demos.plan_cloud",
            ["--points", "20000", "--frames", "2", "--spacing", "0.006", "--radius", "0.004"],
        ),
        (
            "planning_collision.demos.bench.clouds",
            ["--sizes", "5000", "--repeats", "1", "--sets", "box", "--edges", "20", "--n", "1"]
            + ["--densities", "20000"],
        ),
    ],
)
def test_demo_runs_and_returns_zero(name, argv, capsys):
    mod = importlib.import_module(name)
    assert mod.main(argv) == 0
    out = capsys.readouterr().out
    assert out.strip()
    if name.endswith(".plan_shelf"):  # the main demo ends by saying how to see its path
        assert out.rstrip().endswith(viewing.HOW_TO_SEE), out[-500:]
    if name.endswith(".pick_place"):  # three legs, each re-checked with the box by python-fcl
        pytest.importorskip("fcl")
        assert out.count("states free (python-fcl, meshes + box)") == 3, out
        assert "attached AttachedObject('box' on 'panda_hand'" in out
        assert "every path free on the exact meshes with the box" in out


ROOT = Path(__file__).resolve().parents[1]
DEMO_FILES = sorted(
    p for p in (ROOT / "demos").rglob("*.py") if "baselines" not in p.parts
)  # the MPlib runner is a server for another interpreter, not a demo


# what the demos share (packages, command-line helpers, scenes, the benchmark's inputs and
# reports): imported, never run
HELPERS = {
    "planning_collision.demos" + h
    for h in ("", ".bench", ".dev", ".cli", ".scenes", ".viewing")
    + (".bench.problems", ".bench.reports", ".dev.fuzz_io")
}


def _module(path: Path) -> str:
    """The import name of a file of the repository's demos/ folder (planning_collision.demos)."""
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(("planning_collision",) + (parts[:-1] if parts[-1] == "__init__" else parts))


@pytest.mark.parametrize("path", DEMO_FILES, ids=lambda p: _module(p))
def test_every_demo_module_imports_without_editing_sys_path(path):
    assert "sys.path" not in path.read_text(), f"{path} edits sys.path"
    mod = importlib.import_module(_module(path))
    assert mod.__doc__, mod.__name__  # says what it shows (or holds) and how long it takes
    if mod.__name__ not in HELPERS:
        assert callable(getattr(mod, "main", None)), mod.__name__


def test_the_readme_first_command_runs_as_a_script_from_anywhere(tmp_path):
    """`python demos/plan_shelf.py` imports its helpers from the installed package."""
    r = subprocess.run(
        [sys.executable, str(ROOT / "demos" / "plan_shelf.py"), "--help"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    assert "--view" in r.stdout and "--export" in r.stdout


def test_compile_measurements_never_load_the_shipped_code():
    """cold_start and compile_profile time compiles: their fresh processes must not load the
    shipped machine code (a clone or wheel that has it would time a load, 0 functions)."""
    from planning_collision.demos.dev.cold_start import run_fresh

    code = (
        "import json, os\n"
        "from planning_collision.kernels import _jit\n"
        "print(json.dumps([os.environ.get(_jit.SHIPPED_ENV), os.environ['NUMBA_CACHE_DIR']]))"
    )
    shipped, cache = run_fresh(code, "env")
    assert shipped == "0"
    assert "numba-cold-" in cache
