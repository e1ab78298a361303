"""Numba kernels on flat arrays. Nothing here sees a Python object (DESIGN §1)."""
