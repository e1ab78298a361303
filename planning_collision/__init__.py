"""planning_collision: collision checking for OMPL, on numba kernels.

Shapes and queries (docs/architecture.md says how the package is laid out)::

    import numpy as np
    import planning_collision as pc

    T = np.eye(4); T[0, 3] = 0.3
    pc.collide(pc.Sphere(0.1), np.eye(4), pc.Box((0.2, 0.2, 0.2)), T)   # False
    pc.distance(pc.Sphere(0.1), np.eye(4), pc.Box((0.2, 0.2, 0.2)), T)  # 0.1 m

The first use of each compiled entry point on a machine compiles it, announced on stderr
(planning_collision/compiling.py); ``pc.warm_up()`` or ``python -m planning_collision
warm-up`` does them all at once.
"""

from .checker import CollisionChecker
from .compiling import warm_up  # and announces compiles wherever they start (its doc)
from .geometry import (
    Box,
    Capsule,
    Cone,
    Convex,
    ConvexShape,
    Cylinder,
    Halfspace,
    Mesh,
    Shape,
    Sphere,
    as_pose,
)
from .geometry.arrays import ObstacleArrays
from .geometry.clouds import PointCloud, VoxelGrid
from .planner import PlanResult, RRTConnect
from .queries import collide, distance, penetration
from .results import DistanceResult, EdgeResult, LinkDistances, PathResult, PenetrationResult
from .robot import Robot
from .scene import Scene
from .workspace import Workspace

__version__ = "0.1.0"

__all__ = [
    "Box",
    "Capsule",
    "Cone",
    "Convex",
    "ConvexShape",
    "Cylinder",
    "Halfspace",
    "Mesh",
    "Shape",
    "Sphere",
    "PointCloud",
    "VoxelGrid",
    "Robot",
    "Scene",
    "ObstacleArrays",
    "as_pose",
    "collide",
    "distance",
    "penetration",
    "DistanceResult",
    "PenetrationResult",
    "Workspace",
    "CollisionChecker",
    "EdgeResult",
    "LinkDistances",
    "PathResult",
    "PlanResult",
    "RRTConnect",
    "warm_up",
]
