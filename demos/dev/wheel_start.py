"""A wheel's first plan on a fresh machine: the README's OMPL example, run from an empty
directory in a fresh virtual environment with the wheel installed and an empty home
directory (no numba cache, no per-user model cache), timed from process start to its
certified path, twice.

The wheel carries the entry points compiled for x86-64-v3 (planning_collision/shipping.py);
the first run loads them instead of compiling, the second finds everything in the user's
caches. The child says whether the shipped machine code could be used (and why not) and
counts the compiles it ran; the aims are <= 10 s for the first run and <= 2 s for the
second, with nothing compiled.

    python -m planning_collision.demos.dev.wheel_start --build     # pip wheel ., then check
    python -m planning_collision.demos.dev.wheel_start --wheel dist/planning_collision-*.whl
    python -m planning_collision.demos.dev.wheel_start --build --no-isolation --require-shipped

``--require-shipped`` (CI) fails unless every run loaded the shipped code and compiled nothing.
A clone whose planning_collision/kernels/_compiled holds this build's machine code
(``python -m planning_collision.shipping planning_collision/kernels/_compiled``) builds its
wheel without compiling again.

``--build`` runs ``pip wheel . --no-deps`` in the repository (its own build compiles every
entry point: ~2-3 min on 2 cores; ``--no-isolation`` builds with this environment's numba
instead of a fresh build environment's). The fresh environment's dependencies come from
the package index (or pip's cache). Run it from a clone: it reads the example from
README.md.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# appended to the README's example: what the run proves and what it compiled
_EPILOGUE = """
assert checker.check_path(Q).valid, "the planned path is not certified free"
import time as _time
print(f"path at {_time.time():.6f}")
from planning_collision.kernels._jit import shipped_status
print(f"planned: {len(Q)} waypoints, every edge certified free")
print(f"shipped machine code: {shipped_status()[1]}")
print(f"compiles in this process: {_COMPILES[0]}")
"""
# put before the example: numba's compiles of this package's kernels, counted (nested ones
# too) in _COMPILES and named in _COMPILED (the outermost ones, with what _STEP[0] says the
# script was doing)
_PROLOGUE = """
from numba.core import event as _event
_COMPILES = [0]
_COMPILED = []
_STEP = ["import"]
_DEPTH = [0]
def _ours(e):
    f = getattr(e.data.get("dispatcher"), "py_func", None)
    return f if getattr(f, "__module__", "").startswith("planning_collision.") else None
class _Count(_event.Listener):
    def on_start(self, e):
        _DEPTH[0] += 1
        if _ours(e) is not None:
            _COMPILES[0] += 1
    def on_end(self, e):
        _DEPTH[0] -= 1
        f = _ours(e)
        if f is not None and _DEPTH[0] == 0:
            _COMPILED.append(f"{f.__module__}.{f.__qualname__} ({_STEP[0]})")
_event.register("numba:compile", _Count())
"""


def readme_example(readme: Path, heading: str = "## Plan with OMPL") -> str:
    """The code of the README's first python block after `heading` (by default the OMPL
    example; tests/test_readme.py runs this one and the own-robot one)."""
    text = readme.read_text()
    block = text[text.index(heading) :]
    m = re.search(r"```python\n(.*?)```", block, re.S)
    if m is None:
        raise ValueError(f"no python block after {heading!r} in {readme}")
    return m.group(1)


def build_wheel(out: Path, isolation: bool) -> Path:
    cmd = [sys.executable, "-m", "pip", "wheel", str(ROOT), "--no-deps", "-w", str(out)]
    if not isolation:
        cmd.append("--no-build-isolation")
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True)
    wheels = sorted(out.glob("planning_collision-*.whl"))
    if not wheels:
        raise RuntimeError(f"pip wheel wrote no planning_collision wheel in {out}")
    print(f"wheel built in {time.perf_counter() - t0:.0f} s: {wheels[-1].name}", flush=True)
    return wheels[-1]


def fresh_env(tmp: Path, wheel: Path, uv: bool = False) -> Path:
    """A new venv with the wheel (and its dependencies) installed; its python. `uv`: made and
    filled by uv (`pip install uv`; the same packages from the same index, byte-compiled as
    pip does, in seconds where pip takes a minute)."""
    venv = tmp / "venv"
    t0 = time.perf_counter()
    py = venv / "bin" / "python"
    if uv:
        uv_ = [sys.executable, "-m", "uv"]
        subprocess.run([*uv_, "venv", "--quiet", "--python", sys.executable, str(venv)],
                       check=True)  # fmt: skip
        subprocess.run([*uv_, "pip", "install", "--quiet", "--compile-bytecode", "--python",
                        str(py), str(wheel)], check=True)  # fmt: skip
    else:
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        pip = [str(py), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
        subprocess.run([*pip, str(wheel)], check=True)
    print(f"fresh venv with the wheel in {time.perf_counter() - t0:.0f} s", flush=True)
    return py


def run_example(py: Path, tmp: Path, code: str) -> tuple:
    """(seconds from process start to its certified path, to its exit, stdout, stderr) of the
    example in an empty directory with an empty home."""
    home, work = tmp / "home", tmp / "work"
    home.mkdir(exist_ok=True)
    work.mkdir(exist_ok=True)
    script = work / "example.py"
    script.write_text(_PROLOGUE + code + _EPILOGUE)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NUMBA_", "PLANNING_"))}
    env.pop("PYTHONPATH", None)
    env.update(HOME=str(home), XDG_CACHE_HOME=str(home / ".cache"))
    t0 = time.time()
    r = subprocess.run([str(py), str(script)], cwd=work, env=env, capture_output=True,
                       text=True, timeout=1800)  # fmt: skip
    t_exit = time.time() - t0
    if r.returncode != 0:
        raise RuntimeError(f"the example failed ({r.returncode}):\n{r.stdout}\n{r.stderr}")
    at = re.search(r"^path at ([0-9.]+)$", r.stdout, re.M)
    out = r.stdout.replace(at.group(0) + "\n", "")
    return float(at.group(1)) - t0, t_exit, out, r.stderr


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--wheel", type=Path, help="a built wheel to check")
    src.add_argument("--build", action="store_true", help="build the wheel first (pip wheel .)")
    p.add_argument("--no-isolation", action="store_true",
                   help="build with this venv's packages (--no-build-isolation)")  # fmt: skip
    p.add_argument("--runs", type=int, default=2)
    p.add_argument("--workdir", type=Path, default=None,
                   help="keep the wheel, venv and runs here (default: a temp dir)")  # fmt: skip
    p.add_argument("--max-first", type=float, default=None,
                   help="exit 1 when the first run takes longer (seconds)")  # fmt: skip
    p.add_argument("--uv", action="store_true",
                   help="make the fresh venv with uv (pip install uv) instead of pip")  # fmt: skip
    p.add_argument("--require-shipped", action="store_true",
                   help="exit 1 when a run did not load the shipped code or compiled")  # fmt: skip
    a = p.parse_args(argv)
    code = readme_example(ROOT / "README.md")
    with tempfile.TemporaryDirectory(prefix="pc-wheel-") as tmp:
        tmp = Path(tmp) if a.workdir is None else a.workdir.resolve()
        tmp.mkdir(parents=True, exist_ok=True)
        wheel = build_wheel(tmp / "dist", not a.no_isolation) if a.build else a.wheel.resolve()
        py = fresh_env(tmp, wheel, a.uv)
        times, failed = [], []
        for i in range(a.runs):
            dt, t_exit, out, err = run_example(py, tmp, code)
            times.append(dt)
            failed += [f"run {i + 1}: {why}" for why in _not_shipped(out)]
            print(f"run {i + 1}: {dt:.1f} s from process start to a certified path "
                  f"({t_exit:.1f} s to the process's exit)")  # fmt: skip
            for line in (out + err).splitlines():
                print(f"    {line}")
    if a.max_first is not None and times[0] > a.max_first:
        print(f"the first run took {times[0]:.1f} s, over {a.max_first:.0f} s")
        return 1
    if a.require_shipped and failed:
        print("\n".join(failed))
        return 1
    return 0


def _not_shipped(out: str) -> list:
    """What, in a run's output, says the wheel's machine code was not what ran."""
    shipped = re.search(r"^shipped machine code: (.*)$", out, re.M)
    compiles = re.search(r"^compiles in this process: (\d+)$", out, re.M)
    why = []
    if shipped is None or "machine code for numba" not in shipped.group(1):
        why.append(f"shipped machine code not usable ({shipped and shipped.group(1)})")
    if compiles is None or int(compiles.group(1)) != 0:
        why.append(f"{compiles and compiles.group(1)} kernels compiled")
    return why


if __name__ == "__main__":
    raise SystemExit(main())
