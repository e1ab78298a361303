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

**Objects.** ``add(shape, T, name)`` takes any shape (convex shapes, ``Halfspace``, ``Mesh``,
``PointCloud``, ``VoxelGrid``) or a *compound*: a list of ``(shape, T_object_part)`` pairs
posed together by ``T`` (a MoveIt collision object with several shapes). Each object is
compiled when it is added (kcd.py: KCD grouping), so a bad object raises there and leaves
the scene unchanged. ``add``/``remove`` never regroup other objects: the next query only
redoes the top tree over all objects and the concatenation into the flat form (a few ms).

A scene is a model: queries write nothing in it. Their scratch memory is a `Workspace`
(workspace.py) that the caller passes, or the calling thread's own.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from .geometry.poses import as_pose
from .geometry.shapes import Shape
from .geometry.validate import finite_scalar, positive_scalar
from .kcd import OPEN_RATIO, ObjectBlock, compile_object, flatten, object_parts
from .kernels.scene_calls import scene_traverse
from .kernels.traversal import (
    CANDIDATES,
    COLLIDE,
    DISTANCE,
    OVERFLOW,
    FlatScene,
)
from .primitives import Primitives, query_block
from .results import DistanceResult
from .stamps import next_stamp
from .workspace import Workspace, thread_workspace

__all__ = ["Scene", "Obstacle", "FlatScene"]

# Seeds of a traversal that starts at the root (kernels/traversal.py).
_NO_SEEDS = np.zeros((0, 2), np.int32)


class Obstacle(NamedTuple):
    """What `Scene.get` returns: the object as it was added."""

    id: int
    name: str | None
    shape: object  # a Shape, or a list of (Shape, T_object_part) pairs
    T: npt.NDArray[np.float64]


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
        self._objects: dict[int, Obstacle] = {}
        self._blocks: dict[int, ObjectBlock] = {}
        self._next_id = 0
        self._flat: FlatScene | None = None
        self._version = next_stamp()
        self._slot_ids = np.zeros(0, np.int64)

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_records(cls, records: Iterable, min_size: float | None = None) -> Scene:
        """A scene of the obstacle records a reader returns (`planning_collision.io`:
        anything with ``name``, ``shape`` and ``T``), added in order."""
        scene = cls(min_size=min_size)
        for r in records:
            scene.add(r.shape, r.T, name=r.name)
        return scene

    @classmethod
    def from_file(cls, path, min_size: float | None = None) -> Scene:
        """Load a scene: ``.json`` (the project's format, docs/scene_format.md), ``.scene``
        (MoveIt's text format), or any mesh file trimesh loads (one Mesh obstacle)."""
        from .io.scene_files import load_scene

        return cls.from_records(load_scene(path), min_size=min_size)

    def to_file(self, path) -> None:
        """Write the scene as ``.json`` (every shape kind) or ``.scene`` (MoveIt; convex
        shapes and meshes)."""
        from .io.scene_files import save_scene

        save_scene(self.records(), path)

    def records(self) -> list[Obstacle]:
        """Every obstacle, in id order: what a writer or `from_records` takes."""
        return list(self._objects.values())

    # ------------------------------------------------------------------ objects
    def add(self, shape, T=None, name: str | None = None) -> int:
        """Add an obstacle; returns its id (ints, never reused).

        shape : a Shape, or a list of ``(Shape, T_object_part)`` pairs (one compound object).
        T : (4, 4) float64, T_world_object (identity when None).
        Raises ValueError/TypeError naming the problem; the scene is then unchanged.
        """
        where = f"obstacle {name!r}" if name is not None else f"obstacle #{self._next_id}"
        T = np.eye(4) if T is None else as_pose(T, f"{where} pose T")
        if name is not None and not isinstance(name, str):
            raise TypeError(f"{where}: name must be a str, got {type(name).__name__}")
        block = compile_object(object_parts(shape, T, where), self.min_size)
        oid = self._next_id
        self._next_id += 1
        self._objects[oid] = Obstacle(oid, name, shape, T)
        self._blocks[oid] = block
        self._changed()
        return oid

    def remove(self, id: int) -> None:
        """Remove the obstacle `id`; KeyError if there is none."""
        self._check_id(id)
        del self._objects[id]
        del self._blocks[id]
        self._changed()

    def _changed(self) -> None:
        self._flat = None
        self._version = next_stamp()

    def contains(self, id: int) -> bool:
        return isinstance(id, (int, np.integer)) and int(id) in self._objects

    __contains__ = contains

    def get(self, id: int) -> Obstacle:
        """The obstacle `id` as added: Obstacle(id, name, shape, T); KeyError if none."""
        self._check_id(id)
        return self._objects[id]

    def ids(self) -> list[int]:
        return list(self._objects)

    def find(self, name: str) -> list[int]:
        """Ids of the obstacles called `name`."""
        return [i for i, o in self._objects.items() if o.name == name]

    def aabb(self, id: int) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
        """The world AABB ``(lo (3,), hi (3,))`` of obstacle `id` as the engine bounds it
        (the union of its primitives' boxes; infinite for a halfspace)."""
        self._check_id(id)
        p = self._blocks[int(id)].prims
        return p.lo.min(axis=0), p.hi.max(axis=0)

    def __len__(self) -> int:
        return len(self._objects)

    def __iter__(self):
        return iter(self._objects.values())

    def __repr__(self):
        n = sum(len(b.prims) for b in self._blocks.values())
        return f"Scene({len(self)} obstacles, {n} primitives, min_size={self.min_size})"

    def _check_id(self, id):
        if not isinstance(id, (int, np.integer)) or isinstance(id, bool):
            raise TypeError(f"obstacle id must be an int, got {type(id).__name__}")
        if int(id) not in self._objects:
            raise KeyError(f"no obstacle with id {id} in the scene ({len(self)} obstacles)")

    # ------------------------------------------------------------------ flat form
    def build(self) -> FlatScene:
        """Compile the scene into its flat form (done by the first query after a change)."""
        if self._flat is None:
            ids = list(self._blocks)
            self._flat = flatten([self._blocks[i] for i in ids], self.open_ratio)
            self._slot_ids = np.array(ids, np.int64)
        return self._flat

    @property
    def flat(self) -> FlatScene:
        """The `FlatScene` (kernels/traversal.py) a CollisionChecker passes to numba."""
        return self.build()

    @property
    def version(self) -> int:
        """Changes on every add/remove: the flat form (and any node ids a cache holds, e.g.
        a traversal front list) is valid for one version only."""
        return self._version

    @property
    def slot_ids(self) -> npt.NDArray[np.int64]:
        """Obstacle id of each object slot of the flat form."""
        self.build()
        return self._slot_ids

    def blocks(self) -> list[ObjectBlock]:
        """The compiled objects, in slot order (for engines built from the same
        primitives, e.g. the flat-BVH baseline of demos/bench/scene.py)."""
        return [self._blocks[i] for i in self._objects]

    def stats(self) -> dict:
        """Sizes of the compiled scene: objects, primitives, groups, nodes, bytes."""
        f = self.build()
        arrays = [a for a in f if isinstance(a, np.ndarray)] + list(f.tab) + list(f.bvh)
        return {
            "objects": len(self),
            "primitives": int(f.tab.kind.shape[0]),
            # as grouped per object (the top tree's opened BVH nodes are leaves, not groups)
            "groups": int(sum((b.kt_group >= 0).sum() for b in self._blocks.values())),
            "kcd_nodes": int(f.kt_lo.shape[0]),
            "bvh_nodes": int(f.bvh.lo.shape[0]),
            "unbounded": int(f.unbounded.shape[0]),
            "replaced_by_detail_filter": int(sum(b.n_replaced for b in self._blocks.values())),
            "bytes": int(sum(a.nbytes for a in arrays)),
        }

    # ------------------------------------------------------------------ queries
    def _run(self, mode, q, i1, bound, flag, workspace):
        """One traversal of the query block `q` (primitives [0, i1)); returns (result,
        scratch)."""
        f = self.build()
        ws = workspace if workspace is not None else thread_workspace()
        sc = ws.scratch(len(self), f.tab.kind.shape[0])
        n = scene_traverse(f, mode, q.tab, q.poses, q.lo, q.hi, 0, i1, _NO_SEEDS, bound, flag, sc)
        if n == OVERFLOW:
            raise RuntimeError("scene traversal stack overflow (a bug: trees have bounded depth)")
        return n, sc

    def _hits(self, shape, T, margin, stop_first, workspace) -> npt.NDArray[np.int64]:
        margin = finite_scalar("margin", margin)
        q = query_block(shape, T)
        _, sc = self._run(COLLIDE, q, len(q), margin, stop_first, workspace)
        hit = sc.hit[: len(self)]
        slots = np.flatnonzero(hit)
        hit[slots] = 0  # the scratch's contract: all 0 between queries
        return self._slot_ids[slots]

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
        """The DISTANCE traversal: (nearest slot or -1, the scratch's best rows)."""
        md = np.inf if max_distance is None else finite_scalar("max_distance", max_distance)
        q = query_block(shape, T)
        arg, sc = self._run(DISTANCE, q, len(q), md, per_object, workspace)
        return arg, sc.best[: len(self)]

    def distances(
        self, shape: Shape, T, max_distance: float | None = None, *, workspace=None
    ) -> list[tuple[int, DistanceResult]]:
        """``[(id, DistanceResult), ...]`` in id order: the signed distance from `shape`
        posed by `T` to every obstacle (DistanceResult.point_a on the shape, point_b on the
        obstacle, normal from shape to obstacle). With `max_distance`, obstacles farther
        than it are left out (and not computed exactly)."""
        _, best = self._distance(shape, T, max_distance, True, workspace)
        slots = np.flatnonzero(best[:, 0] < np.inf)
        out = sorted(
            (int(self._slot_ids[s]), _result(best[s], int(self._slot_ids[s]))) for s in slots
        )
        best[:, 0] = np.inf  # the scratch's contract: inf between queries
        return out

    def min_distance(
        self, shape: Shape, T, max_distance: float | None = None, *, workspace=None
    ) -> DistanceResult:
        """The nearest obstacle: DistanceResult with ``.id``. When the scene is empty or
        nothing is within `max_distance`: distance inf, NaN points and normal, id None."""
        arg, best = self._distance(shape, T, max_distance, False, workspace)
        if arg < 0:
            nan = np.full(3, np.nan)
            return DistanceResult(np.inf, nan, nan.copy(), nan.copy(), None)
        r = _result(best[arg], int(self._slot_ids[arg]))
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
        n, sc = self._run(CANDIDATES, box, 1, margin, False, workspace)
        return np.sort(sc.out[:n])


def _result(row, oid: int) -> DistanceResult:
    return DistanceResult(float(row[0]), row[1:4].copy(), row[4:7].copy(), row[7:10].copy(), oid)
