"""Everything `planning_collision.viz` asks of the engine beyond the public `Scene` and
`Robot` objects, in one place: the primitives' world boxes, and each link's status from
the `CollisionChecker`.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..geometry.shapes import Shape
from ..primitives import convex_block, primitives

__all__ = ["LinkStatus", "engine_obstacle_bounds", "engine_link_bounds", "link_status"]


def engine_obstacle_bounds(shape, T) -> tuple[np.ndarray, np.ndarray]:
    """The engine's world AABB ``(lo (3,), hi (3,))`` of an obstacle (a shape, or a list of
    ``(shape, T_object_part)``) posed by ``T_world_object``: the union of its primitives'
    boxes (``planning_collision.primitives.primitives``). Infinite for a halfspace."""
    T = np.asarray(T, float)
    parts = [(shape, T)] if isinstance(shape, Shape) else [(s, T @ Tp) for s, Tp in shape]
    blocks = [primitives(s, Tw) for s, Tw in parts]
    lo = np.min([b.lo.min(axis=0) for b in blocks], axis=0)
    hi = np.max([b.hi.max(axis=0) for b in blocks], axis=0)
    return lo, hi


def engine_link_bounds(robot, q) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """{link: (lo (3,), hi (3,))}: the engine's world AABB of each link with collision
    pieces at configuration q, its pieces posed by `robot.piece_poses` and boxed by
    ``planning_collision.primitives.convex_block``."""
    block = convex_block([p.shape for p in robot.pieces], robot.piece_poses(q))
    out: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for k, p in enumerate(robot.pieces):
        lo, hi = out.get(p.link, (block.lo[k], block.hi[k]))
        out[p.link] = (np.minimum(lo, block.lo[k]), np.maximum(hi, block.hi[k]))
    return out


class LinkStatus(NamedTuple):
    """One link against the scene: in collision (touching counts), its clearance (signed
    distance to the nearest obstacle, m; negative = penetration; inf for an empty scene),
    and that obstacle's id (None for an empty scene)."""

    colliding: bool
    clearance: float
    nearest: int | None


def link_status(scene, robot, q, checker=None) -> dict[str, LinkStatus]:
    """{link: LinkStatus} for every link with collision pieces at configuration q, in
    `robot.link_names` order, from a `CollisionChecker` (`checker`, or one built here: keep
    one for repeated calls, as the viewer does): the distance of each link's model to the
    scene and its nearest obstacle in one compiled call; a link is colliding when it touches
    an obstacle or a checked self-collision partner. The checker finds overlaps without
    measuring them, so for links touching an obstacle the clearance is the depth from the
    scene's own queries on their pieces (``scene.min_distance``). A checker with
    `rigid_bodies` gives each link its body's row: colliding when the body is, and the
    body's clearance (a lower bound on the link's) unless the link touches an obstacle."""
    from ..checker import CollisionChecker

    checker = checker or CollisionChecker(robot, scene, rigid_bodies=False)
    r = checker.link_distances(q)
    rows = {
        name: (float(d), int(obj), float(sd))
        for body, d, obj, sd in zip(r.links, r.scene, r.object, r.self_distance, strict=True)
        for name in body.split("+")
    }
    touching = {name for name, (d, _, _) in rows.items() if d <= 0.0}
    depth: dict[str, tuple[float, int | None]] = {}
    if touching:
        for p, T in zip(robot.pieces, robot.piece_poses(q), strict=True):
            if p.link in touching:
                m = scene.min_distance(p.shape, T)
                if p.link not in depth or m.distance < depth[p.link][0]:
                    depth[p.link] = (m.distance, m.id)
    out: dict[str, LinkStatus] = {}
    for name in robot.link_names:
        if name not in rows:
            continue
        d, obj, sd = rows[name]
        if name in depth:
            d, obj = depth[name]
        nearest = None if (obj is None or obj < 0) else obj
        out[name] = LinkStatus(bool(d <= 0.0 or sd <= 0.0), d, nearest)
    return out
