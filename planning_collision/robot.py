"""Robot: kinematic tree, FK kernel, convex link geometry, allowed-collision matrix (DESIGN §6).

::

    import numpy as np
    from planning_collision.robot import Robot

    robot = Robot.from_urdf("arm.urdf")                 # every movable joint active
    robot.joint_names, robot.lower, robot.upper, robot.dof
    poses = robot.fk(np.zeros(robot.dof))               # {link name: 4x4 T_world_link}
    mu = robot.motion_bounds(q0, q1)                    # (n_collision_links,) metres per unit t

    # the flat form a checker uses (DESIGN §7): arrays only, numba-ready
    robot.model        # RobotModel: parent, jtype, axis, origin, qidx, mult, offset, lower, upper
    robot.collision    # CollisionModel: ShapeTable + piece -> link, piece poses in the link

**Joints.** ``q`` holds the active joints in ``robot.joint_names`` order. Joints that are
not active are held at ``fixed_joints`` values (default: 0 clamped into the joint's limits);
a held value may lie outside the URDF limits (the Panda fingers at 0.065 m in the
MotionBenchMaker problems). Mimic joints follow their master (active or held). Continuous
joints get limits [-pi, pi] and ``robot.continuous[d]`` is True.

**Floating base.** A URDF ``floating`` joint, or ``floating_base=True`` (a floating joint
from a new root link ``world`` to the URDF root), becomes six virtual joints
``<name>_x, _y, _z`` (prismatic along the parent's axes) and ``<name>_yaw, _pitch, _roll``
(revolute about z, y, x: ``T = Trans(x, y, z) Rz(yaw) Ry(pitch) Rx(roll)``), with virtual
links ``<name>_link_x`` ... between them. The motion bound then holds for straight lines in
these coordinates. Translation limits come from ``base_bounds`` (default +-10 m); yaw and
roll are in [-pi, pi], pitch in [-pi/2, pi/2].

**Collision geometry.** URDF boxes, cylinders and spheres stay primitives. A mesh is split
into connected components; a component whose convex hull is within ``hull_ratio`` of its
volume becomes its hull, any other is decomposed (V-HACD through trimesh/vhacdx) and then
*repaired*: every mesh vertex outside all pieces is added to the piece it violates least, so
the model contains the mesh (every vertex inside or on a piece). ``robot.volume_report``
gives mesh and model volumes per link. The result is cached in ``cache_dir`` as
``geometry-<hash>.npz``, keyed by the URDF and mesh file contents and the build settings.

**Allowed-collision matrix.** Adjacent links (a link and its nearest ancestor that has
geometry, as MoveIt) are allowed by default. `compute_acm` adds MoveIt setup-assistant
pairs: colliding in the default configuration, colliding in >= 95 % of random samples
("always"), or in none of >= 10,000 ("never"). `allow` / `disallow` edit it.

**Motion bounds** (DESIGN §6): ``robot.motion_bounds(q0, q1)`` per collision link and
``robot.pair_motion_bounds(q0, q1)`` per checked self-collision pair (joints below the
pair's lowest common ancestor only). They assume the edge stays within the joint limits for
active prismatic joints (revolute joints need no limits).
"""

from __future__ import annotations

import dataclasses
import hashlib
import logging
import math
from pathlib import Path
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from .geometry import Box, Convex, Cylinder, Shape, Sphere, shape_table
from .io.urdf import URDFData, URDFJointError, URDFLinkError, read_urdf
from .kernels import layout as L
from .kernels.fk import FIXED, PRISMATIC, REVOLUTE, RobotModel, fk, fk_batch, piece_poses
from .kernels.motion_bounds import motion_bounds as _motion_bounds_kernel

__all__ = [
    "Robot",
    "RobotModel",
    "CollisionModel",
    "AllowedCollisionMatrix",
    "LinkPiece",
    "convexify_mesh",
    "GEOMETRY_VERSION",
]

log = logging.getLogger(__name__)

# Bump when the geometry builder changes what it produces: old caches then miss.
GEOMETRY_VERSION = 2
# A vertex within this of a piece (m) counts as inside: qhull facet planes are good to ~1e-15
# relative, so 1e-9 m is far above round-off and far below any geometric feature.
CONTAIN_TOL = 1e-9
# A mesh component whose hull is below this fraction of the mesh's volume is taken as its hull.
SMALL_COMPONENT = 0.02
ALWAYS_FRACTION = 0.95  # MoveIt setup assistant's default for "always in collision"


class CollisionModel(NamedTuple):
    """Link collision geometry, flat. Pieces are sorted by link; link l owns pieces
    ``link_start[l]:link_start[l+1]`` of `table`, posed in the link frame by `piece_pose`."""

    table: L.ShapeTable
    piece_link: npt.NDArray[np.int32]  # (n_pieces,)
    piece_pose: npt.NDArray[np.float64]  # (n_pieces, 4, 4) T_link_piece
    link_start: npt.NDArray[np.int32]  # (n_links + 1,)


@dataclasses.dataclass(frozen=True, eq=False)
class LinkPiece:
    link: str
    shape: Shape
    pose: np.ndarray  # (4, 4) T_link_piece


# --------------------------------------------------------------------------------------
# allowed-collision matrix


class AllowedCollisionMatrix:
    """Link pairs whose collisions are ignored, each with a reason ("adjacent", "never",
    "always", "default", "user", ...). Pairs are unordered."""

    def __init__(self, link_names, entries=()):
        self._links = list(link_names)
        self._known = set(self._links)
        self._pairs: dict[tuple[str, str], str] = {}
        for e in entries:
            a, b, *why = e
            self.allow(a, b, why[0] if why else "user")

    def _key(self, a: str, b: str) -> tuple[str, str]:
        for n in (a, b):
            if n not in self._known:
                raise ValueError(
                    f"unknown link {n!r} in the allowed-collision matrix; links: {self._links}"
                )
        if a == b:
            raise ValueError(f"a link pair needs two different links, got {a!r} twice")
        ia, ib = self._links.index(a), self._links.index(b)
        return (a, b) if ia < ib else (b, a)

    def allow(self, a: str, b: str, reason: str = "user") -> None:
        self._pairs[self._key(a, b)] = str(reason)

    def disallow(self, a: str, b: str) -> None:
        self._pairs.pop(self._key(a, b), None)

    def is_allowed(self, a: str, b: str) -> bool:
        return self._key(a, b) in self._pairs

    def reason(self, a: str, b: str) -> str | None:
        return self._pairs.get(self._key(a, b))

    def entries(self) -> list[list[str]]:
        """[[a, b, reason], ...] in link order (the JSON form)."""
        idx = {n: i for i, n in enumerate(self._links)}
        return [
            [a, b, r]
            for (a, b), r in sorted(
                self._pairs.items(), key=lambda kv: (idx[kv[0][0]], idx[kv[0][1]])
            )
        ]

    def __len__(self) -> int:
        return len(self._pairs)

    def __contains__(self, pair) -> bool:
        return self.is_allowed(*pair)


# --------------------------------------------------------------------------------------
# mesh -> convex pieces


def _hull_eq(points: np.ndarray) -> np.ndarray | None:
    """Facet planes (k, 4) with unit normals, inside where n.x + c <= 0; None if flat."""
    from scipy.spatial import ConvexHull, QhullError

    try:
        return ConvexHull(points).equations
    except QhullError:
        return None


def _violation(eq: np.ndarray | None, points: np.ndarray, verts: np.ndarray) -> np.ndarray:
    """How far each of `verts` lies outside the hull (<= 0 inside); inf for a flat hull
    unless the vertex is one of its points."""
    if eq is None:
        d = np.linalg.norm(verts[:, None, :] - points[None, :, :], axis=2).min(axis=1)
        return np.where(d <= CONTAIN_TOL, 0.0, np.inf)
    return (verts @ eq[:, :3].T + eq[:, 3]).max(axis=1)


def _hull_vertices(points: np.ndarray) -> np.ndarray:
    from scipy.spatial import ConvexHull, QhullError

    try:
        return np.ascontiguousarray(points[ConvexHull(points).vertices])
    except QhullError:
        return np.unique(points, axis=0)


def _hull_volume(points: np.ndarray) -> float:
    from scipy.spatial import ConvexHull, QhullError

    try:
        return float(ConvexHull(points).volume)
    except QhullError:
        return 0.0


def convexify_mesh(vertices, faces, hull_ratio: float = 1.1, max_pieces: int = 12):
    """Convex pieces whose union contains the mesh (vertices (n, 3), faces (m, 3)).

    Returns ``(pieces, mesh_volume)``: a list of (k, 3) point arrays (hull vertices of each
    piece, mesh frame) and the mesh's enclosed volume (|signed volume|; the hull's for an
    open mesh). Components whose hull is within `hull_ratio` of their volume are taken as
    hulls; others are decomposed by V-HACD (at most `max_pieces` pieces) and repaired so
    that every vertex of the component lies inside or on a piece.
    """
    import trimesh

    mesh = trimesh.Trimesh(np.asarray(vertices, float), np.asarray(faces, np.int64), process=True)
    watertight = bool(mesh.is_watertight)
    mesh_volume = abs(float(mesh.volume)) if watertight else _hull_volume(mesh.vertices)
    pieces = []
    for comp in mesh.split(only_watertight=False):
        v = np.asarray(comp.vertices, float)
        hv = _hull_volume(v)
        cv = abs(float(comp.volume)) if comp.is_watertight else 0.0
        # small components (screws, inverted cavity shells) are not worth decomposing:
        # their hull adds at most a few percent of the link's volume
        small = hv <= SMALL_COMPONENT * mesh_volume
        if hv == 0.0 or cv == 0.0 or small or hv <= hull_ratio * cv:
            pieces.append(_hull_vertices(v))
            continue
        try:
            parts = comp.convex_decomposition(maxConvexHulls=max_pieces)
        except ImportError as e:
            raise ImportError(
                "decomposing a non-convex link mesh needs V-HACD: pip install vhacdx"
            ) from e
        if isinstance(parts, trimesh.Trimesh):
            parts = [parts]
        cand = [
            _hull_vertices(np.asarray(p.vertices, float)) for p in parts if len(p.vertices) >= 4
        ]
        if not cand:
            pieces.append(_hull_vertices(v))
            continue
        # repair: V-HACD pieces approximate the component and may leave vertices out
        eqs = [_hull_eq(c) for c in cand]
        viol = np.stack([_violation(e, c, v) for e, c in zip(eqs, cand, strict=True)], axis=1)
        outside = viol.min(axis=1) > CONTAIN_TOL
        if outside.any():
            owner = viol[outside].argmin(axis=1)
            outv = v[outside]
            for k in np.unique(owner):
                cand[k] = _hull_vertices(np.concatenate([cand[k], outv[owner == k]]))
        pieces.extend(cand)
    return pieces, mesh_volume


def shape_volume(s: Shape) -> float:
    if isinstance(s, Box):
        return float(np.prod(s.extents))
    if isinstance(s, Cylinder):
        return math.pi * s.radius**2 * s.length
    if isinstance(s, Sphere):
        return 4.0 / 3.0 * math.pi * s.radius**3
    if isinstance(s, Convex) and s.radius == 0.0:
        return _hull_volume(np.asarray(s.points))
    raise TypeError(f"no volume for {type(s).__name__}")


def _translation(t) -> np.ndarray:
    T = np.eye(4)
    T[:3, 3] = t
    return T


def _geometry_key(data: URDFData, hull_ratio: float, max_pieces: int) -> str:
    h = hashlib.sha256()
    h.update(f"v{GEOMETRY_VERSION} ratio={hull_ratio!r} pieces={max_pieces}".encode())
    h.update(data.path.read_bytes())
    for f in data.mesh_files():
        h.update(f.name.encode())
        h.update(f.read_bytes())
    return h.hexdigest()[:20]


def build_link_geometry(data: URDFData, hull_ratio: float = 1.1, max_pieces: int = 12):
    """(pieces: list[LinkPiece], report: {link: {"mesh_volume", "model_volume"}})."""
    import trimesh

    pieces: list[LinkPiece] = []
    report: dict[str, dict] = {}
    for lk in data.links.values():
        mesh_vol = model_vol = 0.0
        has_mesh = False
        for c in lk.collisions:
            if c.kind == "box":
                s = Box(c.size)
                pieces.append(LinkPiece(lk.name, s, c.origin.copy()))
            elif c.kind == "cylinder":
                s = Cylinder(*c.size)
                pieces.append(LinkPiece(lk.name, s, c.origin.copy()))
            elif c.kind == "sphere":
                s = Sphere(c.size[0])
                pieces.append(LinkPiece(lk.name, s, c.origin.copy()))
            else:
                has_mesh = True
                try:
                    m = trimesh.load(c.filename, force="mesh", process=False)
                except Exception as e:  # trimesh raises many kinds on a bad file
                    raise URDFLinkError(
                        f"{data.path}: link {lk.name!r}: cannot read mesh {c.filename!r}: {e}"
                    ) from e
                if len(m.faces) == 0:
                    raise URDFLinkError(
                        f"{data.path}: link {lk.name!r}: mesh {c.filename!r} has no faces"
                    )
                v = np.asarray(m.vertices, float) * np.asarray(c.scale, float)
                parts, mv = convexify_mesh(v, m.faces, hull_ratio, max_pieces)
                mesh_vol += mv
                for p in parts:
                    ctr = 0.5 * (p.min(axis=0) + p.max(axis=0))
                    s = Convex(p - ctr)
                    pieces.append(LinkPiece(lk.name, s, c.origin @ _translation(ctr)))
                    model_vol += shape_volume(s)
                continue
            model_vol += shape_volume(s)
            mesh_vol += shape_volume(s)
        if lk.collisions:
            report[lk.name] = {
                "mesh_volume": mesh_vol,
                "model_volume": model_vol,
                "has_mesh": has_mesh,
            }
    return pieces, report


_KIND_OF = {Sphere: L.SPHERE, Box: L.BOX, Cylinder: L.CYLINDER, Convex: L.CONVEX}


def _save_geometry(path: Path, key: str, pieces, report) -> None:
    n = len(pieces)
    params = np.zeros((n, 3))
    kinds = np.zeros(n, np.int32)
    pstart = np.zeros(n + 1, np.int64)
    pts = []
    for i, pc in enumerate(pieces):
        s = pc.shape
        kinds[i] = _KIND_OF[type(s)]
        if isinstance(s, Box):
            params[i] = s.extents
        elif isinstance(s, (Cylinder,)):
            params[i, :2] = (s.radius, s.length)
        elif isinstance(s, Sphere):
            params[i, 0] = s.radius
        else:
            pts.append(np.asarray(s.points))
        pstart[i + 1] = pstart[i] + (len(s.points) if isinstance(s, Convex) else 0)
    rl = sorted(report)
    np.savez_compressed(
        path,
        key=np.array(key),
        link=np.array([pc.link for pc in pieces]),
        kind=kinds,
        params=params,
        pose=np.array([pc.pose for pc in pieces]).reshape(n, 4, 4),
        pstart=pstart,
        points=np.concatenate(pts) if pts else np.zeros((0, 3)),
        report_link=np.array(rl),
        report=np.array(
            [
                [report[k]["mesh_volume"], report[k]["model_volume"], report[k]["has_mesh"]]
                for k in rl
            ]
        ).reshape(-1, 3),
    )


def _load_geometry(path: Path, key: str):
    with np.load(path, allow_pickle=False) as z:
        if str(z["key"]) != key:
            return None
        pieces = []
        for i, link in enumerate(z["link"]):
            k = int(z["kind"][i])
            p = z["params"][i]
            if k == L.BOX:
                s = Box(p)
            elif k == L.CYLINDER:
                s = Cylinder(p[0], p[1])
            elif k == L.SPHERE:
                s = Sphere(p[0])
            else:
                s = Convex(z["points"][z["pstart"][i] : z["pstart"][i + 1]])
            pieces.append(LinkPiece(str(link), s, np.array(z["pose"][i])))
        report = {
            str(n): {
                "mesh_volume": float(r[0]),
                "model_volume": float(r[1]),
                "has_mesh": bool(r[2]),
            }
            for n, r in zip(z["report_link"], z["report"], strict=True)
        }
    return pieces, report


def load_link_geometry(
    data: URDFData, cache_dir=None, hull_ratio: float = 1.1, max_pieces: int = 12
):
    """`build_link_geometry`, through the on-disk cache in `cache_dir` when given.
    Returns (pieces, report, key)."""
    key = _geometry_key(data, hull_ratio, max_pieces)
    if cache_dir is None:
        return (*build_link_geometry(data, hull_ratio, max_pieces), key)
    cache_dir = Path(cache_dir)
    f = cache_dir / f"geometry-{key}.npz"
    if f.is_file():
        got = _load_geometry(f, key)
        if got is not None:
            return (*got, key)
    pieces, report = build_link_geometry(data, hull_ratio, max_pieces)
    try:
        cache_dir.mkdir(parents=True, exist_ok=True)
        _save_geometry(f, key, pieces, report)
    except OSError as e:
        log.warning("could not write the geometry cache %s: %s", f, e)
    return pieces, report, key


# --------------------------------------------------------------------------------------
# the robot


_FLOAT_AXES = (
    ("x", PRISMATIC, (1.0, 0.0, 0.0)),
    ("y", PRISMATIC, (0.0, 1.0, 0.0)),
    ("z", PRISMATIC, (0.0, 0.0, 1.0)),
    ("yaw", REVOLUTE, (0.0, 0.0, 1.0)),
    ("pitch", REVOLUTE, (0.0, 1.0, 0.0)),
    ("roll", REVOLUTE, (1.0, 0.0, 0.0)),
)


@dataclasses.dataclass
class _J:
    """A joint in the compiled tree (URDF joints, plus the virtual floating-base joints)."""

    name: str
    type: str  # fixed / revolute / continuous / prismatic
    parent: str
    child: str
    origin: np.ndarray
    axis: np.ndarray
    lower: float
    upper: float
    mimic: str | None = None
    multiplier: float = 1.0
    offset: float = 0.0


class Robot:
    """A URDF robot compiled for the kernels. Build with `Robot.from_urdf` or
    `robots.load(name)`. See the module docstring for joints, geometry, ACM and bounds."""

    def __init__(self):
        raise TypeError("build a Robot with Robot.from_urdf(path, ...) or robots.load(name)")

    # ---- construction -----------------------------------------------------------------

    @classmethod
    def from_urdf(
        cls,
        path,
        active_joints=None,
        fixed_joints=None,
        *,
        joint_limits=None,
        floating_base: bool = False,
        base_bounds=None,
        package_dirs=None,
        cache_dir=None,
        hull_ratio: float = 1.1,
        max_pieces: int = 12,
        acm=None,
        name: str | None = None,
    ) -> Robot:
        """Read `path` (URDF) and compile it.

        Parameters
        ----------
        active_joints : list of joint names, optional
            The configuration, in this order. Default: every revolute, continuous and
            prismatic joint that is not a mimic joint and not in `fixed_joints`, URDF order
            (floating-base virtual joints first).
        fixed_joints : {joint name: value}, optional
            Movable joints held at a value (m or rad; may exceed the URDF limits). A mimic
            joint named here is held at its value instead of following its master.
        joint_limits : {joint name: (lower, upper)}, optional
            Override limits of active joints (e.g. widen ``panda_joint4``).
        floating_base : bool
            Put the URDF root on a 6-DoF floating base (see the module docstring).
        base_bounds : ((xlo, xhi), (ylo, yhi), (zlo, zhi)), optional
            Translation limits of floating bases (default +-10 m).
        package_dirs : {package: directory}, optional
            Where ``package://<package>/`` points (see io.urdf for the search order).
        cache_dir : path, optional
            Directory of the geometry cache (``geometry-<hash>.npz``).
        hull_ratio, max_pieces
            Convexification settings (see `convexify_mesh`).
        acm : list of [link_a, link_b, reason], optional
            Allowed pairs to start from; adjacent pairs are always added.
        """
        data = read_urdf(path, package_dirs)
        self = object.__new__(cls)
        self.name = name or data.name
        self.urdf_path = data.path
        where = str(data.path)

        # ---- the joint list, with floating joints expanded ----
        bb = np.array(base_bounds if base_bounds is not None else [(-10.0, 10.0)] * 3, float)
        if bb.shape != (3, 2) or not np.all(np.isfinite(bb)) or np.any(bb[:, 0] > bb[:, 1]):
            raise ValueError(
                "base_bounds must be ((xlo, xhi), (ylo, yhi), (zlo, zhi)) finite, got "
                f"{base_bounds!r}"
            )
        joints: list[_J] = []
        links_extra: list[str] = []
        root = data.root

        def add_floating(jname, parent, child, origin):
            prev = parent
            for k, (suffix, jt, ax) in enumerate(_FLOAT_AXES):
                last = k == len(_FLOAT_AXES) - 1
                ch = child if last else f"{jname}_link_{suffix}"
                if not last:
                    links_extra.append(ch)
                if jt == PRISMATIC:
                    lo, hi = bb[k]
                    typ = "prismatic"
                else:
                    lim = math.pi / 2 if suffix == "pitch" else math.pi
                    lo, hi, typ = -lim, lim, "revolute"
                joints.append(
                    _J(
                        f"{jname}_{suffix}",
                        typ,
                        prev,
                        ch,
                        origin if k == 0 else np.eye(4),
                        np.array(ax),
                        lo,
                        hi,
                    )
                )
                prev = ch

        if floating_base:
            if "world" in data.links:
                raise URDFLinkError(
                    f"{where}: floating_base=True adds a root link 'world', which the URDF "
                    "already has"
                )
            root = "world"
            add_floating("floating_base", "world", data.root, np.eye(4))
        for j in data.joints.values():
            if j.type == "floating":
                add_floating(j.name, j.parent, j.child, j.origin)
            else:
                joints.append(
                    _J(
                        j.name,
                        j.type,
                        j.parent,
                        j.child,
                        j.origin,
                        j.axis,
                        j.lower,
                        j.upper,
                        j.mimic,
                        j.multiplier,
                        j.offset,
                    )
                )
        jmap = {j.name: j for j in joints}
        movable = [j.name for j in joints if j.type != "fixed"]
        fixed_joints = dict(fixed_joints or {})
        for n in fixed_joints:
            if n not in jmap:
                raise URDFJointError(
                    f"{where}: fixed_joints names unknown joint {n!r}; movable joints: {movable}"
                )
            if jmap[n].type == "fixed":
                raise URDFJointError(
                    f"{where}: fixed_joints names {n!r}, which is a fixed joint already"
                )
            try:
                fixed_joints[n] = float(fixed_joints[n])
            except (TypeError, ValueError):
                raise ValueError(
                    f"fixed_joints[{n!r}] must be a finite number, got {fixed_joints[n]!r}"
                ) from None
            if not math.isfinite(fixed_joints[n]):
                raise ValueError(f"fixed_joints[{n!r}] must be finite, got {fixed_joints[n]!r}")
        if active_joints is None:
            active = [
                j.name
                for j in joints
                if j.type != "fixed" and j.mimic is None and j.name not in fixed_joints
            ]
        else:
            if isinstance(active_joints, str):
                raise TypeError(
                    f"active_joints must be a list of joint names, got the string {active_joints!r}"
                )
            active = [str(n) for n in active_joints]
            for n in active:
                if n not in jmap:
                    raise URDFJointError(
                        f"{where}: active_joints names unknown joint {n!r}; movable joints: "
                        f"{movable}"
                    )
                if jmap[n].type == "fixed":
                    raise URDFJointError(f"{where}: active_joints names fixed joint {n!r}")
                if jmap[n].mimic is not None:
                    raise URDFJointError(
                        f"{where}: active_joints names mimic joint {n!r} (it follows "
                        f"{jmap[n].mimic!r})"
                    )
                if n in fixed_joints:
                    raise URDFJointError(f"{where}: joint {n!r} is both active and in fixed_joints")
            if len(set(active)) != len(active):
                raise URDFJointError(f"{where}: active_joints repeats a joint: {active}")
        aidx = {n: i for i, n in enumerate(active)}

        def held(n):
            j = jmap[n]
            if n in fixed_joints:
                return fixed_joints[n]
            return float(np.clip(0.0, j.lower, j.upper))

        # ---- links in parent-before-child order ----
        children: dict[str, list[_J]] = {}
        for j in joints:
            children.setdefault(j.parent, []).append(j)
        order: list[tuple[str, _J | None]] = []
        stack = [(root, None)]
        while stack:
            ln, j = stack.pop()
            order.append((ln, j))
            for cj in reversed(children.get(ln, [])):
                stack.append((cj.child, cj))
        link_names = [ln for ln, _ in order]
        lidx = {n: i for i, n in enumerate(link_names)}
        n_links = len(link_names)
        dof = len(active)

        parent = np.full(n_links, -1, np.int32)
        jtype = np.zeros(n_links, np.int32)
        axis = np.zeros((n_links, 3))
        axis[:, 2] = 1.0
        origin = np.tile(np.eye(4), (n_links, 1, 1))
        qidx = np.full(n_links, -1, np.int32)
        mult = np.ones(n_links)
        offset = np.zeros(n_links)
        lower = np.zeros(dof)
        upper = np.zeros(dof)
        continuous = np.zeros(dof, bool)
        link_joint: list[str | None] = [None] * n_links
        for i, (_, j) in enumerate(order):
            if j is None:
                continue
            link_joint[i] = j.name
            parent[i] = lidx[j.parent]
            origin[i] = j.origin
            axis[i] = j.axis
            jtype[i] = {"fixed": FIXED, "prismatic": PRISMATIC}.get(j.type, REVOLUTE)
            if j.type == "fixed":
                continue
            if j.mimic is not None and j.name not in fixed_joints:
                m = jmap[j.mimic]
                if m.name in aidx:
                    qidx[i] = aidx[m.name]
                    mult[i] = j.multiplier
                    offset[i] = j.offset
                else:
                    offset[i] = j.multiplier * held(m.name) + j.offset
            elif j.name in aidx:
                d = aidx[j.name]
                qidx[i] = d
                if j.type == "continuous":
                    lower[d], upper[d], continuous[d] = -math.pi, math.pi, True
                else:
                    lower[d], upper[d] = j.lower, j.upper
            else:
                offset[i] = held(j.name)
        for n, lim in (joint_limits or {}).items():
            if n not in aidx:
                raise URDFJointError(
                    f"{where}: joint_limits names {n!r}, which is not an active joint; active: "
                    f"{active}"
                )
            lo, hi = (float(x) for x in lim)
            if not (math.isfinite(lo) and math.isfinite(hi) and lo <= hi):
                raise ValueError(
                    f"joint_limits[{n!r}] must be finite with lower <= upper, got {lim!r}"
                )
            lower[aidx[n]], upper[aidx[n]] = lo, hi

        self.link_names = link_names
        self.link_index = lidx
        self.link_joint = link_joint
        self.joint_names = active
        self.dof = dof
        self.continuous = continuous
        self.held_joints = {
            n: held(n)
            for n in movable
            if n not in aidx and (jmap[n].mimic is None or n in fixed_joints)
        }
        self.model = RobotModel(
            parent, jtype, axis, np.ascontiguousarray(origin), qidx, mult, offset, lower, upper
        )
        for a in self.model:
            a.setflags(write=False)

        # ---- geometry ----
        pieces, report, self.geometry_key = load_link_geometry(
            data, cache_dir, hull_ratio, max_pieces
        )
        pieces.sort(key=lambda p: lidx[p.link])  # stable: URDF order within a link
        self.pieces = pieces
        self.volume_report = report
        piece_link = np.array([lidx[p.link] for p in pieces], np.int32)
        link_start = np.zeros(n_links + 1, np.int32)
        np.cumsum(np.bincount(piece_link, minlength=n_links), out=link_start[1:])
        table = shape_table([p.shape for p in pieces])
        self.collision = CollisionModel(
            table,
            piece_link,
            np.ascontiguousarray(np.array([p.pose for p in pieces]).reshape(-1, 4, 4)),
            link_start,
        )
        self.collision_links = np.flatnonzero(np.diff(link_start) > 0).astype(np.int32)
        # radius about the link origin of a ball holding the link's geometry
        rad = np.zeros(n_links)
        for p in range(len(pieces)):
            li = piece_link[p]
            rad[li] = max(
                rad[li], float(np.linalg.norm(self.collision.piece_pose[p, :3, 3])) + table.brad[p]
            )
        self.link_radius = rad

        # ---- ACM: adjacent pairs always ----
        self.acm = AllowedCollisionMatrix(link_names, acm or ())
        has_geom = np.diff(link_start) > 0
        for i in self.collision_links:
            p = parent[i]
            while p >= 0 and not has_geom[p]:
                p = parent[p]
            if p >= 0:
                self.acm.allow(link_names[p], link_names[i], "adjacent")

        self._build_motion_bound_tables()
        return self

    # ---- configuration ----------------------------------------------------------------

    @property
    def lower(self) -> npt.NDArray[np.float64]:
        return self.model.lower

    @property
    def upper(self) -> npt.NDArray[np.float64]:
        return self.model.upper

    def validate_q(self, q, name: str = "q", check_limits: bool = False) -> npt.NDArray[np.float64]:
        """`q` as a C-contiguous float64 (dof,) array, finite (and within limits when asked),
        else ValueError naming the joint and value."""
        try:
            a = np.ascontiguousarray(q, dtype=np.float64)
        except (TypeError, ValueError):
            raise ValueError(
                f"{name} must be a numeric array of {self.dof} joint values, got {q!r}"
            ) from None
        if a.shape != (self.dof,):
            raise ValueError(
                f"{name} has shape {a.shape}; robot {self.name!r} has {self.dof} active joints "
                f"{self.joint_names}"
            )
        bad = np.flatnonzero(~np.isfinite(a))
        if bad.size:
            raise ValueError(
                f"{name}[{bad[0]}] ({self.joint_names[bad[0]]}) must be finite, got "
                f"{float(a[bad[0]])!r}"
            )
        if check_limits:
            out = np.flatnonzero((a < self.lower) | (a > self.upper))
            if out.size:
                d = out[0]
                raise ValueError(
                    f"{name}[{d}] ({self.joint_names[d]}) = {float(a[d])!r} is outside the joint "
                    "limits "
                    f"[{float(self.lower[d])!r}, {float(self.upper[d])!r}]"
                )
        return a

    def random_configurations(self, n: int, rng=None) -> npt.NDArray[np.float64]:
        """(n, dof) uniform within the joint limits."""
        rng = np.random.default_rng(rng)
        return rng.uniform(self.lower, self.upper, size=(int(n), self.dof))

    # ---- kinematics -------------------------------------------------------------------

    def fk_array(self, q, out=None) -> npt.NDArray[np.float64]:
        """World poses of every link, (n_links, 4, 4), in `link_names` order."""
        q = self.validate_q(q)
        if out is None:
            out = np.empty((len(self.link_names), 4, 4))
        fk(self.model, q, out)
        return out

    def fk(self, q) -> dict[str, npt.NDArray[np.float64]]:
        """{link name: 4x4 T_world_link} for configuration q (dof,). No limit check."""
        T = self.fk_array(q)
        return {n: T[i] for i, n in enumerate(self.link_names)}

    def fk_batch(self, Q) -> npt.NDArray[np.float64]:
        """(m, n_links, 4, 4) link poses for Q (m, dof)."""
        Q = np.ascontiguousarray(Q, dtype=np.float64)
        if Q.ndim != 2 or Q.shape[1] != self.dof:
            raise ValueError(f"Q must have shape (m, {self.dof}), got {Q.shape}")
        if not np.all(np.isfinite(Q)):
            r, c = np.argwhere(~np.isfinite(Q))[0]
            raise ValueError(
                f"Q[{r}, {c}] ({self.joint_names[c]}) must be finite, got {float(Q[r, c])!r}"
            )
        out = np.empty((Q.shape[0], len(self.link_names), 4, 4))
        fk_batch(self.model, Q, out)
        return out

    def piece_poses(self, q) -> npt.NDArray[np.float64]:
        """(n_pieces, 4, 4) world pose of every collision piece."""
        T = self.fk_array(q)
        out = np.empty((len(self.pieces), 4, 4))
        piece_poses(T, self.collision.piece_link, self.collision.piece_pose, out)
        return out

    # ---- motion bounds ----------------------------------------------------------------

    def _chain(self, i: int) -> list[int]:
        """Links from the root to i, inclusive."""
        out = []
        while i >= 0:
            out.append(i)
            i = int(self.model.parent[i])
        return out[::-1]

    def _joint_reach(self, path: list[int]) -> float:
        """Upper bound on |translation| contributed by the joints of links path[1:]."""
        m = self.model
        s = 0.0
        for k in path[1:]:
            s += float(np.linalg.norm(m.origin[k, :3, 3]))
            if m.jtype[k] == PRISMATIC:
                d = m.qidx[k]
                v = abs(m.offset[k])
                if d >= 0:
                    v += abs(m.mult[k]) * max(abs(m.lower[d]), abs(m.upper[d]))
                s += v
        return s

    def _speed_rows(self, i: int, below: int) -> npt.NDArray[np.float64]:
        """R row (dof,) for link i counting only joints of links strictly below link `below`
        on i's chain (below = -1: every joint)."""
        m = self.model
        row = np.zeros(self.dof)
        chain = self._chain(i)
        start = chain.index(below) + 1 if below >= 0 else 0
        for pos in range(start, len(chain)):
            k = chain[pos]
            d = m.qidx[k]
            if d < 0 or m.jtype[k] == FIXED:
                continue
            if m.jtype[k] == PRISMATIC:
                r = 1.0
            else:
                r = self._joint_reach(chain[pos:]) + self.link_radius[i]
            row[d] += abs(m.mult[k]) * r
        return row

    def lowest_common_ancestor(self, a: int, b: int) -> int:
        ca, cb = self._chain(a), self._chain(b)
        lca = -1
        for x, y in zip(ca, cb, strict=False):  # chains differ in length
            if x != y:
                break
            lca = x
        return lca

    def _build_motion_bound_tables(self) -> None:
        self.motion_bound_R = np.ascontiguousarray(
            np.array([self._speed_rows(int(i), -1) for i in self.collision_links]).reshape(
                len(self.collision_links), self.dof
            )
        )
        self._pair_R_cache: dict[tuple[int, int], np.ndarray] = {}

    def pair_speed_rows(self, pairs) -> npt.NDArray[np.float64]:
        """(k, dof) R rows of link pairs (k, 2) (link indices): joints below the LCA only."""
        rows = []
        for a, b in np.asarray(pairs, np.int64).reshape(-1, 2):
            key = (int(a), int(b))
            if key not in self._pair_R_cache:
                c = self.lowest_common_ancestor(*key)
                self._pair_R_cache[key] = self._speed_rows(key[0], c) + self._speed_rows(key[1], c)
            rows.append(self._pair_R_cache[key])
        return np.ascontiguousarray(np.array(rows).reshape(len(rows), self.dof))

    def motion_bounds(self, q0, q1) -> npt.NDArray[np.float64]:
        """(n_collision_links,) mu_i: along q0 -> q1, no point of collision link
        `collision_links[i]` moves farther than ``mu_i |t - s|`` (metres)."""
        q0 = self.validate_q(q0, "q0")
        q1 = self.validate_q(q1, "q1")
        out = np.empty(self.motion_bound_R.shape[0])
        _motion_bounds_kernel(self.motion_bound_R, q0, q1, out)
        return out

    def pair_motion_bounds(self, q0, q1, pairs=None) -> npt.NDArray[np.float64]:
        """(k,) bound on how fast the two links of each pair approach each other, per unit t,
        along q0 -> q1 (joints below the pair's LCA only). Default pairs: the checked
        self-collision pairs."""
        q0 = self.validate_q(q0, "q0")
        q1 = self.validate_q(q1, "q1")
        R = self.pair_speed_rows(self.self_collision_pairs() if pairs is None else pairs)
        out = np.empty(R.shape[0])
        _motion_bounds_kernel(R, q0, q1, out)
        return out

    # ---- allowed-collision matrix -----------------------------------------------------

    def allow(self, a: str, b: str, reason: str = "user") -> None:
        """Ignore collisions between links a and b."""
        self.acm.allow(a, b, reason)

    def disallow(self, a: str, b: str) -> None:
        """Check collisions between links a and b again."""
        self.acm.disallow(a, b)

    def self_collision_pairs(self) -> npt.NDArray[np.int32]:
        """(k, 2) link indices of collision-link pairs not in the ACM (a < b)."""
        cl = self.collision_links
        out = [
            (a, b)
            for x, a in enumerate(cl)
            for b in cl[x + 1 :]
            if not self.acm.is_allowed(self.link_names[a], self.link_names[b])
        ]
        return np.array(out, np.int32).reshape(-1, 2)

    def count_self_collisions(self, Q, pairs=None, margin: float = 0.0) -> npt.NDArray[np.int64]:
        """For each link pair (default: every collision-link pair), in how many rows of Q
        (m, dof) it collides (signed distance <= margin). One compiled call."""
        from .kernels.pair import new_workspace
        from .kernels.robot_batch import count_link_pair_collisions

        Q = np.ascontiguousarray(np.atleast_2d(Q), dtype=np.float64)
        if Q.shape[1] != self.dof or not np.all(np.isfinite(Q)):
            raise ValueError(f"Q must be finite with shape (m, {self.dof}), got shape {Q.shape}")
        if pairs is None:
            cl = self.collision_links
            pairs = [(a, b) for x, a in enumerate(cl) for b in cl[x + 1 :]]
        pairs = np.ascontiguousarray(np.asarray(pairs, np.int32).reshape(-1, 2))
        counts = np.zeros(pairs.shape[0], np.int64)
        c = self.collision
        count_link_pair_collisions(
            self.model,
            c.table,
            c.piece_link,
            c.piece_pose,
            c.link_start,
            pairs,
            Q,
            float(margin),
            new_workspace(),
            np.zeros((len(self.link_names), 4, 4)),
            np.zeros((len(self.pieces), 4, 4)),
            counts,
        )
        return counts

    def compute_acm(
        self,
        n_samples: int = 10_000,
        seed: int = 0,
        always_fraction: float = ALWAYS_FRACTION,
        default_q=None,
    ) -> dict:
        """MoveIt setup-assistant sampling: add "default", "always" and "never" pairs to the
        ACM. Returns a summary {reason: count, "samples": n, "seconds": t}."""
        import time

        if n_samples < 1:
            raise ValueError(f"n_samples must be >= 1, got {n_samples}")
        cl = self.collision_links
        pairs = np.array(
            [
                (a, b)
                for x, a in enumerate(cl)
                for b in cl[x + 1 :]
                if not self.acm.is_allowed(self.link_names[a], self.link_names[b])
            ],
            np.int32,
        ).reshape(-1, 2)
        q_def = (
            np.clip(np.zeros(self.dof), self.lower, self.upper)
            if default_q is None
            else self.validate_q(default_q)
        )
        t0 = time.perf_counter()
        default = self.count_self_collisions(q_def, pairs)
        Q = self.random_configurations(n_samples, seed)
        counts = self.count_self_collisions(Q, pairs)
        dt = time.perf_counter() - t0
        summary = {"default": 0, "always": 0, "never": 0, "checked": 0}
        for (a, b), d, c in zip(pairs, default, counts, strict=True):
            na, nb = self.link_names[a], self.link_names[b]
            if d > 0:
                why = "default"
            elif c >= always_fraction * n_samples:
                why = "always"
            elif c == 0:
                why = "never"
            else:
                summary["checked"] += 1
                continue
            summary[why] += 1
            self.acm.allow(na, nb, why)
        summary.update(samples=int(n_samples), seed=int(seed), seconds=dt)
        return summary

    def volume_ratios(self) -> dict[str, float]:
        """{link: model volume / mesh volume} for links with geometry."""
        return {
            k: v["model_volume"] / v["mesh_volume"]
            for k, v in self.volume_report.items()
            if v["mesh_volume"] > 0
        }

    def __repr__(self) -> str:
        return (
            f"Robot({self.name!r}, dof={self.dof}, links={len(self.link_names)}, "
            f"pieces={len(self.pieces)}, allowed_pairs={len(self.acm)})"
        )
