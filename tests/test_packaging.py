"""The build's own files: the in-tree backend (_build_backend/backend.py) asks for the
compile's packages in a wheel's build only, and those are the project's own dependencies."""

import importlib.util
import re
from pathlib import Path

import pytest

tomllib = pytest.importorskip("tomllib")  # Python 3.11+

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def backend(monkeypatch):
    monkeypatch.chdir(ROOT)  # setuptools' hooks run setup.py from the project's root
    spec = importlib.util.spec_from_file_location(
        "pc_backend", ROOT / "_build_backend" / "backend.py"
    )
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _names(requires) -> set:
    return {re.split(r"[<>=!~ ;\[]", r, maxsplit=1)[0].lower() for r in requires}


def test_pyproject_names_the_in_tree_backend():
    build = tomllib.loads((ROOT / "pyproject.toml").read_text())["build-system"]
    assert build["build-backend"] == "backend" and build["backend-path"] == ["_build_backend"]
    assert "numba" not in _names(build["requires"])  # an editable install compiles nothing


def test_the_compile_asks_for_the_projects_own_dependencies_as_it_pins_them(backend):
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    assert set(backend.COMPILE_REQUIRES) <= set(deps)


def test_only_a_wheel_that_ships_machine_code_needs_numba_to_build(backend, monkeypatch):
    monkeypatch.delenv("PLANNING_COLLISION_SHIP", raising=False)
    assert "numba" in _names(backend.get_requires_for_build_wheel())
    assert "numba" not in _names(backend.get_requires_for_build_editable())
    assert "numba" not in _names(backend.get_requires_for_build_sdist())
    monkeypatch.setenv("PLANNING_COLLISION_SHIP", "0")  # a pure wheel: setup.py compiles nothing
    assert "numba" not in _names(backend.get_requires_for_build_wheel())


def test_every_hook_of_setuptools_is_the_backends(backend):
    from setuptools import build_meta

    hooks = [h for h in build_meta.__all__ if h.startswith(("build_", "get_", "prepare_"))]
    assert "build_editable" in hooks
    assert all(callable(getattr(backend, h, None)) for h in hooks)


def test_ci_s_wheel_check_fails_a_run_that_compiled_or_did_without_the_shipped_code():
    from planning_collision.demos.dev.wheel_start import _not_shipped

    good = (
        "planned: 5 waypoints, every edge certified free\n"
        "shipped machine code: x86-64-v3 machine code for numba 0.68.1\n"
        "compiles in this process: 0\n"
    )
    assert _not_shipped(good) == []
    compiled = good.replace("process: 0", "process: 3")
    assert _not_shipped(compiled) == ["3 kernels compiled"]
    refused = good.replace(
        "x86-64-v3 machine code for numba 0.68.1", "built for numba 0.67.0, this process has 0.68.1"
    )
    assert "not usable" in _not_shipped(refused)[0]
    assert len(_not_shipped("planned: 5 waypoints\n")) == 2  # said nothing: not a pass
