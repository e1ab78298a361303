"""CollisionChecker: states agree with the pair queries; certified edges never call a
colliding motion free (dense sampling is the oracle); CA's time of contact; bad input; a
changed robot or scene is picked up; the counters count."""

from __future__ import annotations

import dataclasses
import math
import time

import numpy as np
import pytest

import planning_collision as pc
from planning_collision import robots
from planning_collision.kernels._jit import cached_signatures
from planning_collision.kernels.base.clock import HAS_CLOCK as K_HAS_CLOCK
from planning_collision.testing.edges import dense_first_collision, rrt_edges, thin_obstacles

FINGERS = {"panda_finger_joint1": 0.065, "panda_finger_joint2": 0.065}
READY = np.array([0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785])  # the Panda's ready pose


@pytest.fixture(scope="module")
def panda(example_robot_data):
    return robots.load("panda", fixed_joints=FINGERS)


def _T(x, y, z):
    T = np.eye(4)
    T[:3, 3] = (x, y, z)
    return T


def shelf() -> pc.Scene:
    """A bookshelf in front of the Panda: two sides, three boards, a back, a few books."""
    s = pc.Scene()
    s.add(pc.Box((0.3, 0.02, 1.0)), _T(0.65, -0.4, 0.5), "side left")
    s.add(pc.Box((0.3, 0.02, 1.0)), _T(0.65, 0.4, 0.5), "side right")
    for k, z in enumerate((0.3, 0.6, 0.9)):
        s.add(pc.Box((0.3, 0.8, 0.02)), _T(0.65, 0.0, z), f"board {k}")
    s.add(pc.Box((0.02, 0.8, 1.0)), _T(0.8, 0.0, 0.5), "back")
    s.add(pc.Cylinder(0.04, 0.12), _T(0.6, 0.15, 0.37), "can")
    s.add(pc.Box((0.15, 0.03, 0.2)), _T(0.62, -0.2, 0.71), "book")
    return s


@pytest.fixture(scope="module")
def checker(panda):
    return pc.CollisionChecker(panda, shelf())


def _reference_valid(robot, scene, q, padding=0.0) -> bool:
    """Every piece against the scene (Scene.collide_object) and every checked self pair
    (Robot.count_self_collisions): the engine's pair queries, one by one."""
    P = robot.piece_poses(q)
    if any(scene.in_collision(p.shape, P[k], padding) for k, p in enumerate(robot.pieces)):
        return False
    return robot.count_self_collisions(q, margin=padding).sum() == 0


# ---- states ------------------------------------------------------------------------------


def test_is_valid_agrees_with_the_pair_queries_on_random_states(panda, checker, rng):
    Q = panda.random_configurations(300, rng)
    got = np.array([checker.is_valid(q) for q in Q])
    ref = np.array([_reference_valid(panda, checker.scene, q) for q in Q])
    assert np.array_equal(got, ref)
    assert 0.1 < got.mean() < 0.95  # the sample holds free and colliding states


def test_is_valid_batch_equals_is_valid(panda, checker, rng):
    Q = panda.random_configurations(500, rng)
    assert np.array_equal(checker.is_valid_batch(Q), [checker.is_valid(q) for q in Q])


def test_padding_makes_states_closer_than_it_collisions(panda, rng):
    scene = shelf()
    padded = pc.CollisionChecker(panda, scene, padding=0.05)
    plain = pc.CollisionChecker(panda, scene)
    Q = panda.random_configurations(150, rng)
    got = np.array([padded.is_valid(q) for q in Q])
    ref = np.array([_reference_valid(panda, scene, q, 0.05) for q in Q])
    assert np.array_equal(got, ref)
    assert got.sum() < plain.is_valid_batch(Q).sum()


@pytest.mark.parametrize("rigid", [True, False], ids=["rigid-bodies", "per-link"])
def test_clearance_and_link_distances_agree_with_the_pair_queries(panda, checker, rng, rigid):
    """Per body: the least distance of its links' pieces to the scene, and of its checked
    self pairs (with rigid bodies, the Panda's link7, hand and fingers are one body, and
    the pairs within it, which never move, are not checked)."""
    ch = checker if rigid else pc.CollisionChecker(panda, checker.scene, rigid_bodies=False)
    Q = panda.random_configurations(40, rng)
    Q = Q[ch.is_valid_batch(Q)][:10]
    body = {n: n for n in panda.link_names}
    if rigid:
        for n in ("panda_hand", "panda_leftfinger", "panda_rightfinger"):
            body[n] = "panda_link7"
    pairs = [(a, b) for a, b in panda.self_collision_pairs()]
    pairs = [(a, b) for a, b in pairs if body[panda.link_names[a]] != body[panda.link_names[b]]]
    assert len(pairs) == (22 if rigid else 23)  # less the held fingers
    c = panda.collision
    for q in Q:
        P = panda.piece_poses(q)
        per_body, per_link = {}, {}
        for k, p in enumerate(panda.pieces):
            r = ch.scene.min_distance(p.shape, P[k])
            per_body[body[p.link]] = min(per_body.get(body[p.link], np.inf), r.distance)
            per_link[p.link] = min(per_link.get(p.link, np.inf), r.distance)
        self_d = [
            min(
                pc.distance(panda.pieces[i].shape, P[i], panda.pieces[j].shape, P[j]).distance
                for i in range(c.link_start[a], c.link_start[a + 1])
                for j in range(c.link_start[b], c.link_start[b + 1])
            )
            for a, b in pairs
        ]
        ref = min(min(per_body.values()), min(self_d))
        assert ch.clearance(q) == pytest.approx(ref, abs=1e-7)
        ld = ch.link_distances(q, bodies=True)
        assert len(ld["links"]) == (8 if rigid else 11)
        for name, d in zip(ld["links"], ld["scene"], strict=True):
            assert d == pytest.approx(per_body[name.split("+")[0]], abs=1e-7)
        assert np.min(ld["distance"]) == pytest.approx(ref, abs=1e-7)
        per = ch.link_distances(q)  # per link, whatever the checker's bodies
        assert list(per.links) == [n for n in panda.link_names if n in per_link]
        for name, d in zip(per.links, per.scene, strict=True):
            assert d == pytest.approx(per_link[name], abs=1e-7)
        assert np.min(per.distance) == pytest.approx(ref, abs=1e-7)
        far = ch.link_distances(q, max_distance=0.05)
        assert np.all((far["scene"] == np.inf) | (far["scene"] <= 0.05))


def test_link_distances_in_an_empty_scene_report_no_obstacle(panda, checker, rng):
    """Self-collision only: no link has a nearest obstacle (an IndexError once)."""
    alone = pc.CollisionChecker(panda, pc.Scene())
    Q = panda.random_configurations(20, rng)
    q = Q[alone.is_valid_batch(Q)][0]
    ld = alone.link_distances(q)
    assert np.all(ld["object"] == -1) and np.all(ld["scene"] == np.inf)
    assert np.all(np.isfinite(ld["self"][ld["partner"] != ""]))
    assert alone.clearance(q) == pytest.approx(np.min(ld["distance"]))


def test_link_distances_is_a_record_that_reads_as_the_old_mapping(panda, checker, rng):
    q = panda.random_configurations(50, rng)[0]
    ld = checker.link_distances(q)
    assert isinstance(ld, pc.LinkDistances)
    assert list(ld) == ["links", "scene", "object", "name", "self", "partner", "distance"]
    assert ld["self"] is ld.self_distance and dict(ld)["scene"] is ld.scene
    assert all(len(v) == len(ld.links) for v in ld.values())
    body, d = ld.nearest()
    assert d == pytest.approx(checker.clearance(q), abs=1e-9) and body in ld.links
    with pytest.raises(KeyError, match="LinkDistances has"):
        ld["nope"]
    with pytest.raises(dataclasses.FrozenInstanceError):
        ld.scene = None


# ---- edges: certified means certified -------------------------------------------------


def _edges_and_truth(checker, edges, n=2000):
    return [dense_first_collision(checker, a, b, n)[0] for a, b in edges]


@pytest.mark.parametrize("method", ["dichotomy", "ca"])
def test_certified_methods_never_call_a_colliding_motion_free(panda, method):
    """Thin plates (2-5 mm) and rods placed across random motions, plus RRT-like edges in
    the shelf: every edge dense sampling (2,000 states) finds colliding is reported
    colliding; the discrete method at OMPL's 1 % misses some of them."""
    rng = np.random.default_rng(7)
    scene, thin = thin_obstacles(panda, rng, 40, base_scene=shelf())
    checker = pc.CollisionChecker(panda, scene)
    edges = thin + rrt_edges(checker, rng, 160)
    truth = _edges_and_truth(pc.CollisionChecker(panda, scene, self_tables=False), edges)
    res = [checker.check_edge(a, b, method=method) for a, b in edges]
    free_but_colliding = [
        k for k, (r, t) in enumerate(zip(res, truth, strict=True)) if r.valid and t is not None
    ]
    assert free_but_colliding == []
    assert all(r.certified for r in res)
    disc = [checker.check_edge(a, b, method="discrete").valid for a, b in edges]
    missed = sum(d and t is not None for d, t in zip(disc, truth, strict=True))
    colliding = sum(t is not None for t in truth)
    assert colliding >= 40 and missed > 0  # the thin obstacles defeat 1 % sampling


def test_false_alarms_are_rare_where_motions_stay_clear(panda):
    """Edges the certified method calls colliding although dense sampling finds every state
    at least 1 mm clear: at most 2 % of the clear edges."""
    rng = np.random.default_rng(11)
    checker = pc.CollisionChecker(panda, shelf())
    clear = alarms = 0
    for a, b in rrt_edges(checker, rng, 200):
        first, Q = dense_first_collision(checker, a, b, 500)
        if first is not None:
            continue
        if min(checker.clearance(q) for q in Q[::25]) < 1e-3:
            continue
        clear += 1
        alarms += not checker.check_edge(a, b).valid
    assert clear > 100 and alarms <= 0.02 * clear


def test_ca_finds_the_first_contact_within_eta_and_never_after_it(panda):
    rng = np.random.default_rng(3)
    checker = pc.CollisionChecker(panda, shelf())
    n_colliding = 0
    for a, b in rrt_edges(checker, rng, 120, step=(0.5, 1.5)):
        r = checker.check_edge(a, b, method="ca")
        first, _ = dense_first_collision(checker, a, b, 4000)
        if r.valid:
            assert first is None
            continue
        n_colliding += 1
        assert first is not None and r.toc <= first + 1e-12
        q = a + r.toc * (b - a)
        assert checker.clearance(np.clip(q, checker.robot.lower, checker.robot.upper)) <= (
            checker.padding + checker.eta + 1e-9
        )
        assert r.last_valid_t <= r.toc
        assert checker.is_valid(a + r.last_valid_t * (b - a))
    assert n_colliding >= 10


def test_a_colliding_edge_reports_a_colliding_time_and_a_free_prefix(panda, checker, rng):
    for a, b in rrt_edges(checker, rng, 80, step=(0.5, 1.5)):
        for method in ("dichotomy", "discrete"):
            r = checker.check_edge(a, b, method=method)
            if r.valid:
                continue
            q = np.clip(a + r.toc * (b - a), panda.lower, panda.upper)
            assert checker.clearance(q) <= checker.eta + 1e-9
            first, _ = dense_first_collision(checker, a, b, 1000)
            assert first is None or r.last_valid_t <= first


def test_the_start_is_checked_unless_asked_not_to(panda, checker, rng):
    Q = panda.random_configurations(200, rng)
    ok = checker.is_valid_batch(Q)
    for bad, good in zip(Q[~ok][:10], Q[ok][:10], strict=False):
        for method in ("dichotomy", "ca", "discrete"):
            r = checker.check_edge(bad, good, method)
            assert not r.valid and r.toc == 0.0 and r.last_valid_t == 0.0, method
            # the end state is always checked
            assert not checker.check_edge(good, bad, method, check_start=False).valid


def test_a_motion_that_does_not_move_is_a_state_check(panda, checker, rng):
    for q in panda.random_configurations(20, rng):
        for method in ("dichotomy", "ca", "discrete"):
            assert checker.check_edge(q, q.copy(), method=method).valid == checker.is_valid(q)


def test_cache_off_gives_the_same_answers_with_no_cache_hits(panda, checker, rng):
    plain = pc.CollisionChecker(panda, checker.scene, cache=False)
    edges = rrt_edges(checker, rng, 60)
    for a, b in edges + [(b, a) for a, b in edges]:  # reversed: the endpoint cache hits
        assert checker.edge_free(a, b) == plain.edge_free(a, b)
    s = plain.stats
    assert s["front_hits"] == s["front_builds"] == s["endpoint_hits"] == 0
    assert checker.stats["endpoint_hits"] > 0


def test_edges_from_a_clear_cached_vertex_skip_the_probes_and_are_checked_all_along(
    panda, checker, rng
):
    """A tree's edges from one vertex, as a planner asks: once the vertex's distances are
    cached, an edge it clears for PROBE_SKIP goes to distances without boolean probes (a
    short one: its two ends, 2 states, against 6 with the probes). The answers are the
    cache-free checker's, and dense sampling finds no contact on an edge called free."""
    plain = pc.CollisionChecker(panda, checker.scene, cache=False)
    Q = panda.random_configurations(300, rng)
    free = Q[checker.is_valid_batch(Q)]
    clear = [q for q in free if checker.link_distances(q).scene.min() > 0.1][:4]
    assert len(clear) == 4
    answers = []
    for q0 in clear:
        checker.forget()
        for k in range(16):
            d = rng.normal(size=panda.dof)
            step = 0.02 if k % 4 == 1 else rng.uniform(0.2, 2.5)
            q1 = np.clip(q0 + d / np.linalg.norm(d) * step, panda.lower, panda.upper)
            checker.reset_stats()
            ok = checker.edge_free(q0, q1)
            states = checker.stats["states"]
            assert ok == plain.edge_free(q0, q1)
            first, _ = dense_first_collision(checker, q0, q1, 400)
            assert first is None or not ok
            if k % 4 == 1 and k > 1:  # short, from the vertex cached by the edges before
                assert ok and states == 2, (k, states)
                short = q1
            answers.append(ok)
        checker.forget()  # nothing cached: the same short edge probes first
        checker.reset_stats()
        assert checker.edge_free(q0, short) and checker.stats["states"] == 4 + 2
    assert 0 < sum(answers) < len(answers)  # free edges and colliding ones


def test_threads_calling_one_checker_get_their_own_answers(panda, checker, rng):
    """The kernels release the GIL: each thread has its own workspace and result buffer."""
    from concurrent.futures import ThreadPoolExecutor

    edges = rrt_edges(checker, rng, 200)
    want = [checker.check_edge(a, b, check_start=False).valid for a, b in edges]

    def run(part):
        return [checker.edge_free(a, b) for a, b in edges[part::2]]

    with ThreadPoolExecutor(2) as pool:
        got = list(pool.map(run, (0, 1)))
    assert got[0] == want[0::2] and got[1] == want[1::2]
    assert any(want) and not all(want)


def test_front_lists_give_the_same_answers_and_are_used(panda, checker, rng):
    fronts = pc.CollisionChecker(panda, checker.scene, front_lists=True)
    edges = rrt_edges(checker, rng, 60)
    for method in ("dichotomy", "ca"):
        for a, b in edges:
            r, f = checker.check_edge(a, b, method), fronts.check_edge(a, b, method)
            assert r.valid == f.valid
    s = fronts.stats
    assert s["front_builds"] > 0 and s["front_hits"] > 0
    assert checker.stats["front_builds"] == 0  # off by default (CollisionChecker's doc)


# ---- the checker follows its robot and scene ------------------------------------------


def test_an_obstacle_added_or_removed_after_building_is_picked_up(panda, rng):
    scene = pc.Scene()
    checker = pc.CollisionChecker(panda, scene)
    q = READY
    assert checker.is_valid(q)
    hand = panda.fk(q)["panda_hand"][:3, 3]
    oid = scene.add(pc.Sphere(0.05), _T(*hand))
    assert not checker.is_valid(q) and not checker.check_edge(q, q + 0.1).valid
    scene.remove(oid)
    assert checker.is_valid(q)


def test_an_acm_edit_after_building_is_picked_up(panda, rng):
    robot = robots.load("panda", fixed_joints=FINGERS)
    checker = pc.CollisionChecker(robot, pc.Scene())
    allowed = [
        k
        for k, (a, b) in enumerate(robot.all_link_pairs())
        if robot.acm.is_allowed(robot.link_names[a], robot.link_names[b])
    ]
    # a state where only allowed pairs touch
    for q in robot.random_configurations(5000, rng):
        hits = robot.count_self_collisions(q, robot.all_link_pairs())
        if hits.sum() == hits[allowed].sum() > 0:
            break
    else:
        pytest.skip("no state with only an allowed pair touching in the sample")
    a, b = (robot.link_names[i] for i in robot.all_link_pairs()[allowed][hits[allowed] > 0][0])
    assert checker.is_valid(q)
    robot.disallow(a, b)
    assert not checker.is_valid(q)
    robot.allow(a, b, "never")
    assert checker.is_valid(q)
    # a checker built after the edits shares the robot's part of the last version
    other = pc.CollisionChecker(robot, shelf())
    assert other.model.robot is checker.model.robot and other.is_valid(q) == checker.is_valid(q)
    old = checker.model.robot
    robot.disallow(a, b)
    assert not other.is_valid(q) and not checker.is_valid(q)
    assert other.model.robot is checker.model.robot is not old  # the new version's, shared


def test_checkers_of_one_robot_share_what_depends_on_the_robot_alone(panda):
    """A robot planned in scene after scene pays once for its bodies, self pairs, tables
    and bounds (checker/model.py RobotPart)."""
    a = pc.CollisionChecker(panda, pc.Scene())
    b = pc.CollisionChecker(panda, shelf())
    a.is_valid(READY)
    b.is_valid(READY)
    assert a.model.robot is b.model.robot and a.model.scene is not b.model.scene
    per_link = pc.CollisionChecker(panda, shelf(), rigid_bodies=False)
    assert per_link.model.robot is not a.model.robot


# ---- bad input ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "bad, match",
    [
        (np.zeros(6), r" has shape \(6,\); robot 'panda' has 7 active joints"),
        (np.r_[np.zeros(6), np.nan], r"\[6\] \(panda_joint7\) must be finite, got nan"),
        (np.r_[np.inf, np.zeros(6)], r"\[0\] \(panda_joint1\) must be finite, got inf"),
        (np.r_[0.0, 0, 0, 0.5, 0, 0, 0], r"\[3\] \(panda_joint4\) = 0.5 is outside the joint"),
    ],
)
def test_bad_configurations_name_the_joint_and_value(checker, bad, match):
    good = READY
    with pytest.raises(ValueError, match="^q" + match):
        checker.is_valid(bad)
    with pytest.raises(ValueError, match="^q1" + match):
        checker.check_edge(good, bad)
    with pytest.raises(ValueError, match="^q0" + match):
        checker.check_edge(bad, good, method="ca")
    with pytest.raises(ValueError, match="^q1" + match):
        checker.check_edge(good, bad, method="discrete")
    if bad.size == 7:
        with pytest.raises(ValueError, match=r"^Q\[1\]" + match):
            checker.is_valid_batch(np.stack([good, bad]))


def test_odd_arguments_are_refused_by_name_not_converted(panda, checker):
    """A complex q (whose imaginary part a float conversion drops), a string where a bool
    goes ("no" is truthy), a NaN cap, a bool as a length, and a discrete edge to 1e300 rad
    (whose length overflowed before the limits were checked)."""
    q = READY
    with pytest.raises(ValueError, match=r"^q must be a numeric array of 7 joint values, got comp"):
        checker.is_valid(q + 1e-3j)
    with pytest.raises(ValueError, match=r"^Q must be an \(m, 7\) array, got complex numbers"):
        checker.is_valid_batch(np.stack([q, q]) + 0j)
    with pytest.raises(ValueError, match=r"^check_start must be True or False, got 'no'"):
        checker.check_edge(q, q, check_start="no")
    with pytest.raises(ValueError, match=r"^max_distance must be > 0 \(inf for no cap\), got nan"):
        checker.link_distances(q, max_distance=math.nan)
    far = np.r_[1e300, q[1:]]
    with pytest.raises(ValueError, match=r"^q1\[0\] \(panda_joint1\) = 1e\+300 is outside"):
        checker.check_edge(q, far, method="discrete")
    with pytest.raises(ValueError, match=r"^padding must be a real number, got True"):
        pc.CollisionChecker(panda, checker.scene, padding=True)
    with pytest.raises(ValueError, match=r"^Sphere.radius must be a real number, got True"):
        pc.Sphere(True)


def test_a_discrete_edge_of_a_continuous_joint_far_from_zero_is_answered():
    arm = robots.load("planar_arm")  # joint 0 continuous
    checker = pc.CollisionChecker(arm, pc.Scene())
    q0 = np.zeros(arm.dof)
    q1 = q0.copy()
    q1[0] = 1e300
    r = checker.check_edge(q0, q1, method="discrete")  # was an OverflowError
    assert r.certified is False and r.valid in (True, False)


def test_q_of_another_array_type_gets_the_same_answer_without_a_second_compile(panda, checker):
    """`is_valid` passes q to its sealed kernel unchecked: a list, float32, read-only or
    strided q is numba's TypeError there, then checked and converted; a read-only Q or q0
    is copied (as another numba type it would compile every kernel again)."""
    from planning_collision.kernels.checker import edges as E
    from planning_collision.kernels.checker import states as K

    q = READY
    want = checker.is_valid(q)
    ro = q.copy()
    ro.setflags(write=False)
    strided = np.repeat(q, 2)[::2]
    for other in (list(q), tuple(q), q.astype(np.float32), ro, strided):
        assert checker.is_valid(other) == want
    with pytest.raises(ValueError, match=r"^q has shape \(1, 7\)"):
        checker.is_valid(q[None])
    Q = np.stack([q, q])
    Q.setflags(write=False)
    assert list(checker.is_valid_batch(Q)) == [want, want]
    assert checker.check_edge(ro, ro).valid == want
    assert checker.check_edge(list(q), tuple(q), method="ca").valid == want
    assert checker.edge_free(q.astype(np.float32), strided, check_start=1) == want
    for k in (K.state_check, K.state_check_batch, E.dichotomy, E.advance):
        sigs = cached_signatures(k)
        assert len(sigs) == 1, (k.__name__, sigs)


def test_bad_arguments_are_named(panda, checker):
    with pytest.raises(ValueError, match="method must be one of"):
        checker.check_edge(np.zeros(7), np.zeros(7), method="sampled")
    with pytest.raises(ValueError, match="method must be one of"):
        checker.warm_up(methods=("dichotomy", "sampled"))
    with pytest.raises(ValueError, match="padding must be finite and >= 0"):
        pc.CollisionChecker(panda, pc.Scene(), padding=-1.0)
    with pytest.raises(ValueError, match="eta must be finite and > 0"):
        pc.CollisionChecker(panda, pc.Scene(), eta=0.0)


def test_a_scene_without_obstacles_checks_self_collision_only(panda, rng):
    checker = pc.CollisionChecker(panda, pc.Scene())
    Q = panda.random_configurations(200, rng)
    ref = [panda.count_self_collisions(q).sum() == 0 for q in Q]
    assert np.array_equal(checker.is_valid_batch(Q), ref) and not all(ref)


def test_a_robot_without_collision_geometry_is_refused(tmp_path):
    urdf = tmp_path / "bare.urdf"
    urdf.write_text(
        '<robot name="bare"><link name="a"/><link name="b"/>'
        '<joint name="j" type="revolute"><parent link="a"/><child link="b"/>'
        '<axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="1" velocity="1"/></joint>'
        "</robot>"
    )
    bare = pc.Robot.from_urdf(urdf)
    with pytest.raises(ValueError, match="robot 'bare' has no collision geometry"):
        pc.CollisionChecker(bare, pc.Scene())


# ---- counters ----------------------------------------------------------------------------


def test_stats_count_states_edges_and_queries_and_reset(panda, rng):
    checker = pc.CollisionChecker(panda, shelf())
    Q = panda.random_configurations(10, rng)
    for q in Q:
        checker.is_valid(q)
    q0 = Q[[checker.is_valid(q) for q in Q]][0]
    # a short free motion: certified by distances (a colliding one may end at a probe)
    assert checker.check_edge(q0, np.clip(q0 + 0.01, panda.lower, panda.upper)).valid
    s = checker.stats
    assert s["states"] >= 12 and s["edges"] == 1 and s["distance_queries"] > 0
    assert s["bv_tests"] > 0 and s["seconds"] > 0
    # is_valid's and the edges' kernels time themselves (kernels/base/clock.py): in seconds,
    # within the wall time
    checker.reset_stats()
    t0 = time.perf_counter()
    for q in Q:
        checker.is_valid(q)
    wall = time.perf_counter() - t0
    t1 = time.perf_counter()
    for q in Q:
        checker.edge_free(q0, q)
    wall += time.perf_counter() - t1
    if K_HAS_CLOCK:
        assert 0 < checker.stats["seconds"] < wall
    checker.reset_stats()
    assert all(v == 0 for v in checker.stats.values())


def test_the_checker_kernels_compile_once_each(panda, checker, rng):
    """Every call site passes the same argument types: a constant passed as a literal
    (True, 0) would compile a kernel once more per value, seconds of a user's first call;
    FK from Python (the robot's read-only model) and inside the checker (its model table's
    views) are one compile."""
    from planning_collision.kernels.checker import check_core as C
    from planning_collision.kernels.checker import edges as E
    from planning_collision.kernels.checker import states as K
    from planning_collision.kernels.robot import fk as F

    q0, q1 = panda.random_configurations(2, rng)
    panda.fk(q0)
    checker.is_valid(q0)
    checker.is_valid_batch(np.stack([q0, q1]))
    checker.link_distances(q0)
    for method in ("dichotomy", "ca", "discrete"):
        checker.check_edge(q0, q1, method=method)
    kernels = [C.query, C.self_test, C.pose, K.posed_collides, K.body_distance, K.state_check]
    kernels += [K.state_distances, E.dichotomy, E.advance, E.discrete, F.fk, F.fk_link_poses]
    for k in kernels:
        # compiled here, or loaded from numba's cache (whose index lists what was compiled)
        sigs = cached_signatures(k)
        assert len(sigs) == 1, (k.__name__, sigs)
