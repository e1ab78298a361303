"""Boundary validation of numbers and arrays: every public entry converts and checks here,
once (poses: `geometry.poses`)."""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt


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


def _fmt(shape: tuple) -> str:
    return (
        "("
        + ", ".join("n" if s == -1 else str(s) for s in shape)
        + ("," if len(shape) == 1 else "")
        + ")"
    )
