"""One compiled call per public query: pose checks and the pair query together.

The public functions in `queries.py` must not cost more than the peers' Python calls, so the
numeric pose checks (finite, last row, rigid rotation) run here, inside the same compiled
call as the query, and Python only formats a message when a check fails. Each shape arrives
as its one-shape table packed into two arrays (cached on the shape, see
`geometry.compile.pack_single`): numba's dispatch costs ~0.1 µs per array argument, and a
table is eight arrays.
"""

import numpy as np

from .._jit import kernel
from ..base.codes import (
    POSE_LAST_ROW,
    POSE_NOT_FINITE,
    POSE_NOT_RIGID,
    POSE_OK,
    POSE_OUT_OF_RANGE,
    SECOND_POSE,
    ZERO,
)
from ..base.layout import ShapeTable
from ..base.tolerances import LAST_ROW_TOL, ROTATION_TOL, WORLD_LIMIT
from .pair import pair_distance, pair_overlap

# A packed table's one shape, as np.int64 (a literal 0 would compile the pair kernels once
# more than the checker's and the scene's calls do: kernels/base/codes.py)
ONLY = ZERO


@kernel
def pose_check(T):
    """POSE_OK, or the first failed check of the 4x4 pose T."""
    for i in range(4):
        for j in range(4):
            if not np.isfinite(T[i, j]):
                return POSE_NOT_FINITE
    if abs(T[3, 0]) > LAST_ROW_TOL or abs(T[3, 1]) > LAST_ROW_TOL or abs(T[3, 2]) > LAST_ROW_TOL:
        return POSE_LAST_ROW
    if abs(T[3, 3] - 1.0) > LAST_ROW_TOL:
        return POSE_LAST_ROW
    for i in range(3):
        for j in range(3):
            s = T[0, i] * T[0, j] + T[1, i] * T[1, j] + T[2, i] * T[2, j]
            if abs(s - (1.0 if i == j else 0.0)) > ROTATION_TOL:
                return POSE_NOT_RIGID
    det = (
        T[0, 0] * (T[1, 1] * T[2, 2] - T[1, 2] * T[2, 1])
        - T[0, 1] * (T[1, 0] * T[2, 2] - T[1, 2] * T[2, 0])
        + T[0, 2] * (T[1, 0] * T[2, 1] - T[1, 1] * T[2, 0])
    )
    if det < 0.0:
        return POSE_NOT_RIGID
    for i in range(3):
        if abs(T[i, 3]) > WORLD_LIMIT:
            return POSE_OUT_OF_RANGE
    return POSE_OK


@kernel
def unpack_single(ints, floats):
    """The `ShapeTable` view of a shape packed by `geometry.compile.pack_single` (no copy)."""
    nv = np.int64(ints[2])
    return ShapeTable(
        ints[0:1],
        floats[0:8][np.newaxis, :],  # not reshape: a C call, 12 ns each
        ints[1:3],
        floats[15 : 15 + 3 * nv].reshape((nv, 3)),
        ints[3 : 4 + nv],
        ints[4 + nv :],
        floats[8:14][np.newaxis, :],
        floats[14:15],
        floats[15 + 3 * nv : 15 + 6 * nv],
    )


@kernel
def _pose_code(Ta, Tb):
    """POSE_OK when both poses pass `pose_check`, else Ta's code, or Tb's + SECOND_POSE."""
    c = pose_check(Ta)
    if c != POSE_OK:
        return c
    c = pose_check(Tb)
    if c != POSE_OK:
        return c + SECOND_POSE
    return POSE_OK


@kernel
def checked_distance(ia, fa, Ta, ib, fb, Tb, ws, out):
    """Check both poses, then `pair_distance` of the packed one-shape tables (ia, fa) and
    (ib, fb) into out[0:10]. ws: a pair workspace (`new_workspace()`). Returns POSE_OK, or
    a pose code (`_pose_code`; out untouched). The packed arrays come unpaired: numba types
    a tuple argument in Python, 0.1 µs more than two arrays."""
    c = _pose_code(Ta, Tb)
    if c == POSE_OK:
        A = unpack_single(ia, fa)
        B = unpack_single(ib, fb)
        pair_distance(A, ONLY, Ta, B, ONLY, Tb, np.inf, ws, out)
    return c


@kernel
def checked_overlap(ia, fa, Ta, ib, fb, Tb, margin, ws):
    """Check both poses, then `pair_overlap`: returns 1 when the signed distance is
    <= margin, 0 when not, or a pose code (`_pose_code`). No output array: a collide() call
    allocates nothing."""
    c = _pose_code(Ta, Tb)
    if c != POSE_OK:
        return c
    A = unpack_single(ia, fa)
    B = unpack_single(ib, fb)
    return 1 if pair_overlap(A, ONLY, Ta, B, ONLY, Tb, margin, ws) else 0
