"""The checker's flat model of a robot and a scene, and its per-thread workspace, as the
address tables the compiled entry points take (kernels/checker/handles.py and
check_core.py).

Bodies: the robot's collision links first (each against the scene), then the checked
self-collision pairs (the ACM's complement), each with its motion-bound row. By default a
link body is a rigid body (robot/rigid.py): links joined by fixed or held joints, one body.
"""

from __future__ import annotations

import dataclasses
import functools
import threading
import weakref

import numpy as np

from ..kernels.base.records import allocate
from ..kernels.checker import edges as E
from ..kernels.checker import states as K
from ..kernels.checker.check_types import CheckBuffers, CheckRobot
from ..kernels.checker.handles import array_table, record_table, rows
from ..kernels.scene.scratch import WARM_SLOTS, new_scratch
from ..processes import fork_safe
from ..results import LinkDistances
from ..robot.cache import derived_cache_file
from ..robot.geometry import link_spheres
from ..robot.rigid import rigid_bodies
from ..scene import Scene
from .blocks import BlockLayout
from .bounds import OUTER_POINTS, piece_bounds
from .self_tables import no_tables, pair_tables

# Sizes of the workspace's caches (bounded memory).
INTERVALS = 128  # uncovered intervals per body in an edge check
FRONT = 32  # front-list entries per piece
ENDPOINTS = 4096  # configurations in the endpoint cache
QUEUE = 4096  # index ranges in the discrete method's queue (2 * QUEUE states per edge)


@dataclasses.dataclass(frozen=True, eq=False)
class CheckModel:
    """A robot and a scene as the checker's kernels see them.

    robot : CheckRobot arrays; scene : the scene's FlatScene; table : their address table;
    body_names : a name per body ("panda_link3", "panda_link1|panda_link5", a rigid body's
    links joined by "+"); n_links : the number of link bodies; robot_version,
    scene_version, acm_key : what it was built from (the ACM's version and allowed pairs,
    the scene snapshot's version); slot_ids : the obstacle id of each object slot
    of the scene's flat form; names : {obstacle id: name or None}.
    """

    robot: CheckRobot
    scene: tuple
    table: np.ndarray
    body_names: tuple
    n_links: int
    robot_version: int
    scene_version: int
    acm_key: frozenset | None
    keep: tuple  # the arrays (or records of them) the table points into, kept alive with it
    slot_ids: np.ndarray
    names: dict


_BOUNDS: dict = {}


def _bounds(robot):
    """The pieces' outer hulls and bounding capsules (checker/bounds.py), computed once per
    collision model (keyed by the robot's geometry cache key; the outer hulls also kept in
    the per-user cache)."""
    key = robot.geometry_key
    if key not in _BOUNDS:
        f = derived_cache_file(robot, f"outer-{key}-{OUTER_POINTS}.npz")
        _BOUNDS[key] = piece_bounds(robot.pieces, f, robot.name)
    return _BOUNDS[key]


def _local_bounds(robot, links, pairs) -> tuple:
    """The CheckRobot fields of the local motion bounds (kernels/robot/motion_bounds.py)."""
    centre, radius = link_spheres(robot.collision, len(robot.link_names))
    start, term, weight = robot.bounds.body_terms(links, pairs)
    return centre, radius, start, term, weight


def _posed_links(model, links):
    """`model` cut after the last link the checker poses: the bodies' links and their
    ancestors (links after those, as the Panda's hand and fingers once they ride on link7's
    body, move nothing the checker reads: FK 399 -> 335 ns on the Panda, measured)."""
    last = int(np.max(links)) if len(links) else 0  # parent[i] < i: ancestors come first
    if last + 1 >= model.parent.shape[0]:
        return model
    per_link = ("parent", "jtype", "axis", "origin", "qidx", "mult", "offset")
    return model._replace(**{f: getattr(model, f)[: last + 1] for f in per_link})


@dataclasses.dataclass(frozen=True, eq=False)
class RobotPart:
    """What a checker's model holds of the robot alone, the same for every scene: built
    once per robot (its ACM version and the checker's options) and shared by every
    checker of that robot (`robot_part`). table: the address rows of `robot`; keep: the
    arrays they point into."""

    robot: CheckRobot
    table: np.ndarray
    keep: tuple
    body_names: tuple
    n_links: int
    version: int
    acm_key: frozenset | None


_PARTS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_PARTS_LOCK = fork_safe(threading.Lock())


def robot_part(robot, self_collision: bool, tables: bool = True, rigid: bool = True):
    """The `RobotPart` of `robot` for these options, built on first use and then shared
    (a robot in many scenes pays for it once: rigid bodies, self pairs and their tables,
    motion-bound rows, bounding capsules and hulls, address rows). Parts are kept per robot
    object and keyed by its ACM's version and content (`_part_key`). The robot's version is
    read before what it stamps: a part built while the ACM is edited carries the older
    version, and the checker builds it again."""
    view = robot.pinned()  # one state throughout, whatever attach runs meanwhile
    key = _part_key(view, self_collision, tables, rigid)
    with _PARTS_LOCK:
        part = _PARTS.get(robot, {}).get(key)
    if part is None:
        part = _build_robot_part(view, key[:2], *key[2:])
        with _PARTS_LOCK:
            parts = {k: p for k, p in _PARTS.get(robot, {}).items() if k[:2] == key[:2]}
            parts[key] = part  # parts of an older ACM are dropped
            _PARTS[robot] = parts
    return part


def has_robot_part(robot, self_collision: bool, tables: bool, rigid: bool) -> bool:
    """Whether `robot_part` has these options' part of the robot as it is now."""
    key = _part_key(robot, self_collision, tables, rigid)
    with _PARTS_LOCK:
        return key in _PARTS.get(robot, {})


def _pairs(bodies, self_collision: bool) -> np.ndarray:
    """(k, 2) int32 the checked self pairs of `bodies` (none without self_collision)."""
    pairs = bodies.self_collision_pairs() if self_collision else np.zeros((0, 2), np.int32)
    return np.ascontiguousarray(pairs, np.int32).reshape(-1, 2)


def _members(bodies, anchor: int) -> tuple:
    """The links of the body anchored at `anchor` (a link's own name for a plain robot)."""
    members = getattr(bodies, "members", None)
    return members[int(anchor)] if members is not None else (bodies.link_names[int(anchor)],)


def _tables(robot, bodies, pairs, n_links: int, rigid: bool) -> dict:
    """The self-pair table fields of `pairs` of `bodies` (the checker's view of `robot`).
    With objects attached (robot/attached.py), the tables are the robot's without them:
    a pair of the URDF's bodies, made of the same links, has the same geometry and
    kinematics with an object held or not (rigid bodies give attached objects bodies of
    their own), so an attach builds no table (a new grasp would otherwise build ~0.5 s of
    tables and keep them); pairs with an attached object have none (checked on their
    geometry at each query)."""
    if not getattr(robot, "attached", None):
        return pair_tables(bodies, pairs, n_links, pair_distances)
    bare = robot.without_attached()
    base = rigid_bodies(bare) if rigid else bare
    base_pairs = np.ascontiguousarray(base.self_collision_pairs(), np.int32).reshape(-1, 2)
    got = pair_tables(base, base_pairs, len(base.collision_links), pair_distances)
    out = no_tables(pairs)
    index = {(int(a), int(b)): j for j, (a, b) in enumerate(base_pairs)}
    for j, (a, b) in enumerate(pairs):
        k = index.get((int(a), int(b)))
        if k is None or any(_members(bodies, x) != _members(base, x) for x in (a, b)):
            continue
        for f in ("pt_q", "pt_lo", "pt_w", "pt_n", "pt_start", "pt_min"):
            out[f][j] = got[f][k]
    out["pt_lb"] = got["pt_lb"]
    return out


def _part_key(robot, self_collision: bool, tables: bool, rigid: bool) -> tuple:
    """(ACM version, ACM content, options): the version first (see `robot_part`), and the
    allowed pairs themselves, so that a version that repeats a number (which stamps.py
    rules out within a process, and unpickling between processes) still cannot hand out
    a part built for other pairs."""
    version = robot.version
    return (version, acm_key(robot), bool(self_collision), bool(tables), bool(rigid))


def acm_key(robot) -> frozenset | None:
    """The allowed pairs of `robot`'s ACM (None for a view without one of its own, as
    RigidBodies, which never changes)."""
    acm = getattr(robot, "acm", None)
    return None if acm is None else acm.content_key()


def _build_robot_part(robot, acm: tuple, self_collision: bool, tables: bool, rigid: bool):
    """The `RobotPart`; acm: the (version, content key) of the ACM it is built for."""
    bodies = rigid_bodies(robot) if rigid else robot
    links = np.asarray(bodies.collision_links, np.int32)
    pairs = _pairs(bodies, self_collision)
    pt = _tables(robot, bodies, pairs, links.size, rigid) if tables else no_tables(pairs)
    robot = bodies
    c = robot.collision
    R = np.concatenate([robot.motion_bound_R, robot.pair_speed_rows(pairs)])
    limited = (~np.asarray(robot.continuous, bool)).astype(np.int32)
    outer, caps, cap_pose = _bounds(robot)
    h = caps.params[:, 1:2] * cap_pose[:, :3, 2]
    cap_p0 = np.ascontiguousarray(cap_pose[:, :3, 3] - h)
    cap_p1 = np.ascontiguousarray(cap_pose[:, :3, 3] + h)
    sphere_c, sphere_r, term_start, term, term_w = _local_bounds(robot, links, pairs)
    check_robot = CheckRobot(
        model=_posed_links(robot.model, links),
        tab=c.table,
        piece_link=np.ascontiguousarray(c.piece_link, np.int32),
        piece_pose=np.ascontiguousarray(c.piece_pose, np.float64),
        link_start=np.ascontiguousarray(c.link_start, np.int32),
        body_link=links,
        pairs=pairs,
        R=np.ascontiguousarray(R, np.float64),
        limited=limited,
        outer=outer,
        caps=caps,
        cap_pose=cap_pose,
        cap_p0=cap_p0,
        cap_p1=cap_p1,
        sphere_c=sphere_c,
        sphere_r=sphere_r,
        term_start=term_start,
        term=term,
        term_w=term_w,
        **pt,
    )
    row_list = rows(check_robot)
    name = robot.body_name
    body_names = tuple(name(i) for i in links) + tuple(f"{name(a)}|{name(b)}" for a, b in pairs)
    return RobotPart(
        check_robot,
        array_table(row_list),
        tuple(a for a, _ in row_list),
        body_names,
        int(links.size),
        *acm,
    )


def build_model(
    robot, scene, self_collision: bool, tables: bool = True, rigid: bool = True
) -> CheckModel:
    """The flat model of `robot` in `scene` (a Scene or one of its snapshots; checking the
    ACM's pairs when self_collision; with their clearance tables, checker/self_tables.py,
    unless `tables` is False; one body per rigid body when `rigid`, else per collision
    link): the robot's shared `RobotPart` and the scene's flat form, and their address
    table."""
    snap = scene.snapshot() if isinstance(scene, Scene) else scene
    part = robot_part(robot, self_collision, tables, rigid)
    flat = snap.flat()
    return CheckModel(
        part.robot,
        flat,
        np.concatenate([part.table, record_table(flat)]),
        part.body_names,
        part.n_links,
        part.version,
        snap.version,
        part.acm_key,
        part.keep + (flat,),
        snap.slot_ids(),
        snap.names(),
    )


def pair_distances(robot, Q, bodies, cap: float) -> np.ndarray:
    """(len(Q), len(bodies)) lower bounds on the self-pair bodies' distances at the
    configurations Q (within the joint limits), exact up to cap (a farther one reads cap):
    the checker's own kernels on the robot alone, without tables (this is what builds
    them). Called from Python, `pose` and `body_distance` are the functions the edge checks
    link in, not one more compiled entry point for a user's first call (~1.3 s)."""
    model = build_model(robot, Scene(), True, tables=False, rigid=False)
    ws = CheckWorkspace(model, cache=False)
    hm, hw = model.table, ws.table
    cap = float(cap)
    bodies = [int(b) for b in bodies]
    d = np.empty((len(Q), len(bodies)))
    for i, q in enumerate(np.ascontiguousarray(Q, np.float64)):
        K.pose(hm, hw, q, K.YES)
        for k, b in enumerate(bodies):
            d[i, k] = K.body_distance(hm, hw, b, cap, cap, 0.0)[0]
    return d


@functools.lru_cache(maxsize=64)
def workspace_layout(
    n_obj: int,
    n_out: int,
    warm: int,
    n_links: int,
    n_pieces: int,
    n_bodies: int,
    dof: int,
    endpoints: int,
) -> BlockLayout:
    """The one-block layout (checker/blocks.py) of a workspace of these sizes, learnt from
    a Scratch and CheckBuffers allocated the declared way (`new_scratch`, `allocate`)."""
    scratch = new_scratch(n_obj, n_out, warm)
    buffers = allocate(
        CheckBuffers,
        n_links=n_links,
        n_pieces=n_pieces,
        n_bodies=n_bodies,
        dof=dof,
        intervals=INTERVALS,
        front_rows=n_pieces * FRONT,
        endpoints=endpoints,
        queue=QUEUE,
    )
    return BlockLayout([scratch, buffers])


def workspace_room(n: int) -> int:
    """Room for n scene objects or primitives in a new workspace: n rounded up to a multiple
    of 16, so the next problem's scene of a few more fits it (workspaces.py)."""
    return max(16, -(-int(n) // 16) * 16)


def _sizes(model: CheckModel, cache: bool, endpoints: int) -> tuple:
    """What a workspace for `model` needs: (objects, primitives, then the robot's sizes)."""
    r = model.robot
    return (
        int(model.scene.n_obj[0]),
        model.scene.tab.kind.shape[0],
        WARM_SLOTS if cache else 0,
        r.link_start.shape[0] - 1,
        r.piece_link.shape[0],
        r.R.shape[0],
        r.R.shape[1],
        max(int(endpoints), 1),
    )


class CheckWorkspace:
    """One thread's scratch for the checker: the traversal's Scratch and the checker's
    buffers (poses, distances, edge intervals, front lists, the endpoint cache), sized for
    one model (with room for a scene of a few more objects: `fits`), and their address
    table. Never shared between threads. `holders` and `pinned`: held while a caller uses it
    beyond one call (checker/workspaces.py)."""

    def __init__(self, model: CheckModel, cache: bool = True, endpoints: int = ENDPOINTS):
        need = _sizes(model, cache, endpoints)
        self.sizes = (workspace_room(need[0]), workspace_room(need[1]), *need[2:])
        layout = workspace_layout(*self.sizes)
        (self.scratch, self.buffers), self.table = layout.new()
        self.counts = self.scratch.counts
        self.out = np.zeros(4)  # an edge check's result (kernels/checker/edges.py ENTRY_POINTS)
        # a discrete edge's EdgeRequest (its own number of states), written per call
        self.request = np.zeros(len(E.EdgeRequest._fields))
        self.holders = 0
        self.pinned = False

    def fits(self, model: CheckModel, cache: bool = True, endpoints: int = ENDPOINTS) -> bool:
        """Whether this workspace serves `model`: the same robot sizes and settings, room
        for its scene's objects and primitives, and not more than twice that plus 16 of
        objects (a state check clears its object flags)."""
        need = _sizes(model, cache, endpoints)
        have = self.sizes
        return (
            have[2:] == need[2:] and need[0] <= have[0] <= 2 * need[0] + 16 and need[1] <= have[1]
        )

    def forget(self) -> None:
        """Drop the front lists, the endpoint cache and the GJK warm starts (their
        world-frame contents belong to one scene and robot)."""
        b = self.buffers
        b.front_n[:] = -1
        b.ec_key[:] = 0
        b.ec_q[:] = np.nan
        self.scratch.warm[:] = np.nan

    def forget_scene(self) -> None:
        """What a new scene must not read, and only that (a workspace handed on to the next
        model: checker/workspaces.py): the front lists, and every endpoint-cache entry (a
        NaN first coordinate matches no configuration: kernels/checker/edge_state.py cache_slot).
        GJK warm starts stay: any start direction is correct (kernels/scene/scratch.py). ~2 us
        where `forget` writes ~300 kB."""
        self.buffers.front_n[:] = -1
        self.buffers.ec_q[:, 0] = np.nan


def body_distances(rows: np.ndarray, m: CheckModel) -> LinkDistances:
    """The `LinkDistances` of the bodies' distance rows (distance, exact, nearest slot) of
    model m (`CollisionChecker._distances`): the link bodies' rows, with each self pair's
    distance given to both of its bodies when it is their nearest partner."""
    nl = m.n_links
    names = m.body_names[:nl]
    d = np.where(rows[:, 1] == 0, np.inf, rows[:, 0])  # a bound only: beyond the cap
    slots = rows[:nl, 2].astype(np.int64)
    ids = np.full(nl, -1, np.int64)
    near = slots >= 0  # (an empty scene has no slot ids to index)
    ids[near] = m.slot_ids[slots[near]]
    self_d = np.full(nl, np.inf)
    partner = np.array([""] * nl, dtype=object)
    link_of = {n: k for k, n in enumerate(names)}
    for j, pair in enumerate(m.body_names[nl:]):
        a, b = pair.split("|")
        for me, other in ((a, b), (b, a)):
            k = link_of[me]
            if d[nl + j] < self_d[k]:
                self_d[k], partner[k] = d[nl + j], other
    return LinkDistances(
        links=np.array(names, dtype=object),
        scene=d[:nl],
        object=ids,
        name=np.array([m.names.get(int(i)) for i in ids], dtype=object),
        self_distance=self_d,
        partner=partner,
        distance=np.minimum(d[:nl], self_d),
    )
