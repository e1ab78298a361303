"""Robots from URDF: the kinematic tree, link geometry, the allowed-collision matrix, motion
bounds, and the runtime `Robot` (robot/robot.py says how they fit together)."""

from ..kernels.robot.fk import RobotModel
from .acm import AllowedCollisionMatrix
from .attached import AttachedObject
from .convexify import convexify_mesh, decompose_mesh
from .geometry import GEOMETRY_VERSION, CollisionModel, LinkPiece
from .kinematics import KinematicTree
from .robot import Robot, RobotState

__all__ = [
    "GEOMETRY_VERSION",
    "AllowedCollisionMatrix",
    "AttachedObject",
    "CollisionModel",
    "KinematicTree",
    "LinkPiece",
    "Robot",
    "RobotModel",
    "RobotState",
    "convexify_mesh",
    "decompose_mesh",
]
