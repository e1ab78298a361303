"""The planar-arm and piano demos plan, re-check their paths, draw their pictures, and
refuse bad arguments as argparse does."""

from __future__ import annotations

import importlib

import pytest

pytest.importorskip("ompl")

PNG = b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize(
    "name,argv,says",
    [
        ("plan_planar", ["--seed", "2"], "planner data:"),
        ("plan_planar", ["--planner", "RRTConnect", "--seed", "3"], "planner data:"),
        ("plan_piano", ["--seed", "2"], "no state collides"),
    ],
)
def test_a_planning_demo_solves_and_draws(name, argv, says, tmp_path, capsys):
    mod = importlib.import_module(f"demos.{name}")
    out = tmp_path / "picture.png"
    assert mod.main([*argv, "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "solved in" in text and says in text
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        assert "skipped" in text
        return
    assert out.read_bytes()[:8] == PNG and out.stat().st_size > 10_000


@pytest.mark.parametrize("name", ["plan_planar", "plan_piano", "plan_shelf"])
@pytest.mark.parametrize("bad", [["--planner", "Nope"], ["--time", "0"], ["--method", "stepwise"]])
def test_a_planning_demo_refuses_a_bad_argument(name, bad, capsys):
    mod = importlib.import_module(f"demos.{name}")
    with pytest.raises(SystemExit) as e:
        mod.main(bad)
    assert e.value.code == 2
    assert "error" in capsys.readouterr().err


@pytest.mark.parametrize("name", ["plan_planar", "plan_piano"])
def test_a_planning_demo_exports_its_path_as_gltf(name, tmp_path, capsys):
    trimesh = pytest.importorskip("trimesh")
    mod = importlib.import_module(f"demos.{name}")
    glb = tmp_path / "path.glb"
    assert mod.main(["--seed", "1", "--out", str(tmp_path / "p.png"), "--export", str(glb)]) == 0
    assert f"wrote {glb}" in capsys.readouterr().out
    names = set(trimesh.load(glb).graph.nodes_geometry)
    assert any(n.startswith("obstacle") for n in names)
    assert any(n.startswith("robot") for n in names) and any(n.startswith("path") for n in names)
