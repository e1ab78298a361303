"""Robots a user brings: models cached per user by default, progress on long builds, the
ACM from an SRDF or sampled by default, and a warning when it is adjacent pairs only."""

import logging
from pathlib import Path

import numpy as np
import pytest
import trimesh

from planning_collision import robots
from planning_collision.io import SRDFError, read_srdf
from planning_collision.robot import Robot
from planning_collision.robot import acm as acm_module
from planning_collision.robot import geometry as geometry_module
from planning_collision.robot.cache import CACHE_ENV, default_cache_dir, resolve_cache_dir

PLANAR = Path(robots.__file__).parent / "planar_arm" / "planar_arm.urdf"

# a base box, an arm whose collision mesh is a ring (not convex: V-HACD, ~2 s) and a tip
# sphere; base and tip are not adjacent, so the ACM has a pair to decide
RINGBOT = """<?xml version="1.0"?>
<robot name="ringbot">
  <link name="base"><collision><geometry><box size="0.2 0.2 0.1"/></geometry></collision></link>
  <link name="arm"><collision><origin xyz="0 0 0.2"/>
    <geometry><mesh filename="ring.stl"/></geometry></collision></link>
  <link name="tip"><collision><geometry><sphere radius="0.03"/></geometry></collision></link>
  <joint name="j1" type="revolute"><parent link="base"/><child link="arm"/>
    <origin xyz="0 0 0.05"/><axis xyz="0 0 1"/><limit lower="-3" upper="3" effort="1" velocity="1"/>
  </joint>
  <joint name="j2" type="revolute"><parent link="arm"/><child link="tip"/>
    <origin xyz="0.12 0 0.2"/><axis xyz="0 1 0"/>
    <limit lower="-3" upper="3" effort="1" velocity="1"/>
  </joint>
</robot>
"""
LOGGER = "planning_collision.robot"


@pytest.fixture(scope="module")
def ringbot(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("ringbot")
    ring = trimesh.creation.annulus(r_min=0.06, r_max=0.1, height=0.04, sections=24)
    ring.export(d / "ring.stl")
    (d / "ringbot.urdf").write_text(RINGBOT)
    return d / "ringbot.urdf"


def _no_build(*a, **k):
    raise AssertionError("built again instead of reading the cache")


def test_a_user_robot_is_cached_in_the_per_user_directory_by_default(
    ringbot, tmp_path, monkeypatch
):
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "user-cache"))
    r1 = Robot.from_urdf(ringbot)
    files = sorted(p.name.split("-")[0] for p in (tmp_path / "user-cache").iterdir())
    assert files == ["acm", "geometry"]
    assert "sampled (10000 configurations, seed 0)" in r1.acm_source
    # a second process (here: a second load) neither decomposes nor samples
    monkeypatch.setattr(geometry_module, "build_link_geometry", _no_build)
    monkeypatch.setattr(acm_module, "sample_acm", _no_build)
    r2 = Robot.from_urdf(ringbot)
    assert r2.geometry_key == r1.geometry_key
    for a, b in zip(r1.pieces, r2.pieces, strict=True):
        assert a.shape == b.shape and np.array_equal(a.pose, b.pose)
    assert r2.acm.entries() == r1.acm.entries()
    assert r2.acm_source.endswith("from the cache)")


def test_the_default_cache_directory_follows_the_environment(tmp_path, monkeypatch):
    monkeypatch.delenv(CACHE_ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_cache_dir() == tmp_path / "xdg" / "planning_collision"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_cache_dir() == tmp_path / "home" / ".cache" / "planning_collision"
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "mine"))
    assert resolve_cache_dir(None) == tmp_path / "mine"
    assert resolve_cache_dir(tmp_path / "given") == tmp_path / "given"
    assert resolve_cache_dir(False) is None
    for off in ("off", "0", "false", "NO"):
        monkeypatch.setenv(CACHE_ENV, off)
        assert resolve_cache_dir(None) is None
    with pytest.raises(TypeError, match="cache_dir must be a path"):
        resolve_cache_dir(True)


def test_cache_dir_false_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "user-cache"))
    robot = Robot.from_urdf(PLANAR, cache_dir=False)
    assert "sampled" in robot.acm_source
    assert not (tmp_path / "user-cache").exists()


def test_an_unwritable_cache_directory_only_logs_one_warning(ringbot, tmp_path, caplog):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")  # no directory can be made under it, even as root
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        robot = Robot.from_urdf(ringbot, cache_dir=blocker / "cache")
    assert len(robot.pieces) > 3 and "sampled" in robot.acm_source
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1, [r.getMessage() for r in warnings]
    assert "cannot write the robot model cache" in warnings[0].getMessage()


def test_an_unreadable_cache_file_is_rebuilt_with_a_warning(tmp_path, caplog):
    r1 = Robot.from_urdf(PLANAR, cache_dir=tmp_path)
    for f in tmp_path.iterdir():
        f.write_bytes(b"garbage")
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        r2 = Robot.from_urdf(PLANAR, cache_dir=tmp_path)
    text = caplog.text
    assert "cache entry (link models) not used" in text
    assert "cache entry (allowed-collision matrix) not used" in text
    assert r2.acm.entries() == r1.acm.entries() and len(r2.pieces) == len(r1.pieces)
    r3 = Robot.from_urdf(PLANAR, cache_dir=tmp_path)  # rewritten: read back, no warning
    assert r3.acm_source.endswith("from the cache)")


def test_a_build_reports_progress_per_link_and_a_cached_load_is_quiet(ringbot, tmp_path, caplog):
    calls = []
    with caplog.at_level(logging.INFO, logger=LOGGER):
        Robot.from_urdf(ringbot, cache_dir=tmp_path, progress=lambda *c: calls.append(c))
    geometry = [c for c in calls if c[1] == 3]
    steps = [c for c in geometry if c[2].endswith(("primitives", "to convexify"))]
    assert [c[:2] for c in steps] == [(0, 3), (1, 3), (2, 3)]
    assert geometry[-1][:2] == (3, 3) and "3 links" in geometry[-1][2]
    assert "link 'arm': 1 mesh(es) to convexify" in steps[1][2]
    # within the arm's step: its V-HACD run and the surface cover, each said (done stays 1)
    notes = [c[2] for c in geometry if c[0] == 1 and c not in steps]
    assert any(n.startswith("link 'arm': ring.stl: V-HACD of") for n in notes), notes
    assert any("surface cover" in n for n in notes), notes
    sampling = [c for c in calls if c[1] == 10]
    assert [c[0] for c in sampling] == list(range(11))  # ten blocks of samples, then done
    logged = [r.getMessage() for r in caplog.records if r.levelno == logging.INFO]
    assert any("2/3 link 'arm'" in m for m in logged)
    assert any("configurations 9001-10000" in m for m in logged)

    calls.clear()
    caplog.clear()
    with caplog.at_level(logging.INFO, logger=LOGGER):
        Robot.from_urdf(ringbot, cache_dir=tmp_path, progress=lambda *c: calls.append(c))
    assert calls == [] and caplog.records == []


def test_progress_must_be_none_false_or_a_callable():
    with pytest.raises(TypeError, match="progress must be None, False or a callable"):
        Robot.from_urdf(PLANAR, cache_dir=False, progress="yes")
    Robot.from_urdf(PLANAR, cache_dir=False, progress=False)


# ---- the allowed-collision matrix -------------------------------------------------------

PLANAR_SRDF = """<robot name="planar_arm">
  <disable_collisions link1="base" link2="link2" reason="Never"/>
  <disable_collisions link1="link1" link2="link3"/>
</robot>
"""


def test_from_urdf_allows_the_srdf_pairs_and_samples_nothing(tmp_path, monkeypatch, caplog):
    srdf = tmp_path / "arm.srdf"
    srdf.write_text(PLANAR_SRDF)
    monkeypatch.setattr(acm_module, "sample_acm", _no_build)
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        robot = Robot.from_urdf(PLANAR, srdf=srdf)
    assert robot.acm.reason("base", "link2") == "never"
    assert robot.acm.reason("link1", "link3") == "srdf"
    assert robot.acm.reason("link1", "link2") == "adjacent"
    assert robot.acm_source == "adjacent + srdf arm.srdf (2 pairs)"
    assert not robot.acm_is_adjacent_only and caplog.records == []


# an SRDF that outlived a trimmed URDF: entries for a mobile base the URDF no longer has
OUTLIVED_SRDF = PLANAR_SRDF.replace(
    "</robot>",
    """  <disable_collisions link1="wheel_left" link2="link1" reason="Never"/>
  <disable_collisions link1="wheel_left" link2="laser" reason="Never"/>
  <disable_collisions link1="base" link2="laser" reason="Adjacent"/>
</robot>""",
)


def test_srdf_entries_for_links_the_urdf_lacks_are_skipped_with_one_warning(
    tmp_path, monkeypatch, caplog
):
    srdf = tmp_path / "mobile.srdf"
    srdf.write_text(OUTLIVED_SRDF)
    monkeypatch.setattr(acm_module, "sample_acm", _no_build)
    with caplog.at_level(logging.WARNING):
        robot = Robot.from_urdf(PLANAR, srdf=srdf)
    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 1, warnings
    assert "mobile.srdf" in warnings[0] and "skipped 3 of 5" in warnings[0]
    assert "['laser', 'wheel_left']" in warnings[0]
    # the two entries about its own links are kept, the three others are not in the ACM
    assert robot.acm.reason("base", "link2") == "never"
    assert robot.acm.reason("link1", "link3") == "srdf"
    assert robot.acm_source == "adjacent + srdf mobile.srdf (2 pairs, 3 skipped)"
    (tmp_path / "arm.srdf").write_text(PLANAR_SRDF)  # the same SRDF without the base
    trimmed = Robot.from_urdf(PLANAR, srdf=tmp_path / "arm.srdf")
    assert robot.acm.entries() == trimmed.acm.entries()


def test_an_srdf_naming_links_the_urdf_lacks_is_refused_when_strict(tmp_path):
    srdf = tmp_path / "other.srdf"
    srdf.write_text(OUTLIVED_SRDF)
    with pytest.raises(SRDFError, match=r"other\.srdf.*\['laser', 'wheel_left'\]"):
        Robot.from_urdf(PLANAR, srdf=srdf, srdf_strict=True)


def test_the_panda_srdf_disables_its_pairs_in_the_acm():
    try:
        from planning_collision.io.urdf import example_robot_data_dir

        srdf = example_robot_data_dir() / "robots/panda_description/srdf/panda.srdf"
    except ImportError as e:
        pytest.skip(str(e))
    if not srdf.is_file():
        pytest.skip(f"{srdf} is not in this example-robot-data release")
    kw = dict(robots.robot_kwargs("panda"), acm=None)
    robot = Robot.from_urdf(robots.urdf_path("panda"), srdf=srdf, **kw)
    assert robot.acm.reason("panda_link0", "panda_link2") == "never"
    assert robot.acm.reason("panda_link5", "panda_link7") == "default"
    assert robot.acm_source == "adjacent + srdf panda.srdf (35 pairs)"
    # the SRDF already holds every adjacent pair: the ACM is exactly its 35 pairs
    srdf_pairs = {frozenset((d.link1, d.link2)) for d in read_srdf(srdf).disabled_collisions}
    assert {frozenset(e[:2]) for e in robot.acm.entries()} == srdf_pairs


def test_an_adjacent_only_acm_warns_once_and_says_so(caplog):
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        robot = Robot.from_urdf(PLANAR, compute_acm=False)
    assert robot.acm_is_adjacent_only and robot.acm_source == "adjacent"
    warnings = [r.getMessage() for r in caplog.records]
    assert len(warnings) == 1 and "only adjacent link pairs" in warnings[0]
    assert "compute_acm" in warnings[0] and "srdf=" in warnings[0]
    robot.compute_acm(n_samples=500)
    assert not robot.acm_is_adjacent_only
    assert robot.acm_source == "adjacent + sampled (500 configurations, seed 0)"
    edited = Robot.from_urdf(PLANAR, compute_acm=False)
    edited.allow("base", "link3")
    assert not edited.acm_is_adjacent_only and edited.acm_source == "adjacent + user edits"


def test_from_urdf_samples_the_acm_by_default_as_compute_acm_does(caplog):
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        default = Robot.from_urdf(PLANAR)
    assert caplog.records == []
    explicit = Robot.from_urdf(PLANAR, compute_acm=False)
    explicit.compute_acm()
    assert default.acm.entries() == explicit.acm.entries()
    assert any(r == "never" for _, _, r in default.acm.entries())
    assert not default.acm_is_adjacent_only


def test_an_explicit_acm_is_taken_as_the_users_decision(monkeypatch, caplog):
    monkeypatch.setattr(acm_module, "sample_acm", _no_build)
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        robot = Robot.from_urdf(PLANAR, acm=[])
    assert robot.acm_source == "adjacent + acm= (0 pairs)"
    assert not robot.acm_is_adjacent_only and caplog.records == []
    # a robot whose links are all adjacent has nothing to decide: no warning either
    flyer = robots.load("free_flyer")
    assert not flyer.acm_is_adjacent_only
