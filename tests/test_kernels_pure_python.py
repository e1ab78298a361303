"""The pair kernels also run as plain Python (NUMBA_DISABLE_JIT=1) and agree
with their compiled form: coverage is measured that way, and a kernel that only works
compiled hides its logic from the debugger."""

import json
import os
import subprocess
import sys

import numpy as np

SCRIPT = r"""
import json, sys
import numpy as np
import planning_collision as pc
rng = np.random.default_rng(3)
shapes = [pc.Sphere(0.1), pc.Capsule(0.05, 0.3), pc.Box((0.2, 0.1, 0.3)),
          pc.Cylinder(0.1, 0.3), pc.Cone(0.1, 0.3), pc.Convex(rng.normal(size=(60, 3)) * 0.1),
          pc.Halfspace((0, 0, 1), 0.0)]
out = []
for i, a in enumerate(shapes):
    for j, b in enumerate(shapes):
        for k in range(3):
            Ta = np.eye(4); Tb = np.eye(4)
            Ta[:3, 3] = rng.uniform(-0.15, 0.15, 3)
            q = rng.normal(size=4); q /= np.linalg.norm(q); x, y, z, w = q
            Tb[:3, :3] = [[1-2*(y*y+z*z), 2*(x*y-z*w), 2*(x*z+y*w)],
                          [2*(x*y+z*w), 1-2*(x*x+z*z), 2*(y*z-x*w)],
                          [2*(x*z-y*w), 2*(y*z+x*w), 1-2*(x*x+y*y)]]
            Tb[:3, 3] = rng.uniform(-0.15, 0.15, 3)
            d = pc.distance(a, Ta, b, Tb)
            out.append([i, j, d.distance, pc.collide(a, Ta, b, Tb), *d.normal.tolist()])
json.dump(out, sys.stdout)
"""


def _run(disable_jit: bool):
    env = dict(os.environ)
    if disable_jit:
        env["NUMBA_DISABLE_JIT"] = "1"
    else:
        env.pop("NUMBA_DISABLE_JIT", None)
    res = subprocess.run(
        [sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=600
    )
    assert res.returncode == 0, res.stderr[-2000:]
    return json.loads(res.stdout)


def test_pair_queries_give_the_same_answers_as_plain_python_and_compiled():
    plain = _run(disable_jit=True)
    compiled = _run(disable_jit=False)
    assert len(plain) == len(compiled) == 7 * 7 * 3
    for p, c in zip(plain, compiled, strict=True):
        assert p[:2] == c[:2]
        if np.isinf(c[2]):
            assert p[2] == c[2]
            continue
        assert abs(p[2] - c[2]) <= 1e-9, (p, c)
        assert p[3] == c[3], (p, c)
