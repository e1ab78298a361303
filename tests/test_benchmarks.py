"""The planning benchmark and the checker benchmark run end to end on a few of the shipped
MotionBenchMaker problems: OMPL's log goes to SQLite, every path is re-checked, local workers
and a local Ray instance give the same kind of results."""

from __future__ import annotations

import json
import sqlite3

import pytest

pytest.importorskip("ompl")
pytest.importorskip("fcl")


def _run(tmp_path, *extra):
    from demos.bench import planning as benchmark

    out = tmp_path / "out"
    argv = ["--sets", "bookshelf_small", "--n", "2", "--time", "0.5", "--out", str(out), *extra]
    assert benchmark.main(argv) == 0
    rows = [json.loads(line) for line in (out / "runs.jsonl").read_text().splitlines()]
    return out, rows


def test_the_benchmark_writes_runs_an_ompl_log_a_database_and_a_summary(tmp_path, capsys):
    out, rows = _run(tmp_path, "--validators", "dichotomy", "fcl")
    assert len(rows) == 4 and not any("error" in r for r in rows)
    # the first two problems of the set were run (a task's index is the position in the set)
    assert sorted({r["problem"] for r in rows}) == ["bookshelf_small/0001", "bookshelf_small/0002"]
    ours = [r for r in rows if r["validator"] == "dichotomy"]
    assert all(r["solved"] for r in ours)
    assert all(r["collides"] is False for r in ours)  # certified paths, re-checked on meshes
    con = sqlite3.connect(out / "benchmark.db")
    names = {n for (n,) in con.execute("select name from plannerConfigs")}
    assert names == {"RRTConnect[dichotomy]", "RRTConnect[fcl]"}
    assert con.execute("select count(*) from runs").fetchone()[0] == 4
    summary = (out / "summary.md").read_text()
    assert "| bookshelf_small | RRTConnect[dichotomy] | 2/2 |" in summary
    # the per-problem ratio, printed when both validators solve a problem
    fcl_solved = any(r["solved"] for r in rows if r["validator"] == "fcl")
    assert ("x faster than RRTConnect[fcl]" in summary) == fcl_solved
    assert "runs in" in capsys.readouterr().out


def test_local_workers_and_ray_run_the_same_tasks(tmp_path):
    pytest.importorskip("ray")
    _, local = _run(tmp_path / "local", "--validators", "dichotomy", "--workers", "2")
    _, ray_rows = _run(tmp_path / "ray", "--validators", "dichotomy", "--ray", "local")
    key = [(r["set"], r["index"], r["validator"]) for r in local]
    assert key == [(r["set"], r["index"], r["validator"]) for r in ray_rows]
    rows = local + ray_rows
    assert not any("error" in r for r in rows)
    assert any(r["solved"] for r in rows)  # two processes share two cores: some may time out
    assert all(r["collides"] is False for r in rows if r["solved"])


def test_the_checker_benchmark_runs(capsys):
    from demos.bench import checker as bench_checker

    argv = ["--problems", "1", "--configs", "80", "--peer-configs", "8", "--edges", "40"]
    assert bench_checker.main([*argv, "--peer-edges", "4"]) == 0
    out = capsys.readouterr().out
    assert "python-fcl pipeline" in out and "dichotomy (certified)" in out and "cache=False" in out
    # the edge table's ratio to the peer is a ratio of times in one unit (a unit slip once
    # printed 6,617,043x): both sides are tens to thousands of microseconds
    ratios = [
        float(line.split()[-1].rstrip("x"))
        for line in out.splitlines()
        if "edges)" not in line and line.rstrip().endswith("x") and "certified" in line
    ]
    assert ratios and all(0.01 < r < 1000.0 for r in ratios), ratios


def test_the_certification_script_finds_no_false_free_edge(capsys):
    from demos.dev import certify

    argv = ["--problems", "1", "--edges-per-world", "24", "--mesh-edges", "2"]
    assert certify.main(argv) == 0
    assert "no edge called free collides" in capsys.readouterr().out
