"""What a user reads of a configuration, per link: contacts and the refusals built on them
name the links that touch (not a rigid body's links joined by "+"), `link_distances` has a
row per collision link, and `clearance(q, self_collision=False)` is the scene's clearance
alone. The oracle is the engine's pair queries on each piece (`Scene.min_distance`,
`pc.distance`), one by one."""

from __future__ import annotations

import numpy as np
import pytest

import planning_collision as pc
from planning_collision import robots
from planning_collision.plugins.ompl import check_free

FINGERS = {"panda_finger_joint1": 0.04, "panda_finger_joint2": 0.04}
READY = np.array([0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785])
HAND = ("panda_link7", "panda_hand", "panda_leftfinger", "panda_rightfinger")


@pytest.fixture(scope="module")
def panda(example_robot_data):
    return robots.load("panda", fixed_joints=FINGERS)


def _at(p) -> np.ndarray:
    T = np.eye(4)
    T[:3, 3] = p
    return T


def _piece_distances(robot, scene, q) -> dict:
    """{link: its pieces' least distance to the scene} by the scene's own queries."""
    out: dict = {}
    for p, T in zip(robot.pieces, robot.piece_poses(q), strict=True):
        out[p.link] = min(out.get(p.link, np.inf), scene.min_distance(p.shape, T).distance)
    return out


def _self_pairs(robot, q) -> dict:
    """{(link a, link b): distance} of the checked pairs between different rigid groups."""
    from planning_collision.robot.rigid import rigid_roots

    roots = rigid_roots(robot.model)
    P = robot.piece_poses(q)
    c = robot.collision
    out = {}
    for a, b in robot.self_collision_pairs():
        if roots[a] == roots[b]:
            continue
        out[robot.link_names[a], robot.link_names[b]] = min(
            pc.distance(robot.pieces[i].shape, P[i], robot.pieces[j].shape, P[j]).distance
            for i in range(c.link_start[a], c.link_start[a + 1])
            for j in range(c.link_start[b], c.link_start[b + 1])
        )
    return out


def test_a_finger_touching_an_obstacle_is_named_not_its_rigid_body(panda):
    """A 1 cm ball at the left fingertip: the contact, the refusal of a start there and the
    link rows name panda_leftfinger, the link whose pieces touch it, where they named
    "panda_link7+panda_hand+panda_leftfinger+panda_rightfinger"."""
    T = panda.fk(READY)
    tip = T["panda_leftfinger"][:3, 3] + 0.05 * T["panda_hand"][:3, 2]  # 5 cm out of the hand
    scene = pc.Scene()
    scene.add(pc.Sphere(0.01), _at(tip), name="pebble")
    checker = pc.CollisionChecker(panda, scene)
    assert "+".join(HAND) in checker.body_names  # the checker checks the hand as one body
    truth = _piece_distances(panda, scene, READY)
    touching = {n for n, d in truth.items() if d <= 0.0}
    assert touching == {"panda_leftfinger"}
    found = checker.contacts(READY)
    assert {c.body for c in found} == touching
    assert all(c.other == "obstacle 'pebble'" and "+" not in c.body for c in found)
    with pytest.raises(ValueError, match=r"start is in collision: panda_leftfinger touches"):
        check_free(checker, READY, "start")
    ld = checker.link_distances(READY)
    assert list(ld.links) == [n for n in panda.link_names if n in truth]
    for name, d in zip(ld.links, ld.scene, strict=True):
        assert d == pytest.approx(truth[name], abs=1e-7) or (d <= 0 and truth[name] <= 0)
    assert ld.name[list(ld.links).index("panda_leftfinger")] == "pebble"
    body = checker.link_distances(READY, bodies=True)  # the checker's own rows, as before
    assert "+".join(HAND) in list(body.links) and len(body.links) == 8


def test_self_contacts_name_both_links(panda, rng):
    """Colliding configurations of the Panda alone: every self contact names two links,
    exactly the checked pairs between rigid groups whose pieces touch."""
    checker = pc.CollisionChecker(panda, pc.Scene())
    seen = 0
    for q in panda.random_configurations(400, rng):
        if checker.is_valid(q):
            continue
        truth = {pair for pair, d in _self_pairs(panda, q).items() if d <= 0.0}
        got = {(c.body, c.other) for c in checker.contacts(q)}
        assert got == truth, q
        seen += any(a in HAND[1:] or b in HAND[1:] for a, b in got)
        if seen >= 3:
            break
    assert seen >= 3  # contacts of the hand or a finger, once named as the whole group


def test_scene_clearance_is_not_hidden_by_the_robots_own_pairs(panda, rng):
    """`clearance(q, self_collision=False)` is the least distance of a link to the scene
    (the pair queries' answer), also where a self pair is nearer and holds `clearance`."""
    scene = pc.Scene()
    scene.add(pc.Box((0.4, 0.4, 0.02)), _at((0.5, 0.0, -0.2)), name="table")
    checker = pc.CollisionChecker(panda, scene)
    Q = panda.random_configurations(200, rng)
    Q = Q[checker.is_valid_batch(Q)]
    hidden = 0
    for q in Q[:30]:
        scene_d = min(_piece_distances(panda, scene, q).values())
        self_d = min(_self_pairs(panda, q).values())
        assert checker.clearance(q, self_collision=False) == pytest.approx(scene_d, abs=1e-7)
        assert checker.clearance(q) == pytest.approx(min(scene_d, self_d), abs=1e-7)
        hidden += self_d < scene_d
    assert hidden >= 5  # the robot's own pairs held the full clearance below the scene's
    with pytest.raises(ValueError, match="self_collision"):
        checker.clearance(Q[0], self_collision="no")
