"""A workspace's arrays in one allocation, with their address table written from offsets.

A checker makes a workspace per thread and per scene edit, and a planner that builds a
scene per problem makes one per problem. Allocated record by record (kernels/base/records.py
`allocate`) and addressed array by array (kernels/checker/handles.py `array_table`: numpy gives an
array's address in ~1 µs), a checker's ~33 arrays took ~200 µs. Their layout depends only
on the sizes, so `BlockLayout` learns it once from prototype records (allocated and
addressed the declared way, `array_table` checking every array), and `new` then makes
records of the same arrays in one allocation: views at fixed offsets, the prototypes'
contents (but where a field is declared uninitialised), and the prototypes' table shifted
to the new block's address (~30 µs).
"""

from __future__ import annotations

import numpy as np

from ..kernels.base.records import FIELDS
from ..kernels.checker.handles import array_table, rows

ALIGN = 64  # bytes: every array starts on a cache line

# how a new block's array gets its prototype's contents
_LEAVE, _FILL, _COPY = 0, 1, 2


def _contents(a: np.ndarray, fill) -> tuple[int, object]:
    """(how, what) gives array `a`'s contents to uninitialised memory: nothing for a field
    declared uninitialised (fill None: the endpoint cache's rows, two thirds of the bytes,
    written before they are read), one value everywhere, or a copy of `a`."""
    if fill is None or a.size == 0:
        return _LEAVE, None
    first = a.flat[0]
    same = np.isnan(a).all() if first != first else (a == first).all()
    return (_FILL, first) if same else (_COPY, a.copy())


class BlockLayout:
    """Where each array of `prototypes` (records of `kernels.base.records`, not nested) lives
    in one block, what it holds when new, and the prototypes' address table with the
    block's offsets in place of their addresses."""

    def __init__(self, prototypes):
        self.records = []  # (record class, [(dtype, shape, offset, how, what)])
        self.nbytes = 0
        offsets = []
        for rec in prototypes:
            fields = []
            for f, a in zip(FIELDS[type(rec)], rec, strict=True):
                how, what = _contents(a, f.fill)
                fields.append((a.dtype, a.shape, self.nbytes, how, what))
                offsets.append(self.nbytes)
                self.nbytes += -(-a.nbytes // ALIGN) * ALIGN
            self.records.append((type(rec), fields))
        row_list = [r for rec in prototypes for r in rows(rec)]
        self.table = array_table(row_list)  # checks each array against its declaration
        self.table[:, 0] = offsets

    def new(self) -> tuple[list, np.ndarray]:
        """New records (one per prototype, the same shapes and contents) in one block, and
        their address table (the block is kept alive by the arrays viewing it)."""
        # not zeroed: the allocator reuses freed memory for a block this size, and clearing
        # all of it cost more than the fills of the fields that need them
        buf = np.empty(self.nbytes + ALIGN, np.uint8)
        address = buf.ctypes.data
        start = -address % ALIGN
        out = []
        for cls, fields in self.records:
            arrays = []
            for dtype, shape, offset, how, what in fields:
                a = np.ndarray(shape, dtype, buf, start + offset)
                if how == _FILL:
                    a.fill(what)
                elif how == _COPY:
                    a[...] = what
                arrays.append(a)
            out.append(cls(*arrays))
        table = self.table.copy()
        table[:, 0] += address + start
        return out, table
