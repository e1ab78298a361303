"""Poses and quaternions: the one home of rotation conversions and pose validation.

Poses are 4x4 float64 homogeneous matrices, ``p_world = T_world_local @ [p, 1]``;
quaternions are ``(x, y, z, w)``, scalar last, at every boundary that takes one.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from ..kernels.base.tolerances import LAST_ROW_TOL, QUATERNION_MIN_NORM, ROTATION_TOL, WORLD_LIMIT
from ..kernels.scene.one_primitive import first_bad_pose
from .validate import finite_array, length_array, real_array

__all__ = [
    "as_pose",
    "as_poses",
    "frozen_pose",
    "poses_named",
    "matrix_to_quaternion",
    "pose_matrix",
    "quaternion_to_matrix",
    "quat_xyzw_to_matrix",
]


def quaternion_to_matrix(q) -> npt.NDArray[np.float64]:
    """Rotation matrices ``(..., 3, 3)`` of quaternions ``q (..., 4)`` ``(x, y, z, w)`` of any
    non-zero length (normalised here; not validated: see `quat_xyzw_to_matrix`)."""
    q = np.asarray(q, dtype=np.float64)
    q = q / np.abs(q).max(axis=-1, keepdims=True)  # no overflow in the norm (1e300 entries)
    q = q / np.linalg.norm(q, axis=-1, keepdims=True)
    x, y, z, w = np.moveaxis(q, -1, 0)
    R = np.empty(q.shape[:-1] + (3, 3))
    R[..., 0, 0] = 1 - 2 * (y * y + z * z)
    R[..., 0, 1] = 2 * (x * y - z * w)
    R[..., 0, 2] = 2 * (x * z + y * w)
    R[..., 1, 0] = 2 * (x * y + z * w)
    R[..., 1, 1] = 1 - 2 * (x * x + z * z)
    R[..., 1, 2] = 2 * (y * z - x * w)
    R[..., 2, 0] = 2 * (x * z - y * w)
    R[..., 2, 1] = 2 * (y * z + x * w)
    R[..., 2, 2] = 1 - 2 * (x * x + y * y)
    return R


def matrix_to_quaternion(R) -> npt.NDArray[np.float64]:
    """Unit quaternion ``(x, y, z, w)``, w >= 0, of a rotation matrix (Shepperd's method)."""
    R = np.asarray(R, dtype=np.float64)
    tr = R[0, 0] + R[1, 1] + R[2, 2]
    if tr > 0:
        s = 2.0 * math.sqrt(tr + 1.0)
        q = [(R[2, 1] - R[1, 2]) / s, (R[0, 2] - R[2, 0]) / s, (R[1, 0] - R[0, 1]) / s, 0.25 * s]
    elif R[0, 0] > R[1, 1] and R[0, 0] > R[2, 2]:
        s = 2.0 * math.sqrt(1.0 + R[0, 0] - R[1, 1] - R[2, 2])
        q = [0.25 * s, (R[0, 1] + R[1, 0]) / s, (R[0, 2] + R[2, 0]) / s, (R[2, 1] - R[1, 2]) / s]
    elif R[1, 1] > R[2, 2]:
        s = 2.0 * math.sqrt(1.0 + R[1, 1] - R[0, 0] - R[2, 2])
        q = [(R[0, 1] + R[1, 0]) / s, 0.25 * s, (R[1, 2] + R[2, 1]) / s, (R[0, 2] - R[2, 0]) / s]
    else:
        s = 2.0 * math.sqrt(1.0 + R[2, 2] - R[0, 0] - R[1, 1])
        q = [(R[0, 2] + R[2, 0]) / s, (R[1, 2] + R[2, 1]) / s, 0.25 * s, (R[1, 0] - R[0, 1]) / s]
    q = np.array(q)
    q /= np.linalg.norm(q)
    return -q if q[3] < 0 else q


def quat_xyzw_to_matrix(q, where: str = "orientation_xyzw") -> npt.NDArray[np.float64]:
    """(3, 3) rotation of one quaternion ``(x, y, z, w)``, validated: ValueError naming
    `where` for anything but 4 finite numbers of non-zero length."""
    q = real_array(where, q, "4 numbers (x, y, z, w)")
    if q.shape != (4,) or not np.all(np.isfinite(q)):
        raise ValueError(f"{where} must be 4 finite numbers (x, y, z, w), got {q.tolist()}")
    scale = float(np.abs(q).max())
    if scale * float(np.linalg.norm(q / scale if scale > 0.0 else q)) < QUATERNION_MIN_NORM:
        raise ValueError(f"{where} must be a non-zero quaternion, got {q.tolist()}")
    return quaternion_to_matrix(q)


def pose_matrix(position, orientation_xyzw, where: str = "pose") -> npt.NDArray[np.float64]:
    """(4, 4) pose from a position (3,) and a quaternion (x, y, z, w), validated."""
    p = real_array(f"{where}.position", position, "3 numbers")
    if p.shape != (3,) or not np.all(np.isfinite(p)):
        raise ValueError(f"{where}.position must be 3 finite numbers, got {position!r}")
    length_array(f"{where}.position", p, (3,))
    T = np.eye(4)
    T[:3, :3] = quat_xyzw_to_matrix(orientation_xyzw, f"{where}.orientation_xyzw")
    T[:3, 3] = p
    return T


def frozen_pose(T) -> npt.NDArray[np.float64]:
    """A read-only float64 copy of T (a pose a model keeps and hands out)."""
    a = np.array(T, dtype=np.float64)
    a.setflags(write=False)
    return a


def as_pose(T, name: str = "T") -> npt.NDArray[np.float64]:
    """A 4x4 rigid transform as float64, checked: finite, last row (0,0,0,1), R orthonormal,
    det R = +1, translation within the working range (+-WORLD_LIMIT m). Returns a
    C-contiguous copy the caller may keep."""
    a = finite_array(name, T, (4, 4)).copy()
    far = np.flatnonzero(np.abs(a[:3, 3]) > WORLD_LIMIT)
    if far.size:
        raise ValueError(
            f"{name} translation {a[:3, 3].tolist()} is outside the working range "
            f"(+-{WORLD_LIMIT:g} m)"
        )
    if not np.allclose(a[3], (0.0, 0.0, 0.0, 1.0), atol=LAST_ROW_TOL, rtol=0.0):
        raise ValueError(f"{name} must have last row (0, 0, 0, 1), got {a[3].tolist()}")
    R = a[:3, :3]
    err = float(np.abs(R.T @ R - np.eye(3)).max())
    if err > ROTATION_TOL or np.linalg.det(R) < 0.0:
        raise ValueError(
            f"{name} rotation must be orthonormal with det +1 (|R^T R - I| = {err:.3g}, "
            f"det = {np.linalg.det(R):.6g})"
        )
    return a


_I3 = np.eye(3)


def _read_only(a: np.ndarray) -> np.ndarray:
    """a as a read-only view: the compiled check sees one array type, whoever calls."""
    v = a.view()
    v.flags.writeable = False
    return v


_LAST_ROW = np.array([0.0, 0.0, 0.0, 1.0])


def as_poses(poses, name: str = "poses[{}]") -> npt.NDArray[np.float64]:
    """``(k, 4, 4)`` rigid transforms, checked at once (as `as_pose` checks one); on failure
    the first bad one is named with as_pose's message, ``name.format(k)``. A C-contiguous
    float64 array is checked by one compiled loop (kernels/scene/one_primitive.py
    `first_bad_pose`); anything else, or a pose it refuses, by numpy, whose verdict holds."""
    if (
        type(poses) is np.ndarray
        and poses.dtype == np.float64
        and poses.ndim == 3
        and poses.shape[1:] == (4, 4)
        and poses.flags.c_contiguous
        and first_bad_pose(_read_only(poses), LAST_ROW_TOL, ROTATION_TOL, WORLD_LIMIT) < 0
    ):
        return poses
    try:
        P = np.ascontiguousarray(real_array("poses", poses, "4x4 poses"))
        ok = P.ndim == 3 and P.shape[1:] == (4, 4) and bool(np.all(np.isfinite(P)))
    except (TypeError, ValueError):
        ok = False
    if ok:
        R = P[:, :3, :3]
        err = np.abs(np.matmul(R.transpose(0, 2, 1), R) - _I3).max(initial=0.0)
        # orthonormal columns: the determinant is +-1, the sign of (c0 x c1) . c2
        c0, c1, c2 = R[:, :, 0], R[:, :, 1], R[:, :, 2]
        det = (
            (c0[:, 1] * c1[:, 2] - c0[:, 2] * c1[:, 1]) * c2[:, 0]
            + (c0[:, 2] * c1[:, 0] - c0[:, 0] * c1[:, 2]) * c2[:, 1]
            + (c0[:, 0] * c1[:, 1] - c0[:, 1] * c1[:, 0]) * c2[:, 2]
        )
        ok = (
            bool((np.abs(P[:, 3] - _LAST_ROW) <= LAST_ROW_TOL).all())
            and bool(err <= ROTATION_TOL)
            and bool((det > 0.0).all())
            and bool((np.abs(P[:, :3, 3]) <= WORLD_LIMIT).all())
        )
    if ok:
        return np.ascontiguousarray(P)
    for k, Tl in enumerate(poses):
        as_pose(Tl, name.format(k))
    raise ValueError(f"{name.format('*')} must be a sequence of 4x4 poses")


_EYE = np.eye(4)


def poses_named(Ts: list, where: list) -> list:
    """Each T (4, 4) validated (`as_pose`; None: the identity), all at once when they are
    all good (one vectorised check), else the first bad one named ``f"{where[k]} pose T"``."""
    Ts = [_EYE if T is None else T for T in Ts]
    if not Ts:
        return []
    try:
        P = as_poses(Ts, "T")
    except ValueError:
        for T, w in zip(Ts, where, strict=True):
            as_pose(T, f"{w} pose T")
        raise
    return list(P)
