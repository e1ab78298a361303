r"""Scene broadphase benchmark: a moving link against a factory hall (KCD's tables).

Side by side, in one run, on the same primitives of `demos/bench/factory_scene.py` (~8,900
primitives by default), for link-sized query shapes (a Panda-like capsule, a box, a rounded
convex):

  (a) the KCD hierarchy (Scene: per-object groups, group BVHs, top BVH),
  (b) one flat BVH over all primitives (no grouping),
  (c) no broadphase: the query against every primitive (compiled loop),
  (d) coal's DynamicAABBTreeCollisionManager (C++; one Python call per query; meshes as
      one BVHModelOBBRSS each, the rest as coal primitives),

for the boolean query ("does the link hit anything?", first hit returns) and the nearest-
obstacle distance; at random poses, then at poses along short motions in order, as an edge
check visits them (successive queries then find much of what they read in cache; at random
poses most of a query's time is cache misses). (a)-(c) run as compiled batch loops over
the poses; (d) is timed per call from Python, as a user calls it. Figures are medians over
`--repeats` runs (the runs of (a), (b) and the other compiled variants interleaved),
microseconds per query; JIT warm-up (first call, compile or cache load) is reported apart.
Then build time and memory for (a) with and without the KCD detail filter (`--min-size`),
(b) and (d), the query times with the filter (and how many more poses it calls colliding),
and a check that (a), (b), (c) and (d) agree on every query.

(b) is median-split (planning_collision.bvh.build_bvh); (a)'s trees are SAH-built. For
reference, each shape also prints (b') = (b) built by (a)'s SAH builder, which separates what
the builder gains from what the KCD hierarchy gains.

    python -m planning_collision.demos.bench.scene \
        [--queries 2000] [--motions 100] [--steps 20] [--repeats 5]
                                [--seed 0] [--min-size 0.1]

Takes ~40 s warm (numba cache present), ~2 min the first time (compiles the kernels).

Reading the agreement line: (a), (b) and (c) run the same pair kernels and must agree
exactly. coal's verdicts agree wherever the pair is not touching; coal's *manager* distance
is not always the minimum (for some poses it reports a farther obstacle, e.g. 0.49 m where
coal's own pairwise query on the nearest part gives our 0.48 m), so its distance column does
less work than an exact nearest-obstacle query.
"""

from __future__ import annotations

import argparse
import time
from functools import partial

import numpy as np

import planning_collision as pc
from planning_collision.bvh import build_bvh, sah_bvh_forest
from planning_collision.demos.bench.factory_scene import HALL, factory_objects
from planning_collision.kcd import ObjectBlock, flatten
from planning_collision.kernels.base.layout import OUT_SIZE
from planning_collision.kernels.scene.bvh import FlatBVH
from planning_collision.kernels.scene.scene_baseline import (
    all_pairs_collide_batch,
    all_pairs_min_distance_batch,
)
from planning_collision.kernels.scene.scene_calls import (
    scene_collide_batch,
    scene_min_distance_batch,
)
from planning_collision.kernels.scene.scratch import new_scratch
from planning_collision.kernels.scene.traversal import FlatScene
from planning_collision.primitives import concat_primitives, query_block
from planning_collision.scene import Scene
from planning_collision.testing.sampling import random_rotations

_NO_SEEDS = np.zeros((0, 2), np.int32)


def flat_bvh_scene(scene: Scene, sah: bool = False) -> FlatScene:
    """All of `scene`'s primitives under ONE binary BVH, as one object, without KCD
    grouping: baseline (b). Answers boolean and nearest-distance queries like the scene
    (object slot 0 stands for "some obstacle"). The BVH is median-split
    (planning_collision.bvh.build_bvh), or with ``sah=True`` built by the SAH builder of
    the KCD groups (planning_collision.bvh.sah_bvh_forest)."""
    prims = concat_primitives(b.prims for b in scene.blocks())
    bounded = np.all(np.isfinite(prims.lo), axis=1) & np.all(np.isfinite(prims.hi), axis=1)
    bidx = np.flatnonzero(bounded)
    unb = np.flatnonzero(~bounded).astype(np.int32)
    z32 = np.zeros(0, np.int32)
    e3 = np.zeros((0, 3))
    if bidx.size == 0:
        bvh = FlatBVH(e3, e3.copy(), z32, z32, z32, z32, z32)
        return flatten([ObjectBlock(prims, unb, bvh, e3, e3.copy(), z32, z32, z32, z32, 0)], None)
    if sah:
        bvh = sah_bvh_forest(prims.lo[bidx], prims.hi[bidx], np.zeros(bidx.size, np.int64))[0]
    else:
        bvh = build_bvh(prims.lo[bidx], prims.hi[bidx])
    bvh = bvh._replace(order=bidx[bvh.order].astype(np.int32))
    zero = np.zeros(1, np.int32)
    root = ObjectBlock(prims, unb, bvh, bvh.lo[:1], bvh.hi[:1], zero, z32, zero, zero, 0)
    return flatten([root], None)


def _to_coal(shape):
    from planning_collision.testing.peers import to_coal

    geom, T = to_coal(shape, np.eye(4))
    assert np.array_equal(T, np.eye(4))  # no stand-in posed differently in this scene
    return geom


def link_queries(rng, scene_flat, n):
    """Half uniform in the hall, half within 0.4 m of a random primitive's box centre (the
    places a planner's links actually probe)."""
    T = np.tile(np.eye(4), (n, 1, 1))
    T[:, :3, :3] = random_rotations(rng, n)
    half = n // 2
    T[:half, :3, 3] = rng.uniform([0, 0, 0], HALL, (half, 3))
    c = 0.5 * (scene_flat.plo + scene_flat.phi)
    pick = rng.integers(0, c.shape[0], n - half)
    T[half:, :3, 3] = c[pick] + rng.uniform(-0.4, 0.4, (n - half, 3))
    return T


def _axis_angle(axis, angle):
    """Rotation matrices (n, 3, 3) about unit axes (n, 3) by angles (n,) (Rodrigues)."""
    x, y, z = axis.T
    c, s = np.cos(angle), np.sin(angle)
    C = 1.0 - c
    return np.stack(
        [
            np.stack([c + x * x * C, x * y * C - z * s, x * z * C + y * s], 1),
            np.stack([y * x * C + z * s, c + y * y * C, y * z * C - x * s], 1),
            np.stack([z * x * C - y * s, z * y * C + x * s, c + z * z * C], 1),
        ],
        1,
    )


def motion_queries(rng, scene_flat, n_motions, steps, length=1.0):
    """Poses along straight motions, in the order an edge check visits them: starts drawn
    as `link_queries` draws poses, each moved `length` m along a random direction while
    turning by up to 90 degrees about a random axis, in `steps` evenly spaced poses.
    Successive queries probe the same place, as a planner's do."""
    T0 = link_queries(rng, scene_flat, n_motions)
    d = rng.normal(size=(n_motions, 3))
    d /= np.linalg.norm(d, axis=1, keepdims=True)
    ax = rng.normal(size=(n_motions, 3))
    ax /= np.linalg.norm(ax, axis=1, keepdims=True)
    ang = rng.uniform(0.0, 0.5 * np.pi, n_motions)
    t = np.linspace(0.0, 1.0, steps)
    T = np.repeat(T0, steps, axis=0)
    tt = np.tile(t, n_motions)
    T[:, :3, 3] += np.repeat(d, steps, axis=0) * (length * tt)[:, None]
    T[:, :3, :3] = T[:, :3, :3] @ _axis_angle(
        np.repeat(ax, steps, axis=0), np.repeat(ang, steps) * tt
    )
    return T


def _median_time(fn, repeats):
    ts = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return float(np.median(ts))


def _nbytes(flat):
    def walk(x):
        if isinstance(x, np.ndarray):
            return x.nbytes
        return sum(walk(y) for y in x)

    return walk(flat)


# ---------------------------------------------------------------------------------------
# coal


def _tf(T):
    import coal

    return coal.Transform3s(np.ascontiguousarray(T[:3, :3]), np.ascontiguousarray(T[:3, 3]))


def coal_manager(objects):
    """A DynamicAABBTreeCollisionManager over every part of every object."""
    import coal

    mgr = coal.DynamicAABBTreeCollisionManager()
    keep = []
    for shape, T, _ in objects:
        parts = shape if isinstance(shape, (list, tuple)) else [(shape, np.eye(4))]
        for s, Tl in parts:
            o = coal.CollisionObject(_to_coal(s), _tf(T @ Tl))
            o.computeAABB()
            keep.append(o)
    for o in keep:
        mgr.registerObject(o)
    mgr.setup()
    return mgr, keep


def coal_queries(mgr, qshape, poses):
    """(hit per pose, distance per pose), one manager call per pose and query kind."""
    import coal

    obj = coal.CollisionObject(_to_coal(qshape), _tf(np.eye(4)))
    ccb = coal.CollisionCallBackDefault()
    dcb = coal.DistanceCallBackDefault()
    tfs = [_tf(T) for T in poses]

    def collide():
        out = np.empty(len(tfs), bool)
        for i, tf in enumerate(tfs):
            obj.setTransform(tf)
            obj.computeAABB()  # setTransform does not refresh the AABB
            ccb.data.result.clear()
            ccb.data.done = False
            mgr.collide(obj, ccb)
            out[i] = ccb.data.result.isCollision()
        return out

    def distance():
        out = np.empty(len(tfs))
        for i, tf in enumerate(tfs):
            obj.setTransform(tf)
            obj.computeAABB()
            dcb.data.result.clear()
            dcb.data.done = False
            mgr.distance(obj, dcb)
            out[i] = dcb.data.result.min_distance
        return out

    return collide, distance


# ---------------------------------------------------------------------------------------


def _query_rows(label, q, poses, nc, flats, mgr, min_size, repeats, scratch, warm) -> bool:
    """Time (a), (b), (b'), the filtered (a) and, on the first nc poses, (c), and (d) when
    mgr is given, for query shape q at poses; print the rows; return whether all agree."""
    flat = flats["a"]
    use_coal = mgr is not None
    B = poses.shape[0]
    qb = [query_block(q, T) for T in poses]
    qtab = qb[0].tab
    qlo = np.ascontiguousarray(np.concatenate([b.lo for b in qb]))
    qhi = np.ascontiguousarray(np.concatenate([b.hi for b in qb]))
    poses = np.ascontiguousarray(poses)
    res = {}
    times = {}
    fns = {}
    for key, f in flats.items():
        oi, od = np.empty(B, np.int32), np.empty(B)
        sc = scratch[key]  # the batches leave its hit and best rows as they found them
        col = partial(scene_collide_batch, f, qtab, poses, qlo, qhi, 0.0, sc, _NO_SEEDS, oi)
        dist = partial(
            scene_min_distance_batch, f, qtab, poses, qlo, qhi, np.inf, sc, _NO_SEEDS, od
        )
        for kind, fn in (("collide", col), ("distance", dist)):
            t0 = time.perf_counter()
            fn()
            warm[(key, kind)] = max(warm.get((key, kind), 0.0), time.perf_counter() - t0)
            fns[(key, kind)] = fn
        res[key] = (oi >= 0, od.copy())
    # the compiled engines' runs interleaved (a, b, ..., a, b, ...): a load change on
    # the machine then hits all of them alike instead of whichever ran during it; each
    # timed run follows an untimed one of the same engine (caches warm, as in a loop)
    ts = {k: [] for k in fns}
    for _ in range(repeats):
        for k, fn in fns.items():
            fn()
            ts[k].append(_median_time(fn, 1))
    for k, v in ts.items():
        times[k] = float(np.median(v)) / B
    oc_i, oc_d = np.empty(nc, np.int64), np.empty(nc)
    sub = np.ascontiguousarray(poses[:nc])
    ws, tmp = scratch["a"].pair, np.zeros(OUT_SIZE)
    ccol = partial(all_pairs_collide_batch, flat.tab, flat.poses, qtab, sub, 0.0, ws, oc_i)
    cdist = partial(all_pairs_min_distance_batch, flat.tab, flat.poses, qtab, sub, ws, tmp, oc_d)
    for kind, fn in (("collide", ccol), ("distance", cdist)):
        if nc == 0:  # (c) skipped
            times[("c", kind)] = np.nan
            continue
        t0 = time.perf_counter()
        fn()
        warm[("c", kind)] = max(warm.get(("c", kind), 0.0), time.perf_counter() - t0)
        times[("c", kind)] = _median_time(fn, max(1, min(repeats, 3))) / nc
    res["c"] = (oc_i >= 0, oc_d.copy())
    if use_coal:
        ccol_d, cdist_d = coal_queries(mgr, q, poses)
        for kind, fn in (("collide", ccol_d), ("distance", cdist_d)):
            times[("d", kind)] = _median_time(fn, repeats) / B
        res["d"] = (ccol_d(), cdist_d())

    for kind in ("collide", "distance"):
        a = times[("a", kind)] * 1e6
        b_, c_ = times[("b", kind)] * 1e6, times[("c", kind)] * 1e6
        row = f"  {label:<20s} {kind:<9s} {a:9.2f} {b_:9.2f} " + (
            f"{c_:9.1f}" if nc else f"{'-':>9s}"
        )
        if use_coal:
            row += f" {times[('d', kind)] * 1e6:9.2f}"
        row += (f" {c_ / a:7.0f}x" if nc else f" {'-':>8s}") + f" {b_ / a:5.2f}x"
        if use_coal:
            row += f" {times[('d', kind)] * 1e6 / a:5.2f}x"
        print(row)

    # agreement: (a) vs (b) vs (c) exactly (same kernels); coal where not touching
    ha, da = res["a"]
    hb, db = res["b"]
    hc, dc = res["c"]
    hs, ds = res["s"]
    ok = np.array_equal(ha, hb) and np.array_equal(ha[:nc], hc) and np.array_equal(ha, hs)
    # verdicts exactly; distances to 1e-8 m: GJK starts from the direction the pair kept
    # from its last query (warm start), which depends on the order a method visits pairs,
    # and stops within its tolerance (a few 1e-9 m apart between methods on hulls)
    ok &= bool(np.allclose(da, db, atol=1e-8) and np.allclose(da[:nc], dc, atol=1e-8))
    ok &= bool(np.allclose(da, ds, atol=1e-8))
    msg = (
        f"    agreement: {'(a)=(b)=(c)' if nc else '(a)=(b)'} {'yes' if ok else 'NO'}; "
        f"{int(ha.sum())}/{B} poses in collision"
    )
    if not ok:
        fin = np.isfinite(da)
        msg += (
            f" (verdicts differ on {int((ha != hb).sum())} + {int((ha != hs).sum())} poses; "
            f"distances by up to {np.abs(da - db)[fin].max():.2g} / "
            f"{np.abs(da - ds)[fin].max():.2g} m)"
        )
    if use_coal:
        hd, dd = res["d"]
        clear = np.abs(da) > 1e-6
        agree_b = int((hd[clear] == ha[clear]).sum())
        sep = da > 1e-6
        # coal's default distance GJK stops at a relative 1e-6 criterion
        agree_d = int((np.abs(dd[sep] - da[sep]) <= 1e-5 + 1e-5 * da[sep]).sum())
        err = float(np.abs(dd[sep] - da[sep]).max()) if sep.any() else 0.0
        msg += (
            f"; coal verdicts {agree_b}/{int(clear.sum())}, coal separated distances "
            f"within 1e-5 m {agree_d}/{int(sep.sum())} (max diff {err:.2g} m)"
        )
        ok &= agree_b == int(clear.sum())
    print(msg)
    # the detail filter: conservative (only adds collisions, only lowers distances)
    hf, df = res["f"]
    conservative = bool(np.all(hf >= ha) and np.all(df <= da + 1e-9))
    print(
        f"    detail filter min_size={min_size:g}: collide "
        f"{times[('f', 'collide')] * 1e6:.2f} us, distance "
        f"{times[('f', 'distance')] * 1e6:.2f} us; {int(hf.sum() - ha.sum())} more poses in "
        f"collision; conservative {'yes' if conservative else 'NO'}"
    )
    ok &= conservative
    print(
        f"    (b') flat BVH built by the SAH builder of the KCD groups (reference): "
        f"collide {times[('s', 'collide')] * 1e6:.2f} us, distance "
        f"{times[('s', 'distance')] * 1e6:.2f} us"
    )
    return bool(ok)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--queries", type=int, default=2000, help="poses per query shape")
    ap.add_argument("--repeats", type=int, default=5, help="timed runs; medians reported")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--scale", type=float, default=1.0, help="factory size (1.0: ~8,900 primitives)"
    )
    ap.add_argument("--min-size", type=float, default=0.1, help="detail filter v, m")
    ap.add_argument("--no-coal", action="store_true", help="skip (d)")
    ap.add_argument(
        "--all-pairs-queries",
        type=int,
        default=200,
        help="poses for (c), which is slow; its figure is per query (0 skips (c))",
    )
    ap.add_argument(
        "--motions", type=int, default=100, help="motions per shape in the second set (0 skips)"
    )
    ap.add_argument("--steps", type=int, default=20, help="poses per motion")
    args = ap.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    use_coal = not args.no_coal
    if use_coal:
        try:
            import coal  # noqa: F401
        except ImportError:
            print("coal not installed (pip install coal): skipping (d)")
            use_coal = False

    objs = factory_objects(args.seed, args.scale)

    # ---- build: (a) KCD with and without the detail filter, (b) flat BVH, (d) coal
    builds = {}
    t0 = time.perf_counter()
    scene = Scene()
    for s, T, name in objs:
        scene.add(s, T, name)
    flat = scene.build()
    builds["(a) KCD"] = (time.perf_counter() - t0, _nbytes(flat), scene.stats())
    t0 = time.perf_counter()
    scene_f = Scene(min_size=args.min_size)
    for s, T, name in objs:
        scene_f.add(s, T, name)
    flat_f = scene_f.build()
    builds[f"(a) KCD, min_size={args.min_size:g}"] = (
        time.perf_counter() - t0,
        _nbytes(flat_f),
        scene_f.stats(),
    )
    t0 = time.perf_counter()
    flat_b = flat_bvh_scene(scene)
    builds["(b) flat BVH (from compiled primitives)"] = (
        time.perf_counter() - t0,
        _nbytes(flat_b),
        None,
    )
    # for reference only: (b) built by the SAH builder the KCD groups use ((b) and the
    # table stay median-split); says how much of (a) vs (b) is the builder
    t0 = time.perf_counter()
    flat_s = flat_bvh_scene(scene, sah=True)
    builds["(b') flat BVH, SAH-built (reference)"] = (
        time.perf_counter() - t0,
        _nbytes(flat_s),
        None,
    )
    if use_coal:
        t0 = time.perf_counter()
        mgr, _keep = coal_manager(objs)
        builds["(d) coal DynamicAABBTree"] = (time.perf_counter() - t0, None, None)

    st = builds["(a) KCD"][2]
    print(
        f"factory seed={args.seed}: {st['objects']} objects, {st['primitives']} primitives, "
        f"{st['groups']} KCD groups, {st['kcd_nodes']} KCD nodes, "
        f"{st['bvh_nodes']} group-BVH nodes"
    )
    print("\nbuild" + " " * 40 + "time [s]   arrays [MB]   primitives replaced")
    for k, (t, b, s) in builds.items():
        mb = f"{b / 1e6:10.2f}" if b is not None else "         -"
        rep = f"{s['replaced_by_detail_filter']:>8d}" if s is not None else "       -"
        print(f"  {k:<42s} {t:8.3f}   {mb}   {rep}")

    # ---- queries
    shapes = {
        "capsule r6cm L30cm": pc.Capsule(0.06, 0.30),
        "box 10x10x30cm": pc.Box((0.10, 0.10, 0.30)),
        "convex 20 pts": pc.Convex(rng.normal(size=(20, 3)) * np.array([0.05, 0.05, 0.12])),
    }
    flats = {"a": flat, "b": flat_b, "f": flat_f, "s": flat_s}
    scratch = {k: new_scratch(int(f.n_obj[0]), 1) for k, f in flats.items()}
    header = f"  {'shape':<20s} {'query':<9s} {'(a) KCD':>9s} {'(b) BVH':>9s} {'(c) all':>9s}"
    header += f" {'(d) coal':>9s}" if use_coal else ""
    header += f" {'c/a':>7s} {'b/a':>6s}" + (f" {'d/a':>6s}" if use_coal else "")
    warm = {}
    all_ok = True
    run = partial(
        _query_rows,
        flats=flats,
        mgr=mgr if use_coal else None,
        min_size=args.min_size,
        repeats=args.repeats,
        scratch=scratch,
        warm=warm,
    )
    print(
        f"\nqueries: {args.queries} poses per shape (half uniform in the hall, half near "
        f"obstacles); median of {args.repeats} runs; microseconds per query"
    )
    print(header)
    for label, q in shapes.items():
        poses = link_queries(rng, flat, args.queries)
        all_ok &= run(label, q, poses, min(args.all_pairs_queries, poses.shape[0]))
    if args.motions > 0:
        print(
            f"\nqueries along motions: {args.motions} straight 1 m motions per shape (turning "
            f"up to 90 deg), {args.steps} poses each, in order (as an edge check visits "
            f"them); median of {args.repeats} runs; microseconds per query; (c) is not rerun"
        )
        print(header)
        for label, q in shapes.items():
            poses = motion_queries(rng, flat, args.motions, args.steps)
            all_ok &= run(label, q, poses, 0)

    print(
        "\nJIT warm-up (first call of each kernel, incl. compile or cache load), seconds: "
        + ", ".join(f"{k[0]}/{k[1]} {v:.2f}" for k, v in sorted(warm.items()))
    )
    return 0 if all_ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
