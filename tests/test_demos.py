"""Every demo runs with small arguments (STYLE §8: `main(argv=None) -> int`)."""

import importlib

import pytest


@pytest.mark.parametrize(
    "name,argv",
    [
        ("query_demo", ["--pairs", "200"]),
        (
            "bench_queries",
            ["--pairs", "50", "--python-pairs", "10", "--repeats", "1", "--types", "box-box"],
        ),
        ("oracle_sweep", ["--pairs", "3", "--jobs", "1"]),
    ],
)
def test_demo_runs_and_returns_zero(name, argv, capsys):
    mod = importlib.import_module(f"demos.{name}")
    assert mod.main(argv) == 0
    assert capsys.readouterr().out.strip()
