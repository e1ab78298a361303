"""The wheel's build: setuptools as pyproject.toml declares it, plus the entry points'
machine code compiled for a portable CPU (planning_collision/shipping.py) in the wheel,
which is then tagged for this Python and platform. An editable install ships none (its
first run compiles, or `python -m planning_collision warm-up`); PLANNING_COLLISION_SHIP=0
builds a pure wheel without it."""

import os

from setuptools import Distribution, find_namespace_packages, setup
from setuptools.command.build_py import build_py

SHIP = os.environ.get("PLANNING_COLLISION_SHIP", "1") != "0"

# One import name: the repository's folders robots/, plugins/ and demos/ are the packages
# planning_collision.robots, planning_collision.plugins and planning_collision.demos.
MAPPED = ("robots", "plugins", "demos")
PACKAGE_DIR = {"planning_collision": "planning_collision"}
PACKAGE_DIR.update({f"planning_collision.{d}": d for d in MAPPED})
# every folder, a data folder (robots/panda, data/mbm, kernels/_compiled) as well as a module's:
# setuptools then ships their files as the package data below says, and does not warn that
# Python would import a folder it was not told about
_SKIP = ["*__pycache__*", "*.egg-info*"]
PACKAGES = find_namespace_packages(include=["planning_collision*"], exclude=_SKIP)
PACKAGES += [
    f"planning_collision.{p}"
    for p in find_namespace_packages(include=[f"{d}*" for d in MAPPED], exclude=_SKIP)
]


class BuildWithMachineCode(build_py):
    def run(self):
        import shutil
        from pathlib import Path

        if not getattr(self, "editable_mode", False) and Path(self.build_lib).is_dir():
            # a wheel holds today's files only: build/lib of an earlier build may still have
            # modules since removed or renamed (pip builds in the source tree)
            shutil.rmtree(self.build_lib)
        super().run()
        if getattr(self, "editable_mode", False):
            return
        lib = Path(self.build_lib).resolve()
        out = lib / "planning_collision" / "kernels" / "_compiled"
        if not SHIP:  # package data copies a clone's compiled code: a pure wheel has none
            shutil.rmtree(out, ignore_errors=True)
            return
        import subprocess
        import sys

        # the clone's planning_collision/kernels/_compiled (package data, copied above) is
        # kept when its manifest says these sources, this numba and Python, the baseline
        # CPU (shipping.up_to_date); otherwise compiled here
        env = dict(os.environ, PYTHONPATH=str(lib))
        cmd = [sys.executable, "-m", "planning_collision.shipping", str(out), "--reuse"]
        subprocess.run(cmd, env=env, cwd=str(lib), check=True)


class PlatformDistribution(Distribution):
    def has_ext_modules(self):  # machine code inside: a wheel for this Python and platform
        return SHIP


setup(
    packages=PACKAGES,
    package_dir=PACKAGE_DIR,
    cmdclass={"build_py": BuildWithMachineCode},
    distclass=PlatformDistribution,
)
