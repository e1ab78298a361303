"""The kernels also run as plain Python (NUMBA_DISABLE_JIT=1) and agree with their compiled
form: a kernel that only works compiled hides its logic from the debugger. The pair queries
and the checker (states, clearance, the three edge methods on the Panda) are run both ways,
each in a subprocess of its own (the switch is read when numba is imported)."""

import json
import math
import os
import subprocess
import sys

import numpy as np
import pytest

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


def _run(disable_jit: bool, script: str = SCRIPT):
    env = dict(os.environ)
    if disable_jit:
        env["NUMBA_DISABLE_JIT"] = "1"
    else:
        env.pop("NUMBA_DISABLE_JIT", None)
    res = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=600
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


CHECKER = r"""
import json, sys, warnings
import numpy as np
from planning_collision import robots
import planning_collision as pc
warnings.simplefilter("ignore", RuntimeWarning)  # numpy scalars' inf - inf, as plain Python
panda = robots.load("panda")
s = pc.Scene()
for centre, extents in [((0.5, 0.0, 0.4), (0.2, 0.6, 0.05)), ((0.45, 0.35, 0.6), (0.1, 0.1, 0.5)),
                        ((-0.4, -0.3, 0.3), (0.3, 0.05, 0.6))]:
    T = np.eye(4); T[:3, 3] = centre; s.add(pc.Box(extents), T)
c = pc.CollisionChecker(panda, s)
Q = panda.random_configurations(24, np.random.default_rng(7))
valid = [bool(c.is_valid(q)) for q in Q]  # (as plain Python, numpy bools)
free = Q[np.array(valid)]
out = {"valid": valid, "clearance": [float(c.clearance(q)) for q in Q[:4]], "edges": []}
for a, b in [(0, 1), (1, 2), (2, 3), (0, 2), (3, 4), (4, 5)]:
    q0 = free[a]
    q1 = q0 + 0.25 * (free[b] - q0) if a < 2 else free[b]
    for m in ("dichotomy", "ca", "discrete"):
        r = c.check_edge(q0, q1, method=m)
        out["edges"].append([m, bool(r.valid), bool(r.certified), r.last_valid_t, r.toc,
                             int(r.n_queries)])
json.dump(out, sys.stdout)
"""


def _same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a):
        return math.isnan(b)
    return a == b


def test_the_checker_gives_the_same_answers_as_plain_python_and_compiled():
    """is_valid, clearance and check_edge (every method) on the Panda among three boxes:
    the compiled kernels and their plain-Python reading agree exactly, verdicts, times and
    query counts alike (the compiled run goes first: it builds the self-pair tables, which
    the plain one then reads from the session's model cache)."""
    pytest.importorskip("planning_collision.robots")
    compiled = _run(disable_jit=False, script=CHECKER)
    plain = _run(disable_jit=True, script=CHECKER)
    assert plain["valid"] == compiled["valid"]
    assert 0 < sum(compiled["valid"]) < len(compiled["valid"])  # both verdicts are asked
    assert plain["clearance"] == compiled["clearance"]
    assert len(plain["edges"]) == len(compiled["edges"]) == 18
    assert {e[1] for e in compiled["edges"]} == {True, False}
    for p, c in zip(plain["edges"], compiled["edges"], strict=True):
        assert all(_same(x, y) for x, y in zip(p, c, strict=True)), (p, c)
