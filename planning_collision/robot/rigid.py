"""Rigid bodies: links joined by joints that never move, checked as one body.

A link whose joint to its parent is fixed in the URDF or held at a value (a gripper's
fingers while planning the arm) moves exactly as its parent does. The Panda's hand, its
two fingers and link7 are one rigid body; the checker gains nothing from testing them
apart: against the scene one body costs one query where four did, and every self pair
with a member becomes one pair with the body (the Panda's 23 checked pairs become 10).

A pair of links rigidly joined keeps its distance forever: it collides in every
configuration or in none, so, as MoveIt's setup assistant allows pairs "always" or "never"
in collision, it is not checked (the Panda's fingers held closed touch each other; checked
per link, every configuration would be in self-collision). Rigidly joined links share a
body only when the ACM treats them alike (the same checked partners outside their group):
then the ACM checks all pairs of links of two bodies or none, and the bodies' pair is
checked exactly when theirs are (a Kinova's finger tips, allowed against link 4 where its
fingers are not, stay bodies of their own).

`rigid_bodies(robot)` gives the checker's view of a robot: a `RigidBodies` record beside the
robot, reading its kinematics and limits, with each body's pieces moved onto its first
collision link (its anchor: any member would do, all move alike) and the collision tables,
radii, motion-bound tables and checked pairs of those bodies. A robot whose bodies are
single links is its own view.
"""

from __future__ import annotations

import dataclasses
import hashlib

import numpy as np
import numpy.typing as npt

from .bodies import LinkBodies
from .bounds import MotionBoundTables
from .geometry import CollisionModel, LinkPiece, collision_model, link_radii
from .robot import Robot

__all__ = ["RigidBodies", "rigid_bodies", "rigid_roots"]


def rigid_roots(model) -> npt.NDArray[np.int64]:
    """(n_links,) the root link of each link's rigid body: itself when a configuration
    coordinate drives its joint (or it is the tree's root), else its parent's root."""
    roots = np.arange(len(model.parent))
    for i, (p, k) in enumerate(zip(model.parent, model.qidx, strict=True)):
        if p >= 0 and k < 0:  # parent[i] < i: the parent's root is known
            roots[i] = roots[p]
    return roots


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class RigidBodies(LinkBodies):
    """A robot seen as rigid bodies (module doc): a record of the bodies' geometry beside
    the robot it views, whose kinematics, limits and names it reads (never copies), so the
    geometry methods of `LinkBodies` (piece poses, link boxes, motion bounds) answer for
    the bodies and the checker builds its model from it as from a robot.

    robot : the `Robot` viewed;
    pieces, collision, collision_links, link_radius, bounds : the bodies' geometry, each
        body's pieces on its anchor link (as a Robot's fields of the same names);
    members : {anchor link index: (member link names, anchor first)};
    pairs : (k, 2) int32, the checked pairs of bodies (anchor link indices, a < b);
    geometry_key : the robot's, marked as merged (tables cached per geometry differ);
    version : the robot's version (its ACM's) the bodies and pairs were made from.
    """

    robot: Robot
    pieces: tuple
    collision: CollisionModel
    collision_links: npt.NDArray[np.int32]
    link_radius: npt.NDArray[np.float64]
    bounds: MotionBoundTables
    members: dict
    pairs: npt.NDArray[np.int32]
    geometry_key: str
    version: int

    # what the bodies read of the robot they view
    name = property(lambda self: self.robot.name)
    model = property(lambda self: self.robot.model)
    dof = property(lambda self: self.robot.dof)
    lower = property(lambda self: self.robot.lower)
    upper = property(lambda self: self.robot.upper)
    continuous = property(lambda self: self.robot.continuous)
    link_names = property(lambda self: self.robot.link_names)
    link_index = property(lambda self: self.robot.link_index)
    joint_names = property(lambda self: self.robot.joint_names)
    cache_dir = property(lambda self: self.robot.cache_dir)

    def validate_q(self, q, name: str = "q", check_limits: bool = False):
        return self.robot.validate_q(q, name, check_limits)

    def fk_array(self, q, out=None):
        return self.robot.fk_array(q, out)

    def random_configurations(self, n: int, rng=None):
        return self.robot.random_configurations(n, rng)

    def __repr__(self) -> str:
        return f"RigidBodies({self.name!r}, {len(self.members)} bodies)"

    def body_name(self, link: int) -> str:
        return "+".join(self.members[int(link)])

    def self_collision_pairs(self) -> npt.NDArray[np.int32]:
        """(k, 2) anchor link indices of the checked pairs of bodies (a < b)."""
        return self.pairs.copy()


def _rigid_view(robot: Robot, anchor: np.ndarray, pairs) -> RigidBodies:
    """The `RigidBodies` of robot: anchor (n_links,) the anchor link of each collision
    link's body; pairs: the robot's checked link pairs between different rigid groups (so
    different bodies)."""
    names = robot.link_names
    T = robot.fk_array(np.clip(np.zeros(robot.dof), robot.lower, robot.upper))
    index = robot.link_index
    moved = []
    for p in robot.pieces:
        li = index[p.link]
        r = int(anchor[li])
        if r != li:  # the member's pose in its anchor's frame never changes
            p = LinkPiece(names[r], p.shape, np.linalg.inv(T[r]) @ T[li] @ p.pose)
        moved.append(p)
    pieces = sorted(moved, key=lambda p: index[p.link])  # stable: URDF order kept
    collision = collision_model(pieces, len(names), index)
    links = np.flatnonzero(np.diff(collision.link_start) > 0).astype(np.int32)
    radius = link_radii(collision, len(names))
    members: dict[int, list[str]] = {}
    for li in robot.collision_links:
        members.setdefault(int(anchor[li]), []).append(names[li])
    body_pairs = {tuple(sorted((int(anchor[a]), int(anchor[b])))) for a, b in pairs}
    tag = hashlib.sha1(np.asarray(anchor, np.int64).tobytes()).hexdigest()[:12]
    return RigidBodies(
        robot=robot,
        pieces=tuple(pieces),
        collision=collision,
        collision_links=links,
        link_radius=radius,
        bounds=MotionBoundTables(robot.model, radius, links, robot.dof),
        members={r: tuple(m) for r, m in members.items()},
        pairs=np.array(sorted(body_pairs), np.int32).reshape(-1, 2),
        geometry_key=f"{robot.geometry_key}-rigid-{tag}",
        version=robot.version,
    )


def rigid_bodies(robot):
    """The robot as the checker checks it: a `RigidBodies` view when some collision links
    share a body (rigidly joined, alike in the ACM: module doc), else the robot itself (so
    is a view)."""
    if isinstance(robot, RigidBodies):
        return robot
    roots = rigid_roots(robot.model)
    # a pair within a rigid group never moves: neither checked nor anyone's partner
    pairs = [(int(a), int(b)) for a, b in robot.self_collision_pairs() if roots[a] != roots[b]]
    checked: dict[int, set] = {}
    for a, b in pairs:
        checked.setdefault(a, set()).add(b)
        checked.setdefault(b, set()).add(a)
    anchor = np.full(len(roots), -1)
    first: dict[tuple, int] = {}
    # an attached object (robot/attached.py) is a body of its own: the others stay the
    # bodies of the robot without it (the checker reuses their self-pair tables)
    held = {robot.link_index[n] for n in getattr(robot, "attached", ())}
    for li in robot.collision_links:  # in index order: a body's first link is its anchor
        key = (int(roots[li]), frozenset(checked.get(int(li), ())), li if li in held else -1)
        anchor[li] = first.setdefault(key, int(li))
    if len(first) == len(robot.collision_links):
        return robot
    return _rigid_view(robot, anchor, pairs)
