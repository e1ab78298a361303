"""Generate ``piano.stl``, the free flyer's body: a grand-piano-like rigid mesh.

FCL's and OMPL's classic rigid-body benchmark moves a piano through a room. Their mesh is
not ours to ship, so this script builds a piano-like one from simple parts that touch but
do not overlap (so the mesh volume is the sum of the parts): a case with a grand piano's
curved, non-convex outline, a keyboard slab in front, three legs and a pedal lyre. About
1.5 m x 1.4 m x 1.0 m, origin at the middle of the case's footprint, z up.

Run: ``python robots/free_flyer/make_piano.py`` (writes piano.stl next to this file; fast).
"""

from pathlib import Path

import numpy as np
import trimesh
from shapely.geometry import Polygon


def piano() -> trimesh.Trimesh:
    # case outline (x across the keyboard, y towards the tail), a grand's bent side
    t = np.linspace(0.0, 1.0, 16)
    bent = np.stack(
        [0.70 - 0.55 * np.sin(np.pi * t) ** 1.5 * (1 - t) - 0.15 * t, 0.15 + 1.15 * t], 1
    )
    outline = np.concatenate(
        [[[-0.70, -0.55], [0.70, -0.55]], [[0.70, 0.15]], bent[1:], [[-0.70, 1.30]]]
    )
    outline[:, 1] -= 0.375  # centre the footprint
    case = trimesh.creation.extrude_polygon(Polygon(outline), height=0.30)
    case.apply_translation([0.0, 0.0, 0.65])
    keys = trimesh.creation.box(extents=[1.30, 0.25, 0.10])
    keys.apply_translation([0.0, -0.55 - 0.375 - 0.125, 0.75])
    parts = [case, keys]
    for x, y in [(-0.60, -0.80), (0.60, -0.80), (-0.30, 0.80)]:
        leg = trimesh.creation.box(extents=[0.10, 0.10, 0.65])
        leg.apply_translation([x, y, 0.325])
        parts.append(leg)
    lyre = trimesh.creation.box(extents=[0.20, 0.06, 0.55])
    lyre.apply_translation([0.0, -0.60, 0.375])
    parts.append(lyre)
    m = trimesh.util.concatenate(parts)
    m.apply_translation([0.0, 0.0, -0.5])  # origin near the middle of the height
    return m


def main() -> int:
    m = piano()
    assert m.is_watertight and m.volume > 0
    out = Path(__file__).with_name("piano.stl")
    m.export(out)
    print(f"wrote {out}: {len(m.vertices)} vertices, {len(m.faces)} faces, {m.volume:.4f} m^3")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
