"""The machine code a wheel ships: every entry point of `compiling.STEPS` compiled for a
portable CPU baseline, in planning_collision/kernels/_compiled/ (kernels/_jit.py
`PackageCache` loads it when the user's own numba cache has nothing).

`build(out)` runs a warm-up in fresh processes with numba targeting `BASELINE` (an empty
numba cache of their own, no other compiled code read), then copies the package's cache
files and writes a manifest: numba, llvmlite and Python versions, the digest of the
kernels' sources, the target and the CPU features it needs. A process whose versions,
sources or CPU differ compiles as without it (`python -m planning_collision warm-up` says
which). The wheel's build runs it (setup.py; ``PLANNING_COLLISION_SHIP=0`` builds a wheel
without machine code), or by hand::

    python -m planning_collision.shipping OUT_DIR [--cpu x86-64-v3] [--jobs 2] [--reuse]

In a clone, ``python -m planning_collision.shipping planning_collision/kernels/_compiled``
gives the editable install the wheel's start (its processes load that code when their own
cache has nothing, as a wheel's do), and a wheel built afterwards from the same sources,
numba and Python takes it instead of compiling again (`up_to_date`; CI builds it so).

The baseline is x86-64-v3 (AVX2, FMA, BMI: CPUs since 2013-2015): per call as fast as code
compiled for the host (`python -m planning_collision.demos.dev.shipped_speed`: is_valid 1.07x,
check_edge 1.00x, within this machine's noise); a CPU without it compiles on first use.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

BASELINE = "x86-64-v3"
SHIP_ENV = "PLANNING_COLLISION_SHIP"
# the repository's folders a wheel maps into the package (setup.py): not in a clone's
# planning_collision/, so not in what `build_stamp` hashes
MAPPED = ("robots", "plugins", "demos")


def build_stamp() -> str:
    """sha256 over the package's own Python sources (paths and contents): what the warm-up
    runs decides which entry points, with which argument types, a build compiles, so a
    directory built from other sources is built again even when the kernels are the same
    (a process still loads it: only the kernels' stamp must match there)."""
    root = Path(__file__).resolve().parent
    h = hashlib.sha256()
    for f in sorted(root.rglob("*.py")):
        rel = f.relative_to(root)
        if rel.parts[0] not in MAPPED:
            h.update(rel.as_posix().encode())
            h.update(f.read_bytes())
    return h.hexdigest()


def build(out, cpu: str = BASELINE, jobs: int = 2, pythonpath=None) -> dict:
    """Compile every warm-up step for `cpu` into a fresh cache and ship it into `out` (its
    old content replaced); returns the manifest. `pythonpath`: where the package to build is
    imported from (the build's own copy), else this one."""
    from .kernels._jit import CPU_LEVELS

    if cpu not in CPU_LEVELS:
        raise ValueError(f"cpu must be one of {sorted(CPU_LEVELS)}, got {cpu!r}")
    out = Path(out).resolve()  # the processes below run elsewhere
    with tempfile.TemporaryDirectory(prefix="pc-ship-") as tmp:
        env = dict(
            os.environ,
            NUMBA_CACHE_DIR=str(Path(tmp) / "numba"),
            NUMBA_CPU_NAME=cpu,
            NUMBA_CPU_FEATURES="",  # the CPU name's own features, none of the host's
            PLANNING_COLLISION_CACHE=str(Path(tmp) / "models"),
            PLANNING_COLLISION_SHIPPED="0",
        )
        if pythonpath is not None:
            env["PYTHONPATH"] = os.pathsep.join([str(pythonpath), env.get("PYTHONPATH", "")])
        run = [sys.executable, "-m", "planning_collision"]
        subprocess.run([*run, "warm-up", "--jobs", str(jobs)], env=env, cwd=tmp, check=True)
        code = f"from planning_collision.shipping import collect; collect({str(out)!r}, {cpu!r})"
        subprocess.run([sys.executable, "-c", code], env=env, cwd=tmp, check=True)
    return json.loads((Path(out) / "manifest.json").read_text())


def up_to_date(out, cpu: str = BASELINE):
    """None when `out` holds the machine code `build(out, cpu)` would write in this process
    (its manifest: this numba, llvmlite and Python, these kernels' sources and the package's
    (`build_stamp`), `cpu`, and the files it lists all there); else why not."""
    from .kernels import _jit

    f = Path(out) / _jit.MANIFEST
    try:
        m = json.loads(f.read_text())
    except (OSError, ValueError) as e:
        return f"no readable manifest ({e.__class__.__name__})"
    why = _jit.identity_mismatch(m)
    if why is not None:
        return why
    if list(m.get("magic", ()))[1:2] != [cpu]:
        return f"built for {list(m.get('magic', ()))[1:2]}, not {cpu}"
    if m.get("build_stamp") != build_stamp():
        return "built from other package sources (the warm-up may reach other entry points)"
    files = [g for g in Path(out).iterdir() if g.suffix in (".nbi", ".nbc")]
    if len(files) != m.get("files") or sum(g.stat().st_size for g in files) != m.get("bytes"):
        return f"{len(files)} files where the manifest lists {m.get('files')}"
    return None


def collect(out, cpu: str) -> None:
    """(In the build's process, NUMBA_CACHE_DIR set) copy this package's numba cache files
    into `out` and write its manifest."""
    from .kernels import _jit

    magic = _jit.host_magic()
    if magic[1] != cpu:
        raise RuntimeError(f"numba targets {magic[1]}, not {cpu}: set NUMBA_CPU_NAME={cpu}")
    root = _jit.numba_cache_dir()
    files = []
    for d in sorted({_jit.KERNELS_DIR, *(p.parent for p in _jit.KERNELS_DIR.rglob("*.py"))}):
        src = root / _jit.cache_subpath(d)  # numba keeps each source folder's apart
        if src.is_dir():
            files += sorted(f for f in src.iterdir() if f.suffix in (".nbi", ".nbc"))
    if not files:
        raise RuntimeError(f"no compiled kernels under {root}")
    names = [f.name for f in files]
    if len(set(names)) != len(names):  # one folder in the wheel: names must not meet
        raise RuntimeError(f"two kernels' cache files share a name: {sorted(names)}")
    out = Path(out)
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    for f in files:
        shutil.copyfile(f, out / f.name)
        os.chmod(out / f.name, 0o644)
    manifest = dict(
        _jit.process_identity(),
        magic=list(magic),
        cpu_features=list(_jit.CPU_LEVELS[cpu]),
        files=len(files),
        bytes=sum(f.stat().st_size for f in files),
        build_stamp=build_stamp(),
    )
    (out / _jit.MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    p.add_argument("out", help="directory to write (replaced)")
    p.add_argument("--cpu", default=BASELINE)
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--reuse", action="store_true",
                   help="keep OUT when it already holds this build's machine code")  # fmt: skip
    a = p.parse_args(argv)
    why = up_to_date(a.out, a.cpu) if a.reuse else "--reuse not given"
    if why is None:
        m = json.loads((Path(a.out) / "manifest.json").read_text())
        print(f"kept {a.out}: its machine code is this build's ({m['files']} files)")
        return 0
    if a.reuse:
        print(f"compiling into {a.out}: {why}")
    m = build(a.out, a.cpu, a.jobs)
    print(
        f"shipped {m['files']} files, {m['bytes'] / 1e6:.1f} MB, for {a.cpu} (numba {m['numba']})"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
