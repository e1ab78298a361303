"""Boundary validation: every public entry converts and checks here, once (STYLE §5)."""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

# A rotation is accepted when R^T R is within this of the identity (float32-made poses
# from ROS messages are good to ~1e-7; a sheared or scaled matrix is off by far more).
ROTATION_TOL = 1e-6


def positive_scalar(name: str, value, *, allow_zero: bool = False) -> float:
    """`value` as a finite float > 0 (or >= 0 with `allow_zero`), else ValueError."""
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a finite number, got {value!r}") from None
    if not math.isfinite(x) or x < 0.0 or (x == 0.0 and not allow_zero):
        bound = ">= 0" if allow_zero else "> 0"
        raise ValueError(f"{name} must be finite and {bound}, got {value!r}")
    return x


def finite_scalar(name: str, value) -> float:
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a finite number, got {value!r}") from None
    if not math.isfinite(x):
        raise ValueError(f"{name} must be finite, got {value!r}")
    return x


def finite_array(name: str, value, shape: tuple) -> npt.NDArray[np.float64]:
    """`value` as a C-contiguous float64 array of `shape` (-1 = any length), all finite."""
    try:
        a = np.ascontiguousarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(
            f"{name} must be a numeric array of shape {_fmt(shape)}, got {value!r}"
        ) from None
    if a.ndim != len(shape) or any(s != -1 and s != n for s, n in zip(shape, a.shape, strict=True)):
        raise ValueError(f"{name} must have shape {_fmt(shape)}, got {a.shape}")
    if not np.all(np.isfinite(a)):
        bad = np.argwhere(~np.isfinite(a))[0]
        raise ValueError(f"{name} must be finite, got {a[tuple(bad)]!r} at index {tuple(bad)}")
    return a


def as_pose(T, name: str = "T") -> npt.NDArray[np.float64]:
    """A 4x4 rigid transform as float64, checked: finite, last row (0,0,0,1), R orthonormal,
    det R = +1. Returns a C-contiguous copy the caller may keep."""
    a = finite_array(name, T, (4, 4)).copy()
    if not np.allclose(a[3], (0.0, 0.0, 0.0, 1.0), atol=1e-12, rtol=0.0):
        raise ValueError(f"{name} must have last row (0, 0, 0, 1), got {a[3].tolist()}")
    R = a[:3, :3]
    err = float(np.abs(R.T @ R - np.eye(3)).max())
    if err > ROTATION_TOL or np.linalg.det(R) < 0.0:
        raise ValueError(
            f"{name} rotation must be orthonormal with det +1 (|R^T R - I| = {err:.3g}, "
            f"det = {np.linalg.det(R):.6g})"
        )
    return a


def _fmt(shape: tuple) -> str:
    return (
        "("
        + ", ".join("n" if s == -1 else str(s) for s in shape)
        + ("," if len(shape) == 1 else "")
        + ")"
    )
