"""Shapes, poses, convex hulls and their flat form."""

from .hull import HullData, HullFaces, convex_hull
from .pack import shape_table
from .poses import as_pose, as_poses, pose_matrix, quaternion_to_matrix
from .shapes import (
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
)

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
    "HullData",
    "HullFaces",
    "as_pose",
    "as_poses",
    "pose_matrix",
    "quaternion_to_matrix",
    "convex_hull",
    "shape_table",
]
