"""V-HACD (vhacdx) in a child process.

vhacdx holds the GIL for its whole run: 5-15 s for one non-convex link mesh on this 2-core
machine, whatever its triangle count (the SO-101's 54,000-triangle wrist and a 5,700-triangle
simplification of it both took 13 s). Run in the building process, it silenced every other
thread, the build's progress notices (robot/progress.py) included. In a child process
(``python -c``, importing only numpy and vhacdx: ~0.2 s) the parent waits with the GIL
free. The pieces are what trimesh's ``Trimesh.convex_decomposition(maxConvexHulls=k)``
gives in process: the same call with the same arguments, each piece made a ``Trimesh`` the
same way.
"""

from __future__ import annotations

import io
import subprocess
import sys

import numpy as np

__all__ = ["convex_decomposition"]

# The child: reads an .npz (v, f, k) on stdin, writes the pieces as an .npz on stdout.
_CHILD = """
import io, sys
import numpy as np
from vhacdx import compute_vhacd
z = np.load(io.BytesIO(sys.stdin.buffer.read()))
f = z["f"]
vtk = np.column_stack((np.full(len(f), 3, np.int64), f)).ravel().astype(np.uint32)
out = compute_vhacd(z["v"], vtk, maxConvexHulls=int(z["k"]))
parts = {}
for i, (pv, pf) in enumerate(out):
    parts[f"v{i}"], parts[f"f{i}"] = pv, pf
buf = io.BytesIO()
np.savez(buf, n=len(out), **parts)
sys.stdout.buffer.write(buf.getvalue())
"""


def _in_process(vertices, faces, max_pieces: int) -> list:
    from vhacdx import compute_vhacd

    vtk = np.column_stack((np.full(len(faces), 3, np.int64), faces)).ravel().astype(np.uint32)
    return list(compute_vhacd(vertices, vtk, maxConvexHulls=int(max_pieces)))


def _in_child(vertices, faces, max_pieces: int) -> list:
    buf = io.BytesIO()
    np.savez(buf, v=vertices, f=faces, k=int(max_pieces))
    r = subprocess.run(
        [sys.executable, "-c", _CHILD], input=buf.getvalue(), capture_output=True, check=False
    )
    err = r.stderr.decode(errors="replace")
    if r.returncode != 0:
        if "No module named 'vhacdx'" in err:
            raise ImportError("No module named 'vhacdx'")
        raise RuntimeError(f"V-HACD's child process failed ({r.returncode}): {err[-2000:]}")
    with np.load(io.BytesIO(r.stdout)) as z:
        return [(z[f"v{i}"], z[f"f{i}"]) for i in range(int(z["n"]))]


def convex_decomposition(mesh, max_pieces: int) -> list:
    """V-HACD pieces of `mesh` (a trimesh.Trimesh), at most `max_pieces`, as a list of
    trimesh.Trimesh, computed in a child process (module doc; in this process when Python
    cannot start one: no ``sys.executable``). ImportError without vhacdx."""
    import trimesh

    v = np.ascontiguousarray(mesh.vertices, np.float64)
    f = np.ascontiguousarray(mesh.faces, np.int64)
    run = _in_child if sys.executable else _in_process
    return [trimesh.Trimesh(vertices=pv, faces=pf) for pv, pf in run(v, f, max_pieces)]
