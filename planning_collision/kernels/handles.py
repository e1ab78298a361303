"""Many arrays into a compiled call as one table of addresses.

Calling a numba entry point costs a type check and an unboxing per array argument: a
scene, a robot and a workspace as namedtuples are about 60 arrays, 7 µs per call from
Python — more than the check itself. So entry points the planner calls per state or per
edge take one int64 table instead, a row per array: ``(address, ndim, shape0, shape1,
shape2)``, built once (`array_table`), and rebuild the arrays inside the compiled code
from the addresses (`carray`: no copy, no allocation). The caller must keep the arrays
alive as long as the table is used (the checker holds them).

The accessors read one row each with a fixed dtype and rank (`f64_2(h, k)`: float64, 2-D
at row k); `shape_table_at`, `flat_scene_at`, `robot_model_at` and `scratch_at` rebuild the
package's namedtuples from consecutive rows, in field order. `SPECS` says which dtype and
rank each namedtuple's rows must have; `array_table` checks every array against it, so a
table never reinterprets memory as the wrong type.
"""

import ctypes

import numba
import numpy as np
from numba import types
from numba.extending import intrinsic, overload

from ._jit import kernel
from .bvh import FlatBVH
from .fk import RobotModel
from .layout import ShapeTable
from .scratch import Scratch
from .traversal import FlatScene

COLS = 5  # address, ndim, shape0, shape1, shape2


def as_pointer(addr, dtype):
    """A typed pointer to `addr` (plain Python: a ctypes pointer)."""
    ctype = np.ctypeslib.as_ctypes_type(np.dtype(dtype))
    return ctypes.cast(ctypes.c_void_p(int(addr)), ctypes.POINTER(ctype))


@intrinsic
def _int_to_pointer(typingctx, addr, dtype):
    ty = dtype.dtype if isinstance(dtype, types.DTypeSpec) else dtype.instance_type
    sig = types.CPointer(ty)(addr, dtype)

    def codegen(context, builder, signature, args):
        return builder.inttoptr(args[0], context.get_value_type(types.CPointer(ty)))

    return sig, codegen


@overload(as_pointer)
def _as_pointer_typed(addr, dtype):
    return lambda addr, dtype: _int_to_pointer(addr, dtype)


@kernel
def f64_1(h, k):
    return numba.carray(as_pointer(h[k, 0], np.float64), (h[k, 2],))


@kernel
def f64_2(h, k):
    return numba.carray(as_pointer(h[k, 0], np.float64), (h[k, 2], h[k, 3]))


@kernel
def f64_3(h, k):
    return numba.carray(as_pointer(h[k, 0], np.float64), (h[k, 2], h[k, 3], h[k, 4]))


@kernel
def i32_1(h, k):
    return numba.carray(as_pointer(h[k, 0], np.int32), (h[k, 2],))


@kernel
def i32_2(h, k):
    return numba.carray(as_pointer(h[k, 0], np.int32), (h[k, 2], h[k, 3]))


@kernel
def i64_1(h, k):
    return numba.carray(as_pointer(h[k, 0], np.int64), (h[k, 2],))


@kernel
def u8_1(h, k):
    return numba.carray(as_pointer(h[k, 0], np.uint8), (h[k, 2],))


# (dtype, ndim) of each row of the namedtuples, in field order
_F1, _F2, _F3 = ("float64", 1), ("float64", 2), ("float64", 3)
_I1, _I2, _L1, _U1 = ("int32", 1), ("int32", 2), ("int64", 1), ("uint8", 1)
SPECS = {
    ShapeTable: [_I1, _F2, _I1, _F2, _I1, _I1, _F2, _F1, _F1],
    FlatBVH: [_F2, _F2, _I1, _I1, _I1, _I1, _I1],
    RobotModel: [_I1, _I1, _F2, _F3, _I1, _F1, _F1, _F1, _F1],
    Scratch: [_F1, _I2, _F1, _U1, _F2, _I1, _L1, _F2],
}
SPECS[FlatScene] = (
    SPECS[ShapeTable]
    + [_F3, _F2, _F2, _I1]
    + SPECS[FlatBVH]
    + [_I1, _F2, _F2, _I1, _I1, _F2, _F2, _I1, _I1, _I1, _I1, _I1, _I1]
)


def rows(value, spec=None) -> list:
    """The (array, (dtype, ndim)) rows of a namedtuple of `SPECS` (nested ones flattened in
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
    specs = SPECS[type(value)]
    if len(specs) != len(arrays):
        raise ValueError(f"{type(value).__name__}: {len(arrays)} arrays, spec has {len(specs)}")
    return list(zip(arrays, specs, strict=True))


def array_table(row_list) -> np.ndarray:
    """The int64 table (n, COLS) of `(array, (dtype, ndim))` rows, each array checked: the
    dtype and rank of its spec, C-contiguous (so carray reads it right)."""
    table = np.zeros((len(row_list), COLS), np.int64)
    for k, (a, (dtype, ndim)) in enumerate(row_list):
        if not isinstance(a, np.ndarray):
            raise TypeError(f"row {k}: expected an ndarray, got {type(a).__name__}")
        if a.dtype != np.dtype(dtype) or a.ndim != ndim or not a.flags.c_contiguous:
            raise ValueError(
                f"row {k}: expected a C-contiguous {dtype} array of rank {ndim}, got "
                f"{a.dtype} rank {a.ndim} (C-contiguous: {a.flags.c_contiguous})"
            )
        table[k, 0] = a.ctypes.data
        table[k, 1] = ndim
        table[k, 2 : 2 + ndim] = a.shape
    return table


@kernel
def shape_table_at(h, k):
    """The ShapeTable at rows k.. of h; returns (table, next row)."""
    t = ShapeTable(
        i32_1(h, k),
        f64_2(h, k + 1),
        i32_1(h, k + 2),
        f64_2(h, k + 3),
        i32_1(h, k + 4),
        i32_1(h, k + 5),
        f64_2(h, k + 6),
        f64_1(h, k + 7),
        f64_1(h, k + 8),
    )
    return t, k + 9


@kernel
def flat_scene_at(h, k):
    """The FlatScene at rows k.. of h; returns (scene, next row)."""
    tab, k = shape_table_at(h, k)
    bvh = FlatBVH(
        f64_2(h, k + 4),
        f64_2(h, k + 5),
        i32_1(h, k + 6),
        i32_1(h, k + 7),
        i32_1(h, k + 8),
        i32_1(h, k + 9),
        i32_1(h, k + 10),
    )
    s = FlatScene(
        tab,
        f64_3(h, k),
        f64_2(h, k + 1),
        f64_2(h, k + 2),
        i32_1(h, k + 3),
        bvh,
        i32_1(h, k + 11),
        f64_2(h, k + 12),
        f64_2(h, k + 13),
        i32_1(h, k + 14),
        i32_1(h, k + 15),
        f64_2(h, k + 16),
        f64_2(h, k + 17),
        i32_1(h, k + 18),
        i32_1(h, k + 19),
        i32_1(h, k + 20),
        i32_1(h, k + 21),
        i32_1(h, k + 22),
        i32_1(h, k + 23),
    )
    return s, k + 24


@kernel
def robot_model_at(h, k):
    """The RobotModel at rows k.. of h; returns (model, next row)."""
    m = RobotModel(
        i32_1(h, k),
        i32_1(h, k + 1),
        f64_2(h, k + 2),
        f64_3(h, k + 3),
        i32_1(h, k + 4),
        f64_1(h, k + 5),
        f64_1(h, k + 6),
        f64_1(h, k + 7),
        f64_1(h, k + 8),
    )
    return m, k + 9


@kernel
def scratch_at(h, k):
    """The Scratch at rows k.. of h; returns (scratch, next row)."""
    s = Scratch(
        f64_1(h, k),
        i32_2(h, k + 1),
        f64_1(h, k + 2),
        u8_1(h, k + 3),
        f64_2(h, k + 4),
        i32_1(h, k + 5),
        i64_1(h, k + 6),
        f64_2(h, k + 7),
    )
    return s, k + 8
