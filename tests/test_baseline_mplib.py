"""The MPlib baseline (demos/bench/baselines/mplib_runner.py) solves MotionBenchMaker problems in
its own interpreter and returns paths from the start to the goal. Skipped where no
interpreter runs MPlib (it needs numpy < 2: set MPLIB_PYTHON)."""

from __future__ import annotations

import numpy as np
import pytest

from planning_collision.demos.bench.baselines import mplib_runner


@pytest.mark.skipif(
    not mplib_runner.available(),
    reason=f"no MPlib running in {mplib_runner.python()} (set MPLIB_PYTHON)",
)
def test_mplib_solves_two_problems_from_start_to_goal():
    from planning_collision.io import load_mbm, mbm_path

    planner = mplib_runner.MPlibPanda()
    ps = load_mbm(mbm_path("table_pick"))
    for p in ps.problems[:2]:
        r = planner.solve(p, 2.0, seed=1)
        assert r["solved"], r["status"]
        Q = r["path"]
        assert Q.ndim == 2 and Q.shape[1] == 7 and len(Q) >= 2
        assert np.allclose(Q[0], p.start, atol=1e-6)
        assert np.allclose(Q[-1], p.goals[0], atol=1e-3)
        assert np.isfinite(r["seconds"]) and r["seconds"] > 0.0  # timed, never asserted on
    planner.close()


def test_an_unsupported_obstacle_is_refused_by_name():
    import planning_collision as pc
    from planning_collision.io.scene_files import ObstacleRecord

    with pytest.raises(ValueError, match="'blob'.*Capsule"):
        mplib_runner._obstacle(ObstacleRecord("blob", pc.Capsule(0.1, 0.2), np.eye(4)))
