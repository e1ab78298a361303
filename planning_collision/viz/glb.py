"""`export_glb`: a scene, a robot at some configurations and a path as one glTF binary
file (``.glb``) that Blender, the three.js editor or VS Code open.

Nodes, all in the world frame (identity node transforms, vertices in metres):

- ``obstacle <id> <name>`` (``obstacle <id>`` when unnamed): one per scene object, its
  shapes tessellated as in `planning_collision.viz.meshes` (so the node's bounds are the
  object's exact bounds); a point cloud of radius 0 is a glTF point set. A compound object
  with both gets a second node ``obstacle <id> <name> points``.
- ``robot <k> <link>``: the collision model of each link with geometry at configuration k.
- ``path end effector``: the end effector's curve along the path (straight segments in
  joint space, sampled finely) as a polyline, and ``path <i> <link>``: the robot, ghosted
  (translucent), at up to `ghosts` of the path's waypoints (first and last included).
"""

from __future__ import annotations

import io
import os

import numpy as np
import trimesh
from trimesh.visual.material import PBRMaterial

from . import _colors
from .kinematics import (
    as_configurations,
    densify,
    end_effector_link,
    end_effector_positions,
)
from .meshes import link_meshes, obstacle_drawable

__all__ = ["export_glb", "obstacle_node_name", "robot_node_name", "ghost_node_name"]

PATH_NODE = "path end effector"


def obstacle_node_name(oid: int, name: str | None) -> str:
    return f"obstacle {oid}" if name is None else f"obstacle {oid} {name}"


def robot_node_name(k: int, link: str) -> str:
    return f"robot {k} {link}"


def ghost_node_name(i: int, link: str) -> str:
    return f"path {i} {link}"


def _material(rgb, opacity: float = 1.0) -> PBRMaterial:
    return PBRMaterial(
        baseColorFactor=[*rgb, round(255 * opacity)],
        metallicFactor=0.0,
        roughnessFactor=0.8,
        alphaMode="BLEND" if opacity < 1.0 else "OPAQUE",
        doubleSided=True,  # polygons, halfspace patches and open meshes show both sides
    )


def _mesh(v, f, rgb, opacity: float = 1.0) -> trimesh.Trimesh:
    m = trimesh.Trimesh(v, f, process=False)
    m.visual = trimesh.visual.TextureVisuals(material=_material(rgb, opacity))
    return m


def _ghost_indices(n: int, ghosts: int) -> list[int]:
    if ghosts <= 0 or n == 0:
        return []
    return sorted(set(np.round(np.linspace(0, n - 1, min(n, ghosts))).astype(int).tolist()))


def export_glb(
    file,
    scene=None,
    robot=None,
    configurations=(),
    path=None,
    *,
    ghosts: int = 8,
    ee_link: str | None = None,
) -> trimesh.Scene:
    """Write the scene, the robot and a path to one glTF binary file (module doc: nodes).

    file : str, os.PathLike, or a binary file object.
    scene : a `Scene`, or None.
    robot : a `Robot` (needed for configurations and path), or None.
    configurations : (k, dof) float64, rad; the robot is drawn at each (one (dof,) works).
    path : (n, dof) float64, rad, or None; the end effector's curve plus ghosted poses.
    ghosts : how many of the path's waypoints get a translucent robot (evenly spread).
    ee_link : the link whose origin traces the path (default `end_effector_link`).

    Returns the `trimesh.Scene` that was written.
    """
    if robot is None and (path is not None or len(configurations)):
        raise ValueError("configurations and path need a robot (robot=None was given)")
    out = trimesh.Scene()

    def add(geometry, node: str) -> None:
        out.add_geometry(geometry, node_name=node, geom_name=node)

    for ob in scene if scene is not None else ():
        d = obstacle_drawable(ob.shape, ob.T)
        node = obstacle_node_name(ob.id, ob.name)
        if d.vertices is not None:
            add(_mesh(d.vertices, d.faces, _colors.OBSTACLE), node)
        if d.points is not None:
            pc = trimesh.PointCloud(d.points, colors=[*_colors.OBSTACLE, 255])
            add(pc, node if d.vertices is None else node + " points")
    if robot is not None:
        Q = as_configurations(robot, configurations, "configurations")
        for k, q in enumerate(Q):
            for link, (v, f) in link_meshes(robot, robot.piece_poses(q)).items():
                add(_mesh(v, f, _colors.ROBOT), robot_node_name(k, link))
        if path is not None:
            P = as_configurations(robot, path, "path")
            link = ee_link or end_effector_link(robot)
            curve = end_effector_positions(robot, densify(P), link)
            if len(curve) >= 2:
                line = trimesh.load_path(curve)
                line.colors = np.tile([*_colors.PATH, 255], (len(line.entities), 1))
                add(line, PATH_NODE)
            for i in _ghost_indices(len(P), ghosts):
                for ln, (v, f) in link_meshes(robot, robot.piece_poses(P[i])).items():
                    add(
                        _mesh(v, f, _colors.ROBOT, _colors.GHOST_OPACITY),
                        ghost_node_name(i, ln),
                    )
    data = out.export(file_type="glb")
    if isinstance(file, (str, os.PathLike)):
        with open(file, "wb") as f:
            f.write(data)
    elif isinstance(file, io.IOBase) or hasattr(file, "write"):
        file.write(data)
    else:
        raise TypeError(f"file must be a path or a binary file object, got {type(file).__name__}")
    return out
