"""Rigid bodies (robot/rigid.py): links joined by fixed or held joints are checked as one
body. The bodies hold exactly the robot's posed pieces, a pair of bodies is checked when any
pair of their links is, and a checker on rigid bodies answers as one per link: states
equal, certified edges never free where the per-link checker's dense states collide."""

from __future__ import annotations

import numpy as np
import pytest

import planning_collision as pc
from planning_collision import robots
from planning_collision.robot.rigid import RigidBodies, rigid_bodies, rigid_roots
from planning_collision.testing.edges import rrt_edges
from tests.conftest import load_panda
from tests.test_checker import shelf

HAND = ("panda_link7", "panda_hand", "panda_leftfinger", "panda_rightfinger")


@pytest.fixture(scope="module")
def panda():
    return load_panda({"panda_finger_joint1": 0.065, "panda_finger_joint2": 0.065})


def test_the_bodies_of_four_robots():
    """The Panda's link7 with its hand (fixed) and fingers (held); the UR5's wrist 3 with
    its ee_link; the planar arm's last link with its fingers; the xArm7 has none."""
    got = {}
    for name in ("panda", "ur5", "planar_arm", "xarm7"):
        try:
            r = robots.load(name)
        except (ImportError, FileNotFoundError) as e:
            pytest.skip(str(e))
        v = rigid_bodies(r)
        got[name] = [v.body_name(i) for i in v.collision_links] if v is not r else None
        if v is not r:
            assert v.collision_links.size < r.collision_links.size
            assert rigid_bodies(v) is v
    assert got["panda"][-1] == "+".join(HAND) and len(got["panda"]) == 8
    assert "wrist_3_link+ee_link" in got["ur5"]
    assert got["planar_arm"][-1] == "link3+finger_left+finger_right"
    assert got["xarm7"] is None  # every body a single link: the robot is its own view


def test_roots_follow_fixed_and_held_joints(panda):
    n = panda.link_names
    roots = rigid_roots(panda.model)
    for link in ("panda_link8", "panda_hand", "panda_hand_tcp", *HAND[2:]):
        assert n[roots[n.index(link)]] == "panda_link7", link
    for k in range(8):
        assert roots[k] == k  # each arm link is driven by its own joint


def test_the_bodies_hold_the_robots_posed_pieces(panda, rng):
    """The same shapes at the same world poses, every configuration: a member's pose in its
    body's frame never changes."""
    v = rigid_bodies(panda)
    assert isinstance(v, RigidBodies) and len(v.pieces) == len(panda.pieces)
    slot = {id(p.shape): k for k, p in enumerate(v.pieces)}
    order = [slot[id(p.shape)] for p in panda.pieces]
    for q in panda.random_configurations(20, rng):
        np.testing.assert_allclose(v.piece_poses(q)[order], panda.piece_poses(q), atol=1e-12)
        assert np.all(v.motion_bounds(q, q + 0.1) >= 0.0)


def test_a_link_the_acm_treats_apart_is_a_body_of_its_own(panda):
    """Allowing link0 against the hand alone takes the hand out of link7's body (its
    checked partners differ now), and no pair of link0 with it is checked; allowing link0
    against all four joins them again."""
    r = load_panda({"panda_finger_joint1": 0.065, "panda_finger_joint2": 0.065})
    checker = pc.CollisionChecker(r, pc.Scene())
    assert f"panda_link0|{'+'.join(HAND)}" in checker.body_names
    r.allow("panda_link0", "panda_hand")
    names = checker.body_names
    rest = "panda_link7+panda_leftfinger+panda_rightfinger"
    assert {"panda_hand", rest} <= set(names) and len(names) == 9 + 13
    assert f"panda_link0|{rest}" in names and "panda_link0|panda_hand" not in names
    assert f"panda_hand|{rest}" not in names  # rigidly joined: never checked
    for link in ("panda_link7", "panda_leftfinger", "panda_rightfinger"):
        r.allow("panda_link0", link)
    names = checker.body_names
    assert "+".join(HAND) in names and f"panda_link0|{'+'.join(HAND)}" not in names
    assert len(names) == 8 + 9


@pytest.mark.parametrize("name", ["kinova"])
def test_bodies_keep_the_acm_exactly(name, rng):
    """Every pair of links of two bodies is checked, or none is, and the body pair with
    them; states equal the per-link checker's (a Kinova's finger tips and fingers differ in
    the ACM: not all share the hand's body)."""
    try:
        r = robots.load(name)
    except (ImportError, FileNotFoundError) as e:
        pytest.skip(str(e))
    v = rigid_bodies(r)
    assert isinstance(v, RigidBodies)
    n = r.link_names
    link_pairs = {tuple(sorted((n[a], n[b]))) for a, b in r.self_collision_pairs()}
    body_pairs = {
        tuple(sorted((v.body_name(a), v.body_name(b)))) for a, b in v.self_collision_pairs()
    }
    bodies = [v.body_name(i).split("+") for i in v.collision_links]
    roots = rigid_roots(r.model)
    for x in range(len(bodies)):
        for y in range(x + 1, len(bodies)):
            P, Q = bodies[x], bodies[y]
            if roots[n.index(P[0])] == roots[n.index(Q[0])]:
                continue  # rigidly joined: constant, never checked
            got = {tuple(sorted((p, q))) in link_pairs for p in P for q in Q}
            assert len(got) == 1, (P, Q)
            pair = tuple(sorted(("+".join(P), "+".join(Q))))
            assert (pair in body_pairs) == got.pop(), (P, Q)
    scene = shelf()
    Q = r.random_configurations(2000, rng)
    a = pc.CollisionChecker(r, scene).is_valid_batch(Q)
    np.testing.assert_array_equal(
        a, pc.CollisionChecker(r, scene, rigid_bodies=False).is_valid_batch(Q)
    )
    assert 0.05 < a.mean() < 0.98


def test_rigid_bodies_answer_as_links_do(panda, rng):
    """States: equal to the per-link checker's. Certified edges (RRT-like steps in a
    shelf): never free where the per-link checker finds a colliding state among 401."""
    scene = shelf()
    rigid = pc.CollisionChecker(panda, scene)
    links = pc.CollisionChecker(panda, scene, rigid_bodies=False)
    Q = panda.random_configurations(3000, rng)
    np.testing.assert_array_equal(rigid.is_valid_batch(Q), links.is_valid_batch(Q))
    t = np.linspace(0.0, 1.0, 401)[:, None]
    free = agree = 0
    for q0, q1 in rrt_edges(links, rng, 150):
        dense = bool(
            links.is_valid_batch(np.clip(q0 + t * (q1 - q0), panda.lower, panda.upper)).all()
        )
        got = rigid.check_edge(q0, q1).valid
        assert not (got and not dense), (q0, q1)
        free += dense
        agree += got == links.check_edge(q0, q1).valid
    assert free > 30 and agree >= 145


def test_held_fingers_that_touch_no_longer_make_every_state_collide(rng):
    """Closed, the Panda's fingers touch each other in every configuration: per link, every
    state is in self-collision; as one body with the hand they are never tested apart."""
    r = load_panda({"panda_finger_joint1": 0.0, "panda_finger_joint2": 0.0})
    Q = r.random_configurations(500, rng)
    assert not pc.CollisionChecker(r, pc.Scene(), rigid_bodies=False).is_valid_batch(Q).any()
    free = pc.CollisionChecker(r, pc.Scene()).is_valid_batch(Q)
    assert 0.3 < free.mean() < 1.0  # the Panda still folds onto itself sometimes
