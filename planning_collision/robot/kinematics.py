"""URDF records -> the kinematic tree as arrays (`KinematicTree`), in short steps.

**Joints.** ``q`` holds the active joints in ``joint_names`` order. Joints that are not
active are held at ``fixed_joints`` values (default: 0 clamped into the joint's limits); a
held value may lie outside the URDF limits (the Panda fingers at 0.065 m in the
MotionBenchMaker problems). Mimic joints follow their master (active or held). Continuous
joints get limits [-pi, pi] and ``continuous[d]`` is True.

**Floating base.** A URDF ``floating`` joint, or ``floating_base=True`` (a floating joint
from a new root link ``world`` to the URDF root), becomes six virtual joints
``<name>_x, _y, _z`` (prismatic along the parent's axes) and ``<name>_yaw, _pitch, _roll``
(revolute about z, y, x: ``T = Trans(x, y, z) Rz(yaw) Ry(pitch) Rx(roll)``), with virtual
links ``<name>_link_x`` ... between them. Translation limits come from ``base_bounds``
(default +-10 m); yaw and roll are continuous (sampled in [-pi, pi]), pitch in
[-pi/2, pi/2].

Links are ordered parents before children, so FK is one forward loop (kernels/robot/fk.py).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import numpy.typing as npt

from ..geometry.validate import real_array
from ..io.urdf import URDFData, URDFJointError, URDFLinkError
from ..kernels.base.tolerances import WORLD_LIMIT
from ..kernels.robot.fk import FIXED, PRISMATIC, REVOLUTE, RobotModel

__all__ = ["KinematicTree", "build_tree", "q_bounds", "validate_q"]

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


@dataclasses.dataclass(frozen=True, eq=False)
class KinematicTree:
    """A robot's kinematics as arrays (module doc)."""

    link_names: list[str]  # parents before children
    link_index: dict[str, int]
    link_joint: list[str | None]  # the joint from each link's parent (None at the root)
    joint_names: list[str]  # the active joints, q's order
    continuous: npt.NDArray[np.bool_]  # (dof,)
    held_joints: dict[str, float]  # movable joints held at a value
    model: RobotModel  # the arrays FK reads (read-only)

    @property
    def dof(self) -> int:
        return len(self.joint_names)

    def __setstate__(self, state: dict) -> None:
        # unpickled (in a worker process): numpy unpickles arrays writeable; the FK arrays
        # are read-only again (a writeable model is another numba type: FK compiled twice)
        self.__dict__.update(state)
        for a in self.model:
            a.setflags(write=False)


def _floating(jname, parent, child, origin, bounds) -> list[_J]:
    """The six virtual joints of a floating joint (module doc)."""
    out = []
    prev = parent
    for k, (suffix, jt, ax) in enumerate(_FLOAT_AXES):
        last = k == len(_FLOAT_AXES) - 1
        ch = child if last else f"{jname}_link_{suffix}"
        if jt == PRISMATIC:
            lo, hi = bounds[k]
            typ = "prismatic"
        else:
            # yaw and roll wrap around (continuous: a motion may cross +-pi); pitch is
            # limited to [-pi/2, pi/2], where the three angles cover every rotation
            lim = math.pi / 2 if suffix == "pitch" else math.pi
            lo, hi = -lim, lim
            typ = "revolute" if suffix == "pitch" else "continuous"
        o = origin if k == 0 else np.eye(4)
        out.append(_J(f"{jname}_{suffix}", typ, prev, ch, o, np.array(ax), lo, hi))
        prev = ch
    return out


def _expand_joints(data: URDFData, floating_base: bool, base_bounds) -> tuple[list[_J], str]:
    """The joint list with floating joints expanded, and the root link."""
    bb = np.array(base_bounds if base_bounds is not None else [(-10.0, 10.0)] * 3, float)
    if bb.shape != (3, 2) or not np.all(np.isfinite(bb)) or np.any(bb[:, 0] > bb[:, 1]):
        raise ValueError(
            f"base_bounds must be ((xlo, xhi), (ylo, yhi), (zlo, zhi)) finite, got {base_bounds!r}"
        )
    if np.any(np.abs(bb) > WORLD_LIMIT):
        raise ValueError(
            f"base_bounds {bb.tolist()} m reach outside the working range (+-{WORLD_LIMIT:g} m)"
        )
    joints: list[_J] = []
    root = data.root
    if floating_base:
        if "world" in data.links:
            raise URDFLinkError(
                f"{data.path}: floating_base=True adds a root link 'world', which the URDF "
                "already has"
            )
        root = "world"
        joints += _floating("floating_base", "world", data.root, np.eye(4), bb)
    for j in data.joints.values():
        if j.type == "floating":
            joints += _floating(j.name, j.parent, j.child, j.origin, bb)
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
                )  # fmt: skip
            )
    return joints, root


def _held_values(fixed_joints, jmap: dict, where: str) -> dict[str, float]:
    """`fixed_joints` checked: movable joints that exist, finite values."""
    movable = [n for n, j in jmap.items() if j.type != "fixed"]
    out = {}
    for n, v in dict(fixed_joints or {}).items():
        if n not in jmap:
            raise URDFJointError(
                f"{where}: fixed_joints names unknown joint {n!r}; movable joints: {movable}"
            )
        if jmap[n].type == "fixed":
            raise URDFJointError(
                f"{where}: fixed_joints names {n!r}, which is a fixed joint already"
            )
        try:
            out[n] = float(v)
        except (TypeError, ValueError):
            raise ValueError(f"fixed_joints[{n!r}] must be a finite number, got {v!r}") from None
        if not math.isfinite(out[n]):
            raise ValueError(f"fixed_joints[{n!r}] must be finite, got {v!r}")
        if jmap[n].type == "prismatic" and abs(out[n]) > WORLD_LIMIT:
            raise ValueError(
                f"fixed_joints[{n!r}] = {v!r} m is outside the working range (+-{WORLD_LIMIT:g} m)"
            )
    return out


def _active(active_joints, jmap: dict, fixed: dict, where: str) -> list[str]:
    """The active joint names: as given (checked), or every movable non-mimic joint that
    is not held."""
    if active_joints is None:
        return [
            n for n, j in jmap.items() if j.type != "fixed" and j.mimic is None and n not in fixed
        ]
    if isinstance(active_joints, str):
        raise TypeError(
            f"active_joints must be a list of joint names, got the string {active_joints!r}"
        )
    movable = [n for n, j in jmap.items() if j.type != "fixed"]
    active = [str(n) for n in active_joints]
    for n in active:
        if n not in jmap:
            raise URDFJointError(
                f"{where}: active_joints names unknown joint {n!r}; movable joints: {movable}"
            )
        if jmap[n].type == "fixed":
            raise URDFJointError(f"{where}: active_joints names fixed joint {n!r}")
        if jmap[n].mimic is not None:
            raise URDFJointError(
                f"{where}: active_joints names mimic joint {n!r} (it follows {jmap[n].mimic!r})"
            )
        if n in fixed:
            raise URDFJointError(f"{where}: joint {n!r} is both active and in fixed_joints")
    if len(set(active)) != len(active):
        raise URDFJointError(f"{where}: active_joints repeats a joint: {active}")
    return active


def _link_order(joints: list[_J], root: str) -> list[tuple[str, _J | None]]:
    """(link, joint from its parent) in parent-before-child order (depth first)."""
    children: dict[str, list[_J]] = {}
    for j in joints:
        children.setdefault(j.parent, []).append(j)
    order: list[tuple[str, _J | None]] = []
    stack: list[tuple[str, _J | None]] = [(root, None)]
    while stack:
        ln, j = stack.pop()
        order.append((ln, j))
        for cj in reversed(children.get(ln, [])):
            stack.append((cj.child, cj))
    return order


def _model(order, jmap, aidx, fixed, held) -> tuple[RobotModel, np.ndarray]:
    """The FK arrays of links in `order` (and which active joints are continuous)."""
    lidx = {ln: i for i, (ln, _) in enumerate(order)}
    n, dof = len(order), len(aidx)
    parent = np.full(n, -1, np.int32)
    jtype = np.zeros(n, np.int32)
    axis = np.zeros((n, 3))
    axis[:, 2] = 1.0
    origin = np.tile(np.eye(4), (n, 1, 1))
    qidx = np.full(n, -1, np.int32)
    mult = np.ones(n)
    offset = np.zeros(n)
    lower, upper = np.zeros(dof), np.zeros(dof)
    continuous = np.zeros(dof, bool)
    for i, (_, j) in enumerate(order):
        if j is None:
            continue
        parent[i], origin[i], axis[i] = lidx[j.parent], j.origin, j.axis
        jtype[i] = {"fixed": FIXED, "prismatic": PRISMATIC}.get(j.type, REVOLUTE)
        if j.type == "fixed":
            continue
        if j.mimic is not None and j.name not in fixed:
            m = jmap[j.mimic]
            if m.name in aidx:
                qidx[i], mult[i], offset[i] = aidx[m.name], j.multiplier, j.offset
            else:
                offset[i] = j.multiplier * held(m.name) + j.offset
        elif j.name in aidx:
            d = qidx[i] = aidx[j.name]
            if j.type == "continuous":
                lower[d], upper[d], continuous[d] = -math.pi, math.pi, True
            else:
                lower[d], upper[d] = j.lower, j.upper
        else:
            offset[i] = held(j.name)
    model = RobotModel(
        parent, jtype, axis, np.ascontiguousarray(origin), qidx, mult, offset, lower, upper
    )
    return model, continuous


def _override_limits(model: RobotModel, joint_limits, aidx: dict, where: str) -> None:
    """Replace the limits of active joints named in `joint_limits` (in place)."""
    prismatic = np.zeros(len(aidx), bool)
    moved = (model.jtype == PRISMATIC) & (model.qidx >= 0)
    prismatic[model.qidx[moved]] = True
    for n, lim in (joint_limits or {}).items():
        if n not in aidx:
            raise URDFJointError(
                f"{where}: joint_limits names {n!r}, which is not an active joint; active: "
                f"{list(aidx)}"
            )
        lo, hi = (float(x) for x in lim)
        if not (math.isfinite(lo) and math.isfinite(hi) and lo <= hi):
            raise ValueError(f"joint_limits[{n!r}] must be finite with lower <= upper, got {lim!r}")
        d = aidx[n]
        if prismatic[d] and max(abs(lo), abs(hi)) > WORLD_LIMIT:
            raise ValueError(
                f"joint_limits[{n!r}] = {lim!r} m is outside the working range "
                f"(+-{WORLD_LIMIT:g} m)"
            )
        model.lower[d], model.upper[d] = lo, hi


def _check_reach(model: RobotModel, links: list, where: str) -> None:
    """ValueError when a link's origin may leave the world box [-WORLD_LIMIT, WORLD_LIMIT]^3:
    per world coordinate, the joints' offsets and prismatic travels (held values, limits,
    mimic maps) along its chain bound how far it gets; exactly while the chain's rotation is
    fixed (a floating base's x, y, z), by their lengths on every axis after a joint that
    turns."""
    bound = np.zeros((len(links), 3))
    turn: list = [None] * len(links)  # the link frame's world rotation while it is fixed
    for i in range(len(links)):
        p = model.parent[i]
        R = np.eye(3) if p < 0 else turn[p]
        b = np.zeros(3) if p < 0 else bound[p]
        t = model.origin[i, :3, 3]
        b = b + (np.abs(R @ t) if R is not None else np.linalg.norm(t))
        R = None if R is None else R @ model.origin[i, :3, :3]
        jt, d = model.jtype[i], model.qidx[i]
        if jt == PRISMATIC:
            q = max(abs(model.lower[d]), abs(model.upper[d])) if d >= 0 else 0.0
            travel = abs(model.mult[i]) * q + abs(model.offset[i])
            b = b + (np.abs(R @ model.axis[i]) * travel if R is not None else travel)
        elif jt != FIXED:
            R = None  # it turns (held revolute joints too, conservatively)
        bound[i], turn[i] = b, R
    far = np.flatnonzero(bound.max(axis=1) > WORLD_LIMIT)
    if far.size:
        k = int(far[0])
        raise ValueError(
            f"{where}: link {links[k]!r} may reach {bound[k].max():g} m from the root along "
            "an axis (its chain's offsets and prismatic travel: base_bounds, fixed_joints, "
            f"joint_limits, mimic multipliers), outside the working range (+-{WORLD_LIMIT:g} m)"
        )


def build_tree(
    data: URDFData,
    active_joints=None,
    fixed_joints=None,
    joint_limits=None,
    floating_base: bool = False,
    base_bounds=None,
) -> KinematicTree:
    """The kinematic tree of a read URDF (see `Robot.from_urdf` for the arguments)."""
    where = str(data.path)
    joints, root = _expand_joints(data, floating_base, base_bounds)
    jmap = {j.name: j for j in joints}
    fixed = _held_values(fixed_joints, jmap, where)
    active = _active(active_joints, jmap, fixed, where)
    aidx = {n: i for i, n in enumerate(active)}

    def held(n):
        return fixed[n] if n in fixed else float(np.clip(0.0, jmap[n].lower, jmap[n].upper))

    order = _link_order(joints, root)
    model, continuous = _model(order, jmap, aidx, fixed, held)
    _override_limits(model, joint_limits, aidx, where)
    _check_reach(model, [ln for ln, _ in order], where)
    for a in model:
        a.setflags(write=False)
    movable = [j.name for j in joints if j.type != "fixed"]
    return KinematicTree(
        link_names=[ln for ln, _ in order],
        link_index={ln: i for i, (ln, _) in enumerate(order)},
        link_joint=[None if j is None else j.name for _, j in order],
        joint_names=active,
        continuous=continuous,
        held_joints={
            n: held(n) for n in movable if n not in aidx and (jmap[n].mimic is None or n in fixed)
        },
        model=model,
    )


_BIG = float(np.finfo(np.float64).max)
_Q_BOUNDS: dict = {}  # id(RobotModel) -> (model, bounds): `q_bounds`


def q_bounds(model) -> tuple:
    """((lo, hi) within the joint limits, (lo, hi) any finite value) of `model`'s joints,
    each as one comparison takes it: `lo <= q <= hi` fails for NaN and +-inf too (limits
    clipped to the finite floats). Made once per model (kept alive with its entry)."""
    got = _Q_BOUNDS.get(id(model))
    if got is not None and got[0] is model:
        return got[1]
    lo, hi = np.maximum(model.lower, -_BIG), np.minimum(model.upper, _BIG)
    anywhere = np.full(lo.shape, -_BIG), np.full(lo.shape, _BIG)
    bounds = ((lo, hi), anywhere)
    if len(_Q_BOUNDS) >= 64:  # bounded: a process that loads robot after robot
        _Q_BOUNDS.clear()
    _Q_BOUNDS[id(model)] = (model, bounds)
    return bounds


def validate_q(tree: KinematicTree, q, name: str, check_limits: bool, robot: str) -> np.ndarray:
    """`Robot.validate_q` of the robot called `robot` whose tree is `tree`."""
    model = tree.model
    if type(q) is np.ndarray and q.dtype == np.float64 and q.shape == model.lower.shape:
        # the common case in one comparison (a set-up checks a start and a goal per
        # problem), the path below naming what is bad
        lo, hi = q_bounds(model)[0 if check_limits else 1]
        if ((q >= lo) & (q <= hi)).all():
            flags = q.flags
            return q if flags.c_contiguous and flags.writeable else q.copy()
    dof, joints = tree.dof, tree.joint_names
    a = np.ascontiguousarray(real_array(name, q, f"a numeric array of {dof} joint values"))
    if not a.flags.writeable:  # e.g. robot.lower: another numba type, a second compile
        a = a.copy()
    if a.shape != (dof,):
        raise ValueError(
            f"{name} has shape {a.shape}; robot {robot!r} has {dof} active joints {joints}"
        )
    bad = np.flatnonzero(~np.isfinite(a))
    if bad.size:
        d = bad[0]
        raise ValueError(f"{name}[{d}] ({joints[d]}) must be finite, got {float(a[d])!r}")
    if check_limits:
        out = np.flatnonzero((a < model.lower) | (a > model.upper))
        if out.size:
            d = out[0]
            raise ValueError(
                f"{name}[{d}] ({joints[d]}) = {float(a[d])!r} is outside the joint limits "
                f"[{float(model.lower[d])!r}, {float(model.upper[d])!r}]"
            )
    return a
