"""Objects attached to a robot's links: a grasped box that moves with the hand.

MoveIt's ``AttachedCollisionObject`` is the reference: an object (one shape, or a compound
of shapes each posed in the object's frame) attached to a robot link at a pose in that
link's frame, moving with the link in every query, allowed to touch the link and its
``touch_links`` (a gripper's fingers) and checked against everything else: the scene and
the robot's other links.

Here an attached object *is* a link: a virtual link named after the object, joined to its
parent link by a fixed joint at the attach pose (`extend_tree`), whose pieces are the
object's shapes (a `Mesh` is decomposed as a link mesh is: robot/convexify.py), with the
allowed-collision matrix entries ``(object, link, "attached")`` and ``(object, t, "touch")``
for each touch link. Everything that reads links then handles it without a special case:
forward kinematics, rigid bodies (robot/rigid.py: an object held by a gripper whose fingers
are held is part of the hand's rigid group), motion bounds (its reach counted from the
attach pose), the checker's self pairs and tables, distances, contacts, the viewer and the
glTF export. `Robot.attach` and `Robot.detach` publish the robot's state with or without
it (robot/robot.py); a checker sees the change through the robot's version.
"""

from __future__ import annotations

import dataclasses
import hashlib

import numpy as np

from ..geometry import Box, Capsule, Cone, Convex, Cylinder, Mesh, Sphere, as_pose
from ..kcd import object_parts
from ..kernels.robot.fk import FIXED
from .convexify import decompose_mesh
from .geometry import LinkPiece
from .kinematics import KinematicTree

__all__ = [
    "AttachedObject",
    "SceneTransfers",
    "attached_object",
    "extend_tree",
    "object_key",
    "object_pieces",
]

# the shapes a robot's pieces can be (a Mesh is decomposed into Convex pieces)
_SOLIDS = (Sphere, Box, Capsule, Cylinder, Cone, Convex)


@dataclasses.dataclass(frozen=True, eq=False)
class AttachedObject:
    """An object attached to a robot link (module doc).

    name : the object's name, also the name of its virtual link (in ``robot.link_names``,
        the checker's body names and contacts);
    link : the robot link it is attached to;
    parts : ((Shape, T_object_shape (4, 4) read-only), ...): its shapes in its own frame
        (`Scene.add`'s compound form, so ``scene.add(list(obj.parts), T, name=obj.name)``
        puts it back in a scene);
    pose : (4, 4) read-only, T_link_object;
    touch_links : the links it may touch besides `link` (MoveIt's touch_links).
    """

    name: str
    link: str
    parts: tuple
    pose: np.ndarray
    touch_links: tuple

    def __repr__(self) -> str:
        kinds = ", ".join(type(s).__name__ for s, _ in self.parts)
        touch = f", touch_links={list(self.touch_links)}" if self.touch_links else ""
        return f"AttachedObject({self.name!r} on {self.link!r}: {kinds}{touch})"


def _frozen(T: np.ndarray) -> np.ndarray:
    T = np.array(T, np.float64)
    T.setflags(write=False)
    return T


def attached_object(link_names, name, link, shapes, pose=None, touch_links=()) -> AttachedObject:
    """An `AttachedObject`, validated against the robot's current links `link_names`
    (ValueError or TypeError naming the argument and the value)."""
    if not isinstance(name, str) or not name:
        raise TypeError(f"name must be a non-empty str, got {name!r}")
    known = set(link_names)
    if name in known:
        raise ValueError(
            f"name {name!r} is already a link of the robot (or an attached object); "
            "an attached object needs a name of its own"
        )
    if not isinstance(link, str) or link not in known:
        raise ValueError(f"link {link!r} is not a link of the robot; links: {list(link_names)}")
    T = as_pose(np.eye(4) if pose is None else pose, "pose")
    parts = object_parts(shapes, np.eye(4), f"attached object {name!r}")
    for k, (s, _) in enumerate(parts):
        if not isinstance(s, (*_SOLIDS, Mesh)):
            raise ValueError(
                f"attached object {name!r} part {k}: a {type(s).__name__} cannot be attached "
                "(a sphere, box, capsule, cylinder, cone, convex or mesh can)"
            )
    if isinstance(touch_links, str):
        touch_links = (touch_links,)
    touch = []
    for t in touch_links:
        if not isinstance(t, str) or t not in known:
            raise ValueError(
                f"touch_links names {t!r}, which is not a link of the robot; links: "
                f"{list(link_names)}"
            )
        if t != link and t not in touch:
            touch.append(t)
    return AttachedObject(
        name, link, tuple((s, _frozen(Tp)) for s, Tp in parts), _frozen(T), tuple(touch)
    )


_MESH_PIECES: dict = {}  # {(Mesh, hull_ratio, max_pieces): pieces}: a re-attached mesh


def object_pieces(obj: AttachedObject, hull_ratio: float, max_pieces: int) -> list[LinkPiece]:
    """The pieces of `obj`'s virtual link, in the object's frame: each solid shape as it is,
    each `Mesh` decomposed as a link mesh is (its whole surface inside; once per process)."""
    out = []
    for s, Tp in obj.parts:
        if not isinstance(s, Mesh):
            out.append(LinkPiece(obj.name, s, np.array(Tp)))
            continue
        key = (s, float(hull_ratio), int(max_pieces))
        if key not in _MESH_PIECES:
            _MESH_PIECES[key] = decompose_mesh(s.vertices, s.faces, hull_ratio, max_pieces).pieces
        for p in _MESH_PIECES[key]:
            ctr = 0.5 * (p.min(axis=0) + p.max(axis=0))
            T = np.array(Tp)
            T[:3, 3] += T[:3, :3] @ ctr
            out.append(LinkPiece(obj.name, Convex(p - ctr), T))
    return out


def extend_tree(tree: KinematicTree, objects) -> KinematicTree:
    """`tree` with one virtual link per object, after its links (parents first still
    holds), each joined to its parent link by a fixed joint at the object's pose."""
    if not objects:
        return tree
    m = tree.model
    n = len(objects)
    parent = np.array([tree.link_index[o.link] for o in objects], np.int32)
    z = np.zeros((n, 3))
    z[:, 2] = 1.0
    model = m._replace(
        parent=np.concatenate([m.parent, parent]),
        jtype=np.concatenate([m.jtype, np.full(n, FIXED, m.jtype.dtype)]),
        axis=np.concatenate([m.axis, z]),
        origin=np.ascontiguousarray(np.concatenate([m.origin, [o.pose for o in objects]])),
        qidx=np.concatenate([m.qidx, np.full(n, -1, m.qidx.dtype)]),
        mult=np.concatenate([m.mult, np.ones(n)]),
        offset=np.concatenate([m.offset, np.zeros(n)]),
    )
    for a in model:
        a.setflags(write=False)
    names = list(tree.link_names) + [o.name for o in objects]
    return dataclasses.replace(
        tree,
        link_names=names,
        link_index={ln: i for i, ln in enumerate(names)},
        link_joint=list(tree.link_joint) + [f"{o.name}:attached" for o in objects],
        model=model,
    )


def object_key(objects) -> str:
    """A digest of the objects (names, links, shapes, poses): keys what is derived from a
    robot's geometry with them (the checker's outer hulls and self-pair tables)."""
    h = hashlib.sha256()
    for o in objects:
        h.update(f"{o.name}\0{o.link}\0".encode())
        h.update(np.ascontiguousarray(o.pose).tobytes())
        for s, Tp in o.parts:
            h.update(type(s).__name__.encode())
            h.update(np.ascontiguousarray(Tp).tobytes())
            if isinstance(s, Mesh):
                h.update(s.vertices.tobytes() + s.faces.tobytes())
            else:  # the shape's kernel row: its sizes and points
                row = s.table_row()
                h.update(np.ascontiguousarray(row.params).tobytes())
                h.update(np.ascontiguousarray(row.points).tobytes())
    return h.hexdigest()[:16]


class SceneTransfers:
    """`Robot`'s moves of objects between the scene and the robot (MoveIt's attach of a
    world object and its release): a mixin over `attach`, `detach`, `fk` and `attached`."""

    def attach_from_scene(
        self, scene, id: int, link: str, q, *, touch_links=(), name: str | None = None
    ) -> AttachedObject:
        """Move obstacle `id` of `scene` onto the robot (MoveIt's attach of a world object):
        attached to `link` where it is relative to the link at configuration q (dof,),
        then removed from the scene. Named `name`, else by its obstacle name. Until the
        second step, a query in another thread may see it in both (a collision, never a
        wrong free)."""
        ob = scene.get(id)
        name = name if name is not None else ob.name
        if name is None:
            raise ValueError(f"obstacle {id} has no name: pass name= for the attached object")
        if link not in self.link_index:
            raise ValueError(f"link {link!r} is not a link of robot {self.name!r}")
        pose = np.linalg.inv(self.fk(self.validate_q(q))[link]) @ ob.T
        obj = self.attach(name, link, ob.shape, pose, touch_links=touch_links)
        scene.remove(id)
        return obj

    def detach_to_scene(self, name: str, scene, q) -> int:
        """Put the attached object `name` into `scene` where it is at configuration q
        (dof,), then detach it; returns its obstacle id (a query in another thread may see
        it in both meanwhile: a collision, never a wrong free)."""
        obj = self.attached.get(name)
        if obj is None:
            raise ValueError(
                f"no object {name!r} is attached to robot {self.name!r}; attached: "
                f"{sorted(self.attached)}"
            )
        T = self.fk(self.validate_q(q))[name]
        (s0, T0), *more = obj.parts
        one = not more and np.array_equal(T0, np.eye(4))  # a plain shape stays one
        oid = scene.add(s0 if one else list(obj.parts), T, name=name)
        self.detach(name)
        return oid
