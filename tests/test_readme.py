"""The README's first commands are what a newcomer runs, and CI runs the same test command."""

from pathlib import Path

from planning_collision.demos.dev.wheel_start import readme_example

ROOT = Path(__file__).resolve().parents[1]


def _readme_commands():
    lines = (ROOT / "README.md").read_text().splitlines()
    start = lines.index("```bash") + 1
    cmds = []
    for line in lines[start:]:
        if line.startswith("```"):
            break
        cmds.append(line.split("#", 1)[0].strip())
    return cmds


def test_readme_opens_with_install_demo_and_test_commands():
    demo, tests = _readme_commands()[:2]
    assert "pip install" in demo and "demos/" in demo
    assert "pip install" in tests and "pytest" in tests


def test_ci_runs_exactly_the_readme_test_command():
    test_cmd = _readme_commands()[1]
    ci_lines = [line.strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()]
    assert test_cmd in ci_lines


def test_readme_demo_script_exists_and_has_main():
    demo = _readme_commands()[0]
    script = next(tok for tok in demo.split() if tok.startswith("demos/"))
    src = (ROOT / script).read_text()
    assert "def main(argv=None) -> int" in src


def test_the_quick_start_plans():
    """The README's OMPL example runs as written and returns a certified path."""
    import numpy as np
    import pytest

    pytest.importorskip("ompl")
    from planning_collision import robots

    try:
        robots.urdf_path("panda")
    except Exception as e:  # noqa: BLE001 - example-robot-data missing
        pytest.skip(f"the Panda needs example-robot-data: {e}")
    code = readme_example(ROOT / "README.md", "## Plan with OMPL")
    ns: dict = {}
    exec(compile(code, "README quick start", "exec"), ns)
    Q, checker = ns["Q"], ns["checker"]
    assert np.allclose(Q[0], ns["start"]) and np.allclose(Q[-1], ns["goal"], atol=1e-6)
    assert all(checker.check_edge(a, b).valid for a, b in zip(Q[:-1], Q[1:], strict=True))


def test_your_own_robot_example_plans_in_a_scene_file_and_writes_a_gltf(tmp_path, monkeypatch):
    """The README's own-robot example runs as written (in a scratch directory, where it
    writes its mesh, scene and glTF files): a URDF + SRDF from example-robot-data, a scene
    file with a mesh and a point cloud, a certified plan, a file to look at."""
    import numpy as np
    import pytest

    pytest.importorskip("ompl")
    trimesh = pytest.importorskip("trimesh")
    try:
        from planning_collision.io.urdf import example_robot_data_dir

        example_robot_data_dir()
    except ImportError as e:
        pytest.skip(f"the UR5 needs example-robot-data: {e}")
    code = readme_example(ROOT / "README.md", "## Your own robot")
    assert 20 <= len(code.strip().splitlines()) <= 30  # an example, not a program
    monkeypatch.chdir(tmp_path)
    ns: dict = {}
    exec(compile(code, "README own robot", "exec"), ns)
    Q, checker, scene = ns["Q"], ns["checker"], ns["scene"]
    assert np.allclose(Q[0], ns["start"]) and np.allclose(Q[-1], ns["goal"], atol=1e-6)
    assert not checker.edge_free(ns["start"], ns["goal"])  # the straight motion hits something
    assert all(checker.check_edge(a, b).valid for a, b in zip(Q[:-1], Q[1:], strict=True))
    assert {o.name for o in scene} == {"crate", "wall"}
    nodes = set(trimesh.load(tmp_path / "ur5_path.glb").graph.nodes_geometry)
    assert any(n.startswith("robot") for n in nodes) and any("crate" in n for n in nodes)
