"""A robot in a scene checked by python-fcl on the exact link meshes: what a Python user
writes today (one CollisionObject per link collision element, a DynamicAABBTree of the
obstacles, FK from Python, the checked self pairs), and the independent oracle of the
checker's tests and benchmarks (it shares only the FK, which is tested against yourdfpy).
Objects attached to the robot (`Robot.attach`) are their exact shapes (a mesh as its
triangles) on their virtual links.

    fr = FclRobot(robot, scene)
    fr.collides(q)                 # bool: any link touching an obstacle or a checked partner
    fr.edge_collides(q0, q1, n)    # first colliding state of n + 1 evenly spaced, or None
"""

from __future__ import annotations

import numpy as np

from planning_collision import (
    Box,
    Capsule,
    Cone,
    Convex,
    Cylinder,
    Mesh,
    PointCloud,
    Sphere,
    VoxelGrid,
)

from .peers import to_fcl

try:
    import fcl
except ImportError:  # pragma: no cover
    fcl = None


def _link_geometry(robot):
    """[(link index, fcl geometry, T_link_geometry)] from the URDF's collision elements:
    meshes as triangle BVHs (exact), primitives as they are."""
    import trimesh

    from planning_collision.io.urdf import read_urdf

    data = read_urdf(robot.urdf_path)
    out = []
    for name, rec in data.links.items():
        for el in rec.collisions:
            if el.kind == "mesh":
                m = trimesh.load(el.filename, force="mesh", process=False)
                v = np.asarray(m.vertices, float) * np.asarray(el.scale, float)
                g = fcl.BVHModel()
                g.beginModel(len(m.faces), len(v))
                g.addSubModel(v, np.asarray(m.faces, np.int64))
                g.endModel()
            elif el.kind == "box":
                g = fcl.Box(*el.size)
            elif el.kind == "cylinder":
                g = fcl.Cylinder(*el.size)
            else:
                g = fcl.Sphere(el.size[0])
            out.append((robot.link_index[name], g, np.asarray(el.origin, float)))
    for name, obj in getattr(robot, "attached", {}).items():  # exact shapes, in their frame
        for s, Tp in obj.parts:
            out.append((robot.link_index[name], _fcl_shape(s), np.asarray(Tp, float)))
    return out


def _transform(T):
    return fcl.Transform(np.ascontiguousarray(T[:3, :3]), np.ascontiguousarray(T[:3, 3]))


class FclRobot:
    """`robot` among the obstacles of `scene` in python-fcl (module doc). Convex hull pieces
    of the engine are not used: links are their URDF collision meshes."""

    def __init__(self, robot, scene, self_collision: bool = True):
        if fcl is None:
            raise ImportError("the python-fcl oracle needs python-fcl: pip install python-fcl")
        self.robot = robot
        self.links = _link_geometry(robot)
        self.objects = [fcl.CollisionObject(g, _transform(np.eye(4))) for _, g, _ in self.links]
        obstacles = []
        for ob in scene:
            parts = ob.shape if isinstance(ob.shape, (list, tuple)) else [(ob.shape, np.eye(4))]
            for s, Tl in parts:
                for g, Tg in _fcl_parts(s):
                    T = ob.T @ np.asarray(Tl) @ Tg
                    obstacles.append(fcl.CollisionObject(g, _transform(T)))
        self._keep = obstacles
        self.manager = fcl.DynamicAABBTreeCollisionManager()
        self.manager.registerObjects(obstacles)
        self.manager.setup()
        self.robot_manager = fcl.DynamicAABBTreeCollisionManager()
        self.robot_manager.registerObjects(self.objects)
        self.robot_manager.setup()
        pairs = robot.self_collision_pairs() if self_collision else np.zeros((0, 2))
        checked = {(int(a), int(b)) for a, b in pairs} | {(int(b), int(a)) for a, b in pairs}
        link_of = [li for li, _, _ in self.links]
        self.self_pairs = [
            (i, j)
            for i in range(len(link_of))
            for j in range(i + 1, len(link_of))
            if (link_of[i], link_of[j]) in checked
        ]

    def pose(self, q) -> None:
        """Move every link object to configuration q."""
        L = self.robot.fk_array(q)
        for obj, (li, _, To) in zip(self.objects, self.links, strict=True):
            obj.setTransform(_transform(L[li] @ To))
        self.robot_manager.update()

    def collides(self, q) -> bool:
        """True when a link touches an obstacle or a checked self partner at q."""
        self.pose(q)
        data = fcl.CollisionData()
        self.manager.collide(self.robot_manager, data, fcl.defaultCollisionCallback)
        if data.result.is_collision:
            return True
        req = fcl.CollisionRequest()
        for i, j in self.self_pairs:
            if fcl.collide(self.objects[i], self.objects[j], req, fcl.CollisionResult()):
                return True
        return False

    def edge_collides(self, q0, q1, n: int):
        """The first t = k / n (k = 0..n) whose state collides, or None."""
        q0 = np.asarray(q0, float)
        q1 = np.asarray(q1, float)
        for k in range(n + 1):
            t = k / n
            if self.collides(q1 if k == n else q0 + t * (q1 - q0)):
                return t
        return None


def _fcl_parts(s):
    """[(python-fcl geometry, T_shape_part)] of an obstacle shape: a point cloud as a ball
    per point, a voxel grid as a box per occupied cell (their exact meaning), any other shape
    as itself."""
    if isinstance(s, PointCloud):
        ball = fcl.Sphere(float(s.radius))
        return [(ball, _translation(p)) for p in s.points]
    if isinstance(s, VoxelGrid):
        h = float(s.voxel_size)
        cube = fcl.Box(h, h, h)
        centres = s.origin + (np.asarray(s.cells, float) + 0.5) * h
        return [(cube, _translation(c)) for c in centres]
    return [(_fcl_shape(s), np.eye(4))]


def _translation(p):
    T = np.eye(4)
    T[:3, 3] = p
    return T


def _fcl_shape(s):
    """python-fcl geometry of an obstacle shape (a Mesh as a triangle BVH)."""
    if isinstance(s, (Sphere, Box, Capsule, Cylinder, Cone, Convex, Mesh)):
        g = to_fcl(s)
        if g is not None:
            return g
    raise TypeError(f"no exact python-fcl form for a {type(s).__name__} obstacle")
