"""Sensed obstacles: the cloud path (cloud_blocks.py, kernels/scene/cloud.py), replacing a cloud
in place, the voxel filter's containment, the oriented-box bounds of the traversal
(kernels/scene/boxes.py), against brute-force numpy distances to every point."""

import threading

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

import planning_collision as pc
from planning_collision.cloud_blocks import CLOUD_LEAF, compile_cloud, voxel_filter
from planning_collision.kernels.scene.boxes import obb_apart, obb_sqgap, query_obb
from planning_collision.kernels.scene.bvh import STACK_SIZE
from planning_collision.testing.naive import point_segment
from planning_collision.testing.sampling import random_rotation


def _T(R=None, t=(0.0, 0.0, 0.0)):
    T = np.eye(4)
    if R is not None:
        T[:3, :3] = R
    T[:3, 3] = t
    return T


def _tree_checks(block, n):
    """Every primitive in exactly one leaf; every node's box holds its children's or its
    primitives' boxes; depth within the traversal's stack."""
    b = block.bvh
    seen = np.zeros(n, int)
    stack = [(0, 1)]
    deepest = 0
    while stack:
        k, d = stack.pop()
        deepest = max(deepest, d)
        if b.count[k] > 0:
            assert b.count[k] <= CLOUD_LEAF
            idx = b.order[b.first[k] : b.first[k] + b.count[k]]
            seen[idx] += 1
            assert (block.prims.lo[idx] >= b.lo[k] - 1e-15).all()
            assert (block.prims.hi[idx] <= b.hi[k] + 1e-15).all()
            continue
        for c in (b.left[k], b.right[k]):
            assert (b.lo[c] >= b.lo[k]).all() and (b.hi[c] <= b.hi[k]).all()
            stack.append((c, d + 1))
    assert (seen == 1).all()
    assert deepest < STACK_SIZE // 2


@pytest.mark.parametrize(
    "points",
    [
        np.zeros((1, 3)),
        np.zeros((37, 3)),  # all equal: split at the middle
        np.c_[np.linspace(0, 1, 200), np.zeros(200), np.zeros(200)],  # a line
        np.random.default_rng(3).normal(size=(2000, 3)),
        np.r_[np.zeros((50, 3)), np.full((50, 3), 1e3)],  # two far clusters
    ],
)
def test_cloud_tree_holds_every_point_once_in_nested_boxes(points):
    T = _T(random_rotation(np.random.default_rng(0)))
    block = compile_cloud(pc.PointCloud(points, 0.01), T)
    _tree_checks(block, points.shape[0])


def test_voxel_grid_cloud_tree_holds_every_cell(rng):
    cells = rng.integers(-20, 20, (500, 3))
    g = pc.VoxelGrid(cells, 0.05)
    block = compile_cloud(g, _T(random_rotation(rng), (0.3, 0.1, -0.2)))
    _tree_checks(block, g.cells.shape[0])


def _cloud_scene(rng, n=3000, r=0.01):
    pts = rng.uniform(-0.5, 0.5, (n, 3)) * (1.0, 1.0, 0.05)  # a slab, like a surface
    T = _T(random_rotation(rng), rng.uniform(-0.2, 0.2, 3))
    s = pc.Scene()
    cid = s.add(pc.PointCloud(pts, r), T, name="cloud")
    world = pts @ T[:3, :3].T + T[:3, 3]
    return s, cid, world


def test_cloud_scene_distances_equal_brute_force_to_every_point(rng):
    s, cid, world = _cloud_scene(rng)
    r = 0.01
    for _ in range(60):
        R = random_rotation(rng)
        T = _T(R, rng.uniform(-0.6, 0.6, 3))
        # a sphere: |c - p| - r - R
        c = T[:3, 3]
        ref = np.linalg.norm(world - c, axis=1).min() - r - 0.05
        got = s.min_distance(pc.Sphere(0.05), T)
        assert got.distance == pytest.approx(ref, abs=1e-9)
        assert got.id == cid
        # a capsule at a slant: the distance to its segment
        a = T[:3, 3] - 0.15 * R[:, 2]
        b = T[:3, 3] + 0.15 * R[:, 2]
        ref = min(np.linalg.norm(point_segment(p, a, b) - p) for p in world) - r - 0.03
        got = s.min_distance(pc.Capsule(0.03, 0.3), T).distance
        assert got == pytest.approx(ref, abs=1e-9)
        assert s.in_collision(pc.Capsule(0.03, 0.3), T) == (ref <= 0.0)


def test_cloud_scene_box_queries_agree_with_the_general_path(rng):
    """The sensor path and the KCD path (the same balls as a compound of spheres) give the
    same distances and verdicts for box queries (GJK against each ball)."""
    s, _, world = _cloud_scene(rng, n=800)
    ref = pc.Scene()
    ref.add([(pc.Sphere(0.01), _T(t=p)) for p in world[:800]])
    for _ in range(40):
        T = _T(random_rotation(rng), rng.uniform(-0.6, 0.6, 3))
        box = pc.Box((0.3, 0.05, 0.1))
        assert s.min_distance(box, T).distance == pytest.approx(
            ref.min_distance(box, T).distance, abs=1e-7
        )
        assert s.in_collision(box, T, 0.01) == ref.in_collision(box, T, 0.01)


def test_replace_keeps_the_id_and_rebuilds_only_the_cloud(rng):
    s = pc.Scene()
    shelf = s.add(pc.Box((0.5, 0.5, 0.02)), _T(t=(0.5, 0, 0.4)), name="shelf")
    cid = s.add(pc.PointCloud(rng.uniform(0, 0.1, (100, 3)), 0.01), name="cam")
    snap = s.snapshot()
    shelf_block = snap.blocks[shelf]
    far = rng.uniform(2.0, 2.1, (200, 3))
    s.update_cloud(cid, far)
    assert s.ids() == [shelf, cid] and s.get(cid).name == "cam"
    assert s.get(cid).shape.radius == 0.01 and s.get(cid).shape.points.shape == (200, 3)
    assert s.snapshot().blocks[shelf] is shelf_block  # the rest is not compiled again
    assert s.version != snap.version and len(snap.blocks[cid].prims) == 100  # old intact
    assert not s.in_collision(pc.Sphere(0.05), _T(t=(0.05, 0.05, 0.05)))
    assert s.in_collision(pc.Sphere(0.05), _T(t=far[0]))
    s.replace(cid, pc.Sphere(0.1), _T(t=(3.0, 0, 0)))
    assert s.get(cid).name == "cam" and s.collide_object(pc.Sphere(0.01), _T(t=(3, 0, 0))) == [cid]


def test_replace_and_update_cloud_refuse_bad_input_by_name(rng):
    s = pc.Scene()
    box = s.add(pc.Box((0.1, 0.1, 0.1)))
    cid = s.add(pc.PointCloud(np.zeros((3, 3)), 0.01))
    v = s.version
    with pytest.raises(KeyError, match="no obstacle with id 7"):
        s.update_cloud(7, np.zeros((2, 3)))
    with pytest.raises(TypeError, match="not a PointCloud"):
        s.update_cloud(box, np.zeros((2, 3)))
    with pytest.raises(ValueError, match="PointCloud.points"):
        s.update_cloud(cid, np.full((2, 3), np.nan))
    with pytest.raises(ValueError, match="PointCloud.points is empty"):
        s.update_cloud(cid, np.zeros((0, 3)))
    with pytest.raises(ValueError, match="pose T"):
        s.replace(cid, pc.Sphere(0.1), np.zeros((4, 4)))
    assert s.version == v  # unchanged


def test_checker_follows_a_cloud_replaced_in_place(rng):
    from planning_collision import robots

    arm = robots.load("planar_arm")
    s = pc.Scene()
    cid = s.add(pc.PointCloud(np.full((5, 3), 50.0), 0.01))
    ch = pc.CollisionChecker(arm, s, self_collision=False)
    q = np.zeros(arm.dof)
    assert ch.is_valid(q)
    s.update_cloud(cid, arm.fk_array(q)[2][None, :3, 3])  # a joint: inside the links
    assert not ch.is_valid(q)
    s.update_cloud(cid, np.full((5, 3), 50.0))
    assert ch.is_valid(q)


def test_queries_overlapping_cloud_updates_answer_for_a_whole_frame(rng):
    """Frames alternate between a cloud around the query (collides) and a far one (free);
    every query from other threads answers for one of the two, never raises."""
    near = rng.uniform(-0.05, 0.05, (5000, 3))
    far = near + 5.0
    s = pc.Scene()
    cid = s.add(pc.PointCloud(near, 0.01))
    stop = threading.Event()
    errors = []

    def query():
        try:
            while not stop.is_set():
                d = s.min_distance(pc.Sphere(0.02), np.eye(4)).distance
                if not (d <= 0.0 or d > 4.0):
                    errors.append(d)
        except Exception as e:  # noqa: BLE001 - any error fails the test below
            errors.append(e)

    ts = [threading.Thread(target=query) for _ in range(2)]
    for t in ts:
        t.start()
    for k in range(20):
        s.update_cloud(cid, far if k % 2 == 0 else near)
    stop.set()
    for t in ts:
        t.join()
    assert errors == []


@given(
    spacing=st.floats(0.005, 0.2),
    radius=st.floats(0.0, 0.05),
    seed=st.integers(0, 2**32 - 1),
)
@example(spacing=0.01, radius=0.0, seed=0)
def test_voxel_filter_holds_every_original_ball(spacing, radius, seed):
    rng = np.random.default_rng(seed)
    p = rng.normal(size=(300, 3)) * 0.3
    c, r2 = voxel_filter(p, spacing, radius)
    assert c.shape[0] <= p.shape[0] and r2 == pytest.approx(radius + spacing * np.sqrt(3) / 2)
    # ball(p, radius) within ball(c, r2) for some thinned point c: |p - c| + radius <= r2
    d = np.linalg.norm(p[:, None, :] - c[None, :, :], axis=2).min(axis=1)
    assert (d + radius <= r2 + 1e-12).all()
    # one point per occupied cell
    assert np.unique(np.floor(c / spacing), axis=0).shape[0] == c.shape[0]


def test_voxel_filtered_cloud_never_frees_what_the_original_blocks(rng):
    p = rng.uniform(-0.3, 0.3, (4000, 3)) * (1, 1, 0.1)
    c, r2 = voxel_filter(p, 0.03, 0.005)
    orig, thin = pc.Scene(), pc.Scene()
    orig.add(pc.PointCloud(p, 0.005))
    thin.add(pc.PointCloud(c, r2))
    for _ in range(300):
        T = _T(random_rotation(rng), rng.uniform(-0.4, 0.4, 3))
        shape = pc.Capsule(0.01, 0.1)
        if orig.in_collision(shape, T):
            assert thin.in_collision(shape, T)
        assert thin.min_distance(shape, T).distance <= orig.min_distance(shape, T).distance + 1e-12


def test_voxel_filter_refuses_bad_input_by_name():
    with pytest.raises(ValueError, match="spacing"):
        voxel_filter(np.zeros((2, 3)), 0.0)
    with pytest.raises(ValueError, match="points"):
        voxel_filter(np.zeros((2, 2)), 0.1)
    with pytest.raises(ValueError, match="radius"):
        voxel_filter(np.zeros((2, 3)), 0.1, -1.0)


@given(
    seed=st.integers(0, 2**32 - 1),
    size=st.floats(0.001, 1.0),
    spread=st.floats(0.0, 2.0),
)
def test_oriented_box_bounds_never_exceed_the_true_distance(seed, size, spread):
    """obb_sqgap is a lower bound on the squared distance from a box to any point inside
    the oriented box; obb_apart only says apart when they are more than margin apart
    along an axis (checked on sampled points of both, which are at least that far)."""
    rng = np.random.default_rng(seed)
    half = rng.uniform(0.0, size, 3)
    aabb = np.r_[-half, half][None] + rng.uniform(-0.1, 0.1, 3).repeat(2)[None] * 0
    T = _T(random_rotation(rng), rng.uniform(-spread, spread, 3))
    ob = query_obb(aabb, T[None], 0, True)
    lo = rng.uniform(-spread, spread, 3)
    box_lo, box_hi = lo[None], (lo + rng.uniform(0.0, size, 3))[None]
    s = obb_sqgap(box_lo, box_hi, 0, ob)
    inside_q = (rng.uniform(-1, 1, (200, 3)) * half) @ T[:3, :3].T + T[:3, 3]
    inside_b = box_lo + rng.uniform(0, 1, (200, 3)) * (box_hi - box_lo)
    d = np.linalg.norm(inside_q[:, None] - inside_b[None], axis=2).min()
    assert np.sqrt(s) <= d + 1e-12
    for margin in (0.0, 0.05):
        if obb_apart(box_lo, box_hi, 0, ob, margin):
            assert d > margin


def test_no_edge_certified_free_in_a_cloud_scene_collides_under_a_dense_check():
    """The Panda among a surface cloud of a shelf (its boards' surfaces, 20,000 points):
    every edge `dichotomy` or `ca` calls free is free at 1,000 states checked in the same
    balls built by the general KCD path (a compound of spheres: other trees, other
    grouping); edges from an RRT and edges placed across the cloud."""
    from planning_collision import robots
    from planning_collision.testing.edges import dense_first_collision, rrt_edges
    from planning_collision.testing.surface import surface_points

    panda = robots.load(
        "panda", fixed_joints={"panda_finger_joint1": 0.04, "panda_finger_joint2": 0.04}
    )
    rng = np.random.default_rng(11)
    shelf = pc.Scene()
    for k, z in enumerate((0.3, 0.6)):
        shelf.add(pc.Box((0.3, 0.8, 0.02)), _T(t=(0.6, 0.0, z)), f"board {k}")
    shelf.add(pc.Box((0.3, 0.02, 0.6)), _T(t=(0.6, 0.4, 0.3)), "side")
    pts = surface_points(shelf.records(), 20_000, rng)
    cloud = pc.Scene()
    cloud.add(pc.PointCloud(pts, 0.004))
    general = pc.Scene()
    general.add([(pc.Sphere(0.004), _T(t=p)) for p in pts])
    checker = pc.CollisionChecker(panda, cloud)
    oracle = pc.CollisionChecker(panda, general, self_tables=False)
    edges = rrt_edges(checker, rng, 60)
    # from valid states to states near the boards: motions that cross or graze the cloud
    near = [q for q in panda.random_configurations(400, rng) if checker.clearance(q) < 0.05]
    starts = [a for a, _ in edges]
    edges += [(starts[k % len(starts)], q) for k, q in enumerate(near[:60])]
    for method in ("dichotomy", "ca"):
        res = [checker.check_edge(a, b, method=method) for a, b in edges]
        free = [k for k, r in enumerate(res) if r.valid]
        bad = [k for k in free if dense_first_collision(oracle, *edges[k], 1000)[0] is not None]
        assert bad == [], method
        assert len(free) >= 10 and len(free) < len(edges)  # both answers occur
