"""The scene demos run with small arguments and say what they measured."""

import pytest


def test_factory_scene_demo_builds_thousands_of_primitives_and_writes_json(tmp_path, capsys):
    from planning_collision.demos.bench import factory_scene

    out = tmp_path / "factory.json"
    assert factory_scene.main(["--scale", "0.2", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "primitives" in text and "build" in text
    from planning_collision.scene import Scene

    s = Scene.from_file(out)
    assert len(s) > 50


def test_factory_scene_has_over_5000_primitives_at_the_default_scale():
    from planning_collision.demos.bench.factory_scene import make_factory

    st = make_factory(0).stats()
    assert st["primitives"] >= 5000
    assert st["groups"] < st["primitives"] / 5  # KCD grouped the touching pieces


def test_bench_scene_runs_and_all_engines_agree(capsys):
    pytest.importorskip("coal")
    from planning_collision.demos.bench import scene as bench_scene

    # (c) is skipped here: its kernels would add a compile; the full run checks it too
    rc = bench_scene.main(
        ["--queries", "40", "--repeats", "1", "--scale", "0.1", "--all-pairs-queries", "0"]
        + ["--motions", "3", "--steps", "5"]
    )
    text = capsys.readouterr().out
    assert rc == 0, text
    assert "(a) KCD" in text and "(d) coal" in text and text.count("agreement: (a)=(b) yes") == 6
