"""Self-pair clearance tables (kernels/robot/self_tables.py): a cell's bound never exceeds the
pair's distance anywhere in the cell (the pair queries are the oracle), edges across the
Panda's wrist self-collisions are never called free (dense sampling on the exact pieces),
and the tables' on-disk cache (and the outer hulls') is used and survives a damaged file."""

from __future__ import annotations

import logging

import numpy as np
import pytest

import planning_collision as pc
from planning_collision.checker import self_tables
from planning_collision.robot.rigid import rigid_bodies
from tests.conftest import load_panda

FINGERS = {"panda_finger_joint1": 0.04, "panda_finger_joint2": 0.04}


@pytest.fixture(scope="module")
def panda():
    return load_panda(FINGERS)


@pytest.fixture(scope="module")
def checker(panda):
    """One body per link: the Panda's wrist has four pairs with tables here."""
    return pc.CollisionChecker(panda, pc.Scene(), rigid_bodies=False)


@pytest.fixture(scope="module")
def rigid(panda):
    """Rigid bodies (link7, the hand and the fingers one body), as checkers are built."""
    return pc.CollisionChecker(panda, pc.Scene())


HAND = "panda_link7+panda_hand+panda_leftfinger+panda_rightfinger"


def _lookup(r, j, q):
    """The table bound of pair j at q, as a naive numpy read of the CheckRobot arrays."""
    idx = []
    for e in range(2):
        k = r.pt_q[j, e]
        c = 0 if k < 0 else int(np.floor((q[k] - r.pt_lo[j, e]) / r.pt_w[j, e]))
        idx.append(min(max(c, 0), r.pt_n[j, e] - 1))
    return r.pt_lb[r.pt_start[j] + idx[0] * r.pt_n[j, 1] + idx[1]]


def _pair_distance(robot, a, b, q):
    """The pair's distance by the public pair queries on its pieces."""
    P = robot.piece_poses(q)
    ia = [k for k, p in enumerate(robot.pieces) if p.link == robot.link_names[a]]
    ib = [k for k, p in enumerate(robot.pieces) if p.link == robot.link_names[b]]
    return min(
        pc.distance(robot.pieces[i].shape, P[i], robot.pieces[k].shape, P[k]).distance
        for i in ia
        for k in ib
    )


def _tabled(checker) -> set:
    m = checker.model
    return {m.body_names[m.n_links + j] for j in np.flatnonzero(m.robot.pt_start >= 0)}


def test_the_panda_wrist_pairs_get_tables(checker, rigid):
    names = _tabled(checker)
    assert {"panda_link5|panda_link7", "panda_link5|panda_hand"} <= names
    assert "panda_leftfinger|panda_rightfinger" in names  # held fingers: one cell
    assert "panda_link0|panda_link7" not in names  # seven joints apart: no table
    assert _tabled(rigid) == {f"panda_link5|{HAND}"}  # the fingers' pair is inside a body


@pytest.mark.parametrize("bodies", ["per-link", "rigid"])
def test_a_cell_bound_never_exceeds_the_pair_distance(panda, checker, rigid, bodies):
    """At random configurations and on grid lines (both neighbouring cells' bounds), near
    and inside the wrist's self-collisions, the bound is <= the pair queries' distance (<= 0
    where the pair overlaps)."""
    rng = np.random.default_rng(5)
    if bodies == "rigid":
        checker, panda = rigid, rigid_bodies(panda)
    m = checker.model
    r = m.robot
    Q = panda.random_configurations(300 if bodies == "per-link" else 1200, rng)  # 4 or 1 pairs
    checked = clear = 0
    for j in np.flatnonzero(r.pt_start >= 0):
        a, b = (int(x) for x in r.pairs[j])
        for q in Q:
            for e in range(2):  # half the states on a grid line of each axis
                k = r.pt_q[j, e]
                if k >= 0 and rng.random() < 0.5:
                    line = rng.integers(1, r.pt_n[j, e])
                    q = q.copy()
                    q[k] = r.pt_lo[j, e] + line * r.pt_w[j, e]
            d = _pair_distance(panda, a, b, q)
            lb = _lookup(r, j, q)
            # an overlap's signed distance is its depth; the bound only says "<= 0" there
            assert lb <= max(d, 0.0) + 1e-12, (m.body_names[m.n_links + j], q, lb, d)
            checked += 1
            clear += lb > 0.0
    assert checked >= 1000 and clear > 0.8 * checked  # tight enough to skip most tests


def test_tables_change_no_state_answer(panda, checker):
    """A table only skips pairs it proves clear: is_valid_batch with and without tables
    agree on every random configuration, and the tables skip GJK tests."""
    rng = np.random.default_rng(2)
    plain = pc.CollisionChecker(panda, pc.Scene(), self_tables=False)
    Q = panda.random_configurations(5000, rng)
    checker.reset_stats()
    truth = plain.is_valid_batch(Q)
    np.testing.assert_array_equal(checker.is_valid_batch(Q), truth)
    assert (~truth).sum() > 100  # the Panda folds onto itself often
    assert checker.stats["self_pair_tests"] < 0.5 * plain.stats["self_pair_tests"]


def _wrist(panda):
    """The link pairs of link5 with link7 and with the hand."""
    n = panda.link_names
    return np.array([[n.index("panda_link5"), n.index(b)] for b in ("panda_link7", "panda_hand")])


def _boundary(panda, qc, v, sign):
    """How far from qc, where the wrist collides, along sign * v the first state where it
    does not lies (bisection to 0.1 mrad after doubling steps from 1 mrad; None past 1)."""
    pairs = _wrist(panda)
    hit = lambda x: panda.count_self_collisions(qc + sign * x * v, pairs).sum() > 0  # noqa: E731
    inner, outer = 0.0, 1e-3
    while hit(outer):
        inner, outer = outer, 2.0 * outer
        if outer > 1.0:
            return None
    while outer - inner > 1e-4:
        mid = 0.5 * (inner + outer)
        inner, outer = (mid, outer) if hit(mid) else (inner, mid)
    return outer


def _hidden_collision_edge(panda, rng, t):
    """An edge moving joints 6 and 7 only whose states at t = 0, 1/4, 1/2, 3/4, 1 are free
    and which crosses a wrist self-collision in between (None if this try fails)."""
    lo, hi = panda.lower, panda.upper
    qc = panda.random_configurations(1, rng)[0]
    qc[5] = rng.uniform(0.3, 0.8)  # the lobes of the hand's collisions with link5
    if panda.count_self_collisions(qc, _wrist(panda)).sum() == 0:
        return None
    v = np.zeros(panda.dof)
    v[5:7] = rng.normal(0.0, 0.3), 1.0  # mostly across the lobes, along joint 7
    v /= np.linalg.norm(v)
    back, ahead = _boundary(panda, qc, v, -1.0), _boundary(panda, qc, v, 1.0)
    if back is None or ahead is None or back + ahead > 0.6:
        return None
    L = (back + ahead) / 0.15  # the chord fills [0.3, 0.45] of the edge
    q0 = qc - (back + 0.3 * L) * v
    q1 = q0 + L * v
    if np.any(q0 < lo) or np.any(q0 > hi) or np.any(q1 < lo) or np.any(q1 > hi):
        return None
    Q = q0 + t * (q1 - q0)
    if any(panda.count_self_collisions(Q[k : k + 1]).sum() > 0 for k in (0, 500, 1000, 1500, 2000)):
        return None
    return q0, q1, Q


def test_edges_across_wrist_self_collisions_are_never_called_free(panda, checker, rigid):
    """In an empty scene, motions of joints 6 and 7 alone across a wrist self-collision
    that lies between the states the dichotomy probes first (so only the tables' intervals
    send it looking there) are all called colliding, with dense sampling of the exact
    pieces (Robot.count_self_collisions, 2,001 states) as the oracle; random motions of the
    two joints are never called free where the oracle finds a collision, and most of the
    free ones are certified free."""
    rng = np.random.default_rng(9)
    t = np.linspace(0.0, 1.0, 2001)[:, None]
    hidden = 0
    for _ in range(2000):
        got = _hidden_collision_edge(panda, rng, t)
        if got is None:
            continue
        q0, q1, Q = got
        assert panda.count_self_collisions(Q).sum() > 0
        assert not checker.check_edge(q0, q1).valid, (q0, q1)
        assert not rigid.check_edge(q0, q1).valid, (q0, q1)
        hidden += 1
        if hidden == 15:
            break
    assert hidden == 15
    lo, hi = panda.lower, panda.upper
    free = called_free = 0
    for _ in range(100):
        q0 = panda.random_configurations(1, rng)[0]
        q1 = q0.copy()
        q1[5:7] = np.clip(q0[5:7] + rng.uniform(-0.8, 0.8, 2), lo[5:7], hi[5:7])
        truth = panda.count_self_collisions(np.clip(q0 + t * (q1 - q0), lo, hi)).sum() > 0
        r = checker.check_edge(q0, q1)
        assert not (r.valid and truth), (q0, q1)
        assert not (rigid.check_edge(q0, q1).valid and truth), (q0, q1)
        free += not truth
        called_free += r.valid
    assert free >= 50 and called_free >= 0.9 * free


def test_tables_are_read_back_from_the_cache_and_a_damaged_file_is_rebuilt(
    panda, tmp_path, monkeypatch, caplog
):
    import weakref

    from planning_collision.checker import model

    def forget():  # the tables in memory, and the robot parts holding them
        monkeypatch.setattr(self_tables, "_TABLES", {})
        monkeypatch.setattr(model, "_PARTS", weakref.WeakKeyDictionary())

    monkeypatch.setenv("PLANNING_COLLISION_CACHE", str(tmp_path))
    forget()
    first = pc.CollisionChecker(panda, pc.Scene(), rigid_bodies=False).model.robot.pt_lb
    files = sorted(tmp_path.glob("pairtable-*.npz"))
    assert len(files) == 5
    forget()
    again = pc.CollisionChecker(panda, pc.Scene(), rigid_bodies=False).model.robot.pt_lb
    np.testing.assert_array_equal(first, again)
    files[0].write_bytes(b"not a table")
    forget()
    with caplog.at_level(logging.WARNING):
        rebuilt = pc.CollisionChecker(panda, pc.Scene(), rigid_bodies=False).model.robot.pt_lb
    assert "cache entry (self-pair table) not used: BadZipFile" in caplog.text
    np.testing.assert_array_equal(first, rebuilt)


def test_outer_hulls_are_read_back_from_the_cache(panda, tmp_path):
    """The pieces' outer hulls (checker/bounds.py) written once and read back are the same
    shapes; a damaged file is computed again."""
    from planning_collision.checker.bounds import piece_bounds

    f = tmp_path / "outer.npz"
    first = piece_bounds(panda.pieces, f)
    assert f.is_file()
    cached = piece_bounds(panda.pieces, f)
    for a, b in zip(first[0], cached[0], strict=True):  # every array of the ShapeTable
        np.testing.assert_array_equal(a, b)
    f.write_bytes(b"damaged")
    again = piece_bounds(panda.pieces, f)
    np.testing.assert_array_equal(first[0].verts, again[0].verts)


def test_a_joint_held_by_its_limits_is_no_table_axis():
    """Joint 7 limited to one value: the wrist pairs' tables have one axis (joint 6), and
    they change no state answer."""
    robot = load_panda(FINGERS, joint_limits={"panda_joint7": (0.5, 0.5)})
    Q = robot.random_configurations(2000, np.random.default_rng(4))
    for rigid, tables in ((False, 4), (True, 1)):
        checker = pc.CollisionChecker(robot, pc.Scene(), rigid_bodies=rigid)
        r = checker.model.robot
        used = r.pt_start >= 0
        assert (r.pt_q[used, 1] == -1).all() and (r.pt_n[used, 0] > 1).sum() == tables
        plain = pc.CollisionChecker(robot, pc.Scene(), self_tables=False, rigid_bodies=rigid)
        np.testing.assert_array_equal(checker.is_valid_batch(Q), plain.is_valid_batch(Q))


@pytest.mark.parametrize("name", ["panda", "ur5"])
def test_each_outer_hull_is_a_subset_of_its_pieces_points_swept_farther(name, panda):
    """What the self pairs' boolean test relies on (kernels/checker/check_core.py `self_test`): an
    outer hull's core is a subset of its piece's points and its radius is at least the
    piece's, or it is the piece itself. So the outer cores within the pieces' radii
    means the pieces overlap."""
    if name == "panda":
        robot = panda
    else:
        robots = pytest.importorskip("planning_collision.robots")
        try:
            robot = robots.load(name)
        except ImportError as e:  # example-robot-data absent
            pytest.skip(str(e))
    r = pc.CollisionChecker(robot, pc.Scene()).model.robot
    tab, outer = r.tab, r.outer
    for i in range(tab.kind.shape[0]):
        assert outer.kind[i] == tab.kind[i]
        assert outer.params[i, 0] >= tab.params[i, 0]
        mine = tab.verts[tab.vstart[i] : tab.vstart[i + 1]]
        its = outer.verts[outer.vstart[i] : outer.vstart[i + 1]]
        if len(its) == len(mine):  # the piece itself
            np.testing.assert_array_equal(outer.params[i], tab.params[i])
            np.testing.assert_array_equal(its, mine)
        else:
            assert len(its) < len(mine)
            assert all((mine == p).all(axis=1).any() for p in its), f"piece {i}"


def test_the_outer_test_tells_apart_overlapping_unknown_and_certain(panda, checker, rng):
    """overlap_within on the outer hulls of self pairs, against the exact signed
    distances of the pieces: APART only when the pieces are apart, CORES_WITHIN only when
    they overlap, UNKNOWN only when the outer hulls overlap; all three happen."""
    from planning_collision.kernels.convex.pair import (
        APART,
        CORES_WITHIN,
        UNKNOWN,
        new_workspace,
        overlap_within,
        pair_distance,
    )

    r = checker.model.robot
    tab, outer = r.tab, r.outer
    ws = new_workspace()
    out = np.zeros(10)
    seen = {APART: 0, CORES_WITHIN: 0, UNKNOWN: 0}
    for q in panda.random_configurations(300, rng):
        P = panda.piece_poses(q)
        for a, b in r.pairs:
            for ia in range(r.link_start[a], r.link_start[a + 1]):
                for ib in range(r.link_start[b], r.link_start[b + 1]):
                    margin = 0.0 if seen[UNKNOWN] % 2 else 0.01
                    inner = tab.params[ia, 0] + tab.params[ib, 0]
                    got = overlap_within(outer, ia, P[ia], outer, ib, P[ib], margin, inner, ws)
                    pair_distance(tab, ia, P[ia], tab, ib, P[ib], np.inf, ws, out)
                    d_piece = out[0]
                    pair_distance(outer, ia, P[ia], outer, ib, P[ib], np.inf, ws, out)
                    d_outer = out[0]
                    seen[got] += 1
                    if got == APART:
                        assert d_outer > margin - 1e-9 and d_piece > margin - 1e-9
                    elif got == CORES_WITHIN:
                        assert d_piece <= margin + 1e-9, (ia, ib, d_piece)
                    else:
                        assert d_outer <= margin + 1e-9, (ia, ib, d_outer)
    assert min(seen.values()) > 0, seen
