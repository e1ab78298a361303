"""MoveIt SRDF reading: disable_collisions records, and errors that name file and element."""

import logging

import pytest

from planning_collision import robots
from planning_collision.io import DisabledCollision, SRDFError, read_srdf

SRDF = """<?xml version="1.0"?>
<robot name="planar_arm">
  <group name="arm"><chain base_link="base" tip_link="tool"/></group>
  <disable_collisions link1="base" link2="link2" reason="Never"/>
  <disable_collisions link1="link1" link2="link3" reason="User"/>
  <disable_collisions link1="finger_left" link2="finger_right"/>
</robot>
"""


def _write(tmp_path, text, name="r.srdf"):
    p = tmp_path / name
    p.write_text(text)
    return p


def test_read_srdf_returns_the_disabled_pairs_in_file_order(tmp_path):
    got = read_srdf(_write(tmp_path, SRDF))
    assert got.name == "planar_arm"
    assert got.disabled_collisions == (
        DisabledCollision("base", "link2", "Never"),
        DisabledCollision("link1", "link3", "User"),
        DisabledCollision("finger_left", "finger_right", ""),
    )


def test_read_srdf_skips_pairs_naming_links_the_robot_lacks_with_one_warning(tmp_path, caplog):
    text = SRDF.replace('link2="link2"', 'link2="elbow"').replace('"link3"', '"wrist"')
    p = _write(tmp_path, text)
    links = robots.load("planar_arm").link_names
    with caplog.at_level(logging.WARNING, logger="planning_collision.io.srdf"):
        got = read_srdf(p, link_names=links)
    assert got.disabled_collisions == (DisabledCollision("finger_left", "finger_right", ""),)
    assert got.skipped == (
        DisabledCollision("base", "elbow", "Never"),
        DisabledCollision("link1", "wrist", "User"),
    )
    [warning] = [r.getMessage() for r in caplog.records]
    assert "r.srdf" in warning and "['elbow', 'wrist']" in warning and "2 of 3" in warning


def test_read_srdf_strict_names_every_link_the_robot_does_not_have(tmp_path, caplog):
    text = SRDF.replace('link2="link2"', 'link2="elbow"').replace('"link3"', '"wrist"')
    p = _write(tmp_path, text)
    with pytest.raises(SRDFError, match=r"r\.srdf.*\['elbow', 'wrist'\]") as e:
        read_srdf(p, link_names=robots.load("planar_arm").link_names, strict=True)
    assert 'link1="base" link2="elbow"' in str(e.value)
    assert len(read_srdf(p).disabled_collisions) == 3  # without link names: no check
    assert not caplog.records


@pytest.mark.parametrize(
    "text,match",
    [
        ("<robot><disable_collisions link1='a'/></robot>", r"disable_collisions #1.* no link2"),
        ("<robot><disable_collisions link2='a'/></robot>", r"disable_collisions #1.* no link1"),
        ("<robot><disable_collisions link1='a' link2='a'/></robot>", "names link 'a' twice"),
        ("<robot><disable_collisions link1='a'", "not well-formed XML"),
        ("<sdf><disable_collisions link1='a' link2='b'/></sdf>", "root element must be <robot>"),
    ],
)
def test_a_malformed_srdf_raises_naming_the_file_and_the_element(tmp_path, text, match):
    p = _write(tmp_path, text, "bad.srdf")
    with pytest.raises(SRDFError, match=match) as e:
        read_srdf(p)
    assert str(p) in str(e.value)
    assert isinstance(e.value, ValueError)


def test_a_missing_srdf_is_a_file_not_found_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="nowhere.srdf"):
        read_srdf(tmp_path / "nowhere.srdf")


@pytest.mark.parametrize(
    "name,srdf,n",
    [
        ("panda", "robots/panda_description/srdf/panda.srdf", 35),
        ("xarm7", "robots/xarm_description/srdf/xarm7.srdf", 18),
    ],
)
def test_example_robot_data_srdfs_read_and_name_only_links_of_their_robot(
    name, srdf, n, example_robot_data
):
    path = example_robot_data / srdf
    if not path.is_file():
        pytest.skip(f"{path} is not in this example-robot-data release")
    got = read_srdf(path, link_names=robots.load(name).link_names, strict=True)
    assert len(got.disabled_collisions) == n
    reasons = {d.reason for d in got.disabled_collisions}
    assert reasons <= {"Adjacent", "Never", "Default", "Always", "User"}
    assert "Adjacent" in reasons
