"""A robot in a scene checked by coal on the exact link meshes: the coal version of the
pipeline a Python user writes (fcl_robot.py): one CollisionObject per URDF collision
element, the obstacles in a DynamicAABBTree, FK from Python, the checked self pairs.

    cr = CoalRobot(robot, scene)
    cr.collides(q)                 # bool

coal's `setTransform` leaves an object's bounding box stale: every moved link gets
`computeAABB()` before the broadphase sees it.
"""

from __future__ import annotations

import numpy as np

from planning_collision import Box, Cylinder, Sphere

try:
    import coal
except ImportError:  # pragma: no cover
    coal = None


def _tf(T):
    return coal.Transform3s(np.ascontiguousarray(T[:3, :3]), np.ascontiguousarray(T[:3, 3]))


def _shape(s):
    if isinstance(s, Box):
        return coal.Box(*s.extents)
    if isinstance(s, Cylinder):
        return coal.Cylinder(s.radius, s.length)
    if isinstance(s, Sphere):
        return coal.Sphere(s.radius)
    raise TypeError(f"CoalRobot: no coal form for a {type(s).__name__} obstacle here")


class CoalRobot:
    """`robot` among the obstacles of `scene` (boxes, cylinders, spheres) in coal."""

    def __init__(self, robot, scene, self_collision: bool = True):
        if coal is None:
            raise ImportError("CoalRobot needs coal: pip install coal")
        from planning_collision.io.urdf import read_urdf

        self.robot = robot
        self.links = []  # (link index, object, T_link_geometry)
        for name, rec in read_urdf(robot.urdf_path).links.items():
            for el in rec.collisions:
                if el.kind == "mesh":
                    g = coal.MeshLoader().load(el.filename, np.asarray(el.scale, float))
                elif el.kind == "box":
                    g = coal.Box(*el.size)
                elif el.kind == "cylinder":
                    g = coal.Cylinder(*el.size)
                else:
                    g = coal.Sphere(el.size[0])
                obj = coal.CollisionObject(g, _tf(np.eye(4)))
                self.links.append((robot.link_index[name], obj, np.asarray(el.origin, float)))
        self._obstacles = []
        for ob in scene:
            parts = ob.shape if isinstance(ob.shape, (list, tuple)) else [(ob.shape, np.eye(4))]
            for s, Tl in parts:
                o = coal.CollisionObject(_shape(s), _tf(ob.T @ np.asarray(Tl)))
                o.computeAABB()
                self._obstacles.append(o)
        self.manager = coal.DynamicAABBTreeCollisionManager()
        for o in self._obstacles:
            self.manager.registerObject(o)
        self.manager.setup()
        pairs = robot.self_collision_pairs() if self_collision else np.zeros((0, 2))
        checked = {(int(a), int(b)) for a, b in pairs} | {(int(b), int(a)) for a, b in pairs}
        li = [k for k, _, _ in self.links]
        self.self_pairs = [
            (i, j)
            for i in range(len(li))
            for j in range(i + 1, len(li))
            if (li[i], li[j]) in checked
        ]
        self._req = coal.CollisionRequest()

    def collides(self, q) -> bool:
        """True when a link touches an obstacle or a checked self partner at q."""
        L = self.robot.fk_array(q)
        for li, obj, To in self.links:
            obj.setTransform(_tf(L[li] @ To))
            obj.computeAABB()
        for _, obj, _ in self.links:
            cb = coal.CollisionCallBackDefault()
            self.manager.collide(obj, cb)
            if cb.data.result.isCollision():
                return True
        for i, j in self.self_pairs:
            res = coal.CollisionResult()
            if coal.collide(self.links[i][1], self.links[j][1], self._req, res):
                return True
        return False
