"""Where a solve's time goes inside the compiled code, function by function: the end-to-end
problems of `planning_collision.demos.bench.vamp` (obstacles in, certified path out, on one
reused setup) run in a child process under Linux ``perf`` (its software clock: no hardware
counters needed), sampled only while the problems run, and each sample in numba's machine
code named by the kernel function it falls in.

numba's code has no symbols perf can read: the child records the object code of every
kernel as numba loads it (`kernels._jit.record_machine_code`) and writes, when done, the
``/tmp/perf-<pid>.map`` file perf reads for code made at run time (`machine_code_map`). The
table gives each function's share of all samples (its own time: a function's inlined steps
count as its own, its calls to other compiled functions do not), then the shares by kernel
folder and of what is not compiled (Python, numpy, the OS). Needs ``perf`` (Debian:
linux-perf) and binutils' ``nm``; a dev tool, not run by CI.

    python -m planning_collision.demos.dev.kernel_profile                   # cage, ~20 s
    python -m planning_collision.demos.dev.kernel_profile --sets box table_pick --repeats 40
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

from planning_collision.io import MBM_SETS

PREFIX = "planning_collision.kernels."
SAMPLES_PER_S = 2000  # perf's sampling frequency (Hz)

# perf report --stdio --sort dso,sym: "  12.34%  dso name  [.] symbol"
_ROW = re.compile(r"^\s*([\d.]+)%\s+(.+?)\s+\[([.kgu])\]\s+(.+?)\s*$")


def _object_symbols(buf: bytes) -> list:
    """(offset, size, kind, name) of the functions an object file defines (binutils' nm)."""
    with tempfile.NamedTemporaryFile(suffix=".o") as f:
        f.write(buf)
        f.flush()
        out = subprocess.run(
            ["nm", "-S", "--defined-only", f.name], capture_output=True, text=True, check=True
        ).stdout
    rows = []
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[2] in "tTW":
            rows.append((int(parts[0], 16), int(parts[1], 16), parts[2], parts[3]))
    return rows


def machine_code_map() -> list:
    """(address, size, symbol) of each function of the code numba loaded since
    `kernels._jit.record_machine_code`, where it lies in this process (sorted; a function
    linked into several libraries once per copy). An object's functions are placed by its
    global ones, which the JIT engine resolves: its load address is the one most of them
    agree on (a global defined twice resolves to one copy only)."""
    from planning_collision.kernels._jit import machine_code

    objects, address_of = machine_code()
    out = {}
    for buf in objects:
        syms = _object_symbols(buf)
        bases = Counter()
        for offset, _, kind, name in syms:
            if kind == "T" and (address := address_of(name)):
                bases[address - offset] += 1
        if bases:
            base = bases.most_common(1)[0][0]
            for offset, size, _, name in syms:
                out[base + offset] = (size, name)
    return sorted((a, s, n) for a, (s, n) in out.items())


def numba_symbol(symbol: str) -> str:
    """The dotted Python name of a numba function's mangled symbol
    ("_ZN18planning_collision7kernels6convex3gjk8gjk_coreB4v12B...E..." ->
    "planning_collision.kernels.convex.gjk.gjk_core"); other symbols as they are."""
    if not symbol.startswith("_ZN"):
        return symbol
    parts, i = [], 3
    while i < len(symbol) and symbol[i].isdigit():
        j = i
        while symbol[j].isdigit():
            j += 1
        n = int(symbol[i:j])
        parts.append(symbol[j : j + n])
        i = j + n
    return ".".join(parts) if parts else symbol


def _where(dso: str, symbol: str) -> tuple[str, str]:
    """(group, name) of one row of perf's report."""
    if dso.startswith("[JIT]"):
        name = numba_symbol(symbol)
        if name.startswith(PREFIX):
            name = name[len(PREFIX) :]
            return "kernels/" + name.split(".")[0], name
        return "other compiled code", "(unnamed: numba's wrappers and helpers)"
    if "python" in dso:
        return "Python", "Python interpreter"
    if "multiarray" in dso or "openblas" in dso or "umath" in dso:
        return "numpy", "numpy"
    if "ompl" in dso:
        return "OMPL", "OMPL"
    if dso.startswith("[kernel"):
        return "operating system", "operating system"
    if dso.startswith("libm"):
        return "libm", f"libm {symbol}"
    return "other", dso


def aggregate(report: str) -> tuple[dict, dict]:
    """({function: %}, {group: %}) of perf report's text (`_ROW` rows)."""
    functions, groups = defaultdict(float), defaultdict(float)
    for line in report.splitlines():
        m = _ROW.match(line)
        if not m:
            continue
        share, dso, _, symbol = float(m[1]), m[2], m[3], m[4]
        group, name = _where(dso, symbol)
        functions[name] += share
        groups[group] += share
    return dict(functions), dict(groups)


def table(functions: dict, groups: dict, top: int) -> str:
    lines = ["| function (kernels/...) | % of samples |", "|---|---|"]
    for name, share in sorted(functions.items(), key=lambda kv: -kv[1])[:top]:
        lines.append(f"| {name} | {share:.1f} |")
    lines += ["", "| where | % of samples |", "|---|---|"]
    for name, share in sorted(groups.items(), key=lambda kv: -kv[1]):
        lines.append(f"| {name} | {share:.1f} |")
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------
# the child: the problems, sampled between "enable" and "disable"


def _control(fifo: Path, word: str) -> None:
    """Tell perf (its --control fifo) to start or stop sampling, and wait for its ack."""
    fd = os.open(fifo / "ctl", os.O_WRONLY)
    ack = os.open(fifo / "ack", os.O_RDONLY)
    try:
        os.write(fd, word.encode() + b"\n")
        os.read(ack, 5)
    finally:
        os.close(fd)
        os.close(ack)


def child(args) -> int:
    from planning_collision.kernels import _jit

    _jit.record_machine_code()  # before any kernel loads
    from ompl import util as ou

    from planning_collision import robots
    from planning_collision.demos.bench.vamp import PLANNER, SECONDS, Reused, ours
    from planning_collision.io import load_mbm, mbm_path

    ou.setLogLevel(ou.LOG_NONE)
    runs = []
    for name in args.sets:
        problems = [p for p in load_mbm(str(mbm_path(name))).problems if p.valid][: args.n]
        robot = robots.load("panda", fixed_joints=problems[0].fixed_joints)
        reused = Reused(robot, problems[0], PLANNER, None)
        for p in problems:  # loads (or compiles) every kernel the problems call
            ours(robot, p, SECONDS, None, PLANNER, reused)
        runs.append((robot, problems, reused))
    fifo = Path(args.fifo)
    _control(fifo, "enable")
    t0 = time.perf_counter()
    n = solved = 0
    for _ in range(args.repeats):
        for robot, problems, reused in runs:
            for p in problems:
                solved += ours(robot, p, SECONDS, None, PLANNER, reused)["solved"]
                n += 1
    seconds = time.perf_counter() - t0
    _control(fifo, "disable")
    rows = machine_code_map()
    with open(f"/tmp/perf-{os.getpid()}.map", "w") as f:  # where perf looks for it
        f.writelines(f"{a:x} {s:x} {name}\n" for a, s, name in rows)
    (fifo / "pid").write_text(str(os.getpid()))  # the parent removes the map after its report
    print(f"{n} problems ({solved} solved) in {seconds:.2f} s: {1e3 * seconds / n:.2f} ms each, "
          f"{len(rows)} compiled functions mapped")  # fmt: skip
    return 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--sets", nargs="+", default=["cage"], choices=MBM_SETS)
    p.add_argument("--n", type=int, default=10, help="problems per set (default 10)")
    p.add_argument("--repeats", type=int, default=20, help="runs of each problem (default 20)")
    p.add_argument("--top", type=int, default=25, help="functions listed (default 25)")
    p.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--fifo", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    for name in ("n", "repeats", "top"):
        if getattr(args, name) < 1:
            p.error(f"--{name} must be >= 1, got {getattr(args, name)}")
    if args.child:
        return child(args)
    missing = [t for t in ("perf", "nm") if shutil.which(t) is None]
    if missing:
        print(f"needs {' and '.join(missing)} (Debian: linux-perf, binutils)", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        os.mkfifo(d / "ctl")
        os.mkfifo(d / "ack")
        data = d / "perf.data"
        cmd = [
            "perf", "record", "-q", "-e", "cpu-clock", "-F", str(SAMPLES_PER_S), "-D", "-1",
            "--control", f"fifo:{d / 'ctl'},{d / 'ack'}", "-o", str(data), "--",
            sys.executable, "-m", "planning_collision.demos.dev.kernel_profile", "--child",
            "--fifo", str(d), "--sets", *args.sets, "--n", str(args.n),
            "--repeats", str(args.repeats),
        ]  # fmt: skip
        if subprocess.run(cmd).returncode != 0:
            print("perf record failed (its message above; a user's sampling may be off: "
                  "/proc/sys/kernel/perf_event_paranoid)", file=sys.stderr)  # fmt: skip
            return 2
        try:
            report = subprocess.run(
                ["perf", "report", "-i", str(data), "--stdio", "--no-children", "--sort",
                 "dso,sym"], capture_output=True, text=True, check=True,
            ).stdout  # fmt: skip
        finally:
            if (d / "pid").exists():
                Path(f"/tmp/perf-{(d / 'pid').read_text()}.map").unlink(missing_ok=True)
    functions, groups = aggregate(report)
    print(f"sets {', '.join(args.sets)}: {args.n} problems x {args.repeats} runs")
    print(table(functions, groups, args.top))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
