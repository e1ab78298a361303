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

`rigid_bodies(robot)` gives the checker's view of a robot: a `Robot` sharing the robot's
kinematics and ACM, with each body's pieces moved onto its first collision link (its
anchor: any member would do, all move alike) and the collision tables, radii, motion-bound
tables and checked pairs of those bodies. A robot whose bodies are single links is its own
view.
"""

from __future__ import annotations

import hashlib

import numpy as np
import numpy.typing as npt

from .bounds import MotionBoundTables
from .geometry import LinkPiece, collision_model, link_radii
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


class RigidBodies(Robot):
    """A robot seen as rigid bodies (module doc): a `Robot` sharing the robot's kinematics
    and ACM, whose geometry is that of the bodies, so every `Robot` method (piece poses,
    motion bounds, self-collision counts) answers for the bodies. Besides:

    members : {anchor link index: (member link names, anchor first)};
    body_name(i) : "panda_link7+panda_hand+panda_leftfinger+panda_rightfinger";
    self_collision_pairs() : the checked pairs of bodies (anchor link indices);
    geometry_key : the robot's, marked as merged (tables cached per geometry differ).
    """

    def __init__(self, robot: Robot, anchor: np.ndarray, pairs):
        """anchor : (n_links,) the anchor link of each collision link's body; pairs: the
        robot's checked link pairs between different rigid groups (so different bodies)."""
        self.__dict__.update(robot.__dict__)
        names = robot.link_names
        T = robot.fk_array(np.clip(np.zeros(robot.dof), robot.lower, robot.upper))
        index = robot.link_index
        pieces = []
        for p in robot.pieces:
            li = index[p.link]
            r = int(anchor[li])
            if r != li:  # the member's pose in its anchor's frame never changes
                p = LinkPiece(names[r], p.shape, np.linalg.inv(T[r]) @ T[li] @ p.pose)
            pieces.append(p)
        self.pieces = sorted(pieces, key=lambda p: index[p.link])  # stable: URDF order kept
        self.collision = collision_model(self.pieces, len(names), index)
        has_geometry = np.diff(self.collision.link_start) > 0
        self.collision_links = np.flatnonzero(has_geometry).astype(np.int32)
        self.link_radius = link_radii(self.collision, len(names))
        self.bounds = MotionBoundTables(
            robot.model, self.link_radius, self.collision_links, robot.dof
        )
        members: dict[int, list[str]] = {}
        for li in robot.collision_links:
            members.setdefault(int(anchor[li]), []).append(names[li])
        self.members = {r: tuple(m) for r, m in members.items()}
        body_pairs = {tuple(sorted((int(anchor[a]), int(anchor[b])))) for a, b in pairs}
        self._pairs = np.array(sorted(body_pairs), np.int32).reshape(-1, 2)
        tag = hashlib.sha1(np.asarray(anchor, np.int64).tobytes()).hexdigest()[:12]
        self.geometry_key = f"{robot.geometry_key}-rigid-{tag}"

    def __repr__(self) -> str:
        return f"RigidBodies({self.name!r}, {len(self.members)} bodies)"

    def body_name(self, link: int) -> str:
        return "+".join(self.members[int(link)])

    def self_collision_pairs(self) -> npt.NDArray[np.int32]:
        """(k, 2) anchor link indices of the checked pairs of bodies (a < b)."""
        return self._pairs.copy()


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
    for li in robot.collision_links:  # in index order: a body's first link is its anchor
        key = (int(roots[li]), frozenset(checked.get(int(li), ())))
        anchor[li] = first.setdefault(key, int(li))
    if len(first) == len(robot.collision_links):
        return robot
    return RigidBodies(robot, anchor, pairs)
