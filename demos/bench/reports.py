"""What the planning benchmark writes from its runs: OMPL benchmark logs (one per problem
set, one experiment each: ``ompl_benchmark_statistics`` reads one experiment per file, so one
log for several sets would lose every set but the first), their database, the summary table
with per-problem ratios, and a plot."""

from __future__ import annotations

import os
import platform
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

OURS = ("dichotomy", "ca", "discrete")


def machine() -> str:
    """The CPU model and core count (for the log and the summary)."""
    model = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            model = next(ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return f"{model}, {os.cpu_count()} cores"


def label(row) -> str:
    """A run's "planner" in the reports: the planner and the validator."""
    return (
        row["planner"] if row["validator"] == "mplib" else f"{row['planner']}[{row['validator']}]"
    )


_RUN_PROPS = [
    ("time", "REAL"),
    ("solved", "BOOLEAN"),
    ("solution length", "REAL"),
    ("solution segments", "INTEGER"),
    ("collides on meshes", "BOOLEAN"),
    ("state checks", "INTEGER"),
    ("valid motions", "INTEGER"),
    ("invalid motions", "INTEGER"),
    ("problem", "INTEGER"),
    ("repeat", "INTEGER"),
]
_ROW_KEYS = [
    "time",
    "solved",
    "length",
    "segments",
    "collides",
    "state_checks",
    "valid_motions",
    "invalid_motions",
    "index",
    "repeat",
]


def _value(v) -> str:
    return "" if v is None else str(int(v)) if isinstance(v, bool) else str(v)


def write_ompl_log(path: Path, set_name: str, description: str, rows, seed, time_limit) -> None:
    """OMPL's benchmark log of one problem set (what ompl_benchmark_statistics parses): one
    experiment; each planner-validator pair is one planner; each run one problem (and
    repeat), so "runs per planner" is the problems times the repeats."""
    import ompl

    version = getattr(ompl, "__version__", "2")
    labels = sorted({label(r) for r in rows})
    per_planner = max((sum(label(r) == lab for r in rows) for lab in labels), default=0)
    seconds = sum(r.get("time", 0.0) for r in rows)
    with open(path, "w", encoding="utf-8") as f:
        f.write(f"OMPL version {version}\nExperiment {set_name}\n0 experiment properties\n")
        f.write(f"Running on {socket.gethostname()}\n")
        f.write(f"Starting at {time.strftime('%Y-%m-%d %H:%M:%S')}\n")
        f.write(f"<<<|\n{description}; python -m planning_collision.demos.benchmark\n|>>>\n")
        f.write(f"<<<|\n{machine()}\n|>>>\n")
        f.write(f"{seed} is the random seed\n{time_limit} seconds per run\n")
        f.write(f"0 MB per run\n{per_planner} runs per planner\n")
        f.write(f"{seconds:.3f} seconds spent to collect the data\n0 enum types\n")
        f.write(f"{len(labels)} planners\n")
        for lab in labels:
            lrows = [r for r in rows if label(r) == lab]
            f.write(f"{lab}\n0 common properties\n{len(_RUN_PROPS)} properties for each run\n")
            for name, typ in _RUN_PROPS:
                f.write(f"{name} {typ}\n")
            f.write(f"{len(lrows)} runs\n")
            for r in lrows:
                f.write("; ".join(_value(r.get(k)) for k in _ROW_KEYS) + "; \n")
            f.write(".\n")


def statistics_command() -> list[str]:
    """OMPL's ``ompl_benchmark_statistics`` (the console script beside this interpreter, else
    its module)."""
    exe = shutil.which("ompl_benchmark_statistics", path=str(Path(sys.executable).parent))
    return [exe] if exe else [sys.executable, "-m", "ompl.ompl_benchmark_statistics"]


def build_database(db: Path, logs) -> str:
    """``ompl_benchmark_statistics -d db logs...`` (a fresh database); "" or its error."""
    db.unlink(missing_ok=True)
    r = subprocess.run(
        [*statistics_command(), "-d", str(db), *map(str, logs)], capture_output=True, text=True
    )
    return "" if r.returncode == 0 else r.stderr[-1500:] or r.stdout[-1500:]


def summarize(rows, sets) -> str:
    """The summary table (markdown): per set (in `sets` order) and validator."""
    lines = [
        "| set | planner [validator] | solved | median time (ms) | end to end (ms) "
        "| paths colliding on the meshes | median state checks | µs per motion check | errors |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for s in [*sets, "all"] if len(sets) > 1 else sets:
        in_set = [r for r in rows if s == "all" or r["set"] == s]
        for lab in sorted({label(r) for r in in_set}):
            rr = [r for r in in_set if label(r) == lab]
            ok = [r for r in rr if r.get("solved")]
            t = np.median([r["time"] for r in ok]) * 1e3 if ok else float("nan")
            e2e = [r["end_to_end"] for r in ok if "end_to_end" in r]
            e2e = f"{np.median(e2e) * 1e3:.1f}" if e2e else "-"  # ours and VAMP measure it
            bad = sum(1 for r in ok if r.get("collides"))
            counted = [r["state_checks"] for r in rr if "state_checks" in r]
            checks = f"{np.median(counted):.0f}" if counted else "-"  # MPlib counts none
            errs = sum(1 for r in rr if "error" in r)
            # our validators time their own motion checks (all runs, solved or not)
            timed = [r for r in rr if "edge_seconds" in r]
            n_mot = sum(r["valid_motions"] + r["invalid_motions"] for r in timed)
            us = f"{sum(r['edge_seconds'] for r in timed) / n_mot * 1e6:.1f}" if n_mot else "-"
            lines.append(
                f"| {s} | {lab} | {len(ok)}/{len(rr)} | {t:.1f} | {e2e} | {bad} of {len(ok)} "
                f"| {checks} | {us} | {errs} |"
            )
    return "\n".join(lines + [""] + ratios(rows) + time_split(rows))


def time_split(rows) -> list[str]:
    """Where our validators' solve time goes, over all their runs: motion checks, state
    checks (as the validators time them, with reading OMPL's states), the rest (OMPL's own
    work and its calls into Python)."""
    out = []
    for lab in sorted({label(r) for r in rows if "edge_seconds" in r}):
        rr = [r for r in rows if label(r) == lab and "edge_seconds" in r]
        total = sum(r["time"] for r in rr)
        if total <= 0.0:
            continue
        edges = sum(r["edge_seconds"] for r in rr) / total
        states = sum(r["state_seconds"] for r in rr) / total
        out.append(
            f"{lab}'s solve time: motion checks {edges:.0%}, state checks {states:.0%}, "
            f"OMPL and its calls into Python {1.0 - edges - states:.0%}"
        )
    return out


def ratios(rows) -> list[str]:
    """Per problem (set, index, repeat), the median over the problems both solve of one
    planner's time over another's: each other label against each of ours, on the solve
    time and, where both measured it, on the end-to-end time."""
    out = []
    for key, what in (("time", ""), ("end_to_end", " end to end")):
        times: dict = {}
        for r in rows:
            if r.get("solved") and key in r:
                times.setdefault(label(r), {})[(r["set"], r["index"], r["repeat"])] = r[key]
        ours = [k for k in sorted(times) if k.endswith(tuple(f"[{v}]" for v in OURS))]
        for a in ours:
            for b in sorted(times):
                both = sorted(set(times[a]) & set(times[b])) if b != a and b not in ours else []
                if both:
                    x = float(np.median([times[b][k] / times[a][k] for k in both]))
                    rel = f"{x:.1f}x faster than" if x >= 1 else f"{1 / x:.1f}x slower than"
                    out.append(f"{a} is{what} {rel} {b} (median per-problem ratio, "
                               f"{len(both)} problems both solve)")  # fmt: skip
    return out


def plot(rows, sets, path: Path) -> bool:
    """Solve times of solved runs per set and planner [validator] (needs matplotlib)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no plot")
        return False
    labels = sorted({label(r) for r in rows})
    fig, axes = plt.subplots(1, len(sets), figsize=(4 * len(sets), 4), squeeze=False)
    for ax, s in zip(axes[0], sets, strict=True):
        data = [
            [1e3 * r["time"] for r in rows if r["set"] == s and label(r) == lab and r.get("solved")]
            for lab in labels
        ]
        ax.boxplot([d if d else [np.nan] for d in data], showfliers=True)
        ax.set_xticks(range(1, len(labels) + 1), labels, rotation=30, ha="right", fontsize=7)
        ax.set_yscale("log")
        ax.set_title(s)
        ax.set_ylabel("solve time of solved runs (ms)")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True
