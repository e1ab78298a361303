"""Robots from URDF: the kinematic tree, link geometry, the allowed-collision matrix, motion
bounds, and the runtime `Robot` (robot/robot.py says how they fit together)."""

from ..kernels.fk import RobotModel
from .acm import AllowedCollisionMatrix
from .convexify import convexify_mesh, decompose_mesh
from .geometry import GEOMETRY_VERSION, CollisionModel, LinkPiece
from .kinematics import KinematicTree
from .robot import Robot

__all__ = [
    "GEOMETRY_VERSION",
    "AllowedCollisionMatrix",
    "CollisionModel",
    "KinematicTree",
    "LinkPiece",
    "Robot",
    "RobotModel",
    "convexify_mesh",
    "decompose_mesh",
]
