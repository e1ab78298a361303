"""A scene's obstacles given as arrays (`ObstacleArrays`): compiled at once, and their
Python objects made only when asked for (scene.py `from_arrays`, `replace_all`).

A planner that takes a new scene per problem needs the flat form the kernels read, not a
shape object, a pose and a compiled block per obstacle: `array_primitives` validates and
compiles all of them in one compiled loop (kernels/scene/one_primitive.py), and `ArrayObjects` /
`ArrayBlocks` are the snapshot's ``{id: Obstacle}`` and ``{id: ObjectBlock}`` mappings,
whose entries are made on first access (`Scene.get`, `records`, an edit that copies them)
and kept.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np

from .geometry.arrays import ObstacleArrays
from .kcd import ObjectBlock, one_node_block
from .kernels.base.tolerances import WORLD_LIMIT
from .primitives import Primitives, primitive_block

__all__ = ["ArrayBlocks", "ArrayObjects", "array_primitives", "check_world_range"]


def check_world_range(lo, hi, where: str) -> None:
    """ValueError unless every bounded box (lo, hi) (n, 3) of an object (its primitives'
    boxes, or a box holding them all) lies in the world box [-WORLD_LIMIT, WORLD_LIMIT]^3
    (kernels/base/tolerances.py; a halfspace is unbounded by nature, its pose and offset are
    checked where they are made)."""
    bounded = np.isfinite(lo).all(axis=1) & np.isfinite(hi).all(axis=1)
    far = bounded & ((np.abs(lo) > WORLD_LIMIT) | (np.abs(hi) > WORLD_LIMIT)).any(axis=1)
    if far.any():
        k = int(np.flatnonzero(far)[0])
        raise ValueError(
            f"{where} reaches from {lo[k].tolist()} to {hi[k].tolist()} m, outside the "
            f"working range (every obstacle within +-{WORLD_LIMIT:g} m of the world origin)"
        )


def array_primitives(arrays: ObstacleArrays) -> Primitives:
    """The obstacles of `arrays` as one block, primitive k = obstacle k (their rows and
    world boxes: `primitive_block`), each checked to lie in the working range (ValueError
    naming it: ``obstacle 'name'`` or ``obstacles[k]``)."""
    prims = primitive_block(arrays.kind, arrays.size, arrays.T)
    if len(arrays) and not (
        (np.abs(prims.lo) <= WORLD_LIMIT).all() and (np.abs(prims.hi) <= WORLD_LIMIT).all()
    ):
        far = (np.abs(prims.lo) > WORLD_LIMIT) | (np.abs(prims.hi) > WORLD_LIMIT)
        k = int(np.flatnonzero(far.any(axis=1))[0])
        name = arrays.names[k]
        where = f"obstacle {name!r}" if name is not None else f"obstacles[{k}]"
        check_world_range(prims.lo[k : k + 1], prims.hi[k : k + 1], where)
    return prims


class ArrayObjects(Mapping):
    """``{id: Obstacle}`` of the obstacles of `arrays`, ids ``first, first + 1, ...``:
    each made on first access (``make(id, name, shape, T)``, T a read-only view) and kept.
    Immutable as a mapping; safe from several threads (two that make one entry at once
    make equal ones, and one is kept)."""

    def __init__(self, first: int, arrays: ObstacleArrays, make: Callable):
        self.first = first
        self.arrays = arrays
        self._make = make
        self._made: dict = {}

    def __len__(self) -> int:
        return len(self.arrays)

    def __iter__(self):
        return iter(range(self.first, self.first + len(self.arrays)))

    def __contains__(self, i) -> bool:
        return isinstance(i, int) and 0 <= i - self.first < len(self.arrays)

    def __getitem__(self, i):
        o = self._made.get(i)
        if o is not None:
            return o
        if i not in self:
            raise KeyError(i)
        k = i - self.first
        a = self.arrays
        return self._made.setdefault(i, self._make(i, a.names[k], a.shape(k), a.T[k]))

    def names(self) -> dict:
        """{id: name}, without making the obstacles."""
        return dict(zip(self, self.arrays.names, strict=True))


class ArrayBlocks(Mapping):
    """``{id: ObjectBlock}`` of a block whose primitive k is the object of id ``first + k``
    (`array_primitives`): each a view of its row (kcd.one_node_block), made on first
    access and kept."""

    def __init__(self, first: int, prims: Primitives):
        self.first = first
        self.prims = prims
        self._made: dict = {}

    def __len__(self) -> int:
        return len(self.prims)

    def __iter__(self):
        return iter(range(self.first, self.first + len(self.prims)))

    def __contains__(self, i) -> bool:
        return isinstance(i, int) and 0 <= i - self.first < len(self.prims)

    def __getitem__(self, i) -> ObjectBlock:
        b = self._made.get(i)
        if b is not None:
            return b
        if i not in self:
            raise KeyError(i)
        return self._made.setdefault(i, one_node_block(self.prims, i - self.first))
