"""MotionBenchMaker problem files: every set loads with its problems intact; bad files named."""

from __future__ import annotations

import json

import numpy as np
import pytest

from planning_collision.io.mbm import MBM_SETS, load_mbm, mbm_path

SETS = list(MBM_SETS)


@pytest.mark.parametrize("name", SETS)
def test_every_problem_of_the_set_loads_with_start_goals_fixed_joints_and_scene(name):
    path = mbm_path(name)
    raw = json.loads(path.read_text())
    ps = load_mbm(path)
    assert ps.name == name and ps.robot == "panda" and len(ps) == len(raw["problems"]) == 100
    assert ps.joint_names == tuple(f"panda_joint{i}" for i in range(1, 8))
    assert ps.self_collision_pairs and all(len(p) == 2 for p in ps.self_collision_pairs)
    for p, r in zip(ps, raw["problems"], strict=False):
        assert p.name == r["name"] and p.start.shape == (7,)
        assert np.array_equal(p.start, r["start"])
        assert p.goals.shape == (len(r["goals"]), 7) and np.array_equal(p.goals, r["goals"])
        assert p.fixed_joints == {"panda_finger_joint1": 0.065, "panda_finger_joint2": 0.065}
        assert p.valid == r["valid"]
        assert len(p.obstacles) == len(r["obstacles"])
        assert [o.name for o in p.obstacles] == [o["name"] for o in r["obstacles"]]
    assert ps[raw["problems"][3]["name"]] is ps.problems[3]


def test_table_pick_0041_keeps_its_vamp_flag():
    ps = load_mbm(mbm_path("table_pick"))
    assert ps["table_pick/0041"].valid is False  # data/mbm/README.md: VAMP's spheres flag it


def _write(tmp_path, problems, **top):
    doc = {"joint_names": ["j1", "j2"], "problems": problems, **top}
    p = tmp_path / "set.json"
    p.write_text(json.dumps(doc))
    return p


GOOD = {
    "name": "s/0001",
    "start": [0, 0],
    "goals": [[1, 1]],
    "obstacles": [
        {
            "name": "b",
            "type": "box",
            "size": [1, 1, 1],
            "position": [0, 0, 0],
            "orientation_xyzw": [0, 0, 0, 1],
        }
    ],
}


@pytest.mark.parametrize(
    "change, match",
    [
        ({"start": [0, 0, 0]}, r"problem 's/0001': start must be 2 finite numbers"),
        ({"goals": []}, r"'s/0001': goals must be a non-empty list"),
        ({"goals": [[1, float("nan")]]}, r"goals\[0\] must be 2 finite"),
        (
            {"obstacles": [dict(GOOD["obstacles"][0], type="torus")]},
            r"obstacles\[0\] \('b'\): unknown obstacle type 'torus'",
        ),
        (
            {"obstacles": [dict(GOOD["obstacles"][0], size=[1, 0, 1])]},
            r"obstacles\[0\] \('b'\): Box.extents must be > 0",
        ),
        (
            {"obstacles": [{k: v for k, v in GOOD["obstacles"][0].items() if k != "position"}]},
            r"obstacles\[0\] \('b'\): missing field 'position'",
        ),
        (
            {"obstacles": [dict(GOOD["obstacles"][0], orientation_xyzw=[0, 0, 0, 0])]},
            "non-zero quaternion",
        ),
        (  # a typo must not load as the identity rotation
            {"obstacles": [dict(GOOD["obstacles"][0], orientation=[0, 0, 1, 0])]},
            r"obstacles\[0\] \('b'\): unknown key 'orientation' \(known: .*orientation_xyzw",
        ),
        ({"goal": [[1, 1]]}, r"'s/0001': problem: unknown key 'goal'"),
    ],
)
def test_malformed_problem_files_name_the_problem_and_obstacle(tmp_path, change, match):
    with pytest.raises(ValueError, match=match):
        load_mbm(_write(tmp_path, [dict(GOOD, **change)]))


def test_bad_files(tmp_path):
    assert len(load_mbm(_write(tmp_path, [GOOD]))) == 1
    with pytest.raises(FileNotFoundError):
        load_mbm(tmp_path / "none.json")
    p = tmp_path / "x.json"
    p.write_text('{"problems": [\n 1,,\n]}')
    with pytest.raises(ValueError, match=r"x.json:2:\d+: invalid JSON"):
        load_mbm(p)
    with pytest.raises(ValueError, match="joint_names"):
        load_mbm(_write(tmp_path, [GOOD], joint_names=[]))
    with pytest.raises(ValueError, match="unknown key 'joints'"):
        load_mbm(_write(tmp_path, [GOOD], joints=["j1", "j2"]))
    with pytest.raises(ValueError, match="missing field 'start'"):
        load_mbm(_write(tmp_path, [{k: v for k, v in GOOD.items() if k != "start"}]))
