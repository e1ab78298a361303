"""Boundary validation of numbers and arrays: every public entry converts and checks here,
once (poses: `geometry.poses`).

Numbers are real numbers: a bool (``True`` as a size), a complex number (whose imaginary
part a float conversion would drop) or a string is refused, not converted. Lengths are
within the working range, ``WORLD_LIMIT`` metres (kernels/base/tolerances.py).
"""

from __future__ import annotations

import math
import numbers

import numpy as np
import numpy.typing as npt

from ..kernels.base.tolerances import WORLD_LIMIT


def real_scalar(name: str, value) -> float:
    """`value` as a float when it is a real number (not a bool), else ValueError."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        if isinstance(value, np.ndarray) and value.shape == () and value.dtype.kind in "iuf":
            return float(value)
        raise ValueError(f"{name} must be a real number, got {value!r}")
    try:
        return float(value)
    except (OverflowError, TypeError, ValueError):
        raise ValueError(f"{name} must be a finite number, got {value!r}") from None


def positive_scalar(name: str, value, *, allow_zero: bool = False) -> float:
    """`value` as a finite float > 0 (or >= 0 with `allow_zero`), else ValueError."""
    x = real_scalar(name, value)
    if not math.isfinite(x) or x < 0.0 or (x == 0.0 and not allow_zero):
        bound = ">= 0" if allow_zero else "> 0"
        raise ValueError(f"{name} must be finite and {bound}, got {value!r}")
    return x


def finite_scalar(name: str, value) -> float:
    x = real_scalar(name, value)
    if not math.isfinite(x):
        raise ValueError(f"{name} must be finite, got {value!r}")
    return x


def length_scalar(name: str, value, *, allow_zero: bool = False) -> float:
    """A size in metres: `positive_scalar`, and at most WORLD_LIMIT (the working range)."""
    x = positive_scalar(name, value, allow_zero=allow_zero)
    if x > WORLD_LIMIT:
        raise ValueError(
            f"{name} = {value!r} m is outside the working range (<= {WORLD_LIMIT:g} m)"
        )
    return x


def coordinate_scalar(name: str, value) -> float:
    """A signed coordinate in metres: `finite_scalar`, and within +-WORLD_LIMIT."""
    x = finite_scalar(name, value)
    if abs(x) > WORLD_LIMIT:
        raise ValueError(f"{name} = {value!r} m is outside the working range (+-{WORLD_LIMIT:g} m)")
    return x


def bool_flag(name: str, value) -> bool:
    """`value` as a bool when it is one (a numpy bool, or the integer 0 or 1), else
    ValueError: a string such as "no" would read as True."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)) and value in (0, 1):
        return bool(value)
    raise ValueError(f"{name} must be True or False, got {value!r}")


def real_array(name: str, value, expected: str) -> np.ndarray:
    """`value` as a float64 array when it holds real numbers (ints or floats; not bools,
    complex numbers or strings), else ValueError naming `expected`."""
    try:
        raw = np.asarray(value)
    except (TypeError, ValueError, OverflowError):
        raise ValueError(f"{name} must be {expected}, got {value!r}") from None
    if raw.dtype.kind not in "iuf":
        if raw.dtype.kind == "O":  # e.g. a list of Python ints too large for int64
            try:
                raw = np.asarray(raw.tolist(), dtype=np.float64)
            except (TypeError, ValueError, OverflowError):
                raise ValueError(f"{name} must be {expected}, got {value!r}") from None
        else:
            what = {"b": "booleans", "c": "complex numbers", "U": "strings", "S": "bytes"}
            got = what.get(raw.dtype.kind, f"dtype {raw.dtype}")
            raise ValueError(f"{name} must be {expected}, got {got}: {value!r}")
    return np.asarray(raw, dtype=np.float64)


def finite_array(name: str, value, shape: tuple) -> npt.NDArray[np.float64]:
    """`value` as a C-contiguous float64 array of `shape` (-1 = any length), all finite."""
    a = np.ascontiguousarray(real_array(name, value, f"a numeric array of shape {_fmt(shape)}"))
    if a.ndim != len(shape) or any(s != -1 and s != n for s, n in zip(shape, a.shape, strict=True)):
        raise ValueError(f"{name} must have shape {_fmt(shape)}, got {a.shape}")
    if not np.all(np.isfinite(a)):
        bad = np.argwhere(~np.isfinite(a))[0]
        raise ValueError(f"{name} must be finite, got {a[tuple(bad)]!r} at index {tuple(bad)}")
    return a


def length_array(name: str, value, shape: tuple) -> npt.NDArray[np.float64]:
    """`finite_array` of lengths or coordinates in metres, each within +-WORLD_LIMIT."""
    a = finite_array(name, value, shape)
    out = np.abs(a) > WORLD_LIMIT
    if out.any():
        bad = tuple(np.argwhere(out)[0])
        raise ValueError(
            f"{name} must lie within +-{WORLD_LIMIT:g} m (the working range), got "
            f"{float(a[bad])!r} at index {bad}"
        )
    return a


def _fmt(shape: tuple) -> str:
    return (
        "("
        + ", ".join("n" if s == -1 else str(s) for s in shape)
        + ("," if len(shape) == 1 else "")
        + ")"
    )
