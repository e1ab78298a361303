"""Everything `planning_collision.viz` asks of the engine beyond the public `Scene` and
`Robot` objects, in one place: the engine is being restructured (the bounding-box module
will be renamed; a CollisionChecker will replace the per-piece loop below), and these
few functions are what then changes.
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


def link_status(scene, robot, q) -> dict[str, LinkStatus]:
    """{link: LinkStatus} for every link with collision pieces at configuration q, in
    `robot.link_names` order, from the scene's own queries on each posed piece
    (``scene.in_collision`` and ``scene.min_distance``). Self-collision is not checked."""
    out: dict[str, LinkStatus] = {}
    for p, T in zip(robot.pieces, robot.piece_poses(q), strict=True):
        hit = scene.in_collision(p.shape, T)
        r = scene.min_distance(p.shape, T)
        old = out.get(p.link)
        if old is None or r.distance < old.clearance:
            out[p.link] = LinkStatus(hit or (old is not None and old.colliding), r.distance, r.id)
        elif hit:
            out[p.link] = old._replace(colliding=True)
    return out
