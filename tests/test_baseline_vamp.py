"""The VAMP baseline (demos/bench/baselines/vamp_runner.py): its Euler angles are VAMP's, and
where VAMP is installed (it is not a dependency: built from its sdist) it plans
MotionBenchMaker problems from the start to the goal, in the benchmark and end to end."""

from __future__ import annotations

import json

import numpy as np
import pytest

from planning_collision.demos.bench.baselines import vamp_runner


def _rot(axis: int, t: float) -> np.ndarray:
    c, s = np.cos(t), np.sin(t)
    i, j = [(1, 2), (2, 0), (0, 1)][axis]
    R = np.eye(3)
    R[i, i] = R[j, j] = c
    R[i, j], R[j, i] = -s, s
    return R


def test_euler_xyz_is_rz_ry_rx(rng):
    """VAMP's "xyz": R = Rz(c) Ry(b) Rx(a), at random and at gimbal lock."""
    for k in range(200):
        a, c = rng.uniform(-np.pi, np.pi, 2)
        b = rng.uniform(-np.pi / 2, np.pi / 2) if k < 190 else np.pi / 2 * (-1) ** k
        R = _rot(2, c) @ _rot(1, b) @ _rot(0, a)
        a2, b2, c2 = vamp_runner.euler_xyz(R)
        assert np.allclose(_rot(2, c2) @ _rot(1, b2) @ _rot(0, a2), R, atol=1e-9)


needs_vamp = pytest.mark.skipif(not vamp_runner.available(), reason="VAMP is not installed")


@needs_vamp
def test_vamp_solves_problems_from_start_to_goal_end_to_end():
    from planning_collision.io import load_mbm, mbm_path

    vp = vamp_runner.VampPanda()
    for p in load_mbm(mbm_path("box")).problems[:3]:
        r = vp.solve(p, "box")
        assert r["solved"] and r["total"] >= r["solve"] > 0.0
        Q = r["path"]
        assert np.allclose(Q[0], p.start, atol=1e-5) and np.allclose(Q[-1], p.goals[0], atol=1e-5)


@needs_vamp
def test_the_benchmark_has_a_vamp_column_with_end_to_end_times(tmp_path):
    from planning_collision.demos import benchmark

    out = tmp_path / "out"
    argv = ["--sets", "box", "--n", "2", "--validators", "dichotomy", "vamp"]
    assert benchmark.main([*argv, "--time", "1", "--workers", "1", "--out", str(out)]) == 0
    rows = [json.loads(line) for line in (out / "runs.jsonl").read_text().splitlines()]
    by = {r["validator"]: r for r in rows if r["index"] == 0}
    assert by["vamp"]["planner"] == "VAMP-RRTConnect" and by["vamp"]["solved"]
    for v in ("vamp", "dichotomy"):
        assert by[v]["end_to_end"] >= by[v]["time"] > 0.0
    assert "end to end" in (out / "summary.md").read_text()
