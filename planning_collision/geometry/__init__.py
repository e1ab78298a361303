"""Shapes, poses, convex hulls and their flat form."""

from .compile import shape_table
from .hull import HullData, convex_hull
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
from .validate import as_pose

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
    "as_pose",
    "convex_hull",
    "shape_table",
]
