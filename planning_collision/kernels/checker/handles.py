"""Many arrays into a compiled call as one table of addresses.

Calling a numba entry point costs a type check and an unboxing per array argument: a
scene, a robot and a workspace as namedtuples are about 110 arrays, 7 µs per call from
Python — more than the check itself. So entry points the planner calls per state or per
edge take one int64 table instead, a row per array: ``(address, ndim, shape0, shape1,
shape2)``, built once (`array_table`), and rebuild the arrays inside the compiled code
from the addresses (no copy, no allocation). The caller must keep the arrays alive as
long as the table is used (the checker holds them).

`TREES` (kernels/base/records.py: every record declares itself there) says which fields each
record has: a ``(dtype, ndim)`` array, or a nested record whose rows come in its place.
`array_table` checks every array against it (so a table never reinterprets memory as the
wrong type), and `table_view` makes the compiled function that rebuilds records from
consecutive rows: one call in the numba IR, which emits the loads of all its arrays at once
(LLVM drops those a function does not use). Rebuilding them through one compiled
accessor call per array cost ~2 s of a user's first call for every function that did it.
"""

import ctypes
import functools

import numba
import numpy as np
from numba import literal_unroll, types

from .._jit import (
    JIT_DISABLED,
    TypingError,
    call_checked,
    intrinsic,
    kernel,
    make_array,
    populate_array,
    seal,
)
from ..base.records import TREES
from ..robot.fk import RobotModel

COLS = 5  # address, ndim, shape0, shape1, shape2


@functools.cache
def leaves(cls) -> tuple:
    """The (dtype, ndim) of each row of namedtuple class `cls`, nested ones in place
    (records are declared once, at import: computed once per class)."""
    out = []
    for f in TREES[cls]:
        out.extend(leaves(f) if isinstance(f, type) else [f])
    return tuple(out)


def rows(value, spec=None) -> list:
    """The (array, (dtype, ndim)) rows of a namedtuple of `TREES` (nested ones flattened in
    field order), or of one array with its `spec`."""
    if spec is not None:
        return [(value, spec)]
    arrays = []

    def walk(v):
        for f in v:
            if isinstance(f, tuple):
                walk(f)
            else:
                arrays.append(f)

    walk(value)
    specs = leaves(type(value))
    if len(specs) != len(arrays):
        raise ValueError(f"{type(value).__name__}: {len(arrays)} arrays, spec has {len(specs)}")
    return list(zip(arrays, specs, strict=True))


_DTYPES: dict = {}  # a spec's dtype name -> np.dtype


def _address(a: np.ndarray) -> int:
    """The address of a's first element. numpy's own (``a.ctypes.data``,
    ``__array_interface__``) costs ~1.5 µs, a checker builds tables of ~45 arrays per scene
    and per thread, and ctypes reads a writeable buffer's in ~0.4 µs."""
    if a.flags.writeable and a.nbytes:
        return ctypes.addressof(ctypes.c_char.from_buffer(a))
    return a.__array_interface__["data"][0]


def array_table(row_list) -> np.ndarray:
    """The int64 table (n, COLS) of `(array, (dtype, ndim))` rows, each array checked: the
    dtype and rank of its spec, C-contiguous (so the compiled view reads it right)."""
    cells = [0] * (len(row_list) * COLS)
    for k, (a, (dtype, ndim)) in enumerate(row_list):
        if not isinstance(a, np.ndarray):
            raise TypeError(f"row {k}: expected an ndarray, got {type(a).__name__}")
        want = _DTYPES.get(dtype)
        if want is None:
            want = _DTYPES[dtype] = np.dtype(dtype)
        if a.dtype != want or a.ndim != ndim or not a.flags.c_contiguous:
            raise ValueError(
                f"row {k}: expected a C-contiguous {dtype} array of rank {ndim}, got "
                f"{a.dtype} rank {a.ndim} (C-contiguous: {a.flags.c_contiguous})"
            )
        j = k * COLS
        cells[j] = _address(a)
        cells[j + 1] = ndim
        cells[j + 2 : j + 2 + ndim] = a.shape
    return np.array(cells, np.int64).reshape(-1, COLS)


@kernel
def _address_rows(arrays, out):
    """out[k, :2 + ndim] = (address, ndim, shape...) of arrays[k] (a flat tuple of arrays;
    out zeroed by the caller): `array_table`'s rows, in one compiled loop."""
    k = 0
    for a in literal_unroll(arrays):
        out[k, 0] = a.ctypes.data
        out[k, 1] = a.ndim
        for d in range(a.ndim):
            out[k, 2 + d] = a.shape[d]
        k += 1


_SEALED: list = []  # _address_rows, once a checked record has fixed its one signature


def _flat_arrays(rec) -> tuple:
    """The arrays of a record whose nested records hold arrays only (FlatScene), in
    `rows` order."""
    out = []
    for x in rec:
        if isinstance(x, tuple):
            out.extend(x)
        else:
            out.append(x)
    return tuple(out)


def record_table(rec) -> np.ndarray:
    """``array_table(rows(rec))`` of a record of arrays nested one level deep (a scene's
    `FlatScene`, whose table a checker makes per scene), in one compiled call: ~3 us for a
    scene's 33 arrays instead of ~40 (a planner that takes a new scene per problem pays it
    per problem). The first call checks the record by `array_table` and then compiles
    `_address_rows` for its array types (all writeable, as a flat scene's are) and for no
    others (`seal`): a later record of the same types is what was checked, one of other
    types (a read-only array, another layout) takes the checked path again."""
    arrays = _flat_arrays(rec)
    if _SEALED:
        out = np.zeros((len(arrays), COLS), np.int64)
        try:
            call_checked(_address_rows, arrays, out)
            return out
        except TypeError:  # not the checked types: checked here
            return array_table(rows(rec))
    table = array_table(rows(rec))
    if not JIT_DISABLED:
        out = np.zeros_like(table)
        call_checked(_address_rows, arrays, out)
        writeable = all(a.flags.writeable for a in arrays)  # as a flat scene's are
        if writeable and np.array_equal(out, table) and seal(_address_rows):
            _SEALED.append(_address_rows)
    return table


# Trees whose arrays are frozen where Python holds them (a robot's kinematic model is made
# read-only when it is built): their views are typed read-only too, so a kernel that Python
# also calls with them (FK) compiles once for both, not once per array type (~1.2 s of a
# checker's first call). Read-only views cost nothing at run time (pose 0.61-0.63 us a
# state either way, planning_collision.demos.bench.checker, side by side).
READ_ONLY = {RobotModel}


def _numba_type(node, readonly=False):
    if isinstance(node, type):
        inner = [_numba_type(f, readonly or node in READ_ONLY) for f in TREES[node]]
        return types.BaseTuple.from_types(inner, node)
    dtype, ndim = node
    return types.Array(numba.from_dtype(np.dtype(dtype)), ndim, "C", readonly=readonly)


def table_view(*classes):
    """A compiled function ``view(h, k)`` giving the tuple of namedtuples `classes` rebuilt
    from rows k.. of table h: each array a view of the memory its row addresses (no copy,
    no allocation, no reference count). ``view.n_rows``: the rows it reads;
    ``view.python_twin``: the same in plain Python (what NUMBA_DISABLE_JIT runs)."""
    tuple_type = types.Tuple([_numba_type(c) for c in classes])

    def python_view(h, k):
        """The same in plain Python (NUMBA_DISABLE_JIT): numpy arrays over the addresses."""
        row = [int(k)]

        def build(node, readonly):
            if isinstance(node, type):
                ro = readonly or node in READ_ONLY
                return node(*[build(f, ro) for f in TREES[node]])
            dtype, ndim = np.dtype(node[0]), node[1]
            r = h[row[0]]
            row[0] += 1
            shape = tuple(int(x) for x in r[2 : 2 + ndim])
            n = int(np.prod(shape)) * dtype.itemsize
            buf = (ctypes.c_char * n).from_address(int(r[0])) if n else b""
            a = np.frombuffer(buf, dtype).reshape(shape)
            if not readonly:  # frombuffer over ctypes memory is writeable already
                return a
            a = a.view()
            a.flags.writeable = False
            return a

        return tuple(build(c, False) for c in classes)

    @intrinsic(python_view)
    def view(typingctx, h, k):
        if not (isinstance(h, types.Array) and h.ndim == 2 and h.layout == "C"):
            raise TypingError(f"an address table is a 2-D C-contiguous array, not {h}")
        if h.dtype != types.int64 or not isinstance(k, types.Integer):
            raise TypingError(f"an address table is int64 and its row an integer: {h}, {k}")

        def codegen(context, builder, sig, args):
            table = make_array(sig.args[0])(context, builder, value=args[0])
            base = context.cast(builder, args[1], sig.args[1], types.int64)
            i64 = context.get_value_type(types.int64)
            next_row = [0]

            def cell(r, c):
                return builder.load(builder.gep(table.data, [builder.add(r, i64(c))]))

            def build(ty):
                if isinstance(ty, types.BaseTuple):
                    return context.make_tuple(builder, ty, [build(t) for t in ty.types])
                r = builder.mul(builder.add(base, i64(next_row[0])), i64(COLS))
                next_row[0] += 1
                ary = make_array(ty)(context, builder)
                data = builder.inttoptr(cell(r, 0), context.get_data_type(ty.dtype).as_pointer())
                shape = [cell(r, 2 + d) for d in range(ty.ndim)]
                itemsize = context.get_abi_sizeof(context.get_data_type(ty.dtype))
                strides = [i64(itemsize)]
                for d in range(ty.ndim - 1, 0, -1):
                    strides.insert(0, builder.mul(strides[0], shape[d]))
                populate_array(ary, data, shape, strides, i64(itemsize), None)
                return ary._getvalue()

            return build(tuple_type)

        return tuple_type(h, k), codegen

    view.n_rows = sum(len(leaves(c)) for c in classes)
    view.python_twin = python_view
    return view
