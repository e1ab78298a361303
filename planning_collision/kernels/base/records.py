"""Kernel data layouts, each declared once: its fields' names, element types and ranks,
shapes and meanings. A declaration (`record`) gives

- the namedtuple of arrays kernels take as one argument (numba types a namedtuple by its
  fields: one argument, many arrays);
- its address-table spec (`TREES`, kernels/checker/handles.py: which rows a table of array
  addresses holds, each checked against its field's dtype and rank);
- its allocator (`allocate`: every field's array of the declared shape, from the sizes the
  caller names) and its checker (`check_shapes`: the arrays have the declared shapes).

Fields are named where they are made and read, never by position: a record is built with
keywords (`Record(field=...)`, `allocate`), so two same-typed fields cannot swap unseen.
"""

from __future__ import annotations

from collections import namedtuple
from typing import NamedTuple

import numpy as np

# (dtype, ndim) of an array field
F1, F2, F3 = ("float64", 1), ("float64", 2), ("float64", 3)
I1, I2, L1, U1 = ("int32", 1), ("int32", 2), ("int64", 1), ("uint8", 1)


class Field(NamedTuple):
    """One field of a record: `kind` is a (dtype, ndim) array or a record class (nested in
    place); `shape` its sizes, each an int or the name of a size the caller gives
    (`allocate`, `check_shapes`); `fill` the value `allocate` writes (None: left
    uninitialised, for arrays read only where written first)."""

    name: str
    kind: object
    shape: tuple
    doc: str
    fill: float | None = 0.0


# record class -> its fields' kinds, in order (handles.py builds address tables from these)
TREES: dict = {}
# record class -> its Fields
FIELDS: dict = {}


def record(name: str, module: str, doc: str, fields: list[Field]) -> type:
    """The namedtuple class `name` of `fields`, defined in `module` (numba's cache pickles
    the class by its module and name), registered in TREES and FIELDS."""
    names = [f.name for f in fields]
    if len(set(names)) != len(names):
        raise ValueError(f"{name}: a field name repeats: {names}")
    cls = namedtuple(name, names, module=module)
    rows = "\n".join(f"- ``{f.name}`` {_kind_text(f)}: {f.doc}" for f in fields)
    cls.__doc__ = f"{doc}\n\n{rows}"
    TREES[cls] = [f.kind for f in fields]
    FIELDS[cls] = list(fields)
    return cls


def _kind_text(f: Field) -> str:
    if isinstance(f.kind, type):
        return f"({f.kind.__name__})"
    dims = ", ".join(str(d) for d in f.shape)
    return f"({dims}) {f.kind[0]}"


_CODE: dict = {}  # a size expression -> its compiled code (a workspace is made per thread)


def _size(f: Field, d, sizes: dict):
    """Size d of field f: an int, or a name or sum or product of names in `sizes`."""
    if isinstance(d, int):
        return d
    try:
        if d in sizes:
            return int(sizes[d])
        code = _CODE.get(d)
        if code is None:
            code = _CODE[d] = compile(d, "<size>", "eval")  # "n + 1", "3 * nv": ours
        return int(eval(code, {"__builtins__": {}}, sizes))
    except NameError as e:
        raise ValueError(f"field {f.name!r}: no size given for {d!r} ({e})") from None


def _shape(f: Field, sizes: dict) -> tuple:
    return tuple(_size(f, d, sizes) for d in f.shape)


def allocate(cls, **sizes):
    """A `cls` record of new arrays, each of its declared shape (`sizes` names the sizes)
    and filled with its field's `fill`. Nested records are not allocated here."""
    arrays = {}
    for f in FIELDS[cls]:
        if isinstance(f.kind, type):
            raise TypeError(f"{cls.__name__}.{f.name}: a nested record is built, not allocated")
        shape = _shape(f, sizes)
        dtype = f.kind[0]
        if f.fill is None:
            arrays[f.name] = np.empty(shape, dtype)
        elif f.fill == 0.0:
            arrays[f.name] = np.zeros(shape, dtype)  # zeroed pages from the OS, not a fill
        else:
            arrays[f.name] = np.full(shape, f.fill, dtype)
    return cls(**arrays)


def _known(d, sizes: dict) -> bool:
    names = [] if isinstance(d, int) else compile(d, "<size>", "eval").co_names
    return all(n in sizes for n in names)


def check_shapes(value, **sizes) -> None:
    """ValueError naming the field when an array of record `value` has not its declared
    shape (a size left out of `sizes` is not checked)."""
    for f in FIELDS[type(value)]:
        a = getattr(value, f.name)
        if isinstance(f.kind, type):
            continue
        want = tuple(_size(f, d, sizes) if _known(d, sizes) else None for d in f.shape)
        wrong = len(want) != a.ndim or any(
            w is not None and w != s for w, s in zip(want, a.shape, strict=True)
        )
        if wrong:
            raise ValueError(
                f"{type(value).__name__}.{f.name} must have shape {f.shape} "
                f"({want} here), got {a.shape}"
            )
