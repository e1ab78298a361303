"""Scene: a registry of obstacles by id, and shape-against-scene queries.

::

    import numpy as np
    import planning_collision as pc

    scene = pc.Scene()
    table = scene.add(pc.Box((1.0, 1.0, 0.05)), np.eye(4), name="table")
    T = np.eye(4); T[2, 3] = 0.1
    scene.collide_object(pc.Sphere(0.08), T)          # [table]: sorted ids in collision
    scene.min_distance(pc.Sphere(0.05), T)            # DistanceResult(..., id=table)
    scene.distances(pc.Sphere(0.05), T, max_distance=0.5)  # [(id, DistanceResult), ...]
    scene = pc.Scene.from_file("cell.json")           # also MoveIt .scene and mesh files
    scene.replace_all(pc.ObstacleArrays.boxes(extents, T))   # every obstacle, at once

**Objects.** ``add(shape, T, name)`` takes any shape (convex shapes, ``Halfspace``, ``Mesh``,
``PointCloud``, ``VoxelGrid``) or a *compound*: a list of ``(shape, T_object_part)`` pairs
posed together by ``T`` (a MoveIt collision object with several shapes). Each object is
compiled when it is added (kcd.py: KCD grouping; a cloud or voxel grid by cloud_blocks.py,
in milliseconds), so a bad object raises there and leaves the scene unchanged.
``replace(id, shape, T)`` and ``update_cloud(id, points)`` swap one object for a new one
under the same id in one edit (a sensor's next frame: docs/clouds.md). Edits never regroup
other objects: the next query only redoes the top tree over all objects and the
concatenation into the flat form (a few ms). Spheres, capsules, boxes, cylinders and cones
given as arrays (`ObstacleArrays`) replace every obstacle in one edit (`replace_all`,
`from_arrays`), compiled at once, their shape objects made when asked for (scene_arrays.py).

A scene is a model: queries write nothing in it. Their scratch memory is a `Workspace`
(workspace.py) that the caller passes, or the calling thread's own.

**Threads and edits.** Every edit publishes a new `SceneSnapshot` (the objects, their
compiled blocks, a version) and never changes a published one; a query takes the snapshot
that is current when it starts and runs wholly on it. So a query that overlaps an edit in
another thread answers for the scene as it was before the edit or as it is after it, never
for half of it, and edits and queries may run in any threads at once (a `CollisionChecker`
does the same with its model). Edits are serialised among themselves; the flat form of a
snapshot is built once, by the first query that needs it.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from .cloud_blocks import compile_cloud, is_cloud
from .geometry.arrays import ObstacleArrays
from .geometry.clouds import PointCloud
from .geometry.poses import frozen_pose, poses_named
from .geometry.shapes import Box, Capsule, Cone, Cylinder, Shape, Sphere
from .geometry.validate import finite_scalar, positive_scalar
from .kcd import (
    OPEN_RATIO,
    ObjectBlock,
    compile_object,
    flatten,
    object_parts,
    one_node_block,
    one_node_flat,
)
from .kernels.base.tolerances import WORLD_LIMIT
from .kernels.scene.scene_calls import scene_traverse
from .kernels.scene.traversal import (
    CANDIDATES,
    COLLIDE,
    DISTANCE,
    OVERFLOW,
    FlatScene,
)
from .primitives import Primitives, primitive_block, primitive_sizes, query_block
from .processes import fork_safe
from .results import DistanceResult
from .scene_arrays import ArrayBlocks, ArrayObjects, array_primitives, check_world_range
from .stamps import announce, next_stamp
from .workspace import Workspace, thread_workspace

__all__ = ["Scene", "SceneSnapshot", "Obstacle", "FlatScene"]

# The shapes `add_many` compiles together: one bounded convex primitive without points.
_ONE_PRIMITIVE = (Sphere, Box, Capsule, Cylinder, Cone)

# Seeds of a traversal that starts at the root (kernels/scene/traversal.py).
_NO_SEEDS = np.zeros((0, 2), np.int32)


class Obstacle(NamedTuple):
    """What `Scene.get` returns: the object as it was added."""

    id: int
    name: str | None
    shape: object  # a Shape, or a tuple of (Shape, T_object_part) pairs (poses read-only)
    T: npt.NDArray[np.float64]  # read-only


class SceneSnapshot:
    """The scene as one edit left it: never changed once published (module doc).

    objects : {id: Obstacle} in id order (read-only mapping); blocks : {id: ObjectBlock};
    version : the edit's stamp (planning_collision/stamps.py). `flat()` and `slot_ids()`
    give its compiled form, built on first use (once, whichever thread asks first). The
    snapshot of obstacles given as arrays (`Scene.replace_all`) has mappings that make each
    object and block when asked for (scene_arrays.py), and its flat form is written from
    the arrays' one block of primitives (kcd.one_node_flat).
    """

    __slots__ = (
        "objects", "blocks", "version", "_open_ratio", "_arrays", "_prims", "_flat",
        "_slot_ids", "_lock",
    )  # fmt: skip

    def __init__(self, objects: Mapping, blocks: Mapping, version: int, open_ratio):
        self.objects: Mapping[int, Obstacle] = MappingProxyType(objects)
        self.blocks: Mapping[int, ObjectBlock] = MappingProxyType(blocks)
        self.version = version
        self._open_ratio = open_ratio
        # obstacles given as arrays: their objects' names, and their primitives (slot k)
        self._arrays = objects if isinstance(objects, ArrayObjects) else None
        self._prims = blocks.prims if isinstance(blocks, ArrayBlocks) else None
        self._flat: FlatScene | None = None
        self._slot_ids = np.zeros(0, np.int64)
        self._lock = fork_safe(threading.Lock())

    def flat(self) -> FlatScene:
        """The flat form the kernels read (kcd.flatten), built once."""
        f = self._flat
        if f is None:
            with self._lock:
                f = self._flat
                if f is None:
                    ids = list(self.blocks)
                    if self._prims is not None:  # one-node objects, slot k = primitive k
                        f = one_node_flat(self._prims, self._open_ratio)
                    else:
                        f = flatten([self.blocks[i] for i in ids], self._open_ratio)
                    slot_ids = np.array(ids, np.int64)
                    slot_ids.setflags(write=False)
                    self._slot_ids = slot_ids
                    self._flat = f  # last: a reader that sees the flat form sees its ids
        return f

    def slot_ids(self) -> npt.NDArray[np.int64]:
        """Obstacle id of each object slot of the flat form (read-only)."""
        self.flat()
        return self._slot_ids

    def names(self) -> dict:
        """{id: name or None} of every obstacle (without making the objects of a snapshot
        of arrays)."""
        if self._arrays is not None:
            return self._arrays.names()
        return {i: o.name for i, o in self.objects.items()}

    def __len__(self) -> int:
        return len(self.objects)

    def __reduce__(self):
        # pickled without its lock and flat form (rebuilt on use); unpickled with a new
        # version: stamps are unique within a process, not across processes
        return (_unpickle_snapshot, (dict(self.objects), dict(self.blocks), self._open_ratio))


class Scene:
    """Static obstacles with KCD grouping and shape-vs-scene queries (module doc).

    min_size : float or None, m; the detail filter (primitives with AABB volume below
        ``min_size**3`` become their AABB). None keeps every primitive exact.
    """

    # how far `build` opens mostly empty object nodes for the top tree (kcd.open_tops);
    # None builds the top tree over each object's top nodes as they are
    open_ratio: float | None = OPEN_RATIO

    def __init__(self, min_size: float | None = None):
        self.min_size = None if min_size is None else positive_scalar("min_size", min_size)
        self._edit = fork_safe(threading.Lock())  # serialises edits; queries never take it
        self._next_id = 0
        self._snap = SceneSnapshot({}, {}, next_stamp(), self.open_ratio)

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        del state["_edit"]  # a lock does not pickle: a new one on the other side
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._edit = fork_safe(threading.Lock())

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_records(cls, records: Iterable, min_size: float | None = None) -> Scene:
        """A scene of the obstacle records a reader returns (`planning_collision.io`:
        anything with ``name``, ``shape`` and ``T``), added in order."""
        scene = cls(min_size=min_size)
        scene.add_many((r.shape, r.T, r.name) for r in records)
        return scene

    @classmethod
    def from_arrays(cls, arrays: ObstacleArrays, min_size: float | None = None) -> Scene:
        """A scene of obstacles given as arrays (`ObstacleArrays`): compiled at once, the
        fast way to a new scene (`replace_all`)."""
        scene = cls(min_size=min_size)
        scene.replace_all(arrays)
        return scene

    @classmethod
    def from_file(cls, path, min_size: float | None = None) -> Scene:
        """Load a scene: ``.json`` (the project's format, docs/scene_format.md), ``.scene``
        (MoveIt's text format), or any mesh file trimesh loads (one Mesh obstacle)."""
        from .io.scene_files import load_scene

        try:  # what the file holds but the scene cannot take: named with the file too
            return cls.from_records(load_scene(path), min_size=min_size)
        except ValueError as e:
            raise ValueError(str(e) if str(path) in str(e) else f"{path}: {e}") from None

    def to_file(self, path) -> None:
        """Write the scene as ``.json`` (every shape kind) or ``.scene`` (MoveIt; convex
        shapes and meshes)."""
        from .io.scene_files import save_scene

        save_scene(self.records(), path)

    def records(self) -> list[Obstacle]:
        """Every obstacle, in id order: what a writer or `from_records` takes."""
        return list(self._snap.objects.values())

    # ------------------------------------------------------------------ objects
    def snapshot(self) -> SceneSnapshot:
        """The scene as it is now, unchanged by later edits (module doc)."""
        return self._snap

    def add(self, shape, T=None, name: str | None = None) -> int:
        """Add an obstacle; returns its id (ints, never reused).

        shape : a Shape, or a list of ``(Shape, T_object_part)`` pairs (one compound object).
        T : (4, 4) float64, T_world_object (identity when None).
        Raises ValueError/TypeError naming the problem; the scene is then unchanged.
        """
        return self._add([(shape, T, name)], lambda k: "obstacle")[0]

    def add_many(self, objects) -> list[int]:
        """Add ``(shape, T, name)`` obstacles at once (each as `add` takes it); returns
        their ids. One edit: a query in another thread sees all of them or none. Objects
        that are one sphere, box, capsule, cylinder or cone are compiled together
        (primitives.primitive_block; a MotionBenchMaker scene builds several times faster
        than by `add`; `replace_all` of their arrays, faster still). A bad object raises
        ValueError/TypeError naming it (its name, or ``objects[k]``), and nothing is
        added."""
        objects = [tuple(o) for o in objects]
        for k, o in enumerate(objects):
            if len(o) != 3:
                raise ValueError(f"objects[{k}] must be (shape, T, name), got {len(o)} values")
        return self._add(objects, lambda k: f"objects[{k}]")

    def replace_all(self, arrays: ObstacleArrays) -> list[int]:
        """Replace every obstacle by those of `arrays` (`ObstacleArrays`), in one edit (a
        query in another thread answers for the obstacles before or after it); returns
        their ids (new ones: ids are never reused). The next problem's scene without
        per-object Python: the arrays were validated when made, their rows and world boxes
        are written by one compiled loop and checked against the working range here (a
        ValueError naming the obstacle; the scene is then unchanged), the flat form by
        another on the first query (kcd.one_node_flat). `get`, `records` and the other
        edits make the obstacles' shape objects when they need them. With `min_size` (the
        detail filter) they are compiled one by one, as `add_many` does."""
        if not isinstance(arrays, ObstacleArrays):
            raise TypeError(
                f"replace_all takes ObstacleArrays, got {type(arrays).__name__} "
                "(ObstacleArrays.from_records makes them of a reader's records)"
            )
        n = len(arrays)
        if self.min_size is not None or n == 0:
            objects = [(arrays.shape(k), arrays.T[k], arrays.names[k]) for k in range(n)]
            return self._add(objects, lambda k: f"obstacles[{k}]", replace_all=True)
        prims = array_primitives(arrays)
        with self._edit:
            first = self._next_id
            self._next_id += n
            self._publish(ArrayObjects(first, arrays, Obstacle), ArrayBlocks(first, prims))
        return list(range(first, first + n))

    def _add(self, objects: list, label, replace_all: bool = False) -> list[int]:
        """Validate and compile `objects` ((shape, T, name) each; label(k) names an unnamed
        one in errors), then publish them in one snapshot (with `replace_all`, in place of
        every obstacle)."""
        where = []
        for k, (_, _, name) in enumerate(objects):
            w = f"obstacle {name!r}" if name is not None else label(k)
            if name is not None and not isinstance(name, str):
                raise TypeError(f"{w}: name must be a str, got {type(name).__name__}")
            where.append(w)
        poses = poses_named([T for _, T, _ in objects], where)
        blocks = self._compile(objects, poses, where)
        records = [
            (name, *_kept(shape, T)) for (shape, _, name), T in zip(objects, poses, strict=True)
        ]
        with self._edit:
            old = self._snap
            ids = list(range(self._next_id, self._next_id + len(objects)))
            self._next_id += len(objects)
            objs, blks = ({}, {}) if replace_all else (dict(old.objects), dict(old.blocks))
            for oid, (name, shape, T), block in zip(ids, records, blocks, strict=True):
                objs[oid] = Obstacle(oid, name, shape, T)
                blks[oid] = block
            if ids or replace_all:
                self._publish(objs, blks)
        return ids

    def _compile(self, objects: list, poses: list, where: list) -> list[ObjectBlock]:
        """Each object's block (kcd), the one-primitive ones at once; each in the world box."""
        fast = [
            k
            for k, (shape, _, _) in enumerate(objects)
            if self.min_size is None and type(shape) in _ONE_PRIMITIVE
        ]
        blocks: dict[int, ObjectBlock] = {}
        if fast:  # at once (one or many: the same compiled rows, bit for bit)
            kind, size = primitive_sizes([objects[k][0] for k in fast])
            prims = primitive_block(kind, size, np.stack([poses[k] for k in fast]))
            blocks.update((k, one_node_block(prims, j)) for j, k in enumerate(fast))
            far = (np.abs(prims.lo) > WORLD_LIMIT) | (np.abs(prims.hi) > WORLD_LIMIT)
            if far.any():
                j = int(np.flatnonzero(far.any(axis=1))[0])
                check_world_range(prims.lo[j : j + 1], prims.hi[j : j + 1], where[fast[j]])
        for k, (shape, _, _) in enumerate(objects):
            if k in blocks:
                continue
            parts = object_parts(shape, poses[k], where[k])
            if is_cloud(parts):  # its tree's root box holds every point's box
                b = blocks[k] = compile_cloud(parts[0][0], parts[0][1], self.min_size)
                check_world_range(b.bvh.lo[:1], b.bvh.hi[:1], where[k])
            else:
                b = blocks[k] = compile_object(parts, self.min_size)
                check_world_range(b.prims.lo, b.prims.hi, where[k])
        return [blocks[k] for k in range(len(objects))]

    def _compiled(self, shape, T, name):
        """(shape as kept, T read-only, ObjectBlock) of one object, validated (`_add`'s
        checks, for `replace`)."""
        where = [f"obstacle {name!r}" if name is not None else "obstacle"]
        if name is not None and not isinstance(name, str):
            raise TypeError(f"{where[0]}: name must be a str, got {type(name).__name__}")
        poses = poses_named([T], where)
        block = self._compile([(shape, T, name)], poses, where)[0]
        return (*_kept(shape, poses[0]), block)

    def replace(self, id: int, shape, T=None, name: str | None = None) -> None:
        """Replace obstacle `id` by `shape` posed by ``T (4, 4)`` (identity when None), in
        one edit that keeps its id (and its name when `name` is None): a sensor's new
        frame. Only this object is compiled again (a 10^5-point cloud: tens of ms); a
        query running meanwhile answers for the scene before or after the edit. KeyError
        when there is no such obstacle; ValueError/TypeError for a bad shape (the scene is
        then unchanged)."""
        self._check_id(id, self._snap)
        keep = self._snap.objects.get(int(id))
        name = keep.name if name is None and keep is not None else name
        shape, T, block = self._compiled(shape, T, name)
        with self._edit:
            old = self._snap
            self._check_id(id, old)  # removed meanwhile
            i = int(id)
            objects = {
                k: (Obstacle(i, name, shape, T) if k == i else o) for k, o in old.objects.items()
            }
            blocks = {k: (block if k == i else b) for k, b in old.blocks.items()}
            self._publish(objects, blocks)

    def update_cloud(self, id: int, points, T=None) -> None:
        """New points for the point cloud `id` (a sensor's next frame), keeping its radius
        and name: ``points (n, 3)`` float64 in the cloud's frame, posed by ``T (4, 4)``
        (the cloud's pose so far when None). See `replace`. TypeError when obstacle `id`
        is not a PointCloud."""
        self._check_id(id, self._snap)
        old = self._snap.objects[int(id)]
        if not isinstance(old.shape, PointCloud):
            raise TypeError(
                f"obstacle {self.name_of(id)!r} is a {type(old.shape).__name__}, not a "
                f"PointCloud: update_cloud replaces a point cloud's points (use replace)"
            )
        self.replace(id, PointCloud(points, old.shape.radius), old.T if T is None else T)

    def remove(self, id: int) -> None:
        """Remove the obstacle `id`; KeyError if there is none."""
        with self._edit:
            old = self._snap
            self._check_id(id, old)
            i = int(id)
            self._publish(
                {k: o for k, o in old.objects.items() if k != i},
                {k: b for k, b in old.blocks.items() if k != i},
            )

    def _publish(self, objects: dict, blocks: dict) -> None:
        """Put a new snapshot in place, then announce the edit (stamps.py: in this order, a
        checker in another thread cannot miss it)."""
        self._snap = SceneSnapshot(objects, blocks, next_stamp(), self.open_ratio)
        announce()

    def contains(self, id: int) -> bool:
        return (
            isinstance(id, (int, np.integer))
            and not isinstance(id, bool)
            and int(id) in self._snap.objects
        )

    __contains__ = contains

    def get(self, id: int) -> Obstacle:
        """The obstacle `id` as added: Obstacle(id, name, shape, T) (T read-only); KeyError
        if none."""
        snap = self._snap
        self._check_id(id, snap)
        return snap.objects[int(id)]

    def ids(self) -> list[int]:
        return list(self._snap.objects)

    def find(self, name: str) -> list[int]:
        """Ids of the obstacles called `name`."""
        return [i for i, o in self._snap.objects.items() if o.name == name]

    def name_of(self, id: int) -> str:
        """The obstacle's name, or ``"#<id>"`` when it has none (for messages)."""
        o = self._snap.objects.get(int(id))
        return f"#{int(id)}" if o is None or o.name is None else o.name

    def aabb(self, id: int) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
        """The world AABB ``(lo (3,), hi (3,))`` of obstacle `id` as the engine bounds it
        (the union of its primitives' boxes; infinite for a halfspace)."""
        snap = self._snap
        self._check_id(id, snap)
        p = snap.blocks[int(id)].prims
        return p.lo.min(axis=0), p.hi.max(axis=0)

    def __len__(self) -> int:
        return len(self._snap.objects)

    def __iter__(self):
        return iter(list(self._snap.objects.values()))

    def __repr__(self):
        n = sum(len(b.prims) for b in self._snap.blocks.values())
        return f"Scene({len(self)} obstacles, {n} primitives, min_size={self.min_size})"

    @staticmethod
    def _check_id(id, snap: SceneSnapshot):
        if not isinstance(id, (int, np.integer)) or isinstance(id, bool):
            raise TypeError(f"obstacle id must be an int, got {type(id).__name__}")
        if int(id) not in snap.objects:
            raise KeyError(f"no obstacle with id {id} in the scene ({len(snap)} obstacles)")

    # ------------------------------------------------------------------ flat form
    def build(self) -> FlatScene:
        """Compile the scene into its flat form (done by the first query after a change)."""
        return self._snap.flat()

    @property
    def flat(self) -> FlatScene:
        """The `FlatScene` (kernels/scene/traversal.py) a CollisionChecker passes to numba."""
        return self._snap.flat()

    @property
    def version(self) -> int:
        """Changes on every add/remove: the flat form (and any node ids a cache holds, e.g.
        a traversal front list) is valid for one version only."""
        return self._snap.version

    @property
    def slot_ids(self) -> npt.NDArray[np.int64]:
        """Obstacle id of each object slot of the flat form (of the current snapshot: a
        caller that also reads `flat` reads both from one `snapshot()`)."""
        return self._snap.slot_ids()

    def blocks(self) -> list[ObjectBlock]:
        """The compiled objects, in slot order (for engines built from the same
        primitives, e.g. the flat-BVH baseline of demos/bench/scene.py)."""
        return list(self._snap.blocks.values())

    def stats(self) -> dict:
        """Sizes of the compiled scene: objects, primitives, groups, nodes, bytes."""
        snap = self._snap
        f = snap.flat()
        arrays = [a for a in f if isinstance(a, np.ndarray)] + list(f.tab) + list(f.bvh)
        return {
            "objects": len(snap),
            "primitives": int(f.tab.kind.shape[0]),
            # as grouped per object (the top tree's opened BVH nodes are leaves, not groups)
            "groups": int(sum((b.kt_group >= 0).sum() for b in snap.blocks.values())),
            "kcd_nodes": int(f.kt_lo.shape[0]),
            "bvh_nodes": int(f.bvh.lo.shape[0]),
            "unbounded": int(f.unbounded.shape[0]),
            "replaced_by_detail_filter": int(sum(b.n_replaced for b in snap.blocks.values())),
            "bytes": int(sum(a.nbytes for a in arrays)),
        }

    # ------------------------------------------------------------------ queries
    def _run(self, mode, q, i1, bound, flag, workspace):
        """One traversal of the query block `q` (primitives [0, i1)) on the current
        snapshot; returns (result, scratch, snapshot)."""
        snap = self._snap
        f = snap.flat()
        ws = workspace if workspace is not None else thread_workspace()
        sc = ws.scratch(len(snap), f.tab.kind.shape[0])
        n = scene_traverse(f, mode, q.tab, q.poses, q.lo, q.hi, 0, i1, _NO_SEEDS, bound, flag, sc)
        if n == OVERFLOW:
            raise RuntimeError("scene traversal stack overflow (a bug: trees have bounded depth)")
        return n, sc, snap

    def _hits(self, shape, T, margin, stop_first, workspace) -> npt.NDArray[np.int64]:
        margin = finite_scalar("margin", margin)
        q = query_block(shape, T)
        _, sc, snap = self._run(COLLIDE, q, len(q), margin, stop_first, workspace)
        hit = sc.hit[: len(snap)]
        slots = np.flatnonzero(hit)
        hit[slots] = 0  # the scratch's contract: all 0 between queries
        return snap.slot_ids()[slots]

    def collide_object(
        self, shape: Shape, T, margin: float = 0.0, *, workspace: Workspace | None = None
    ) -> list[int]:
        """Sorted ids of the obstacles within `margin` (m, signed distance <= margin) of
        `shape` posed by ``T (4, 4)``; touching counts."""
        return sorted(int(i) for i in self._hits(shape, T, margin, False, workspace))

    def in_collision(
        self, shape: Shape, T, margin: float = 0.0, *, workspace: Workspace | None = None
    ) -> bool:
        """True iff `shape` posed by `T` is within `margin` of any obstacle (returns at the
        first hit)."""
        return self._hits(shape, T, margin, True, workspace).size > 0

    def _distance(self, shape, T, max_distance, per_object, workspace):
        """The DISTANCE traversal: (nearest slot or -1, the scratch's best rows, the
        snapshot's slot ids)."""
        md = np.inf if max_distance is None else finite_scalar("max_distance", max_distance)
        q = query_block(shape, T)
        arg, sc, snap = self._run(DISTANCE, q, len(q), md, per_object, workspace)
        return arg, sc.best[: len(snap)], snap.slot_ids()

    def distances(
        self, shape: Shape, T, max_distance: float | None = None, *, workspace=None
    ) -> list[tuple[int, DistanceResult]]:
        """``[(id, DistanceResult), ...]`` in id order: the signed distance from `shape`
        posed by `T` to every obstacle (DistanceResult.point_a on the shape, point_b on the
        obstacle, normal from shape to obstacle). With `max_distance`, obstacles farther
        than it are left out (and not computed exactly)."""
        _, best, ids = self._distance(shape, T, max_distance, True, workspace)
        slots = np.flatnonzero(best[:, 0] < np.inf)
        out = sorted((int(ids[s]), _result(best[s], int(ids[s]))) for s in slots)
        best[:, 0] = np.inf  # the scratch's contract: inf between queries
        return out

    def min_distance(
        self, shape: Shape, T, max_distance: float | None = None, *, workspace=None
    ) -> DistanceResult:
        """The nearest obstacle: DistanceResult with ``.id``. When the scene is empty or
        nothing is within `max_distance`: distance inf, NaN points and normal, id None."""
        arg, best, ids = self._distance(shape, T, max_distance, False, workspace)
        if arg < 0:
            nan = np.full(3, np.nan)
            return DistanceResult(np.inf, nan, nan.copy(), nan.copy(), None)
        r = _result(best[arg], int(ids[arg]))
        best[arg, 0] = np.inf  # the only row a nearest-only traversal writes
        return r

    def candidates(
        self, shape: Shape, T, margin: float = 0.0, *, workspace: Workspace | None = None
    ) -> npt.NDArray[np.int32]:
        """Broadphase only: indices (into the flat form's primitives) whose AABB overlaps
        the query's AABB within `margin`, sorted."""
        margin = finite_scalar("margin", margin)
        q = query_block(shape, T)
        box = Primitives(
            q.tab, q.poses, q.lo.min(axis=0, keepdims=True), q.hi.max(axis=0, keepdims=True)
        )
        n, sc, _ = self._run(CANDIDATES, box, 1, margin, False, workspace)
        return np.sort(sc.out[:n])


def _kept(shape, T) -> tuple:
    """(shape, T) as the scene keeps them: T read-only, a compound as a tuple of (shape,
    read-only pose) pairs (`Scene.get` hands them out)."""
    T.setflags(write=False)
    if not isinstance(shape, Shape):
        shape = tuple((p, frozen_pose(Tp)) for p, Tp in shape)
    return shape, T


def _unpickle_snapshot(objects: dict, blocks: dict, open_ratio) -> SceneSnapshot:
    kept = {i: _kept(o.shape, o.T) for i, o in objects.items()}  # numpy unpickled them writeable
    kept = {i: objects[i]._replace(shape=shape, T=T) for i, (shape, T) in kept.items()}
    return SceneSnapshot(kept, blocks, next_stamp(), open_ratio)


def _result(row, oid: int) -> DistanceResult:
    return DistanceResult(float(row[0]), row[1:4].copy(), row[4:7].copy(), row[7:10].copy(), oid)
