"""Robot: a URDF robot compiled for the kernels, and its runtime API.

::

    import numpy as np
    from planning_collision import Robot

    robot = Robot.from_urdf("arm.urdf")                 # every movable joint active
    robot = Robot.from_urdf("arm.urdf", srdf="arm.srdf")  # ACM from MoveIt's SRDF
    robot.acm_source          # "adjacent + sampled (10000 configurations, seed 0)"
    robot.acm_is_adjacent_only                          # True: self checks test too many pairs
    robot.joint_names, robot.lower, robot.upper, robot.dof
    poses = robot.fk(np.zeros(robot.dof))               # {link name: 4x4 T_world_link}
    mu = robot.motion_bounds(q0, q1)                    # (n_collision_links,) metres per unit t
    robot.attach("box", "panda_hand", pc.Box((0.04, 0.04, 0.1)), T_hand_box,
                 touch_links=["panda_leftfinger", "panda_rightfinger"])  # held: a link now
    robot.detach("box")

    # the flat form a checker uses: arrays only, numba-ready
    robot.model        # RobotModel: parent, jtype, axis, origin, qidx, mult, offset, lower, upper
    robot.collision    # CollisionModel: ShapeTable + piece -> link, piece poses in the link

Construction is apart from use: `kinematics.build_tree` turns the URDF's records into
arrays (joints, floating bases, held and mimic joints: see there), `geometry` turns link
geometry into convex pieces holding every mesh triangle (`convexify`), `acm` holds the
allowed-collision matrix (adjacent pairs, ``acm=``, an SRDF, MoveIt-style sampling when
neither list is given), `bounds` the motion-bound tables. Link models and sampled ACMs are
cached on disk (`cache`: the per-user directory unless ``cache_dir`` says otherwise); long
builds report progress (`progress`). A `Robot` is a model: no query writes in it. Its
`version` changes when its ACM is edited or an object is attached or detached (`attached`:
the object becomes a virtual link; `attach` and `detach` replace the whole `RobotState` at
once), so a checker built on it can tell it is stale.
"""

from __future__ import annotations

import dataclasses
import logging
import threading

import numpy as np
import numpy.typing as npt

from ..io.srdf import SRDFError, acm_reason, read_srdf, write_srdf
from ..io.urdf import read_urdf
from ..kernels.robot.fk import RobotModel, fk, fk_batch
from ..kernels.robot.robot_batch import count_link_pair_collisions
from ..processes import fork_safe
from ..stamps import announce
from ..workspace import Workspace, thread_workspace
from .acm import (
    ACM_SAMPLES,
    ALWAYS_FRACTION,
    AllowedCollisionMatrix,
    adjacent_pairs,
    cached_sample_acm,
    sample_acm,
)
from .attached import (
    AttachedObject,
    SceneTransfers,
    attached_object,
    extend_tree,
    object_key,
    object_pieces,
)
from .bodies import LinkBodies
from .bounds import MotionBoundTables
from .geometry import CollisionModel, collision_model, link_radii, load_link_geometry
from .kinematics import KinematicTree, build_tree, validate_q

__all__ = ["Robot", "RobotModel", "RobotState", "CollisionModel"]

log = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True, eq=False)
class RobotState:
    """What `Robot.attach` and `Robot.detach` replace at once: the kinematic tree, the
    collision pieces and everything derived from them, and the allowed-collision matrix
    (over the links then present). A call that reads it once (`Robot.pinned`) never sees
    half an attach."""

    tree: KinematicTree
    pieces: list
    collision: CollisionModel
    collision_links: npt.NDArray[np.int32]
    link_radius: npt.NDArray[np.float64]
    bounds: MotionBoundTables
    geometry_key: str
    acm: AllowedCollisionMatrix
    attached: tuple  # of AttachedObject, in attach order (their links' order)


def _writeable_f64(a, shape: tuple) -> bool:
    """Whether `a` is a writeable C-contiguous float64 array of this shape (an `out=`)."""
    return (
        isinstance(a, np.ndarray)
        and a.shape == shape
        and a.dtype == np.float64
        and a.flags.c_contiguous
        and a.flags.writeable
    )


def _link_geometry(tree: KinematicTree, pieces: list) -> dict:
    """The RobotState fields derived from the tree and the pieces (sorted by link)."""
    n_links = len(tree.link_names)
    collision = collision_model(pieces, n_links, tree.link_index)
    links = np.flatnonzero(np.diff(collision.link_start) > 0).astype(np.int32)
    radius = link_radii(collision, n_links)
    return {
        "collision": collision,
        "collision_links": links,
        "link_radius": radius,
        "bounds": MotionBoundTables(tree.model, radius, links, tree.dof),
    }


class Robot(SceneTransfers, LinkBodies):
    """A URDF robot compiled for the kernels. Build with `Robot.from_urdf` or
    `robots.load(name)`. See the module docstring."""

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
        srdf=None,
        srdf_strict: bool = False,
        compute_acm: bool | None = None,
        progress=None,
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
            Put the URDF root on a 6-DoF floating base (robot/kinematics.py).
        base_bounds : ((xlo, xhi), (ylo, yhi), (zlo, zhi)), optional
            Translation limits of floating bases (default +-10 m).
        package_dirs : {package: directory}, optional
            Where ``package://<package>/`` points (see io.urdf for the search order).
        cache_dir : path, None or False
            Where built link models and sampled ACMs are cached: None (default) the
            per-user cache (``$PLANNING_COLLISION_CACHE``, else
            ``$XDG_CACHE_HOME/planning_collision`` or ``~/.cache/planning_collision``), a
            directory, or False for none (robot/cache.py).
        hull_ratio, max_pieces
            Convexification settings (see `robot.convexify.decompose_mesh`).
        acm : list of [link_a, link_b, reason], optional
            Allowed pairs to start from; adjacent pairs are always added.
        srdf : path, optional
            A MoveIt SRDF whose ``disable_collisions`` pairs are allowed (io/srdf.py).
            Entries naming links this URDF lacks are skipped with one warning listing
            them, as MoveIt does.
        srdf_strict : bool
            Refuse such an SRDF instead (`SRDFError` naming every unknown link).
        compute_acm : bool, optional
            Sample the ACM as MoveIt's setup assistant does (`Robot.compute_acm`, 10,000
            configurations, cached beside the link models). Default: when neither `acm` nor
            `srdf` is given. With ``False`` and neither, the ACM holds only adjacent pairs:
            a warning says so and `acm_is_adjacent_only` is True.
        progress : None, False or callable(done, total, message)
            Progress of long builds (link decomposition, ACM sampling), a step per link
            and notes within it (each V-HACD run, every 16,384 triangles scanned): None
            shows a tqdm bar when tqdm is installed and stderr is a terminal, else says on
            stderr where the build is, as compiles are announced (after 2 s, then every
            7 s); every step is also logged at INFO (robot/progress.py). Cached loads are
            quiet.
        """
        data = read_urdf(path, package_dirs)
        tree = build_tree(
            data, active_joints, fixed_joints, joint_limits, floating_base, base_bounds
        )
        pieces, report, key = load_link_geometry(
            data, cache_dir, hull_ratio, max_pieces, progress, name or data.name
        )
        pieces.sort(key=lambda p: tree.link_index[p.link])  # stable: URDF order within a link
        self = object.__new__(cls)
        self.name = name or data.name
        self.urdf_path = data.path
        self.volume_report = report
        self.cache_dir = cache_dir  # as given: also where derived tables are cached
        self._lock = fork_safe(threading.RLock())  # attach, detach and ACM edits, one at a time
        self._convexify = (hull_ratio, max_pieces)  # for attached meshes
        geo = _link_geometry(tree, pieces)
        acm_matrix = self._initial_acm(tree, acm, srdf, srdf_strict, geo["collision"])
        state = RobotState(tree, pieces, **geo, geometry_key=key, acm=acm_matrix, attached=())
        self._base = self._state = state  # the URDF's robot; attach and detach build on it
        if compute_acm is None:
            compute_acm = acm is None and srdf is None
        if compute_acm:
            got = cached_sample_acm(self, cache_dir, progress=progress)
            self._acm_sources.append(
                f"sampled ({got['samples']} configurations, seed {got['seed']}"
                f"{', from the cache' if got['cached'] else ''})"
            )
        self._warn_if_adjacent_only()
        return self

    def _warn_if_adjacent_only(self) -> None:
        if self.acm_is_adjacent_only:
            srdf = self._empty_srdf
            log.warning(
                "robot %r: its allowed-collision matrix holds only adjacent link pairs%s, so "
                "self-collision checks also test pairs that touch by design (%d pairs "
                "checked). Pass srdf=<MoveIt SRDF>, acm=[...] or compute_acm=True, or call "
                "robot.compute_acm().",
                self.name,
                "" if srdf is None else f" (the SRDF {srdf} disables no pair)",
                len(self.self_collision_pairs()),
            )

    def _initial_acm(self, tree, acm, srdf, srdf_strict, collision) -> AllowedCollisionMatrix:
        """The ACM from `acm` entries, the SRDF's disabled pairs and adjacency."""
        has_geometry = np.diff(collision.link_start) > 0
        matrix = AllowedCollisionMatrix(tree.link_names, acm or ())
        self._acm_sources = ["adjacent"]
        self._empty_srdf = None  # an SRDF given that allowed no pair
        if acm is not None:
            self._acm_sources.append(f"acm= ({len(matrix)} pairs)")
        if srdf is not None:
            rec = read_srdf(srdf, tree.link_names, strict=srdf_strict)
            _check_srdf_matches(rec, self.name)
            for d in rec.disabled_collisions:
                matrix.allow(d.link1, d.link2, acm_reason(d.reason))
            n = len(rec.disabled_collisions)
            skipped = f", {len(rec.skipped)} skipped" if rec.skipped else ""
            if n:  # one that allows nothing leaves the matrix adjacent-only, and says so
                self._acm_sources.append(f"srdf {rec.path.name} ({n} pairs{skipped})")
            else:
                self._empty_srdf = rec.path
        for a, b in adjacent_pairs(tree.model.parent, has_geometry):
            matrix.allow(tree.link_names[a], tree.link_names[b], "adjacent")
        return matrix

    # ---- the state attach and detach replace (RobotState) --------------------------------

    tree = property(lambda self: self._state.tree, doc="the kinematic tree (KinematicTree)")
    pieces = property(lambda self: self._state.pieces, doc="collision pieces, sorted by link")
    collision = property(lambda self: self._state.collision, doc="the pieces, flat")
    collision_links = property(
        lambda self: self._state.collision_links, doc="(k,) int32 links with geometry"
    )
    link_radius = property(lambda self: self._state.link_radius, doc="(n_links,) ball radii")
    bounds = property(lambda self: self._state.bounds, doc="motion-bound tables")
    geometry_key = property(
        lambda self: self._state.geometry_key, doc="what the geometry was built from (a key)"
    )
    acm = property(lambda self: self._state.acm, doc="the AllowedCollisionMatrix")

    def pinned(self) -> Robot:
        """This robot as it is now: a view whose links, pieces and ACM object a later attach
        or detach leaves alone (edits of that ACM still show). What reads several of them
        in turn (the checker's model, `fk_array`, `piece_poses`) reads one view."""
        view = object.__new__(type(self))
        view.__dict__.update(self.__dict__)
        return view

    def __getstate__(self) -> dict:  # to a worker process: the lock stays (acm.py: version)
        return {k: v for k, v in self.__dict__.items() if k != "_lock"}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state, _lock=fork_safe(threading.RLock()))

    def without_attached(self) -> Robot:
        """A pinned view of this robot without its attached objects: the URDF's links and
        pieces, and the ACM's entries among them (the checker reuses its self-pair tables
        while objects come and go)."""
        view = self.pinned()
        s, base = view._state, self._base
        if s.attached:
            names = set(base.tree.link_names)
            kept = [e for e in s.acm.entries() if e[0] in names and e[1] in names]
            acm = AllowedCollisionMatrix(base.tree.link_names, kept)
            view._state = dataclasses.replace(base, acm=acm)
        return view

    # ---- attached objects (robot/attached.py) -----------------------------------------

    @property
    def attached(self) -> dict[str, AttachedObject]:
        """{name: AttachedObject} of the objects attached now, in attach order."""
        return {o.name: o for o in self._state.attached}

    def attach(self, name: str, link: str, shapes, pose=None, *, touch_links=()) -> AttachedObject:
        """Attach an object to `link` (MoveIt's AttachedCollisionObject; robot/attached.py):
        from now on it moves with the link in every query of every checker of this robot.

        name : its name (a new link name: contacts and distances say it).
        shapes : a Shape (sphere, box, capsule, cylinder, cone, convex or mesh), or a list of
            ``(Shape, T_object_shape (4, 4))`` pairs, as `Scene.add` takes an object.
        pose : (4, 4) T_link_object, the object's pose in the link's frame (identity when
            None).
        touch_links : links it may touch besides `link` (a gripper's fingers); it is checked
            against every other link and the scene.

        Returns the `AttachedObject`. ValueError/TypeError naming a bad argument (an unknown
        link, a name already taken, a shape that cannot be attached)."""
        with self._lock:
            s = self._state
            obj = attached_object(s.tree.link_names, name, link, shapes, pose, touch_links)
            entries = [[obj.name, obj.link, "attached"]]
            entries += [[obj.name, t, "touch"] for t in obj.touch_links]
            self._publish(s.attached + (obj,), s.acm.entries() + entries)
        return obj

    def detach(self, name: str) -> AttachedObject:
        """Detach the object `name` (its ACM entries go with it); returns it. ValueError
        when nothing of that name is attached."""
        with self._lock:
            s = self._state
            objects = {o.name: o for o in s.attached}
            if name not in objects:
                raise ValueError(
                    f"no object {name!r} is attached to robot {self.name!r}; attached: "
                    f"{sorted(objects)}"
                )
            kept = tuple(o for o in s.attached if o.name != name)
            entries = [e for e in s.acm.entries() if name not in e[:2]]
            self._publish(kept, entries)
        return objects[name]

    def _publish(self, objects: tuple, entries: list) -> None:
        """Make the robot state with these attached objects and ACM entries current (one
        assignment), then tell the checkers (stamps.py)."""
        base = self._base
        tree = extend_tree(base.tree, objects)
        pieces = list(base.pieces)
        for o in objects:
            pieces += object_pieces(o, *self._convexify)
        key = base.geometry_key + (f"+{object_key(objects)}" if objects else "")
        names = set(tree.link_names)
        acm = AllowedCollisionMatrix(
            tree.link_names, [e for e in entries if e[0] in names and e[1] in names]
        )
        geo = _link_geometry(tree, pieces)
        self._state = RobotState(tree, pieces, **geo, geometry_key=key, acm=acm, attached=objects)
        announce()

    # ---- the tree's facts, by name ------------------------------------------------------

    link_names = property(lambda self: self.tree.link_names, doc="links, parents first")
    link_index = property(lambda self: self.tree.link_index, doc="{link name: index}")
    link_joint = property(lambda self: self.tree.link_joint, doc="joint from each parent")
    joint_names = property(lambda self: self.tree.joint_names, doc="active joints (q order)")
    dof = property(lambda self: self.tree.dof, doc="number of active joints")
    continuous = property(lambda self: self.tree.continuous, doc="(dof,) continuous joints")
    held_joints = property(lambda self: self.tree.held_joints, doc="{joint: held value}")
    model = property(lambda self: self.tree.model, doc="the FK arrays (RobotModel)")

    @property
    def version(self) -> int:
        """Changes whenever the robot changes (an ACM edit, an attach, a detach): a checker
        built on an older version is stale."""
        return self.acm.version

    # ---- configuration ----------------------------------------------------------------

    @property
    def lower(self) -> npt.NDArray[np.float64]:
        return self.model.lower

    @property
    def upper(self) -> npt.NDArray[np.float64]:
        return self.model.upper

    def validate_q(self, q, name: str = "q", check_limits: bool = False) -> npt.NDArray[np.float64]:
        """`q` as a writeable C-contiguous float64 (dof,) array, finite (and within limits
        when asked), else ValueError naming the joint and value."""
        return validate_q(self._state.tree, q, name, check_limits, self.name)

    def random_configurations(self, n: int, rng=None) -> npt.NDArray[np.float64]:
        """(n, dof) uniform within the joint limits."""
        rng = np.random.default_rng(rng)
        return rng.uniform(self.lower, self.upper, size=(int(n), self.dof))

    # ---- kinematics -------------------------------------------------------------------

    def fk_array(self, q, out=None) -> npt.NDArray[np.float64]:
        """World poses of every link, (n_links, 4, 4), in `link_names` order."""
        q = self.validate_q(q)
        tree = self._state.tree  # one read: an attach in another thread changes n_links
        n = len(tree.link_names)
        if out is None:
            out = np.empty((n, 4, 4))
        elif not _writeable_f64(out, (n, 4, 4)):
            raise ValueError(f"out must be a writeable C-contiguous ({n}, 4, 4) float64 array")
        fk(tree.model, q, out)
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
        tree = self._state.tree
        out = np.empty((Q.shape[0], len(tree.link_names), 4, 4))
        fk_batch(tree.model, Q, out)
        return out

    # ---- allowed-collision matrix -----------------------------------------------------

    def allow(self, a: str, b: str, reason: str = "user") -> None:
        """Ignore collisions between links a and b (an attached object is a link here)."""
        with self._lock:
            self.acm.allow(a, b, reason)
            self._note_user_edit()

    def disallow(self, a: str, b: str) -> None:
        """Check collisions between links a and b again."""
        with self._lock:
            self.acm.disallow(a, b)
            self._note_user_edit()

    def _note_user_edit(self) -> None:
        if self._acm_sources[-1] != "user edits":
            self._acm_sources.append("user edits")

    @property
    def acm_source(self) -> str:
        """Where the ACM's pairs came from, e.g. ``"adjacent + srdf panda.srdf (35 pairs)"``
        or ``"adjacent + sampled (10000 configurations, seed 0)"``."""
        return " + ".join(self._acm_sources)

    def write_srdf(self, path):
        """Write the allowed-collision matrix as a MoveIt SRDF at `path`, as MoveIt's setup
        assistant does (``<disable_collisions>`` with the reasons Adjacent, Default, Always,
        Never, User: io/srdf.py `write_srdf`); ``Robot.from_urdf(urdf, srdf=path)`` reads
        back the same pairs and reasons. Returns the path."""
        return write_srdf(path, self.name, self.acm.entries())

    @property
    def acm_is_adjacent_only(self) -> bool:
        """True when the ACM holds only adjacent pairs (no SRDF, no ``acm=``, no sampling,
        no edits) while non-adjacent pairs exist: then self-collision checking counts
        pairs that touch by design. A checker may refuse such a robot or warn."""
        mine = set(self._base.tree.link_names)  # attached objects' entries do not count
        return (
            self._acm_sources == ["adjacent"]
            and all(r == "adjacent" for a, b, r in self.acm.entries() if a in mine and b in mine)
            and len(self.self_collision_pairs()) > 0
        )

    def self_collision_pairs(self) -> npt.NDArray[np.int32]:
        """(k, 2) link indices of collision-link pairs not in the ACM (a < b)."""
        cl = self.collision_links
        names = self.link_names
        out = [
            (a, b)
            for x, a in enumerate(cl)
            for b in cl[x + 1 :]
            if not self.acm.is_allowed(names[a], names[b])
        ]
        return np.array(out, np.int32).reshape(-1, 2)

    def all_link_pairs(self) -> npt.NDArray[np.int32]:
        """(k, 2) every pair of collision links, allowed or not (a < b)."""
        cl = self.collision_links
        out = [(a, b) for x, a in enumerate(cl) for b in cl[x + 1 :]]
        return np.array(out, np.int32).reshape(-1, 2)

    def count_self_collisions(
        self, Q, pairs=None, margin: float = 0.0, *, workspace: Workspace | None = None
    ) -> npt.NDArray[np.int64]:
        """For each link pair (default: the checked pairs, `self_collision_pairs`; pass
        `all_link_pairs()` to ignore the ACM), in how many rows of Q (m, dof) it collides
        (signed distance <= margin). One compiled call."""
        Q = np.ascontiguousarray(np.atleast_2d(Q), dtype=np.float64)
        if Q.ndim != 2 or Q.shape[1] != self.dof or not np.all(np.isfinite(Q)):
            raise ValueError(f"Q must be finite with shape (m, {self.dof}), got shape {Q.shape}")
        self = self.pinned()  # one state throughout (an attach elsewhere changes the links)
        if pairs is None:
            pairs = self.self_collision_pairs()
        pairs = np.ascontiguousarray(np.asarray(pairs, np.int32).reshape(-1, 2))
        bad = np.flatnonzero((pairs < 0).any(axis=1) | (pairs >= len(self.link_names)).any(1))
        if bad.size:
            raise ValueError(f"pairs[{bad[0]}] = {pairs[bad[0]].tolist()} is not a pair of links")
        counts = np.zeros(pairs.shape[0], np.int64)
        ws = workspace if workspace is not None else thread_workspace()
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
            ws.pair,
            ws.array("link_poses", (len(self.link_names), 4, 4)),
            ws.array("piece_poses", (len(self.pieces), 4, 4)),
            counts,
        )
        return counts

    def compute_acm(
        self,
        n_samples: int = ACM_SAMPLES,
        seed: int = 0,
        always_fraction: float = ALWAYS_FRACTION,
        default_q=None,
        progress=None,
    ) -> dict:
        """MoveIt setup-assistant sampling: add "default", "always" and "never" pairs to the
        ACM (robot/acm.py). Returns a summary {reason: count, "samples": n, "seconds": t}.
        Not cached (`Robot.from_urdf` samples through the cache); `progress` as there."""
        summary = sample_acm(self, n_samples, seed, always_fraction, default_q, progress)
        self._acm_sources.append(f"sampled ({n_samples} configurations, seed {seed})")
        return summary

    def volume_ratios(self) -> dict[str, float]:
        """{link: model volume / mesh volume} for links with geometry."""
        return {
            k: v["model_volume"] / v["mesh_volume"]
            for k, v in self.volume_report.items()
            if v["mesh_volume"] > 0
        }

    def __repr__(self) -> str:
        s = self._state
        att = f", attached={[o.name for o in s.attached]}" if s.attached else ""
        return (
            f"Robot({self.name!r}, dof={self.dof}, links={len(s.tree.link_names)}, "
            f"pieces={len(s.pieces)}, allowed_pairs={len(s.acm)}{att})"
        )


def _check_srdf_matches(rec, robot: str) -> None:
    """SRDFError when an SRDF has pairs and none of them names two links of the robot (so
    it is another robot's: loading it would leave only adjacent pairs allowed); an SRDF
    without pairs is said by the adjacent-only warning."""
    if rec.skipped and not rec.disabled_collisions:
        links = sorted({n for d in rec.skipped for n in (d.link1, d.link2)})
        raise SRDFError(
            f"{rec.path}: none of its {len(rec.skipped)} disable_collisions entries names two "
            f"links of robot {robot!r} (the SRDF is for robot {rec.name!r}; it names "
            f"{links[:6]}{' ...' if len(links) > 6 else ''}): is it this robot's SRDF?"
        )
