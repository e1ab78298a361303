"""The model cache (robot/cache.py): an entry that is truncated, empty, of another build,
edited, or consistent with a recomputed checksum but not with itself is rebuilt after one
warning and gives the answers an intact one gives; a cache directory (or file) others may
write is not read; a directory the cache makes is private."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from planning_collision.robot import acm as acm_module
from planning_collision.robot import geometry as geometry_module
from planning_collision.robot.cache import CACHE_ENV

ROOT = Path(__file__).resolve().parents[1]

# Each entry kind damaged every way, one after the other, in a fresh interpreter (a table
# whose sizes disagree crashed the process), the process's own copies dropped between
# loads. Prints one line per case: the case, whether the answers equal the intact cache's,
# how many warnings named the file, and whether the entry reads back intact afterwards.
_DAMAGE = """
import json, logging, sys
from pathlib import Path
import numpy as np
import planning_collision as pc
from planning_collision import robots
from planning_collision.checker import bounds, model, self_tables
from planning_collision.robot import cache
from planning_collision.demos.scenes import panda_shelf

KIND, D = sys.argv[1], Path(sys.argv[2])
warnings = []
logging.getLogger("planning_collision").addHandler(
    type("H", (logging.Handler,), {"emit": lambda self, r: warnings.append(r.getMessage())})()
)


def fresh():  # what a new process would have: nothing but the files
    self_tables._TABLES.clear()
    model._BOUNDS.clear()
    bounds._OUTER.clear()
    bounds._CAPSULES.clear()
    cache._warned.clear()  # warned once per process: as if each load were a new one


if KIND in ("pairtable", "outer"):
    robot, scene, _, _ = panda_shelf()
    Q = robot.random_configurations(2000, 5)
    load = lambda: panda_shelf()[0]
    answers = lambda r: pc.CollisionChecker(r, scene).is_valid_batch(Q).tolist()
else:
    urdf = robots.urdf_path("planar_arm")
    Q = None
    load = lambda: pc.Robot.from_urdf(urdf, cache_dir=D, fixed_joints={"finger_joint": 0.015})
    answers = lambda r: (r.acm.entries(), [(p.link, np.asarray(p.pose).tolist()) for p in r.pieces])

fresh()
want = answers(load())
files = sorted(D.glob(f"{KIND}-*"))
assert files, list(D.iterdir())
f = max(files, key=lambda p: p.stat().st_size)
intact = f.read_bytes()
key = f.stem if KIND in ("pairtable", "outer") else None


def arrays():
    with np.load(f) as z:
        return {k: z[k] for k in z.files}


def edited(change):  # the content changed, the checksum left as it was
    a = arrays()
    change(a)
    np.savez(f, **a)


def rewritten(change):  # changed and given a valid checksum, as whoever writes there could
    from planning_collision.robot.cache import write_entry

    a = arrays()
    k = str(a.pop("key"))
    a.pop("checksum")
    change(a)
    write_entry(f, k, a)


def js(change):
    d = json.loads(intact)
    change(d)
    f.write_text(json.dumps(d))


def allowed_more(d):
    d["allowed"] = d["allowed"] + [["link1", "link3", "never"]]


def unknown_link(d):
    d["allowed"][0][0] = "no_such_link"
    from planning_collision.robot.cache import _json_checksum
    body = {k: v for k, v in d.items() if k not in ("key", "checksum")}
    d["checksum"] = _json_checksum(d["key"], body)


cases = {
    "truncated": lambda: f.write_bytes(intact[: len(intact) // 2]),
    "empty": lambda: f.write_bytes(b""),
    "garbage": lambda: f.write_bytes(b"PK\\x03\\x04" + bytes(range(256)) * 4),
}
if KIND == "pairtable":
    cases["bounds raised"] = lambda: edited(lambda a: a.update(lb=a["lb"] + 0.05))
    cases["bounds shortened"] = lambda: rewritten(lambda a: a.update(lb=a["lb"][:-100]))
    cases["grid widened"] = lambda: rewritten(lambda a: a.update(n=a["n"] * 2))
    cases["bounds raised, checksum redone"] = lambda: rewritten(
        lambda a: a.update(lb=np.full_like(a["lb"], 1.0)))
if KIND == "outer":
    cases["hulls halved"] = lambda: edited(lambda a: a.update(points=0.5 * a["points"]))
    cases["hulls halved, checksum redone"] = lambda: rewritten(
        lambda a: a.update(points=0.5 * a["points"]))
    cases["radii shrunk, checksum redone"] = lambda: rewritten(
        lambda a: a.update(radii=0.0 * a["radii"]))
    cases["counts shifted, checksum redone"] = lambda: rewritten(
        lambda a: a.update(counts=np.roll(a["counts"], 1)))
    cases["hull faces turned inside out, checksum redone"] = lambda: rewritten(
        lambda a: a.update(hull_faces=a["hull_faces"][:, ::-1].copy()))
if KIND == "geometry":
    cases["sizes halved"] = lambda: edited(lambda a: a.update(params=0.5 * a["params"]))
    cases["kinds swapped, checksum redone"] = lambda: rewritten(
        lambda a: a.update(kind=a["kind"][::-1].copy()))
    cases["piece on another link, checksum redone"] = lambda: rewritten(
        lambda a: a.update(link=np.array(["nowhere"] * len(a["link"]))))
if KIND == "acm":
    cases["a pair allowed more"] = lambda: js(allowed_more)
    cases["unknown link, checksum redone"] = lambda: js(unknown_link)

for name, damage in cases.items():
    damage()
    fresh()
    warnings.clear()
    got = answers(load())
    named = sum(str(f) in w for w in warnings)
    from planning_collision.robot.cache import read_entry, read_json_entry

    if KIND == "acm":
        ok = read_json_entry(f, json.loads(f.read_text())["key"], "acm") is not None
    else:
        ok = read_entry(f, str(arrays()["key"]), KIND) is not None
    print(f"{name}|{int(got == want)}|{named}|{int(ok)}", flush=True)
"""


@pytest.mark.parametrize("kind", ["pairtable", "outer", "geometry", "acm"])
def test_a_damaged_or_tampered_cache_entry_is_rebuilt_with_one_warning(kind, tmp_path):
    """Today's failures: a truncated or empty self-pair table or outer-hull file made every
    later CollisionChecker fail (BadZipFile, EOFError), a table whose sizes disagree crashed
    the process (SIGSEGV) or changed verdicts (120 of 2,000), outer hulls scaled by 1/2
    changed 469 of 3,000: whoever could write the cache could make collisions free."""
    r = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(_DAMAGE), kind, str(tmp_path)],
        cwd=ROOT,
        env={**os.environ, CACHE_ENV: str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert r.returncode == 0, (r.stdout, r.stderr[-3000:])
    rows = [line.split("|") for line in r.stdout.splitlines()]
    assert len(rows) >= 5, r.stdout
    bad = [row for row in rows if row[1:] != ["1", "1", "1"]]
    assert not bad, (bad, r.stderr[-3000:])


@pytest.fixture
def arm_urdf():
    from planning_collision import robots

    return robots.urdf_path("planar_arm")


def _count_builds(monkeypatch) -> list:
    calls: list = []
    build, sample = geometry_module.build_link_geometry, acm_module.sample_acm

    def counted(f, what):
        def g(*a, **k):
            calls.append(what)
            return f(*a, **k)

        return g

    monkeypatch.setattr(geometry_module, "build_link_geometry", counted(build, "geometry"))
    monkeypatch.setattr(acm_module, "sample_acm", counted(sample, "acm"))
    return calls


def test_a_cache_directory_others_may_write_is_not_read(arm_urdf, tmp_path, monkeypatch, caplog):
    from planning_collision import Robot

    d = tmp_path / "shared"
    Robot.from_urdf(arm_urdf, cache_dir=d)  # an intact cache, then opened to everybody
    os.chmod(d, 0o777)
    calls = _count_builds(monkeypatch)
    with caplog.at_level(logging.WARNING, logger="planning_collision"):
        Robot.from_urdf(arm_urdf, cache_dir=d)
        Robot.from_urdf(arm_urdf, cache_dir=d)
    assert calls == ["geometry", "acm", "geometry", "acm"]  # built, never read
    said = [r for r in caplog.records if "others may write it" in r.getMessage()]
    assert len(said) == 1 and str(d) in said[0].getMessage()
    os.chmod(d, 0o700)
    calls.clear()
    Robot.from_urdf(arm_urdf, cache_dir=d)
    assert calls == []  # private again: read


def test_a_cache_file_others_may_write_is_not_read(arm_urdf, tmp_path, monkeypatch, caplog):
    from planning_collision import Robot

    d = tmp_path / "mine"
    Robot.from_urdf(arm_urdf, cache_dir=d)
    f = next(d.glob("geometry-*.npz"))
    os.chmod(f, 0o666)
    calls = _count_builds(monkeypatch)
    with caplog.at_level(logging.WARNING, logger="planning_collision"):
        Robot.from_urdf(arm_urdf, cache_dir=d)
    assert calls == ["geometry"]
    assert any(str(f) in r.getMessage() for r in caplog.records)


def test_the_cache_makes_its_directories_private(arm_urdf, tmp_path):
    from planning_collision import Robot

    d = tmp_path / "new" / "cache"
    Robot.from_urdf(arm_urdf, cache_dir=d)
    assert (os.stat(d).st_mode & 0o777) == 0o700
    assert sorted(p.name.split("-")[0] for p in d.iterdir()) == ["acm", "geometry"]


def test_an_entry_reads_back_only_for_its_key_and_content(tmp_path, caplog):
    from planning_collision.robot.cache import (
        read_entry,
        read_json_entry,
        write_entry,
        write_json_entry,
    )

    f = tmp_path / "t.npz"
    a = {"x": np.arange(5.0), "y": np.eye(3, dtype=np.int32)}
    assert write_entry(f, "k1", a)
    got = read_entry(f, "k1", "test table")
    assert got is not None and all(np.array_equal(got[k], a[k]) for k in a)
    with caplog.at_level(logging.WARNING):
        assert read_entry(f, "k2", "test table") is None  # another build's
    assert "other files or settings" in caplog.text
    assert read_entry(tmp_path / "none.npz", "k1", "test table") is None  # absent: quiet
    j = tmp_path / "t.json"
    assert write_json_entry(j, "k", {"a": [1, 2]}) and read_json_entry(j, "k", "x") == {"a": [1, 2]}


def test_an_entry_that_declares_huge_arrays_is_refused_before_they_are_allocated(
    tmp_path, caplog, monkeypatch
):
    from planning_collision.robot import cache

    f = tmp_path / "big.npz"
    cache.write_entry(f, "k", {"x": np.zeros(1000)})
    monkeypatch.setattr(cache, "MAX_ENTRY_BYTES", 4000)
    with caplog.at_level(logging.WARNING):
        assert cache.read_entry(f, "k", "test table") is None
    assert "more than 4000" in caplog.text


# ---- hulls from the cache (geometry/hull.py: their faces, proved on load) -----------------


def _collision_arrays(robot) -> dict:
    c = robot.collision
    return {
        **{f"table.{k}": getattr(c.table, k) for k in c.table._fields},
        "piece_link": c.piece_link,
        "piece_pose": c.piece_pose,
        "link_start": c.link_start,
        "link_radius": robot.link_radius,
    }


def _assert_same_arrays(a: dict, b: dict) -> None:
    assert a.keys() == b.keys()
    for k in a:
        x, y = np.asarray(a[k]), np.asarray(b[k])
        assert x.dtype == y.dtype and x.shape == y.shape and np.array_equal(x, y), k


def test_a_warm_load_gives_the_arrays_a_fresh_build_gives(
    example_robot_data, tmp_path, monkeypatch
):
    """The registry's Panda read from its cache entry, with qhull out of reach (hulls and
    outer hulls rebuilt from their stored faces), is the Panda built from its meshes, to the
    last bit of every array the kernels read."""
    from planning_collision import robots
    from planning_collision.checker import bounds

    fresh = robots.load("panda", cache_dir=False)
    monkeypatch.setattr(bounds, "_OUTER", {})
    monkeypatch.setattr(bounds, "_CAPSULES", {})
    f = tmp_path / "outer-panda.npz"
    fresh_bounds = bounds.piece_bounds(fresh.pieces, f)  # computed, and written to f
    bounds._OUTER.clear()
    bounds._CAPSULES.clear()
    monkeypatch.setitem(sys.modules, "scipy.spatial", None)  # importing it now fails
    warm = robots.load("panda")
    _assert_same_arrays(_collision_arrays(fresh), _collision_arrays(warm))
    warm_bounds = bounds.piece_bounds(warm.pieces, f)  # read from f
    for a, b in zip(fresh_bounds, warm_bounds, strict=True):
        if isinstance(a, np.ndarray):
            _assert_same_arrays({"poses": a}, {"poses": b})
        else:
            _assert_same_arrays(a._asdict(), b._asdict())


def test_hull_faces_that_are_not_the_hull_make_a_geometry_entry_unusable():
    from planning_collision import robots
    from planning_collision.geometry import Convex
    from planning_collision.io.urdf import read_urdf

    data = read_urdf(robots.urdf_path("free_flyer"))
    with np.load(next(robots.robot_dir("free_flyer").glob("geometry-*.npz"))) as z:
        entry = {k: z[k] for k in z.files if k not in ("key", "checksum")}
    pieces, _ = geometry_module._geometry_from(entry, data)
    assert any(isinstance(p.shape, Convex) for p in pieces)
    turned = dict(entry, hull_faces=entry["hull_faces"][:, ::-1].copy())
    with pytest.raises(ValueError, match="outside its hull faces"):
        geometry_module._geometry_from(turned, data)
    older = {k: v for k, v in entry.items() if not k.startswith("hull_")}
    with pytest.raises(ValueError, match="an older version wrote it"):
        geometry_module._geometry_from(older, data)


_WARM = """
import sys
import numpy as np
import planning_collision as pc
from planning_collision import robots

robot = robots.load("panda")
checker = pc.CollisionChecker(robot, pc.Scene())
q0 = np.array([0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785])
assert checker.is_valid(q0) and checker.check_edge(q0, q0 + 0.1).valid
print(sorted(m for m in sys.modules if m.startswith("scipy.spatial"))[:3])
"""


def test_a_warm_load_and_first_queries_do_not_import_scipy_spatial(example_robot_data, tmp_path):
    """scipy.spatial (qhull) takes ~0.3 s to import: a process whose robot model and outer
    hulls come from the caches (the first run writes them) does without it. numba imports
    scipy's top-level package itself."""
    env = {**os.environ, CACHE_ENV: str(tmp_path / "cache"), "HOME": str(tmp_path)}
    runs = [
        subprocess.run([sys.executable, "-c", _WARM], cwd=ROOT, env=env, capture_output=True,
                       text=True, timeout=900)
        for _ in range(2)
    ]  # fmt: skip
    for r in runs:
        assert r.returncode == 0, r.stderr[-3000:]
    assert runs[1].stdout.strip() == "[]", (runs[1].stdout, runs[1].stderr[-3000:])
