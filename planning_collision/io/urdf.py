"""URDF reading into plain, validated Python records.

`read_urdf(path)` parses the file (io/urdf_xml.py: the standard library's XML parser, read as
yourdfpy reads it, tested against it), resolves every collision mesh filename (``package://`` and
relative paths) to an existing file, and checks the kinematic tree. Every problem raises a
`URDFError` subclass whose message names the file and the link, joint or value at fault;
`validate_urdf(path)` returns them all at once.

Mesh resolution, ``package://<pkg>/<rest>``, tries in order: the caller's ``package_dirs``
(``{pkg: dir}``), an ancestor directory of the URDF named ``<pkg>``, ``<ancestor>/<pkg>``,
each root in ``ROS_PACKAGE_PATH``, and example-robot-data's ``share`` directory. A relative
path is relative to the URDF's directory; ``file://`` is stripped.
"""

from __future__ import annotations

import dataclasses
import math
import os
import sysconfig
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np

from ..kernels.base.tolerances import MIN_DIRECTION_NORM, WORLD_LIMIT
from .urdf_xml import parse_robot

__all__ = [
    "URDFError",
    "URDFParseError",
    "URDFTreeError",
    "URDFJointError",
    "URDFLinkError",
    "URDFMeshNotFoundError",
    "CollisionElement",
    "JointRecord",
    "LinkRecord",
    "URDFData",
    "read_urdf",
    "validate_urdf",
    "example_robot_data_dir",
]


class URDFError(ValueError):
    """A URDF problem; the message names the file and the element at fault."""


class URDFParseError(URDFError):
    """The file is not a URDF that parses."""


class URDFTreeError(URDFError):
    """The links and joints do not form one tree (no root, several roots, a cycle, a dangling
    parent or child)."""


class URDFJointError(URDFError):
    """A joint is malformed (unknown type, bad limit or axis, mimic of an unknown joint) or a
    joint name given by the caller does not exist."""


class URDFLinkError(URDFError):
    """A link's collision geometry is malformed or unsupported."""


class URDFMeshNotFoundError(URDFError, FileNotFoundError):
    """A collision mesh file cannot be found (also a FileNotFoundError)."""


JOINT_TYPES = ("fixed", "revolute", "continuous", "prismatic", "floating")


@dataclasses.dataclass(frozen=True)
class CollisionElement:
    """One ``<collision>`` of a link: geometry kind, its parameters and its pose in the link."""

    kind: str  # "box" | "cylinder" | "sphere" | "mesh"
    origin: np.ndarray  # (4, 4) T_link_geometry
    size: tuple = ()  # box: full extents (3,); cylinder: (radius, length); sphere: (radius,)
    filename: str = ""  # mesh: resolved absolute path
    scale: tuple = (1.0, 1.0, 1.0)  # mesh scale


@dataclasses.dataclass(frozen=True)
class LinkRecord:
    name: str
    collisions: tuple  # of CollisionElement


@dataclasses.dataclass(frozen=True)
class JointRecord:
    name: str
    type: str
    parent: str
    child: str
    origin: np.ndarray  # (4, 4) T_parent_joint at zero
    axis: np.ndarray  # (3,) unit, joint frame
    lower: float
    upper: float
    mimic: str | None = None
    multiplier: float = 1.0
    offset: float = 0.0


@dataclasses.dataclass(frozen=True)
class URDFData:
    path: Path
    name: str
    root: str
    links: dict  # name -> LinkRecord, in file order
    joints: dict  # name -> JointRecord, in file order

    def mesh_files(self) -> list[Path]:
        """Every resolved collision mesh file, sorted (for content hashing)."""
        files = {
            c.filename for lk in self.links.values() for c in lk.collisions if c.kind == "mesh"
        }
        return sorted(Path(f) for f in files)


def example_robot_data_dir() -> Path:
    """``<prefix>/share/example-robot-data`` of the installed example-robot-data (cmeel)."""
    roots = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    try:
        import site

        roots.update(site.getsitepackages())
        roots.add(site.getusersitepackages())
    except AttributeError:  # virtualenvs of old Pythons lack getsitepackages
        pass
    for r in sorted(roots):
        d = Path(r) / "cmeel.prefix" / "share" / "example-robot-data"
        if (d / "robots").is_dir():
            return d
    raise ImportError(
        "example-robot-data is not installed (needed for the 'panda' and 'ur5' models): "
        "pip install example-robot-data"
    )


def resolve_filename(fname: str, urdf_path: Path, package_dirs: dict | None = None) -> Path | None:
    """The existing file `fname` (as written in the URDF) names, or None."""
    if fname.startswith("file://"):
        fname = fname[len("file://") :]
    if fname.startswith("package://"):
        rest = fname[len("package://") :]
        pkg, _, sub = rest.partition("/")
        candidates = []
        if package_dirs and pkg in package_dirs:
            candidates.append(Path(package_dirs[pkg]) / sub)
        for anc in urdf_path.resolve().parents:
            if anc.name == pkg:
                candidates.append(anc / sub)
            candidates.append(anc / pkg / sub)
        for root in os.environ.get("ROS_PACKAGE_PATH", "").split(os.pathsep):
            if root:
                candidates.append(Path(root) / pkg / sub)
        try:
            candidates.append(example_robot_data_dir().parent / pkg / sub)
        except ImportError:
            pass
        for c in candidates:
            if c.is_file():
                return c.resolve()
        return None
    p = Path(fname)
    if not p.is_absolute():
        p = urdf_path.resolve().parent / p
    return p.resolve() if p.is_file() else None


def _origin(o) -> np.ndarray:
    return np.eye(4) if o is None else np.array(o, dtype=np.float64)


def read_urdf(path, package_dirs: dict | None = None) -> URDFData:
    """Parse and check `path`; raise the first problem found (see `validate_urdf`)."""
    data, problems = _read(path, package_dirs)
    if problems:
        raise problems[0]
    return data


def validate_urdf(path, package_dirs: dict | None = None) -> list[URDFError]:
    """Every problem of the URDF at `path`, at once (empty when it is fine)."""
    return _read(path, package_dirs)[1]


def _read(path, package_dirs, parse=None):
    """(URDFData, problems): the records of the URDF at `path` and every problem found
    (`parse`: the file's robot element, `_parse` unless a test gives yourdfpy's)."""
    path = Path(path)
    robot = (parse or _parse)(path)
    where = str(path)
    if not robot.links:
        raise URDFParseError(f"{where}: robot {robot.name!r} has no <link>")
    problems: list[URDFError] = []
    links = _links(robot, path, package_dirs, problems)
    joints = _joints(robot, where, links, problems)
    _check_mimics(joints, where, problems)
    root = _root(links, joints, where, problems)
    return URDFData(path.resolve(), robot.name, root, links, joints), problems


def _parse(path: Path):
    """The robot element of the file (io/urdf_xml.py: yourdfpy's records without importing
    it), or URDFParseError."""
    if not path.is_file():
        raise FileNotFoundError(f"URDF file not found: {str(path)!r}")
    try:
        robot = parse_robot(path)
    except ET.ParseError as e:
        raise URDFParseError(f"{path}: not a URDF that parses: malformed XML: {e}") from e
    except (ValueError, KeyError, TypeError, AttributeError) as e:
        raise URDFParseError(f"{path}: not a URDF that parses: {type(e).__name__}: {e}") from e
    return robot


def _positive(values, ctx: str, what: str) -> tuple:
    """`values` as floats, all finite, > 0 and within the working range, else
    URDFLinkError."""
    size = tuple(float(x) for x in values)
    if not all(math.isfinite(x) and x > 0 for x in size):
        raise URDFLinkError(f"{ctx}: {what} must be finite and > 0, got {size}")
    if max(size) > WORLD_LIMIT:
        raise URDFLinkError(
            f"{ctx}: {what} {size} m is outside the working range (<= {WORLD_LIMIT:g} m)"
        )
    return size


def _origin_problem(origin: np.ndarray) -> str | None:
    """What is wrong with an <origin> (not finite, or its translation outside the working
    range), or None."""
    if not np.all(np.isfinite(origin)):
        return f"origin must be finite, got {origin.tolist()}"
    if np.any(np.abs(origin[:3, 3]) > WORLD_LIMIT):
        return (
            f"origin xyz {origin[:3, 3].tolist()} m is outside the working range "
            f"(+-{WORLD_LIMIT:g} m)"
        )
    return None


def _collision(c, ctx: str, path: Path, package_dirs) -> CollisionElement:
    """One ``<collision>`` element, checked."""
    g = c.geometry
    origin = _origin(c.origin)
    if g is None:
        raise URDFLinkError(f"{ctx} has no <geometry>")
    if g.box is not None:
        size = _positive(np.asarray(g.box.size, float).reshape(3), ctx, "box size (3 values)")
        el = CollisionElement("box", origin, size)
    elif g.cylinder is not None:
        size = (g.cylinder.radius, g.cylinder.length)
        el = CollisionElement(
            "cylinder", origin, _positive(size, ctx, "cylinder radius and length")
        )
    elif g.sphere is not None:
        el = CollisionElement("sphere", origin, _positive([g.sphere.radius], ctx, "sphere radius"))
    elif g.mesh is not None:
        f = resolve_filename(g.mesh.filename, path, package_dirs)
        if f is None:
            raise URDFMeshNotFoundError(
                f"{ctx}: mesh file {g.mesh.filename!r} not found (package:// and "
                f"relative paths resolved from {path.parent})"
            )
        sc = g.mesh.scale
        sc = (1.0, 1.0, 1.0) if sc is None else tuple(np.broadcast_to(np.asarray(sc, float), 3))
        if not all(math.isfinite(x) and x != 0 for x in sc):
            raise URDFLinkError(f"{ctx}: mesh scale must be finite and non-zero, got {sc}")
        el = CollisionElement("mesh", origin, (), str(f), sc)
    else:
        raise URDFLinkError(f"{ctx}: unsupported geometry (box, cylinder, sphere, mesh)")
    problem = _origin_problem(origin)
    if problem:
        raise URDFLinkError(f"{ctx}: {problem}")
    return el


def _links(robot, path: Path, package_dirs, problems: list) -> dict:
    """{name: LinkRecord} in file order; problems are appended to `problems`."""
    links = {}
    for lk in robot.links:
        if lk.name in links:
            problems.append(URDFTreeError(f"{path}: link {lk.name!r} is defined twice"))
            continue
        cols = []
        for k, c in enumerate(lk.collisions):
            ctx = f"{path}: link {lk.name!r} collision {k}"
            try:
                cols.append(_collision(c, ctx, path, package_dirs))
            except URDFError as e:
                problems.append(e)
            except (TypeError, ValueError) as e:
                problems.append(URDFLinkError(f"{ctx}: {e}"))
        links[lk.name] = LinkRecord(lk.name, tuple(cols))
    return links


def _axis(j, ctx: str, problems: list) -> np.ndarray:
    axis = np.array([1.0, 0.0, 0.0]) if j.axis is None else np.asarray(j.axis, float).reshape(3)
    n = float(np.linalg.norm(axis))
    if j.type in ("revolute", "continuous", "prismatic"):
        if not (math.isfinite(n) and n > MIN_DIRECTION_NORM):
            problems.append(
                URDFJointError(f"{ctx}: axis must be finite and non-zero, got {axis.tolist()}")
            )
            n = 1.0
    return axis / (n if n > MIN_DIRECTION_NORM else 1.0)


def _limits(j, ctx: str, problems: list) -> tuple[float, float]:
    lo, hi = -math.inf, math.inf
    if j.type in ("revolute", "prismatic"):
        if j.limit is None or j.limit.lower is None or j.limit.upper is None:
            problems.append(URDFJointError(f"{ctx}: {j.type} joint needs <limit lower upper>"))
        else:
            lo, hi = float(j.limit.lower), float(j.limit.upper)
            if not (math.isfinite(lo) and math.isfinite(hi) and lo <= hi):
                problems.append(
                    URDFJointError(
                        f"{ctx}: limit must be finite with lower <= upper, got [{lo}, {hi}]"
                    )
                )
            elif j.type == "prismatic" and max(abs(lo), abs(hi)) > WORLD_LIMIT:
                problems.append(
                    URDFJointError(
                        f"{ctx}: limit [{lo}, {hi}] m is outside the working range "
                        f"(+-{WORLD_LIMIT:g} m)"
                    )
                )
    return lo, hi


def _mimic(j, ctx: str, problems: list) -> tuple[str | None, float, float]:
    if j.mimic is None:
        return None, 1.0, 0.0
    mult = 1.0 if j.mimic.multiplier is None else float(j.mimic.multiplier)
    off = 0.0 if j.mimic.offset is None else float(j.mimic.offset)
    if not (math.isfinite(mult) and math.isfinite(off)):
        problems.append(
            URDFJointError(f"{ctx}: mimic multiplier/offset must be finite, got {mult}, {off}")
        )
    return j.mimic.joint, mult, off


def _joints(robot, where: str, links: dict, problems: list) -> dict:
    """{name: JointRecord} in file order; problems are appended to `problems`."""
    joints = {}
    children = {}
    for j in robot.joints:
        ctx = f"{where}: joint {j.name!r}"
        if j.name in joints:
            problems.append(URDFJointError(f"{ctx} is defined twice"))
            continue
        if j.type not in JOINT_TYPES:
            problems.append(
                URDFJointError(f"{ctx}: type {j.type!r} is not supported (one of {JOINT_TYPES})")
            )
            continue
        for role, ln in (("parent", j.parent), ("child", j.child)):
            if ln not in links:
                problems.append(URDFTreeError(f"{ctx}: {role} link {ln!r} does not exist"))
        if j.child in children:
            problems.append(
                URDFTreeError(
                    f"{ctx}: link {j.child!r} is already the child of {children[j.child]!r}"
                )
            )
        children[j.child] = j.name
        origin = _origin(j.origin)
        problem = _origin_problem(origin)
        if problem:
            problems.append(URDFJointError(f"{ctx}: {problem}"))
        axis = _axis(j, ctx, problems)
        lo, hi = _limits(j, ctx, problems)
        mimic, mult, off = _mimic(j, ctx, problems)
        joints[j.name] = JointRecord(
            j.name, j.type, j.parent, j.child, origin, axis, lo, hi, mimic, mult, off
        )
    return joints


def _check_mimics(joints: dict, where: str, problems: list) -> None:
    for j in joints.values():
        if j.mimic is None:
            continue
        m = joints.get(j.mimic)
        if m is None:
            problems.append(
                URDFJointError(f"{where}: joint {j.name!r} mimics unknown joint {j.mimic!r}")
            )
        elif m.mimic is not None:
            problems.append(
                URDFJointError(f"{where}: joint {j.name!r} mimics {m.name!r}, itself a mimic joint")
            )
        elif m.type not in ("revolute", "continuous", "prismatic"):
            problems.append(
                URDFJointError(f"{where}: joint {j.name!r} mimics {m.type} joint {m.name!r}")
            )


def _root(links: dict, joints: dict, where: str, problems: list) -> str:
    """The root link; a tree problem (several roots, unreachable links) is appended."""
    children = {j.child for j in joints.values()}
    roots = [ln for ln in links if ln not in children]
    if len(roots) != 1:
        problems.append(
            URDFTreeError(
                f"{where}: the links must form one tree with one root, found roots {roots}"
            )
        )
        return roots[0] if roots else ""
    root = roots[0]
    # reachability from the root (a cycle leaves links unreachable)
    kids = {}
    for j in joints.values():
        kids.setdefault(j.parent, []).append(j.child)
    seen, stack = set(), [root]
    while stack:
        ln = stack.pop()
        if ln in seen:
            continue
        seen.add(ln)
        stack.extend(kids.get(ln, ()))
    missing = [ln for ln in links if ln not in seen]
    if missing:
        problems.append(
            URDFTreeError(f"{where}: links {missing} are not reachable from root {root!r} (cycle?)")
        )
    return root
