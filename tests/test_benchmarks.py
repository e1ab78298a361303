"""The planning benchmark and the checker benchmark run end to end on a few of the shipped
MotionBenchMaker problems and on a user's problem file: OMPL's logs go to SQLite with every
run of every set, every path is re-checked, bad problem files are refused by field, local
workers and a local Ray instance give the same kind of results."""

from __future__ import annotations

import json
import re
import sqlite3
import subprocess
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("ompl")
pytest.importorskip("fcl")


def _run(tmp_path, *extra, sets=("bookshelf_small",)):
    from planning_collision.demos.bench import planning as benchmark

    out = tmp_path / "out"
    argv = ["--out", str(out), *extra]
    if sets:  # the first two problems of each MotionBenchMaker set, 0.5 s each
        argv += ["--sets", *sets, "--n", "2", "--time", "0.5"]
    assert benchmark.main(argv) == 0
    rows = [json.loads(line) for line in (out / "runs.jsonl").read_text().splitlines()]
    return out, rows


def _database(out, tmp_path):
    """The database OMPL's own console script builds from the benchmark's logs."""
    from planning_collision.demos.bench.reports import statistics_command

    logs = sorted((out / "logs").glob("*.log"))
    db = tmp_path / "arena.db"
    cmd = statistics_command()
    assert Path(cmd[0]).name == "ompl_benchmark_statistics"  # the ompl wheel's console script
    subprocess.run([*cmd, "-d", str(db), *map(str, logs)], check=True, capture_output=True)
    return sqlite3.connect(db)


def test_every_run_of_every_set_reaches_ompls_database(tmp_path, capsys):
    sets = ("bookshelf_small", "table_pick")
    out, rows = _run(tmp_path, "--validators", "dichotomy", "fcl", sets=sets)
    assert len(rows) == 8 and not any("error" in r for r in rows)
    # the first two problems of each set were run (a task's index is the position in the set)
    assert sorted({r["problem"] for r in rows}) == [
        "bookshelf_small/0001",
        "bookshelf_small/0002",
        "table_pick/0001",
        "table_pick/0002",
    ]
    ours = [r for r in rows if r["validator"] == "dichotomy"]
    assert all(r["solved"] for r in ours)
    assert all(r["collides"] is False for r in ours)  # certified paths, re-checked on meshes
    for con in (_database(out, tmp_path), sqlite3.connect(out / "benchmark.db")):
        # one experiment per set, each header saying 2 runs per planner, above its 4 runs
        got = con.execute(
            "select e.name, e.runcount, count(r.id) from experiments e "
            "join runs r on r.experimentid = e.id group by e.id order by e.name"
        ).fetchall()
        assert got == [("bookshelf_small", 2, 4), ("table_pick", 2, 4)]
        names = {n for (n,) in con.execute("select name from plannerConfigs")}
        assert names == {"RRTConnect[dichotomy]", "RRTConnect[fcl]"}
        solved = con.execute(
            "select e.name, p.name, r.problem, r.solved from runs r join experiments e "
            "on e.id = r.experimentid join plannerConfigs p on p.id = r.plannerid"
        ).fetchall()
        assert sorted(solved) == sorted(
            (r["set"], f"RRTConnect[{r['validator']}]", r["index"], int(r["solved"])) for r in rows
        )
    summary = (out / "summary.md").read_text()
    assert "| bookshelf_small | RRTConnect[dichotomy] | 2/2 |" in summary
    assert "| table_pick | RRTConnect[dichotomy] | 2/2 |" in summary
    assert "| all | RRTConnect[dichotomy] | 4/4 |" in summary
    # the per-problem ratio, printed when both validators solve a problem
    fcl_solved = any(r["solved"] for r in rows if r["validator"] == "fcl")
    assert ("x faster than RRTConnect[fcl]" in summary) == fcl_solved
    assert "runs in" in capsys.readouterr().out


def _user_cell(tmp_path, **changes) -> Path:
    """A user's problem file: the planar arm from its URDF, a scene file with a mesh (posts)
    and a point cloud (a wall), two start/goal pairs, planners and validators."""
    import trimesh

    from planning_collision import robots

    trimesh.creation.cylinder(radius=0.12, height=0.3, sections=24).export(tmp_path / "post.stl")
    wall = [[-0.45, y, z] for y in np.linspace(-0.3, 0.3, 13) for z in np.linspace(-0.15, 0.15, 7)]
    post = {"type": "mesh", "file": "post.stl"}
    scene = {
        "format": "planning_collision.scene",
        "objects": [
            {"name": "post_low", "pose": {"position": [0.55, -0.33, 0]}, "shape": post},
            {"name": "post_high", "pose": {"position": [0.55, 0.33, 0]}, "shape": post},
            {"name": "wall", "shape": {"type": "pointcloud", "points": wall, "radius": 0.03}},
        ],
    }
    (tmp_path / "cell.json").write_text(json.dumps(scene))
    doc = {
        "name": "planar_cell",
        "robot": {
            "urdf": str(robots.urdf_path("planar_arm")),
            "fixed_joints": {"finger_joint": 0.015},
        },
        "scene": "cell.json",
        "problems": [
            {"name": "through_the_gap", "start": [1.5708, 0.3, 0.3], "goal": [0, 0, 0]},
            {"name": "back", "start": [0, 0, 0], "goal": [-1.5708, -0.3, -0.3]},
        ],
        "planners": ["RRTConnect"],
        "validators": ["dichotomy", "fcl"],
        "time": 0.5,
    }
    doc.update(changes)
    path = tmp_path / "problems.json"
    path.write_text(json.dumps(doc))
    return path


def test_the_benchmark_takes_a_users_problem_file(tmp_path):
    out, rows = _run(tmp_path, "--problems", str(_user_cell(tmp_path)), sets=())
    # the file's planners and validators, both problems, one experiment named by the file
    assert sorted((r["problem"], r["validator"]) for r in rows) == [
        ("planar_cell/back", "dichotomy"),
        ("planar_cell/back", "fcl"),
        ("planar_cell/through_the_gap", "dichotomy"),
        ("planar_cell/through_the_gap", "fcl"),
    ]
    assert not any("error" in r for r in rows)
    assert {r["time_limit"] for r in rows} == {0.5}  # the file's time limit
    ours = [r for r in rows if r["validator"] == "dichotomy"]
    assert all(r["solved"] and r["collides"] is False for r in ours)
    con = _database(out, tmp_path)
    assert con.execute(
        "select e.name, e.runcount, count(r.id) from experiments e join runs r "
        "on r.experimentid = e.id group by e.id"
    ).fetchall() == [("planar_cell", 2, 4)]


@pytest.mark.parametrize(
    "changes,match",
    [
        ({"robots": "panda"}, r"unknown keys \['robots'\]"),
        ({"scene": "nowhere.json"}, r"scene: no file .*nowhere\.json"),
        ({"robot": "r2d2"}, r"robot\.name: no robot 'r2d2' in the registry"),
        ({"planners": ["RRTFast"]}, r"planners: unknown \['RRTFast'\]"),
        ({"validators": ["mplib"]}, r"'planar_cell': the mplib baseline plans the Motion"),
        ({"time": 0}, r"time must be a number of seconds > 0, got 0"),
        ({"problems": [{"start": [0, 0, "x"], "goal": [0, 0, 0]}]}, r"problems\[0\]\.start"),
        ({"problems": [{"start": [0, 0], "goal": [0, 0]}]}, r"start has 2 values; robot .* has 3"),
    ],
)
def test_a_bad_problem_file_is_refused_naming_the_field_and_value(tmp_path, changes, match, capsys):
    from planning_collision.demos.bench import planning as benchmark

    path = _user_cell(tmp_path, **changes)
    with pytest.raises(SystemExit) as e:
        benchmark.main(["--problems", str(path), "--out", str(tmp_path / "out")])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert re.search(match, err), err
    assert str(path) in err or "planar_cell" in err


def test_the_python_fcl_oracle_sees_a_cloud_as_balls_and_a_mesh_as_its_triangles(tmp_path, rng):
    """The benchmark's independent re-check (testing.fcl_robot) on the user cell: it agrees
    with the checker wherever the robot is not grazing an obstacle (the checker's link models
    contain the links, so it may only call more states colliding)."""
    from planning_collision import CollisionChecker
    from planning_collision.demos.bench.problems import problem_file
    from planning_collision.testing.fcl_robot import FclRobot

    bset = problem_file(_user_cell(tmp_path))
    robot, scene = bset.robot(), bset.scene(0)
    oracle, checker = FclRobot(robot, scene), CollisionChecker(robot, scene)
    Q = robot.random_configurations(300, rng)
    fcl_hits = np.array([oracle.collides(q) for q in Q])
    ours = ~checker.is_valid_batch(Q)
    assert 30 < fcl_hits.sum() < 270  # the cell is neither empty nor full
    assert not np.any(fcl_hits & ~ours)  # never free where the exact geometry collides
    grazing = [checker.clearance(q) for q in Q[ours & ~fcl_hits]]
    assert all(d < 1e-3 for d in grazing), grazing  # extra hits only within 1 mm of contact


def test_the_planning_benchmark_rechecks_paths_once_every_run_is_timed(tmp_path, monkeypatch):
    """python-fcl's objects made and freed between timed runs slowed the next runs: every
    run is planned first, then every path re-checked (a path that misses its goal counts as
    colliding); the rows keep neither paths nor sources."""
    from planning_collision.demos.bench import planning as benchmark

    calls = []
    plan, recheck = benchmark._plan, benchmark.recheck

    def planned(task, *world):
        calls.append("plan")
        row, Q = plan(task, *world)
        if Q is not None and task["index"] == 1:  # the second problem's path stops short
            Q = Q[:-1]
        return row, Q

    monkeypatch.setattr(benchmark, "_plan", planned)
    monkeypatch.setattr(benchmark, "recheck", lambda *a: calls.append("recheck") or recheck(*a))
    _, rows = _run(tmp_path, "--validators", "dichotomy", "--workers", "1", sets=("table_pick",))
    assert calls.count("plan") == 2 and calls[:2] == ["plan", "plan"]
    assert set(calls[2:]) <= {"recheck"}  # (a short path is refused without re-checking)
    assert [(r["index"], r["collides"]) for r in rows] == [(0, False), (1, True)]
    assert not any("path" in r or "source" in r for r in rows)


def test_local_workers_and_ray_run_the_same_tasks(tmp_path):
    pytest.importorskip("ray")
    _, local = _run(tmp_path / "local", "--validators", "dichotomy", "--workers", "2")
    _, ray_rows = _run(tmp_path / "ray", "--validators", "dichotomy", "--ray", "local")
    key = [(r["set"], r["index"], r["validator"]) for r in local]
    assert key == [(r["set"], r["index"], r["validator"]) for r in ray_rows]
    rows = local + ray_rows
    assert not any("error" in r for r in rows)
    assert any(r["solved"] for r in rows)  # two processes share two cores: some may time out
    assert all(r["collides"] is False for r in rows if r["solved"])


def test_the_checker_benchmark_runs(capsys):
    from planning_collision.demos.bench import checker as bench_checker

    argv = ["--problems", "1", "--configs", "80", "--peer-configs", "8", "--edges", "40"]
    assert bench_checker.main([*argv, "--peer-edges", "4"]) == 0
    out = capsys.readouterr().out
    assert "python-fcl pipeline" in out and "dichotomy (certified)" in out and "cache=False" in out
    assert "free edges by cost" in out and "90%-100%" in out
    floor = re.search(r"over no obstacle ([\d.]+) / ([\d.]+) \((\d+)\)", out)
    assert floor and 0.0 < float(floor[1]) < 1e4 and int(floor[3]) > 0, out
    # the edge table's ratio to the peer is a ratio of times in one unit (a unit slip once
    # printed 6,617,043x): both sides are tens to thousands of microseconds
    ratios = [
        float(line.split()[-1].rstrip("x"))
        for line in out.splitlines()
        if "edges)" not in line and line.rstrip().endswith("x") and "certified" in line
    ]
    assert ratios and all(0.01 < r < 1000.0 for r in ratios), ratios


def test_the_setup_benchmark_times_every_part_of_every_problem(capsys):
    from planning_collision.demos.bench import setup as bench_setup

    res = bench_setup.measure(["box", "cage"], n=2, repeats=2)
    assert res["obstacles"] and len(res["obstacles"]) == 4
    for path, parts in bench_setup.PARTS.items():
        got = res[path]
        for part in (*parts, "total"):
            assert len(got[part]) == 4 and all(0.0 < t < 1.0 for t in got[part]), part
        for k in range(4):  # a problem's total is the sum of its parts (medians of 2: means)
            assert got["total"][k] == pytest.approx(sum(got[p][k] for p in parts))
    assert bench_setup.main(["--sets", "box", "--n", "1", "--repeats", "1", "--evict", "1"]) == 0
    out = capsys.readouterr().out
    assert all(part in out for part in (*bench_setup.OLD, *bench_setup.NEW, "total"))
    assert "each after 1 MB of other data read" in out


def test_the_certification_script_finds_no_false_free_edge(capsys):
    from planning_collision.demos.dev import certify

    argv = ["--problems", "1", "--edges-per-world", "24", "--mesh-edges", "2"]
    assert certify.main(argv) == 0
    assert "no edge called free collides" in capsys.readouterr().out


def test_the_vamp_benchmark_counts_our_checks_and_says_what_one_costs():
    from planning_collision import robots
    from planning_collision.demos.bench import vamp as bench_vamp
    from planning_collision.io import load_mbm, mbm_path

    problems = [p for p in load_mbm(str(mbm_path("box"))).problems if p.valid][:2]
    robot = robots.load("panda", fixed_joints=problems[0].fixed_joints)
    reused = bench_vamp.Reused(robot, problems[0], bench_vamp.PLANNER, None)
    ours = [
        bench_vamp.ours(robot, p, 5.0, None, reused=r) for p in problems for r in (None, reused)
    ]
    assert all(r["solved"] and r["checks"] >= 2 for r in ours)  # its start state, an edge
    ours = ours[1::2]  # the reused setup, as the benchmark runs by default
    for p, r in zip(problems, ours, strict=True):  # this problem's path, not the last one's
        assert np.allclose(r["path"][0], p.start) and np.allclose(r["path"][-1], p.goals[0])
    # VAMP's side as its runner reports it (its planner's iterations), made up here
    rows = [
        {"ours": {"solve": r["solve"], "checks": r["checks"]},
         "vamp": {"solve": 1e-3 * (k + 1), "checks": 500.0}}
        for k, r in enumerate(ours)
    ]  # fmt: skip
    out = bench_vamp._checks_table([{"set": "box", "rows": rows}]).splitlines()
    cells = [line.strip("| ").split(" | ") for line in out[2:]]
    assert [c[0] for c in cells] == ["box", "all"]
    per = [r["solve"] / r["checks"] * 1e6 for r in ours]
    for c in cells:
        assert float(c[1]) == pytest.approx(np.median([r["checks"] for r in ours]), abs=0.51)
        assert float(c[2]) == pytest.approx(np.median(per), abs=0.051)  # printed to 0.1
        assert (c[3], c[4]) == ("500", "3.0")  # 1 and 2 ms over 500 iterations: 2 and 4 us
    # the colliding paths, counted once every set is timed: a returned path that does not end
    # at its goal counts as colliding; the paths, robot and problems are dropped afterwards
    short = ours[0]["path"][:-1]
    rows = [
        {"problem": p.name, "ours": {"paths": [r["path"], short] if k == 0 else [r["path"]]},
         "vamp": {"paths": []}}
        for k, (p, r) in enumerate(zip(problems, ours, strict=True))
    ]  # fmt: skip
    res = [{"set": "box", "rows": rows, "robot": robot, "problems": problems}]
    bench_vamp.count_colliding(res, 0.005)
    assert set(res[0]) == {"set", "rows"}
    assert [(r["ours"]["colliding"], r["vamp"]["colliding"]) for r in rows] == [(1, 0), (0, 0)]
    assert all("paths" not in r["ours"] for r in rows)


def test_the_planners_benchmark_draws_a_world_with_free_configurations_again(capsys):
    """Seed 1 draws a box onto the Panda's first link for its first world (no free
    configuration: the search for start/goal pairs never ended); the benchmark draws again."""
    from planning_collision.demos.bench import planners

    argv = ["--robots", "panda", "--n", "2", "--repeats", "1", "--seed", "1", "--time", "2"]
    assert planners.main(argv) == 0
    out = capsys.readouterr().out
    assert "| panda | 7 (0) | 2/2 / 2/2 |" in out and out.rstrip().endswith("1 repeats)")


def test_the_planners_benchmark_counts_the_paths_its_checks_refuse(monkeypatch, capsys):
    """The paths are checked once every solve is timed: a path the dense check refuses is
    counted in the last column, for both planners (each solved once here)."""
    from planning_collision.demos.bench import planners

    seen = []

    def refuse(checker, Q, step=0.001):
        seen.append(len(Q))
        return False

    monkeypatch.setattr(planners, "_dense_free", refuse)
    argv = ["--robots", "panda", "--n", "1", "--repeats", "1", "--time", "2"]
    assert planners.main(argv) == 0
    row = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("| panda |"))
    assert row.startswith("| panda | 7 (0) | 1/1 / 1/1 |") and row.endswith("| 2 |")
    assert len(seen) == 2 and min(seen) >= 2


def test_the_planners_benchmark_says_when_a_world_has_no_start_goal_pairs():
    import planning_collision as pc
    from planning_collision import robots
    from planning_collision.demos.bench import planners

    robot = robots.load("panda")
    scene = pc.Scene()
    scene.add(pc.Box((0.4, 0.4, 0.4)), np.eye(4))  # around the base: nothing is free
    checker = pc.CollisionChecker(robot, scene)
    with pytest.raises(RuntimeError, match=r"0 of 2 start/goal pairs found in 640 samples"):
        planners._pairs(robot, checker, 2, np.random.default_rng(0), rounds=10)


def test_the_end_to_end_parts_nest_add_up_and_are_unwrapped_after(capsys):
    """demos/dev/e2e_parts.py: each part of PARTS timed on a problem, nested parts within
    their parents, the top-level parts within the problem's end-to-end time, and every
    function as it was once it is done."""
    from planning_collision.demos.dev import e2e_parts
    from planning_collision.geometry.arrays import ObstacleArrays
    from planning_collision.kernels.planner import rrt_connect
    from planning_collision.plugins import ompl as plugin

    before = (ObstacleArrays.__dict__["from_records"], plugin.solve, rrt_connect.rrt_connect)
    parts, total = e2e_parts.measure("table_pick", 2, 1)
    assert set(parts) == {label for label, *_ in e2e_parts.PARTS}
    assert all(v > 0.0 for v in parts.values()) and set(total) == {"ours"}
    assert parts["    compiled search"] <= parts["  planner's solve"] <= parts["solve"]
    assert parts["    start and goal via OMPL"] <= parts["  planner's solve"]
    assert parts["  checker's new model"] <= parts["set_problem"]
    top = [label for label, *_ in e2e_parts.PARTS if not label.startswith(" ")]
    assert sum(parts[k] for k in top) <= total["ours"]
    after = (ObstacleArrays.__dict__["from_records"], plugin.solve, rrt_connect.rrt_connect)
    assert all(a is b for a, b in zip(before, after, strict=True))
    print(e2e_parts.table("table_pick", parts, total))
    out = capsys.readouterr().out
    assert out.startswith("table_pick: ours ") and "compiled search" in out


PERF_REPORT = """\
# Overhead  Shared Object  Symbol
# ........  .............  ......
#
    22.10%  [JIT] tid 42  [.] _ZN18planning_collision7kernels6convex3gjk8gjk_coreB4v1B2abE5AIdE
     3.00%  [JIT] tid 42  [.] _ZN18planning_collision7kernels6convex3gjk4_s2dB4v7E5ArrayIdE
     8.20%  libpython3.11.so.1.0  [.] _PyEval_EvalFrameDefault
     4.30%  libm.so.6  [.] __sincos_fma
     1.00%  [kernel.kallsyms]  [k] exc_page_fault
     0.50%  [JIT] tid 42  [.] 0x00007f560f47adff
"""


def test_the_kernel_profile_names_each_sample_by_its_kernel_function():
    """demos/dev/kernel_profile.py reads perf's report: samples in numba's code by kernel
    function and folder, the rest by what runs it."""
    from planning_collision.demos.dev import kernel_profile

    functions, groups = kernel_profile.aggregate(PERF_REPORT)
    assert functions == pytest.approx({
        "convex.gjk.gjk_core": 22.1, "convex.gjk._s2d": 3.0, "Python interpreter": 8.2,
        "libm __sincos_fma": 4.3, "operating system": 1.0,
        "(unnamed: numba's wrappers and helpers)": 0.5,
    })  # fmt: skip
    assert groups == pytest.approx({
        "kernels/convex": 25.1, "Python": 8.2, "libm": 4.3, "operating system": 1.0,
        "other compiled code": 0.5,
    })  # fmt: skip
    out = kernel_profile.table(functions, groups, top=2)
    assert "| convex.gjk.gjk_core | 22.1 |" in out and "_s2d" not in out.split("| where")[0]
    assert "| kernels/convex | 25.1 |" in out


def test_a_numba_symbol_reads_as_its_python_name():
    mangled = (
        "_ZN18planning_collision7kernels6convex3gjk8gjk_coreB4v123B52c8tJTIeFIjxB2IKSgI4Crv"
        "E5ArrayIdLi1E1C7mutable7alignedE"
    )
    from planning_collision.demos.dev.kernel_profile import numba_symbol

    assert numba_symbol(mangled) == "planning_collision.kernels.convex.gjk.gjk_core"
    assert numba_symbol("memcpy") == "memcpy"
