"""What a new user meets first: compiles said out loud and done ahead of time on request, a
colliding start or goal refused by name, an approximate solution that is not a success,
and obstacles named in the checker's answers."""

from __future__ import annotations

import logging
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

ob = pytest.importorskip("ompl.base")

import planning_collision as pc  # noqa: E402
from planning_collision import compiling  # noqa: E402
from planning_collision.demos.scenes import planar_arm_gap  # noqa: E402
from planning_collision.plugins.ompl import make_setup, solve  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


class _Dispatcher:
    """What a numba compile event carries, for a kernel of this package."""

    def __init__(self, name):
        def f():
            pass

        f.__name__ = name
        f.__module__ = "planning_collision.kernels.checker.states"
        self.py_func = f


class _Event:
    def __init__(self, name):
        self.data = {"dispatcher": _Dispatcher(name)}


def test_a_compile_is_announced_while_it_runs_and_a_short_one_is_not(monkeypatch, capfd, caplog):
    monkeypatch.setattr(compiling, "QUIET", 0.05)
    monkeypatch.setattr(compiling, "TICK", 0.1)
    notice = compiling._Notice()
    with caplog.at_level(logging.INFO, logger="planning_collision.compile"):
        notice.on_start(_Event("state_check"))
        notice.on_start(_Event("gjk_distance"))  # a callee, compiled inside it: no line
        time.sleep(0.4)
        notice.on_end(_Event("gjk_distance"))
        notice.on_end(_Event("state_check"))
        notice.on_start(_Event("dichotomy"))
        notice.on_end(_Event("dichotomy"))  # done before QUIET: nothing said
        time.sleep(0.15)
    err = capfd.readouterr().err.splitlines()
    assert (
        err[0]
        == "planning_collision: compiling is_valid: its first use on this machine (then cached)"
    )
    assert any(line.startswith("planning_collision: still compiling is_valid (") for line in err)
    assert err[-1].startswith("planning_collision: compiled is_valid in 0.")
    assert not any("check_edge" in line or "gjk" in line for line in err)
    assert [r.getMessage() for r in caplog.records] == [
        line[len("planning_collision: ") :] for line in err
    ]
    monkeypatch.setenv(compiling.NOTICE_ENV, "0")  # stderr quiet, the log still has it
    notice.on_start(_Event("state_check"))
    time.sleep(0.1)
    notice.on_end(_Event("state_check"))
    assert capfd.readouterr().err == ""
    assert threading.active_count() < 20  # the tickers end with their compiles


_REAL_COMPILE = """
import numpy as np
from planning_collision import robots
from planning_collision import compiling
compiling.QUIET = 0.0  # announce at once (FK compiles in under a second)
arm = robots.load("planar_arm")
arm.fk(np.zeros(arm.dof))
"""


def test_a_real_compile_from_an_empty_cache_is_announced_and_a_cached_one_is_silent(tmp_path):
    # a compile from an empty cache: no shipped machine code (a clone's kernels/_compiled)
    env = {"NUMBA_CACHE_DIR": str(tmp_path / "numba"), "PLANNING_COLLISION_SHIPPED": "0"}
    runs = [
        subprocess.run(
            [sys.executable, "-c", _REAL_COMPILE],
            cwd=ROOT,
            env={**_env(), **env},
            capture_output=True,
            text=True,
            timeout=300,
        )
        for _ in range(2)
    ]
    assert all(r.returncode == 0 for r in runs), runs[0].stderr[-2000:]
    first = runs[0].stderr.splitlines()
    assert first[0].startswith("planning_collision: compiling Robot.fk: its first use"), first
    assert first[-1].startswith("planning_collision: compiled Robot.fk in "), first
    assert "planning_collision" not in runs[1].stderr  # loaded from numba's cache


def _env() -> dict:
    import os

    return dict(os.environ)


def test_warm_up_compiles_everything_a_planner_uses_and_its_command_is_then_silent():
    pc.warm_up()  # what is not compiled yet in this test session compiles here
    r = subprocess.run(
        [sys.executable, "-m", "planning_collision", "warm-up"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.startswith("planning_collision: every kernel ready (")
    assert "compiling" not in r.stderr, r.stderr


# ---- endpoints, solutions, names -----------------------------------------------------


@pytest.fixture(scope="module")
def gap():
    robot, scene, start, goal = planar_arm_gap()
    return robot, scene, start, goal, pc.CollisionChecker(robot, scene)


def _colliding(robot, checker, rng, want_scene: bool):
    """A configuration whose contacts are with the scene (or with the robot itself)."""
    for q in robot.random_configurations(4000, rng):
        c = checker.contacts(q)
        if c and all(x.other.startswith("obstacle") == want_scene for x in c):
            return q, c
    raise AssertionError("no such configuration sampled")


def test_a_colliding_start_or_goal_is_refused_naming_the_link_and_what_it_touches(gap, rng):
    robot, scene, start, goal, checker = gap
    q, contacts = _colliding(robot, checker, rng, want_scene=True)
    names = {n for n in (scene.get(i).name for i in scene.ids())}
    c = contacts[0]
    assert c.body in robot.link_names and c.other[len("obstacle '") : -1] in names
    with pytest.raises(ValueError, match=r"^start is in collision: ") as e:
        make_setup(robot, scene, q, goal, checker=checker)
    assert f"{c.body} touches {c.other}" in str(e.value)
    with pytest.raises(ValueError, match=r"^goal\[1\] is in collision: "):
        make_setup(robot, scene, start, np.stack([goal, q]), checker=checker)
    qs, self_contacts = _colliding(robot, checker, rng, want_scene=False)
    with pytest.raises(ValueError, match=r"^goal is in collision: ") as e:
        make_setup(robot, scene, start, qs, checker=checker)
    s = self_contacts[0]
    assert f"{s.body} touches {s.other}" in str(e.value)
    ss = make_setup(robot, scene, q, goal, checker=checker, check_endpoints=False)
    assert ss.getProblemDefinition().getStartStateCount() == 1
    assert checker.contacts(start) == []


def test_an_approximate_solution_is_not_a_success(gap):
    """With the goal in collision RRT returns a path that stops short of it: OMPL's status
    is true, the plugin's `solve` is not."""
    robot, scene, start, goal, checker = gap
    inside = np.array([0.0, 0.0, 0.0])
    ids = scene.find("post_low")
    T = scene.get(ids[0]).T.copy()
    T[:3, 3] = robot.fk(inside)["link3"][:3, 3]
    blocked = pc.Scene()
    blocked.add(pc.Sphere(0.05), T, name="on the tool")
    c = pc.CollisionChecker(robot, blocked)
    ss = make_setup(robot, blocked, start, inside, planner="RRT", checker=c, check_endpoints=False)
    status = solve(ss, 0.3)
    assert not status and status.approximate and not status.exact
    assert status == ob.PlannerStatus.APPROXIMATE_SOLUTION and str(status) == "Approximate solution"
    assert not ss.haveExactSolutionPath()
    ok = make_setup(robot, scene, start, goal, checker=checker)
    status = solve(ok, 5.0)
    assert status and status.exact and status == ob.PlannerStatus.EXACT_SOLUTION


def test_link_distances_name_the_nearest_obstacle(gap, rng):
    robot, scene, start, goal, checker = gap
    ld = checker.link_distances(start)
    for oid, name in zip(ld["object"], ld["name"], strict=True):
        assert (oid < 0 and name is None) or name == scene.get(int(oid)).name
    assert set(ld["name"]) & {"post_low", "post_high", "wall"}
