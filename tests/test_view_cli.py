"""`python -m planning_collision.demos.view` on a user's robot: `--active` chooses the joints to
move (the others held), and what the robot or files refuse is one line on stderr with exit code 2,
never a traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from planning_collision import robots
from planning_collision.demos import view

ROOT = Path(__file__).resolve().parents[1]
# a URDF: joint1 (continuous), joint2, joint3 and finger_joint all active
ARM = str(robots.urdf_path("planar_arm"))


def test_active_chooses_the_joints_and_holds_the_others(capsys):
    argv = ["--urdf", ARM, "--active", "joint3", "joint1", "--no-serve"]
    assert view.main([*argv, "--q", "0.4", "-1.0"]) == 0
    out = capsys.readouterr().out
    assert "robot: planar_arm, 2 joints" in out and "q = [0.4, -1.0]" in out
    # the registry's robots take it too
    assert view.main(["--robot", "planar_arm", "--active", "joint2", "--no-serve"]) == 0
    assert "1 joints" in capsys.readouterr().out


@pytest.mark.parametrize(
    "argv,said",
    [
        (["--urdf", ARM, "--q", "0.1", "0.2"], "--q has shape (2,); robot 'planar_arm' has 4"),
        (
            ["--urdf", ARM, "--q", "0", "0", "0", "0", "--q", "0", "9", "0", "0"],
            "--q #2[1] (joint2) = 9.0",
        ),
        (["--urdf", ARM, "--active", "elbow"], "active_joints names unknown joint 'elbow'"),
        (["--urdf", ARM, "--active", "joint1", "--fixed", "joint1=0.2"], "both active and"),
        (["--urdf", "nowhere.urdf"], "nowhere.urdf"),
        (["--robot", "planar_arm", "--scene", "nowhere.json"], "nowhere.json"),
    ],
)
def test_what_the_robot_or_a_file_refuses_is_one_line_and_exit_code_2(argv, said, capsys):
    assert view.main([*argv, "--no-serve"]) == 2
    captured = capsys.readouterr()
    err = captured.err.strip().splitlines()
    assert err[-1].startswith("view: error: ") and said in err[-1], err
    assert "Traceback" not in captured.err


def test_active_without_a_robot_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as e:
        view.main(["--active", "joint1"])
    assert e.value.code == 2 and "--active needs a robot" in capsys.readouterr().err


def test_the_command_exits_2_on_a_wrong_q():
    r = subprocess.run(
        [sys.executable, "-m", "planning_collision.demos.view", "--urdf", ARM, "--q", "1"]
        + ["--no-serve"],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr[-2000:]
    assert "view: error: --q has shape (1,)" in r.stderr
