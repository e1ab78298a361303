"""The wheel's build: setuptools as pyproject.toml declares it, plus the entry points'
machine code compiled for a portable CPU (planning_collision/shipping.py) in the wheel,
which is then tagged for this Python and platform. An editable install ships none (its
first run compiles, or `python -m planning_collision warm-up`); PLANNING_COLLISION_SHIP=0
builds a pure wheel without it."""

import os

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

SHIP = os.environ.get("PLANNING_COLLISION_SHIP", "1") != "0"


class BuildWithMachineCode(build_py):
    def run(self):
        super().run()
        if not SHIP or getattr(self, "editable_mode", False):
            return
        import subprocess
        import sys
        from pathlib import Path

        lib = Path(self.build_lib).resolve()
        out = lib / "planning_collision" / "kernels" / "_compiled"
        env = dict(os.environ, PYTHONPATH=str(lib))
        cmd = [sys.executable, "-m", "planning_collision.shipping", str(out)]
        subprocess.run(cmd, env=env, cwd=str(lib), check=True)


class PlatformDistribution(Distribution):
    def has_ext_modules(self):  # machine code inside: a wheel for this Python and platform
        return SHIP


setup(cmdclass={"build_py": BuildWithMachineCode}, distclass=PlatformDistribution)
