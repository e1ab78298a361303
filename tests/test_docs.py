"""The docs say what runs: their code runs as written, their links resolve, and they cite no
file a user lacks."""

from __future__ import annotations

import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
DOCS += [ROOT / "planning_collision" / "data" / "mbm" / "README.md"]


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_doc_cites_a_path_outside_the_repository(doc):
    text = doc.read_text()
    for bad in ("../shared", "/work/", "shared/data", "scratch/"):
        assert bad not in text, f"{doc.relative_to(ROOT)} cites {bad!r}"


def test_every_doc_link_in_the_readme_and_docs_resolves():
    for doc in DOCS:
        for target in re.findall(r"\]\(((?:docs/)?[\w./-]+\.(?:md|png))\)", doc.read_text()):
            assert (doc.parent / target).is_file(), f"{doc.relative_to(ROOT)} links {target}"


def test_the_readme_is_a_front_page():
    lines = (ROOT / "README.md").read_text().splitlines()
    assert len(lines) <= 200, len(lines)


def _block(path: Path, heading: str, lang: str = "python") -> str:
    text = path.read_text()
    part = text[text.index(heading) :]
    start = part.index(f"```{lang}") + len(f"```{lang}")
    return part[start : part.index("```", start)]


def test_the_ompl_benchmark_snippet_runs_and_its_log_reaches_the_database(tmp_path):
    """docs/ompl.md's `ompl.tools.Benchmark` example (2 runs of 0.5 s instead of 10 of 1 s),
    in a fresh interpreter: its log goes through ompl_benchmark_statistics, and the
    interpreter exits without nanobind's leak report (RRTConnect and PRM leave nothing)."""
    pytest.importorskip("ompl")
    from planning_collision.demos.bench.reports import statistics_command

    code = _block(ROOT / "docs" / "ompl.md", "## Benchmarks")
    code = code.replace("runCount=10", "runCount=2").replace("maxTime=1.0", "maxTime=0.5")
    assert "runCount=2" in code and "maxTime=0.5" in code
    r = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=600
    )
    assert r.returncode == 0, r.stderr[-3000:]
    assert "leaked" not in r.stderr, r.stderr[-3000:]
    db = tmp_path / "shelf.db"
    subprocess.run([*statistics_command(), "-d", str(db), str(tmp_path / "shelf.log")], check=True)
    con = sqlite3.connect(db)
    got = con.execute(
        "select p.name, count(*) from runs r join plannerConfigs p on p.id = r.plannerid "
        "group by p.name order by p.name"
    ).fetchall()
    assert got == [("geometric_PRM", 2), ("geometric_RRTConnect", 2)]
    assert con.execute("select runcount from experiments").fetchall() == [(2,)]
    assert re.search(r"solved", " ".join(c[1] for c in con.execute("pragma table_info(runs)")))


def test_the_clouds_doc_examples_run_as_written(tmp_path):
    """docs/clouds.md: the array, depth-image and thinning examples, one after the other, in
    a fresh interpreter."""
    doc = ROOT / "docs" / "clouds.md"
    code = "\n".join(
        _block(doc, h) for h in ("## A cloud from an array", "## A depth image", "## Thinning")
    )
    r = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=600
    )
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.split()[:2] == ["True", "True"], r.stdout
