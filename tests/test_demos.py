"""Every demo runs with small arguments (each has `main(argv=None) -> int`)."""

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
        (  # the hull row also counts GJK's rounds and times their floor
            "bench_queries",
            ["--pairs", "60", "--python-pairs", "5", "--repeats", "1", "--types", "hull32-hull32"],
        ),
        ("oracle_sweep", ["--pairs", "3", "--jobs", "1"]),
        ("cold_start", ["--list"]),
        ("model_containment", ["--robots", "free_flyer", "--samples", "500"]),
        ("plan_shelf", ["--runs", "2", "--time", "2"]),  # the README's first command
        ("prm_memory", ["--seconds", "2", "--every", "1"]),
    ],
)
def test_demo_runs_and_returns_zero(name, argv, capsys):
    mod = importlib.import_module(f"demos.{name}")
    assert mod.main(argv) == 0
    assert capsys.readouterr().out.strip()
