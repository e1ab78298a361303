"""Numba kernels on flat arrays. Nothing here sees a Python object (docs/architecture.md)."""
