"""The project's build backend: setuptools' (setup.py), with the packages the wheel's build
imports to compile its kernels (planning_collision/shipping.py) asked for by the wheel's build
alone. An editable install (the README's `pip install -e .`) and an sdist import nothing of the
package: their isolated build environment holds setuptools only, not numba and scipy."""

import os

from setuptools import build_meta as _setuptools
from setuptools.build_meta import *  # noqa: F403  (every hook, as setuptools defines it)

# what `python -m planning_collision warm-up` imports in the wheel's build (a subset of the
# project's dependencies: tests/test_packaging.py checks they agree)
COMPILE_REQUIRES = [
    "numpy>=1.24",
    "numba>=0.59,<0.69",
    "scipy>=1.10",
    "trimesh>=4.0",
    "yourdfpy>=0.0.56",
]


def get_requires_for_build_wheel(config_settings=None):
    requires = _setuptools.get_requires_for_build_wheel(config_settings)
    if os.environ.get("PLANNING_COLLISION_SHIP", "1") != "0":  # setup.py: compiled code shipped
        requires = [*requires, *COMPILE_REQUIRES]
    return requires
