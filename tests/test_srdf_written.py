"""A robot's allowed-collision matrix written as a MoveIt SRDF (`robot.write_srdf`,
`io.write_srdf`) and read back by `Robot.from_urdf(srdf=...)` pair for pair, reason for
reason; an SRDF that names none of the robot's links is refused, and one that allows no
pair leaves a matrix that says it is adjacent-only."""

from __future__ import annotations

import logging
import xml.etree.ElementTree as ET

import pytest

from planning_collision import Robot, robots
from planning_collision.io import SRDFError, read_srdf, write_srdf
from planning_collision.io.srdf import MOVEIT_REASONS


@pytest.mark.parametrize("name", ["planar_arm", "panda", "ur5"])
def test_a_robots_acm_written_as_srdf_reads_back_identically(name, tmp_path, request):
    if name != "planar_arm":
        request.getfixturevalue("example_robot_data")
    robot = robots.load(name)
    robot.allow(robot.link_names[0], robot.link_names[-1], "gripper")  # a reason of its own
    path = robot.write_srdf(tmp_path / f"{name}.srdf")
    # what MoveIt reads: <robot name>, one <disable_collisions> per pair, MoveIt's reasons
    root = ET.parse(path).getroot()
    assert root.tag == "robot" and root.get("name") == robot.name
    els = root.findall("disable_collisions")
    assert len(els) == len(robot.acm)
    reasons = {el.get("reason") for el in els}
    assert reasons - set(MOVEIT_REASONS.values()) == {"gripper"}
    assert {"Adjacent", "Never"} <= reasons
    again = Robot.from_urdf(robot.urdf_path, srdf=path, fixed_joints=robot.held_joints or None)
    assert again.acm.entries() == robot.acm.entries()
    assert again.acm_source == f"adjacent + srdf {path.name} ({len(robot.acm)} pairs)"
    assert not again.acm_is_adjacent_only
    assert [list(e) for e in again.self_collision_pairs()] == [
        list(e) for e in robot.self_collision_pairs()
    ]


def test_pairs_from_an_srdf_without_reasons_keep_theirs(tmp_path):
    arm = robots.load("planar_arm")
    first = write_srdf(tmp_path / "a.srdf", "planar_arm", [("link1", "link3", "srdf")])
    assert "reason" not in ET.parse(first).getroot().find("disable_collisions").attrib
    one = Robot.from_urdf(arm.urdf_path, srdf=first)
    assert one.acm.reason("link1", "link3") == "srdf"
    again = Robot.from_urdf(arm.urdf_path, srdf=one.write_srdf(tmp_path / "b.srdf"))
    assert again.acm.entries() == one.acm.entries()
    assert read_srdf(tmp_path / "b.srdf").name == one.name
    with pytest.raises(ValueError, match="two different links"):
        write_srdf(tmp_path / "c.srdf", "x", [("link1", "link1", "never")])


def test_an_srdf_that_names_none_of_the_robots_links_is_refused(tmp_path):
    """Another robot's SRDF: every pair skipped would leave only the adjacent pairs allowed,
    while the matrix said it came from an SRDF (acm_is_adjacent_only read False)."""
    arm = robots.load("planar_arm")
    other = write_srdf(
        tmp_path / "other.srdf",
        "baxter",
        [("torso", "head", "Adjacent"), ("left_upper_shoulder", "torso", "never")],
    )
    with pytest.raises(SRDFError, match=r"other\.srdf: none of its 2 .*robot 'baxter'"):
        Robot.from_urdf(arm.urdf_path, srdf=other)


def test_an_srdf_without_pairs_leaves_an_acm_that_says_it_is_adjacent_only(tmp_path, caplog):
    arm = robots.load("planar_arm")
    empty = write_srdf(tmp_path / "empty.srdf", "planar_arm", [])
    with caplog.at_level(logging.WARNING, logger="planning_collision.robot.robot"):
        robot = Robot.from_urdf(arm.urdf_path, srdf=empty)
    assert robot.acm_is_adjacent_only and robot.acm_source == "adjacent"
    [warning] = [r.getMessage() for r in caplog.records if "adjacent" in r.getMessage()]
    assert "empty.srdf disables no pair" in warning
