"""Edge-check references shared by the checker's tests and its certification script:
adversarial scenes and the dense-sampling oracle.

- `dense_first_collision(checker, q0, q1, n)`: the first of n + 1 evenly spaced states of
  the motion that collides (the checker's own state check, exact on its model), or None.
- `thin_obstacles(robot, checker_cls, rng, ...)`: a scene of thin plates (2-5 mm) and rods
  placed across the motions of a robot's links, with the motions: the case sampled edge
  checks step over.
- `rrt_edges(checker, rng, n, step)`: edges as an RRT draws them: a valid state and a state
  `step` away from it in a random direction, clipped to the joint limits.
"""

from __future__ import annotations

import numpy as np

import planning_collision as pc


def dense_first_collision(checker, q0, q1, n: int = 2000):
    """(first colliding t or None, states) for n + 1 states t = k / n of q0 -> q1."""
    robot = checker.robot
    t = np.linspace(0.0, 1.0, n + 1)
    q0 = np.asarray(q0, float)
    q1 = np.asarray(q1, float)
    Q = q0 + t[:, None] * (q1 - q0)
    Q[-1] = q1
    Q = np.clip(Q, robot.lower, robot.upper)  # round-off at the limits
    free = checker.is_valid_batch(Q)
    bad = np.flatnonzero(~free)
    return (float(t[bad[0]]) if bad.size else None), Q


def rrt_edges(checker, rng, n: int, step=(0.05, 1.0)):
    """n edges (q0, q1): q0 valid, q1 a random step (uniform in `step`, radians of joint
    space) away in a uniformly random direction, clipped to the joint limits."""
    robot = checker.robot
    out = []
    while len(out) < n:
        Q = robot.random_configurations(4 * n, rng)
        for q0 in Q[checker.is_valid_batch(Q)]:
            d = rng.normal(size=robot.dof)
            d /= np.linalg.norm(d)
            q1 = np.clip(q0 + d * rng.uniform(*step), robot.lower, robot.upper)
            out.append((q0, q1))
            if len(out) == n:
                break
    return out


def thin_obstacles(robot, rng, n_edges: int, thickness=(0.002, 0.005), base_scene=None):
    """A scene (the base scene's obstacles, plus one thin obstacle per motion) and
    `n_edges` motions (q0, q1) that each thin obstacle lies across.

    For each motion: two random configurations; a link point's path between them; at a
    random t in (0.2, 0.8) a plate of `thickness` (normal along the path's direction there)
    or a rod (radius half the thickness, across the path) at the point's position. The
    obstacle is kept when both end states stay free of it (checked on the robot model;
    with all the obstacles together an end state may collide with another motion's)."""
    scene = pc.Scene()
    if base_scene is not None:
        for ob in base_scene:
            scene.add(ob.shape, ob.T, ob.name)
    links = [i for i in robot.collision_links if robot.link_radius[i] > 0.0]
    edges = []
    while len(edges) < n_edges:
        q0, q1 = robot.random_configurations(2, rng)
        li = int(links[rng.integers(len(links))])
        t = rng.uniform(0.2, 0.8)
        L = np.stack([robot.fk_array(q0 + s * (q1 - q0))[li] for s in (t - 0.01, t, t + 0.01)])
        p = L[1, :3, 3]
        v = L[2, :3, 3] - L[0, :3, 3]
        if np.linalg.norm(v) < 1e-6:
            continue
        v /= np.linalg.norm(v)
        T = np.eye(4)
        T[:3, :3] = _frame_with_z(v)
        T[:3, 3] = p
        h = float(rng.uniform(*thickness))
        shape = pc.Box((0.3, 0.3, h)) if rng.random() < 0.5 else pc.Cylinder(h / 2, 0.3)
        if shape.__class__ is pc.Cylinder:  # a rod across the path, not along it
            T[:3, :3] = T[:3, :3] @ np.array([[1.0, 0, 0], [0, 0, -1.0], [0, 1.0, 0]])
        if not (_touches(robot, shape, T, q0) or _touches(robot, shape, T, q1)):
            scene.add(shape, T, name=f"thin {len(edges)}")
            edges.append((q0, q1))
    return scene, edges


def _touches(robot, shape, T, q) -> bool:
    """True when a collision piece of the robot at q touches `shape` posed by T."""
    P = robot.piece_poses(q)
    return any(pc.collide(p.shape, P[k], shape, T) for k, p in enumerate(robot.pieces))


def _frame_with_z(z):
    """A rotation whose third column is the unit vector z."""
    x = np.cross(z, [1.0, 0.0, 0.0])
    if np.linalg.norm(x) < 0.5:
        x = np.cross(z, [0.0, 1.0, 0.0])
    x /= np.linalg.norm(x)
    return np.stack([x, np.cross(z, x), z], axis=1)
