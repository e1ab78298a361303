"""A URDF file's elements as plain records, read with the standard library's XML parser.

`parse_robot(path)` gives what yourdfpy's ``URDF.load(path, load_meshes=False,
build_scene_graph=False).robot`` gives for the elements the checker reads (the same
attribute names, defaults and 4x4 origins: ``Rz(yaw) Ry(pitch) Rx(roll)`` after the
translation), without importing yourdfpy and trimesh, which cost a process ~1.2 s before its
first robot. tests/test_urdf_xml.py compares the two on every URDF of example-robot-data and
the registry. A malformed element raises ValueError (io/urdf.py says it as URDFParseError
naming the file); what is well formed but wrong (a negative radius, a missing limit) is left
to io/urdf.py's checks, as it was with yourdfpy.
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from types import SimpleNamespace as Record

import numpy as np


def _floats(text: str, n: int | None, what: str) -> np.ndarray:
    """The numbers of an attribute (spaces or commas between them), exactly n when given."""
    v = np.array([float(x) for x in text.replace(",", " ").split()], dtype=np.float64)
    if n is not None and len(v) != n:
        raise ValueError(f"{what} needs {n} numbers, got {text!r}")
    return v


def _float(text) -> float | None:
    return None if text is None else float(text)


def origin_matrix(xyz, rpy) -> np.ndarray:
    """T = translation(xyz) @ Rz(yaw) Ry(pitch) Rx(roll), rpy = (roll, pitch, yaw)."""
    cr, sr = math.cos(rpy[0]), math.sin(rpy[0])
    cp, sp = math.cos(rpy[1]), math.sin(rpy[1])
    cy, sy = math.cos(rpy[2]), math.sin(rpy[2])
    T = np.eye(4)
    T[:3, :3] = [
        [cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
        [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
        [-sp, cp * sr, cp * cr],
    ]
    T[:3, 3] = xyz
    return T


def _origin(el) -> np.ndarray | None:
    if el is None:
        return None
    xyz = _floats(el.get("xyz", "0 0 0"), 3, "<origin xyz>")
    rpy = _floats(el.get("rpy", "0 0 0"), 3, "<origin rpy>")
    return origin_matrix(xyz, rpy)


def _geometry(el) -> Record | None:
    if el is None:
        return None
    if len(el) == 0:
        raise ValueError("<geometry> is empty")
    g = Record(box=None, cylinder=None, sphere=None, mesh=None)
    shape = el[0]
    if shape.tag == "box":
        g.box = Record(size=_floats(shape.attrib["size"], None, "<box size>"))
    elif shape.tag == "cylinder":
        g.cylinder = Record(radius=float(shape.attrib["radius"]),
                            length=float(shape.attrib["length"]))  # fmt: skip
    elif shape.tag == "sphere":
        g.sphere = Record(radius=float(shape.attrib["radius"]))
    elif shape.tag == "mesh":
        scale = shape.get("scale")
        if scale is not None:
            s = _floats(scale, None, "<mesh scale>")
            scale = None if len(s) == 0 else float(s[0]) if len(s) == 1 else s
        filename = shape.get("filename")
        if not filename:
            raise ValueError("<mesh> has no filename")  # yourdfpy's record failed later
        g.mesh = Record(filename=filename, scale=scale)
    else:
        raise ValueError(f"unknown geometry <{shape.tag}>")
    return g


def _link(el) -> Record:
    collisions = [
        Record(geometry=_geometry(c.find("geometry")), origin=_origin(c.find("origin")))
        for c in el.findall("collision")
    ]
    return Record(name=el.attrib["name"], collisions=collisions)


def _joint(el) -> Record:
    def link(tag):
        child = el.find(tag)
        if child is None:
            raise ValueError(f"joint {el.get('name')!r} has no <{tag}>")
        return child.get("link")

    axis = el.find("axis")
    limit = el.find("limit")
    mimic = el.find("mimic")
    return Record(
        name=el.attrib["name"],
        type=el.get("type"),
        parent=link("parent"),
        child=link("child"),
        origin=_origin(el.find("origin")),
        axis=np.array([1.0, 0.0, 0.0])
        if axis is None
        else _floats(axis.get("xyz", "1 0 0"), None, "<axis xyz>"),
        limit=None
        if limit is None
        else Record(lower=_float(limit.get("lower")), upper=_float(limit.get("upper"))),
        mimic=None
        if mimic is None
        else Record(
            joint=mimic.get("joint"),
            multiplier=float(mimic.get("multiplier", 1.0)),
            offset=float(mimic.get("offset", 0.0)),
        ),
    )


def parse_robot(path) -> Record:
    """The <robot> of the URDF file at `path`: name, links (name, collisions: geometry and
    origin) and joints (name, type, parent, child, origin, axis, limit, mimic), in file
    order. ET.ParseError for malformed XML, ValueError (or KeyError for a missing required
    attribute) for a malformed element."""
    root = ET.parse(path).getroot()
    if root.tag != "robot":
        raise ValueError(f"the root element is <{root.tag}>, not <robot>")
    return Record(
        name=root.attrib["name"],
        links=[_link(e) for e in root.findall("link")],
        joints=[_joint(e) for e in root.findall("joint")],
    )
