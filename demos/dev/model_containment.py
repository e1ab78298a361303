r"""Do the link models contain their meshes? Vertex-only repair versus the surface cover.

For each mesh link of the chosen robots, the mesh is decomposed once (robot/convexify.py)
and both models are measured against the mesh as stored in the file:

- *vertex*: V-HACD pieces repaired so that every mesh vertex is inside (the model before
  GEOMETRY_VERSION 3);
- *surface*: the same pieces grown until every mesh triangle is inside (today's model).

Per link it prints the piece count, the mesh volume, both model volumes and what the cover
added, the mean hull vertices per piece, and for each model the worst mesh vertex and the
worst of ``--samples`` points sampled on the mesh surface outside the union of pieces
(Euclidean distance, mm; 0 when all are inside within CONTAIN_TOL) with the share of samples
outside. Links whose meshes are all convex enough to be one hull are summed in one line.

Takes seconds for the Panda and the UR5 (the defaults); V-HACD makes the Kinova about a
minute and the xArm7 about 30 s.

    python -m planning_collision.demos.dev.model_containment \
        [--robots panda ur5 kinova xarm7] [--samples 20000]
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def _outside(pieces: list, points: np.ndarray) -> tuple[float, float]:
    """(worst distance outside the union of `pieces` in metres, 0 if none; share outside)."""
    import planning_collision as pc
    from planning_collision.kernels.base.tolerances import CONTAIN_TOL
    from planning_collision.robot.convexify import hull_planes

    viol = np.full(len(points), np.inf)
    for p in pieces:
        eq = hull_planes(p)  # a flat piece (a planar mesh component) gets its polygon's planes
        if len(eq):
            viol = np.minimum(viol, (points @ eq[:, :3].T + eq[:, 3]).max(axis=1))
    out = np.flatnonzero(viol > CONTAIN_TOL)
    if not len(out):
        return 0.0, 0.0
    shapes = [pc.Convex(p) for p in pieces]
    eye = np.eye(4)
    worst = 0.0
    for i in out:
        dot = pc.Convex(points[i][None, :])
        d = min(pc.distance(dot, eye, s, eye).distance for s in shapes)
        worst = max(worst, d)
    return worst, len(out) / len(points)


def _measure_mesh(v, f, hull_ratio, max_pieces, n_samples, seed) -> dict:
    import trimesh

    from planning_collision.robot.convexify import decompose_mesh, pieces_volume

    got = decompose_mesh(v, f, hull_ratio, max_pieces)
    surf, _ = trimesh.sample.sample_surface(
        trimesh.Trimesh(v, f, process=False), n_samples, seed=seed
    )
    row = {
        "pieces": len(got.pieces),
        "mesh": got.mesh_volume,
        "vertex": pieces_volume(got.vertex_pieces),
        "surface": pieces_volume(got.pieces),
    }
    for name, ps in (("vertex", got.vertex_pieces), ("surface", got.pieces)):
        row[f"{name}_verts"] = float(np.mean([len(p) for p in ps]))
        row[f"{name}_vout"] = _outside(ps, v)[0]
        row[f"{name}_sout"], row[f"{name}_sshare"] = _outside(ps, surf)
    return row


def _measure_robot(name: str, n_samples: int, seed: int) -> list[dict]:
    from planning_collision import robots
    from planning_collision.io.urdf import read_urdf
    from planning_collision.robot.geometry import read_collision_mesh

    cfg = robots.config(name)
    data = read_urdf(robots.urdf_path(name))
    rows = []
    for lk in data.links.values():
        meshes = [c for c in lk.collisions if c.kind == "mesh"]
        for k, c in enumerate(meshes):
            v, f = read_collision_mesh(data, lk.name, c)
            row = _measure_mesh(
                v, f, cfg.get("hull_ratio", 1.1), cfg.get("max_pieces", 12), n_samples, seed
            )
            label = lk.name if len(meshes) == 1 else f"{lk.name}[{k}]"
            rows.append(dict(row, robot=name, link=label))
    return rows


def _line(r: dict) -> str:
    add = r["surface"] - r["vertex"]
    return (
        f"{r['robot']:8s} {r['link']:28s} {r['pieces']:4d} {r['mesh'] * 1e6:9.1f} "
        f"{r['vertex'] * 1e6:9.1f} {r['surface'] * 1e6:9.1f} {add * 1e6:+8.2f} "
        f"{100 * add / r['vertex']:+6.2f}% {r['vertex_verts']:5.0f}>{r['surface_verts']:<5.0f}"
        f" | {r['vertex_vout'] * 1e3:6.3f} {r['vertex_sout'] * 1e3:6.3f} "
        f"{100 * r['vertex_sshare']:5.1f}% | {r['surface_vout'] * 1e3:6.3f} "
        f"{r['surface_sout'] * 1e3:6.3f} {100 * r['surface_sshare']:5.1f}%"
    )


def _print_robot(rows: list[dict], seconds: float) -> None:
    split = [r for r in rows if r["pieces"] > 1 or r["vertex"] != r["surface"]]
    hulls = [r for r in rows if r not in split]
    for r in split:
        print(_line(r))
    if hulls:
        worst = max(max(r["surface_vout"], r["surface_sout"]) for r in hulls)
        print(
            f"{rows[0]['robot']:8s} {len(hulls)} meshes are one hull each: mesh "
            f"{sum(r['mesh'] for r in hulls) * 1e6:.1f} cm3, model "
            f"{sum(r['surface'] for r in hulls) * 1e6:.1f} cm3, worst point outside "
            f"{worst * 1e3:.3f} mm"
        )
    v = sum(r["vertex"] for r in rows)
    s = sum(r["surface"] for r in rows)
    m = sum(r["mesh"] for r in rows)
    print(
        f"{rows[0]['robot']:8s} total: mesh {m * 1e6:.1f} cm3, vertex model {v * 1e6:.1f}, "
        f"surface model {s * 1e6:.1f} (+{(s - v) * 1e6:.1f} cm3, {100 * (s - v) / v:+.2f}%); "
        f"worst point outside: vertex model "
        f"{max(max(r['vertex_vout'], r['vertex_sout']) for r in rows) * 1e3:.3f} mm, "
        f"surface model {max(max(r['surface_vout'], r['surface_sout']) for r in rows) * 1e3:.3f}"
        f" mm ({seconds:.1f} s)"
    )


def main(argv=None) -> int:
    from planning_collision import robots

    with_meshes = [n for n in robots.available() if n != "planar_arm"]
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--robots", nargs="+", default=["panda", "ur5"], choices=with_meshes)
    p.add_argument("--samples", type=int, default=20_000, help="surface samples per mesh")
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args(argv)
    print(
        "volumes in cm3; 'added' = surface model - vertex model; verts = mean hull vertices "
        "per piece (vertex>surface); outside: worst vertex mm, worst surface sample mm, "
        "share of samples outside"
    )
    print(
        f"{'robot':8s} {'link':28s} {'pcs':>4s} {'mesh':>9s} {'vertex':>9s} {'surface':>9s} "
        f"{'added':>8s} {'':7s} {'verts':11s} | vertex model outside  | surface model outside"
    )
    for name in a.robots:
        t = time.perf_counter()
        _print_robot(_measure_robot(name, a.samples, a.seed), time.perf_counter() - t)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
