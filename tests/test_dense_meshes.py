"""Dense link meshes: a robot's first build says where it is all along, and what made a
40,000-triangle link take half a minute is cut (docs: README "Robots").

Progress is checked by work done, not by time: between two progress reports a build scans
at most `convexify.CHUNK` triangles and runs V-HACD at most once, and V-HACD (which holds
the GIL for seconds) runs in a child process so that the stderr notices can speak meanwhile.
"""

import threading
import time

import numpy as np
import pytest
import trimesh

import planning_collision as pc
from planning_collision import notices
from planning_collision.checker import bounds as bounds_module
from planning_collision.kernels.convex.containment import triangle_piece_violation
from planning_collision.robot import Robot, convexify, vhacd
from planning_collision.robot import geometry as geometry_module

# a base box, an arm whose collision mesh is a dense ring (not convex: V-HACD), a tip
DENSE = """<?xml version="1.0"?>
<robot name="densebot">
  <link name="base"><collision><geometry><box size="0.2 0.2 0.1"/></geometry></collision></link>
  <link name="arm"><collision><origin xyz="0 0 0.2"/>
    <geometry><mesh filename="ring.stl"/></geometry></collision></link>
  <link name="tip"><collision><geometry><mesh filename="ring.stl"/></geometry></collision>
    <collision><origin xyz="0 0 0.1"/><geometry><mesh filename="ring.stl"/></geometry></collision>
  </link>
  <joint name="j1" type="revolute"><parent link="base"/><child link="arm"/>
    <origin xyz="0 0 0.05"/><axis xyz="0 0 1"/><limit lower="-3" upper="3" effort="1" velocity="1"/>
  </joint>
  <joint name="j2" type="revolute"><parent link="arm"/><child link="tip"/>
    <origin xyz="0.3 0 0.2"/><axis xyz="0 1 0"/>
    <limit lower="-3" upper="3" effort="1" velocity="1"/>
  </joint>
</robot>
"""


def _ring(sections: int = 40, splits: int = 4) -> trimesh.Trimesh:
    ring = trimesh.creation.annulus(r_min=0.06, r_max=0.1, height=0.04, sections=sections)
    v, f = ring.vertices, ring.faces
    for _ in range(splits):  # flat splits: the same surface, 4x the triangles each time
        v, f = trimesh.remesh.subdivide(v, f)
    return trimesh.Trimesh(v, f, process=False)


@pytest.fixture(scope="module")
def densebot(tmp_path_factory):
    d = tmp_path_factory.mktemp("densebot")
    ring = _ring()
    assert len(ring.faces) > 40_000
    ring.export(d / "ring.stl")
    (d / "densebot.urdf").write_text(DENSE)
    return d / "densebot.urdf"


@pytest.fixture(scope="module")
def sparsebot(tmp_path_factory):
    """densebot with a ring of 576 triangles: a build V-HACD still runs in, shorter."""
    d = tmp_path_factory.mktemp("sparsebot")
    _ring(sections=24, splits=1).export(d / "ring.stl")
    (d / "densebot.urdf").write_text(DENSE)
    return d / "densebot.urdf"


def test_a_dense_link_reports_progress_at_least_every_chunk_of_triangles(densebot, monkeypatch):
    work = {"triangles": 0, "vhacd": 0, "worst_triangles": 0, "worst_vhacd": 0}
    scan, decompose = convexify.triangle_piece_violation, convexify.convex_decomposition

    def counted_scan(tris, *a):
        work["triangles"] += len(tris)
        return scan(tris, *a)

    def counted_decompose(*a):
        work["vhacd"] += 1
        return decompose(*a)

    def progress(done, total, message):
        work["worst_triangles"] = max(work["worst_triangles"], work["triangles"])
        work["worst_vhacd"] = max(work["worst_vhacd"], work["vhacd"])
        work["triangles"] = work["vhacd"] = 0
        calls.append((done, total, message))

    calls = []
    monkeypatch.setattr(convexify, "triangle_piece_violation", counted_scan)
    monkeypatch.setattr(convexify, "convex_decomposition", counted_decompose)
    robot = Robot.from_urdf(densebot, cache_dir=False, compute_acm=False, progress=progress)
    progress(0, 0, "end")  # what the last report left
    assert work["worst_triangles"] <= convexify.CHUNK, work
    assert work["worst_vhacd"] <= 1, work
    # the build was long enough to need it: several chunks of a dense link were scanned
    links = [c for c in calls if c[1] == 3]
    assert sum("scanned" in m for _, _, m in links) >= 3, [m for _, _, m in links]
    # and the same mesh used three times was decomposed once
    assert sum("V-HACD of" in m for _, _, m in links) == 1
    assert len([p for p in robot.pieces if p.link == "tip"]) == 2 * len(
        [p for p in robot.pieces if p.link == "arm"]
    )


def _slow(monkeypatch, seconds: float):
    """Each link decomposition takes `seconds` longer (a dense link, without its cost); a
    mesh decomposed before is not decomposed again (its pieces are kept: the build around
    it, and what it says, are what these tests read)."""
    real = geometry_module.decompose_mesh
    done = {}

    def slow(vertices, faces, *a, **k):
        time.sleep(seconds)
        key = (np.asarray(vertices).tobytes(), np.asarray(faces).tobytes(), a, tuple(k.items()))
        if key not in done:
            done[key] = real(vertices, faces, *a, **k)
        return done[key]

    monkeypatch.setattr(geometry_module, "decompose_mesh", slow)


def test_a_long_build_without_a_terminal_speaks_on_stderr_as_compiles_do(
    sparsebot, monkeypatch, capsys
):
    """A build longer than QUIET speaks, ticks while it runs and names where it is; each
    build here is made long by `_slow` (its meshes' V-HACD, memoised, sleeps 0.2 s a mesh),
    so the quiet ones below would have spoken too."""
    monkeypatch.setattr(notices, "QUIET", 0.05)
    monkeypatch.setattr(notices, "TICK", 0.1)
    monkeypatch.setenv(notices.NOTICE_ENV, "1")
    _slow(monkeypatch, 0.2)
    Robot.from_urdf(sparsebot, cache_dir=False, compute_acm=False)  # progress=None, no tty
    err = capsys.readouterr().err
    assert "planning_collision: building link models of 'densebot' (once, then cached)" in err
    assert "planning_collision: still building link models of 'densebot'" in err
    assert "planning_collision: built link models of 'densebot': 3 links" in err
    # where it is: the link and the mesh's step
    assert "link 'arm': ring.stl:" in err

    # quiet when asked: progress=False, or the notices' switch
    Robot.from_urdf(sparsebot, cache_dir=False, compute_acm=False, progress=False)
    assert capsys.readouterr().err == ""
    monkeypatch.setenv(notices.NOTICE_ENV, "0")
    Robot.from_urdf(sparsebot, cache_dir=False, compute_acm=False)
    assert capsys.readouterr().err == ""


def test_the_checker_announces_the_outer_hulls_of_a_new_robot(densebot, monkeypatch, capsys):
    monkeypatch.setattr(notices, "QUIET", 0.0)
    monkeypatch.setenv(notices.NOTICE_ENV, "1")
    robot = Robot.from_urdf(densebot, cache_dir=False, compute_acm=False, progress=False)
    monkeypatch.setattr(bounds_module, "_OUTER", {})  # as in a new process
    real = bounds_module.outer_hull
    monkeypatch.setattr(bounds_module, "outer_hull", lambda s: (time.sleep(0.02), real(s))[1])
    pc.CollisionChecker(robot, pc.Scene(), self_tables=False)
    err = capsys.readouterr().err
    assert "planning_collision: building outer hulls of 'densebot'" in err
    assert "planning_collision: built outer hulls of 'densebot'" in err


def test_vhacd_runs_in_a_child_process_and_gives_what_it_gives_in_process():
    ring = _ring(sections=24, splits=1)
    ticks = []
    stop = threading.Event()

    def tick():
        while not stop.wait(0.01):
            ticks.append(time.perf_counter())

    threading.Thread(target=tick, daemon=True).start()
    t0 = time.perf_counter()
    child = vhacd.convex_decomposition(ring, 8)
    t1 = time.perf_counter()
    stop.set()
    # the GIL was free: the other thread ticked through most of the run (in process, vhacdx
    # holds it: no tick at all)
    assert sum(t0 < t < t1 for t in ticks) >= 0.5 * (t1 - t0) / 0.01
    v = np.asarray(ring.vertices)
    f = np.asarray(ring.faces)
    inproc = [trimesh.Trimesh(pv, pf) for pv, pf in vhacd._in_process(v, f, 8)]
    assert len(child) == len(inproc) >= 2
    for a, b in zip(child, inproc, strict=True):
        assert np.array_equal(a.vertices, b.vertices) and np.array_equal(a.faces, b.faces)


def test_a_cover_round_scans_only_the_tiles_the_last_one_left_outside(monkeypatch):
    ring = _ring(sections=24, splits=2)
    v, f = np.asarray(ring.vertices), np.asarray(ring.faces)
    got = convexify.decompose_mesh(v, f, 1.1, 8, cover=False)
    size = float(np.linalg.norm(v.max(axis=0) - v.min(axis=0)))
    tiles = convexify.surface_tiles(
        got.pieces, v[f], convexify.GROW_REL * size, convexify.SPLIT_REL * size
    )
    scans = []
    real = convexify._least_violated

    def seen(tris, table, tol, *a, **k):
        best, arg = real(tris, table, tol, *a, **k)
        scans.append((len(tris), int((best > tol).sum())))
        return best, arg

    monkeypatch.setattr(convexify, "_least_violated", seen)
    pieces = convexify.cover_surface(got.pieces, tiles)
    assert len(scans) >= 2 and scans[0][0] == len(tiles) and scans[0][1] > 0
    for (_, out), (n, _) in zip(scans, scans[1:], strict=False):
        assert n == out  # the next round: only those
    assert scans[-1][1] == 0
    # and every tile is inside a piece at the end (the guarantee, checked from scratch)
    table = convexify._plane_table(pieces)
    best = np.empty(len(tiles))
    arg = np.empty(len(tiles), np.int64)
    triangle_piece_violation(tiles, *table, 0.0, np.full(len(tiles), -1), best, arg)
    assert best.max() <= convexify.COVER_TOL


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_hinted_scan_finds_a_piece_within_tol_exactly_when_one_exists(seed):
    """The kernel against numpy: with any hints, a triangle gets a piece within tol when
    some piece holds it within tol, and otherwise the least violation over all pieces."""
    rng = np.random.default_rng(seed)
    pieces = [rng.normal(size=(20, 3)) * 0.3 + rng.normal(size=3) for _ in range(6)]
    tris = rng.normal(size=(400, 3, 3)) * 0.5
    tris[:200] = tris[:200] * 0.05 + rng.normal(size=(200, 1, 3)) * 0.3  # small ones
    planes, start = convexify._plane_table(pieces)
    viol = np.stack(
        [
            (tris.reshape(-1, 3) @ planes[a:b, :3].T + planes[a:b, 3]).max(axis=1)
            .reshape(-1, 3).max(axis=1)
            for a, b in zip(start[:-1], start[1:], strict=True)
        ],
        axis=1,
    )  # fmt: skip
    for tol in (0.0, 0.05):
        for hint in (np.full(400, -1), rng.integers(-1, 6, size=400)):
            best = np.empty(400)
            arg = np.empty(400, np.int64)
            triangle_piece_violation(tris, planes, start, tol, hint, best, arg)
            inside = viol.min(axis=1) <= tol
            assert np.array_equal(best <= tol, inside)
            assert np.all(viol[np.arange(400), arg][inside] <= tol)
            assert np.allclose(best[~inside], viol.min(axis=1)[~inside], rtol=0, atol=1e-12)


def test_outer_hulls_built_incrementally_equal_the_hulls_measured_whole():
    """Each greedy step measured only the faces its new point made: the same points are
    picked as when every step measures every vertex against the whole hull."""
    from planning_collision.checker.bounds import OUTER_POINTS, _distances_to_hull, outer_hull

    rng = np.random.default_rng(3)
    for _ in range(4):
        d = rng.normal(size=(400, 3))
        pts = d / np.linalg.norm(d, axis=1, keepdims=True) * rng.uniform(0.01, 0.2, size=3)
        shape = pc.Convex(pts)
        v = np.asarray(shape.hull.vertices, float)
        assert len(v) > 3 * OUTER_POINTS
        c = v.mean(axis=0)
        idx = []
        for ax in np.linalg.svd(v - c)[2]:
            t = (v - c) @ ax
            idx += [j for j in (int(t.argmax()), int(t.argmin())) if j not in idx]
        dist = _distances_to_hull(v[idx], v)
        while len(idx) < OUTER_POINTS:
            idx.append(int(dist.argmax()))
            dist = _distances_to_hull(v[idx], v)
        got = outer_hull(shape)
        assert np.array_equal(np.asarray(got.points), v[idx])
        assert got.radius == pytest.approx(float(dist.max()), rel=0, abs=1e-15)


def test_with_a_terminal_the_bar_moves_within_a_link(densebot, monkeypatch, capsys):
    """progress=None on a terminal: a tqdm bar, whose text says the link's mesh and phase and
    whose clock the ticker moves while one long call runs (no lines on stderr then)."""
    from planning_collision.robot import progress as progress_module

    class Bar:  # what Progress uses of a tqdm bar
        def __init__(self, total, desc):
            self.n, self.texts, self.closed = 0, [], False

        def set_postfix_str(self, text):
            self.texts.append(text)

        def close(self):
            self.closed = True

    bars = []
    monkeypatch.setattr(
        progress_module, "_tqdm_or_none", lambda t, d: bars.append(Bar(t, d)) or bars[-1]
    )
    monkeypatch.setattr(notices, "QUIET", 0.05)
    monkeypatch.setattr(notices, "TICK", 0.1)
    _slow(monkeypatch, 0.5)
    Robot.from_urdf(densebot, cache_dir=False, compute_acm=False)
    (bar,) = bars
    assert bar.closed and bar.n == 3
    assert any("link 'arm': ring.stl: surface" in t for t in bar.texts), bar.texts
    assert any(t.endswith(" s)") for t in bar.texts), bar.texts  # the ticker's clock
    assert "planning_collision:" not in capsys.readouterr().err
