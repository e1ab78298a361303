"""Scene: the object API, KCD grouping, BVH invariants, bad input (oracle in test_scene_oracle)."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
import trimesh
from hypothesis import given
from hypothesis import strategies as st
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

import planning_collision as pc
from planning_collision.bvh import build_bvh, build_bvh_forest, sah_bvh_forest
from planning_collision.geometry.clouds import PointCloud, VoxelGrid
from planning_collision.kernels.scene.bvh import (
    SAH_MAX_DEPTH,
    STACK_SIZE,
    overlap_components,
    wide_tree,
)
from planning_collision.primitives import detail_filter, primitives, query_block
from planning_collision.scene import Scene
from planning_collision.testing.sampling import random_pose


def _T(x=0.0, y=0.0, z=0.0):
    T = np.eye(4)
    T[:3, 3] = (x, y, z)
    return T


def random_boxes(rng, n, spread=5.0, size=0.1):
    c = rng.uniform(-spread, spread, (n, 3))
    h = rng.uniform(0.1 * size, size, (n, 3))
    return c - h, c + h


# ---------------------------------------------------------------------------------------
# BVH build


def check_tree(bvh, root, lo, hi, members):
    """Every member reached exactly once; every box contains what is below it."""
    seen = []
    stack = [root]
    depth = {root: 0}
    while stack:
        nd = stack.pop()
        if bvh.count[nd] > 0:
            ps = bvh.order[bvh.first[nd] : bvh.first[nd] + bvh.count[nd]]
            assert np.all(bvh.lo[nd] <= lo[ps]) and np.all(bvh.hi[nd] >= hi[ps])
            seen += ps.tolist()
        else:
            for c in (bvh.left[nd], bvh.right[nd]):
                assert np.all(bvh.lo[nd] <= bvh.lo[c]) and np.all(bvh.hi[nd] >= bvh.hi[c])
                depth[c] = depth[nd] + 1
                stack.append(c)
    assert sorted(seen) == sorted(members)
    return max(depth.values())


@pytest.mark.parametrize("n", [1, 2, 4, 5, 17, 1000])
def test_bvh_holds_every_box_once_and_boxes_nest(n, rng):
    lo, hi = random_boxes(rng, n)
    bvh = build_bvh(lo, hi)
    depth = check_tree(bvh, 0, lo, hi, list(range(n)))
    assert depth <= int(np.ceil(np.log2(max(n, 1)))) + 1  # median split: balanced
    assert np.all(bvh.count[bvh.left >= 0] == 0)  # internal nodes have no primitives


def test_bvh_forest_has_one_tree_per_segment(rng):
    lo, hi = random_boxes(rng, 500)
    seg = rng.integers(0, 7, 500)
    bvh, roots = build_bvh_forest(lo, hi, seg)
    assert roots.size == 7
    for s, r in enumerate(roots):
        check_tree(bvh, r, lo, hi, np.flatnonzero(seg == s).tolist())


@pytest.mark.parametrize("n", [1, 2, 5, 17, 500])
def test_sah_forest_has_one_tree_per_segment_with_small_leaves(n, rng):
    lo, hi = random_boxes(rng, n)
    seg = rng.integers(0, 7, n)
    bvh, roots = sah_bvh_forest(lo, hi, seg)
    assert roots.size == np.unique(seg).size
    assert bvh.count.max() <= 4 and np.all(bvh.count[bvh.left >= 0] == 0)
    for s, r in zip(np.unique(seg), roots, strict=True):
        check_tree(bvh, r, lo, hi, np.flatnonzero(seg == s).tolist())


def check_wide_tree(lo, hi, width):
    """Every box reached exactly once, boxes nest, fan-out in [2, width]; returns the depth."""
    nlo, nhi, cc, child, is_node = wide_tree(lo, hi, width)
    cstart = np.r_[0, np.cumsum(cc)]
    assert np.all((cc >= 2) & (cc <= width))
    seen, depth, stack = [], 0, [(0, 0)]
    while stack:
        k, d = stack.pop()
        depth = max(depth, d)
        for e in range(cstart[k], cstart[k + 1]):
            c = child[e]
            clo, chi = (nlo[c], nhi[c]) if is_node[e] else (lo[c], hi[c])
            assert np.all(nlo[k] <= clo) and np.all(nhi[k] >= chi)
            if is_node[e]:
                stack.append((c, d + 1))
            else:
                seen.append(c)
    assert sorted(seen) == list(range(lo.shape[0]))
    return depth


@pytest.mark.parametrize("n", [2, 3, 5, 17, 1000])
@pytest.mark.parametrize("width", [2, 4, 8])
def test_wide_tree_holds_every_box_once_with_bounded_fan_out(n, width, rng):
    lo, hi = random_boxes(rng, n)
    check_wide_tree(lo, hi, width)


def test_wide_tree_depth_is_bounded_for_degenerate_and_skewed_boxes():
    """The SAH would peel one box at a time off these (equal boxes: every split costs the
    same; nested boxes: the big one alone is the cheapest split); nodes below SAH_MAX_DEPTH
    split at the median, so the depth stays logarithmic beyond it."""
    n = 1000
    bound = SAH_MAX_DEPTH + int(np.ceil(np.log2(n)))
    same = np.zeros((n, 3))
    assert check_wide_tree(same, same.copy(), 2) <= np.ceil(np.log2(n))  # even splits
    s = 1.5 ** np.arange(n) / 1.5**n  # nested cubes, sizes 1e-176 .. 1
    assert check_wide_tree(-s[:, None] * np.ones(3), s[:, None] * np.ones(3), 2) <= bound


def test_overlap_components_equal_connected_components_of_the_overlap_graph(rng):
    lo, hi = random_boxes(rng, 400, spread=2.0, size=0.15)
    label = rng.integers(0, 3, 400).astype(np.int32)
    ov = np.all(lo[:, None] <= hi[None], axis=2) & np.all(lo[None] <= hi[:, None], axis=2)
    ov &= label[:, None] == label[None]
    i, j = np.nonzero(ov)
    k_ref, lab_ref = connected_components(coo_matrix((np.ones(i.size), (i, j)), (400, 400)))
    out = np.empty(400, np.int64)
    k = overlap_components(build_bvh(lo, hi), 0, lo, hi, label, np.empty(STACK_SIZE, np.int32), out)
    assert k == k_ref
    # same partition: a bijection between labels
    pairs = set(zip(out.tolist(), lab_ref.tolist(), strict=False))
    assert len(pairs) == k


@pytest.mark.parametrize("force_axes", [False, True])
def test_overlap_groups_keep_every_overlapping_pair_together(rng, monkeypatch, force_axes):
    """Exact components, or (over the pair budget) groups split along the axes: never two
    overlapping boxes apart, the exact ones when nothing else is asked."""
    from planning_collision import bvh

    if force_axes:
        monkeypatch.setattr(bvh, "_PAIRS_MIN", 0)
        monkeypatch.setattr(bvh, "_PAIRS_PER_BOX", 0)
    lo, hi = random_boxes(rng, 400, spread=2.0, size=0.15)
    ov = np.all(lo[:, None] <= hi[None], axis=2) & np.all(lo[None] <= hi[:, None], axis=2)
    i, j = np.nonzero(ov)
    k_ref, lab_ref = connected_components(coo_matrix((np.ones(i.size), (i, j)), (400, 400)))
    k, lab = bvh.overlap_groups(lo, hi)
    assert np.all(lab[i] == lab[j]) and set(lab.tolist()) == set(range(k))
    assert lab[0] == 0 and np.all(np.diff([np.flatnonzero(lab == g)[0] for g in range(k)]) > 0)
    assert (k == k_ref) if not force_axes else (1 <= k <= k_ref)


def test_a_mesh_of_one_repeated_triangle_groups_without_testing_every_pair(monkeypatch):
    """Every box overlaps every other: exact grouping tested n^2 / 2 pairs (64k faces 29 s,
    200k over 13 minutes). Over the budget the exact kernel is not called at all."""
    from planning_collision import bvh

    def refused(*a):
        raise AssertionError("the pairwise grouping kernel ran")

    monkeypatch.setattr(bvh, "overlap_components", refused)
    v = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0.0]])
    s = Scene()
    s.add(pc.Mesh(v, np.tile([[0, 1, 2]], (64_000, 1))), name="repeated")
    T = np.eye(4)
    T[:3, 3] = (0.2, 0.2, 0.0)
    assert s.in_collision(pc.Sphere(0.01), T)
    T[2, 3] = 0.02
    assert not s.in_collision(pc.Sphere(0.01), T)


def test_detail_filter_replaces_small_primitives_by_their_aabb(rng):
    cloud = PointCloud(rng.uniform(-1, 1, (50, 3)), 0.01)
    prims = primitives(cloud, random_pose(rng))
    out, n = detail_filter(prims, 0.05)
    assert n == 50
    assert np.all(out.tab.kind == 2)  # BOX
    assert np.allclose(out.tab.params[:, 1:4] * 2, prims.hi - prims.lo)
    same, n0 = detail_filter(prims, 0.001)
    assert n0 == 0 and same is prims


# ---------------------------------------------------------------------------------------
# Scene API


def test_scene_ids_add_remove_contains_get_len():
    s = Scene()
    a = s.add(pc.Sphere(0.1), _T(1), "a")
    b = s.add(pc.Box((0.1, 0.2, 0.3)), _T(2), "b")
    assert (a, b) == (0, 1) and len(s) == 2
    assert s.contains(a) and b in s and not s.contains(7) and not s.contains("a")
    assert s.get(b).name == "b" and np.allclose(s.get(b).T, _T(2))
    assert s.find("a") == [a]
    s.remove(a)
    assert not s.contains(a) and len(s) == 1
    c = s.add(pc.Sphere(0.1), _T(1))
    assert c == 2, "ids are never reused"
    assert s.collide_object(pc.Sphere(0.2), _T(1)) == [c]


def test_scene_answers_follow_add_and_remove_after_build():
    s = Scene()
    a = s.add(pc.Box((1, 1, 1)), _T())
    q = pc.Sphere(0.1)
    assert s.collide_object(q, _T(0.55)) == [a]
    b = s.add(pc.Sphere(0.2), _T(0.7))
    assert s.collide_object(q, _T(0.55)) == [a, b]
    assert s.min_distance(q, _T(1.0)).id == b
    s.remove(a)
    assert s.collide_object(q, _T(0.55)) == [b]
    s.remove(b)
    assert s.collide_object(q, _T(0.55)) == []
    assert s.min_distance(q, _T()).distance == np.inf


def test_add_and_remove_recompile_only_the_touched_object():
    s = Scene()
    ids = [s.add(pc.Sphere(0.1), _T(i)) for i in range(5)]
    s.build()
    snap0 = s.snapshot()
    v0, flat0 = s.version, s.flat
    new = s.add(PointCloud(np.zeros((3, 3)), 0.1), _T(9))
    s.remove(ids[0])
    s.build()
    assert s.version > v0 and s.flat is not flat0  # node ids may have moved
    blocks = s.snapshot().blocks
    for i in ids[1:]:
        assert blocks[i] is snap0.blocks[i]
    assert new in blocks and ids[0] not in blocks
    # the snapshot taken before the edits is unchanged by them
    assert list(snap0.blocks) == ids and snap0.flat() is flat0 and snap0.version == v0


def test_empty_scene_queries():
    s = Scene()
    assert s.collide_object(pc.Sphere(1.0), _T()) == []
    assert not s.in_collision(pc.Sphere(1.0), _T())
    assert s.distances(pc.Sphere(1.0), _T()) == []
    r = s.min_distance(pc.Sphere(1.0), _T())
    assert r.distance == np.inf and r.id is None


def test_halfspace_obstacles_are_unbounded_and_always_tested():
    s = Scene()
    floor = s.add(pc.Halfspace((0, 0, 1), 0.0), name="floor")
    far = s.add(pc.Sphere(0.1), _T(100, 100, 100))
    assert s.stats()["unbounded"] == 1
    assert s.collide_object(pc.Sphere(0.1), _T(50, -20, 0.05)) == [floor]
    r = s.min_distance(pc.Sphere(0.1), _T(3, 3, 1.0))
    assert r.id == floor and abs(r.distance - 0.9) < 1e-12
    assert s.collide_object(pc.Sphere(0.2), _T(100, 100, 100.25)) == [far]


def test_kcd_groups_merge_overlapping_parts_of_one_object_only():
    s = Scene()
    # one object, two overlapping boxes: one group
    s.add([(pc.Box((1, 0.1, 0.1)), _T()), (pc.Box((0.1, 1, 0.1)), _T())], _T())
    # one object, two far spheres: two groups
    s.add([(pc.Sphere(0.1), _T(5)), (pc.Sphere(0.1), _T(-5))], _T())
    # two objects that overlap each other: never one group
    s.add(pc.Sphere(0.3), _T(0, 0, 3))
    s.add(pc.Sphere(0.3), _T(0, 0, 3.1))
    assert s.stats()["groups"] == 1 + 2 + 1 + 1
    f = s.flat
    # the flat form's group leaves: those groups, and the halves of the cross of boxes (its
    # box is mostly empty: opened for the top tree)
    groups = np.flatnonzero(f.kt_group >= 0)
    assert set(f.kt_obj[groups].tolist()) == {0, 1, 2, 3}
    # every group's primitives belong to its object
    for g in groups:
        root = f.kt_group[g]
        stack = [root]
        while stack:
            nd = stack.pop()
            assert f.bvh_obj[nd] == f.kt_obj[g]
            if f.bvh.count[nd] > 0:
                ps = f.bvh.order[f.bvh.first[nd] : f.bvh.first[nd] + f.bvh.count[nd]]
                assert np.all(f.pobj[ps] == f.kt_obj[g])
            else:
                stack += [f.bvh.left[nd], f.bvh.right[nd]]


def _reachable_kt(f):
    """KCD nodes reachable from the root of a flat scene."""
    out, stack = [], [int(f.kt_root[0])]
    while stack:
        k = stack.pop()
        out.append(k)
        if f.kt_group[k] < 0:
            stack += f.kt_child[f.kt_cstart[k] : f.kt_cstart[k + 1]].tolist()
    return out


def test_build_opens_mostly_empty_nodes_for_the_top_tree():
    s = Scene()
    # an L of two arms, each four touching segments: one group, its box mostly empty:
    # opened, so the top tree holds each arm as a group leaf over a BVH node of the group
    l_parts = [(pc.Box((0.25, 0.05, 0.05)), _T(0.125 + 0.25 * k, 0, 0)) for k in range(4)]
    l_parts += [(pc.Box((0.05, 0.25, 0.05)), _T(0, 0.125 + 0.25 * k, 0)) for k in range(4)]
    # two nearly coincident boxes: one group whose box is about each box's: kept whole
    p_parts = [(pc.Box((0.3, 0.3, 0.3)), _T(3)), (pc.Box((0.3, 0.3, 0.31)), _T(3))]
    ell = s.add(l_parts)
    pair = s.add(p_parts)
    assert s.stats()["groups"] == 2
    f = s.flat
    slot = {int(oid): k for k, oid in enumerate(s.slot_ids)}
    leaves = [k for k in _reachable_kt(f) if f.kt_group[k] >= 0]
    by_obj = {o: [k for k in leaves if f.kt_obj[k] == slot[o]] for o in (ell, pair)}
    assert len(by_obj[ell]) == 2
    for k in by_obj[ell]:  # each a BVH node over one arm: a thin box
        g = f.kt_group[k]
        assert np.sort(f.bvh.hi[g] - f.bvh.lo[g])[1] < 0.06
    (k,) = by_obj[pair]
    g = f.kt_group[k]  # the group's root: both boxes
    assert f.bvh.count[g] == 2 or f.bvh.left[g] >= 0
    # the answers do not depend on the opening
    q = pc.Sphere(0.04)
    for T in (_T(0.5, 0.1, 0), _T(0.5, 0.5, 0), _T(3, 0, 0.2), _T(0.02, 0.9, 0)):
        ref = min(pc.distance(q, T, sh, Ts).distance for sh, Ts in l_parts + p_parts)
        assert abs(s.min_distance(q, T).distance - ref) < 1e-9


def test_kcd_merges_groups_whose_boxes_overlap_into_a_multi_child_level(monkeypatch):
    # the per-object tree as KCD grouping builds it (the build's opening of mostly empty
    # nodes for the top tree is turned off: test_build_opens_mostly_empty_nodes_...)
    monkeypatch.setattr(Scene, "open_ratio", None)
    # an L of two thin boxes plus a sphere in the L's corner region: the three parts are
    # pairwise disjoint but the sphere's box overlaps the union of the others' boxes
    s = Scene()
    parts = [
        (pc.Box((1.0, 0.05, 0.05)), _T(0.5, 0, 0)),
        (pc.Box((0.05, 1.0, 0.05)), _T(0, 0.5 + 0.1, 0)),
    ]
    s.add(parts, _T())
    f = s.flat
    assert (f.kt_group >= 0).sum() == 2
    inner = np.flatnonzero((f.kt_group < 0) & (np.diff(f.kt_cstart) == 2))
    assert inner.size == 1  # the two groups' boxes overlap: merged under one parent
    kids = f.kt_child[f.kt_cstart[inner[0]] : f.kt_cstart[inner[0] + 1]]
    assert np.all(f.kt_group[kids] >= 0)


def test_kcd_fan_out_is_bounded_when_many_groups_overlap(rng):
    """60 nested L shapes (two touching bars each): 60 groups, since the L's boxes of
    primitives are pairwise disjoint, but every L's box contains the smaller L's, so one
    level-2 component holds them all. It becomes a binary tree of nodes with at most FANOUT
    children, and queries still equal the per-part brute force."""
    from planning_collision.kcd import FANOUT

    d, t, R = 0.05, 0.01, 1.0
    parts = []
    for k in range(60):
        c = -k * d
        parts.append((pc.Box((R - c, 2 * t, 2 * t)), _T((R + c) / 2, c, 0)))
        parts.append((pc.Box((2 * t, R - c, 2 * t)), _T(c, (R + c) / 2, 0)))
    s = Scene()
    s.add(parts, _T())
    f = s.flat
    assert (f.kt_group >= 0).sum() == 60
    assert np.diff(f.kt_cstart).max() <= FANOUT
    assert f.kt_lo.shape[0] > 61  # the component got inner nodes
    for _ in range(100):
        q, T = pc.Sphere(rng.uniform(0.01, 0.1)), random_pose(rng, 2.0)
        ref = min(pc.distance(q, T, p, Tp).distance for p, Tp in parts)
        assert abs(s.min_distance(q, T).distance - ref) < 1e-9
        assert s.in_collision(q, T) == (ref <= 0)


def test_flat_scene_reaches_every_bounded_primitive_once(rng):
    s = Scene()
    for _ in range(40):
        s.add(pc.Box(rng.uniform(0.05, 0.5, 3)), random_pose(rng, 2.0))
    s.add(pc.Mesh.from_trimesh(trimesh.creation.icosphere(2, 0.5)), random_pose(rng))
    s.add(PointCloud(rng.normal(size=(300, 3)), 0.05), random_pose(rng))
    f = s.flat
    # each node's children's boxes, side by side, are the children's own boxes
    assert np.array_equal(f.kt_clo, f.kt_lo[f.kt_child])
    assert np.array_equal(f.kt_chi, f.kt_hi[f.kt_child])
    assert np.array_equal(f.kt_cgroup, f.kt_group[f.kt_child])
    reached = []
    stack = [(0, int(f.kt_root[0]))]
    while stack:
        tree, nd = stack.pop()
        if tree == 0:
            lo, hi = f.kt_lo[nd], f.kt_hi[nd]
            if f.kt_group[nd] >= 0:
                kids = [(1, int(f.kt_group[nd]))]
            else:
                kids = [(0, int(c)) for c in f.kt_child[f.kt_cstart[nd] : f.kt_cstart[nd + 1]]]
        else:
            lo, hi = f.bvh.lo[nd], f.bvh.hi[nd]
            if f.bvh.count[nd] > 0:
                ps = f.bvh.order[f.bvh.first[nd] : f.bvh.first[nd] + f.bvh.count[nd]]
                assert np.all(lo <= f.plo[ps]) and np.all(hi >= f.phi[ps])
                reached += ps.tolist()
                kids = []
            else:
                kids = [(1, int(f.bvh.left[nd])), (1, int(f.bvh.right[nd]))]
        for t, c in kids:
            clo, chi = (f.kt_lo[c], f.kt_hi[c]) if t == 0 else (f.bvh.lo[c], f.bvh.hi[c])
            assert np.all(lo <= clo) and np.all(hi >= chi)
        stack += kids
    assert sorted(reached) == list(range(f.tab.kind.shape[0]))


def test_broadphase_candidates_equal_brute_force_aabb_overlap(rng):
    s = Scene()
    for _ in range(200):
        s.add(pc.Capsule(0.05, rng.uniform(0, 0.3)), random_pose(rng, 2.0))
    f = s.flat
    for _ in range(50):
        q, T = pc.Box(rng.uniform(0.1, 0.8, 3)), random_pose(rng, 2.0)
        p = primitives(q, T)
        ref = np.flatnonzero(np.all(f.plo <= p.hi, axis=1) & np.all(f.phi >= p.lo, axis=1))
        assert s.candidates(q, T).tolist() == ref.tolist()


def test_a_mesh_query_against_the_scene_is_the_minimum_over_its_triangles(rng):
    s = Scene()
    for _ in range(10):
        s.add(pc.Box(rng.uniform(0.05, 0.5, 3)), random_pose(rng, 1.0))
    mesh = pc.Mesh.from_trimesh(trimesh.creation.icosphere(1, 0.3))
    for _ in range(10):
        T = random_pose(rng, 1.0)
        d = s.min_distance(mesh, T).distance
        w = mesh.vertices @ T[:3, :3].T + T[:3, 3]
        ref = min(s.min_distance(pc.Convex(w[f]), np.eye(4)).distance for f in mesh.faces)
        assert abs(d - ref) < 1e-9


# ---------------------------------------------------------------------------------------
# bad input: errors name the field; a failed add leaves the scene unchanged


def _snapshot(s):
    return len(s), s.ids(), s.collide_object(pc.Sphere(5.0), _T())


@pytest.mark.parametrize(
    "shape, T, err, match",
    [
        (pc.Sphere(0.1), np.full((4, 4), np.nan), ValueError, "finite"),
        (pc.Sphere(0.1), np.diag([2.0, 1, 1, 1]), ValueError, "orthonormal"),
        (pc.Sphere(0.1), np.eye(3), ValueError, r"shape \(4, 4\)"),
        ("sphere", np.eye(4), TypeError, "expected a shape"),
        ([(pc.Sphere(0.1), np.eye(4)), (object(), np.eye(4))], np.eye(4), TypeError, "part 1"),
        (
            [(pc.Sphere(0.1), np.eye(4)), (pc.Sphere(0.1), np.full((4, 4), np.inf))],
            np.eye(4),
            ValueError,
            "part 1 pose",
        ),
        ([], np.eye(4), TypeError, "non-empty list"),
    ],
)
def test_failed_add_names_the_problem_and_leaves_the_scene_unchanged(shape, T, err, match):
    s = Scene()
    s.add(pc.Box((1, 1, 1)), _T(), "table")
    before = _snapshot(s)
    with pytest.raises(err, match=match):
        s.add(shape, T, name="bad")
    assert _snapshot(s) == before
    assert s.add(pc.Sphere(0.1), _T(3)) == 1  # the failed add used no id


def test_unknown_ids_raise_keyerror_naming_the_id():
    s = Scene()
    s.add(pc.Sphere(0.1), _T())
    with pytest.raises(KeyError, match="no obstacle with id 5"):
        s.remove(5)
    with pytest.raises(KeyError, match="id 5"):
        s.get(5)
    with pytest.raises(TypeError, match="int"):
        s.remove("0")
    assert len(s) == 1


def test_bad_obstacle_geometry_is_rejected_at_construction():
    with pytest.raises(ValueError, match="empty"):
        pc.Mesh(np.zeros((3, 3)), np.zeros((0, 3), int))
    with pytest.raises(ValueError, match=r"faces\[1\].*degenerate"):
        pc.Mesh(np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [2, 0, 0.0]]), [[0, 1, 2], [0, 1, 3]])
    with pytest.raises(ValueError, match="PointCloud.points is empty"):
        PointCloud(np.zeros((0, 3)), 0.1)
    with pytest.raises(ValueError, match="PointCloud.radius"):
        PointCloud(np.zeros((2, 3)), -0.1)
    with pytest.raises(ValueError, match="PointCloud.points must be finite"):
        PointCloud([[0, 0, np.nan]], 0.1)
    with pytest.raises(ValueError, match="VoxelGrid.cells is empty"):
        VoxelGrid(np.zeros((0, 3), int), 0.1)
    with pytest.raises(ValueError, match="VoxelGrid.voxel_size"):
        VoxelGrid([[0, 0, 0]], 0.0)
    with pytest.raises(ValueError, match="integers"):
        VoxelGrid([[0, 0, 0.5]], 0.1)


def test_bad_query_arguments_name_the_field():
    s = Scene()
    s.add(pc.Sphere(0.1), _T())
    with pytest.raises(ValueError, match="T must be finite"):
        s.collide_object(pc.Sphere(0.1), np.full((4, 4), np.nan))
    with pytest.raises(ValueError, match="margin"):
        s.collide_object(pc.Sphere(0.1), _T(), margin=np.nan)
    with pytest.raises(ValueError, match="max_distance"):
        s.distances(pc.Sphere(0.1), _T(), max_distance=np.inf)
    with pytest.raises(TypeError, match="shape"):
        s.min_distance(np.zeros(3), _T())
    with pytest.raises(ValueError, match="min_size"):
        Scene(min_size=-1.0)


def test_voxel_grid_helpers_agree():
    occ = np.zeros((3, 3, 3), bool)
    occ[1, 2, 0] = occ[0, 0, 0] = True
    a = VoxelGrid.from_dense(occ, 0.1, (1, 1, 1))
    b = VoxelGrid.from_points(
        [[1.15, 1.25, 1.05], [1.01, 1.01, 1.01], [1.02, 1.03, 1.04]], 0.1, (1, 1, 1)
    )
    assert a == b and a.cells.shape == (2, 3)
    assert np.allclose(a.centers[1], [1.15, 1.25, 1.05])


def test_scene_kernels_run_as_plain_python_with_numba_disabled():
    """The scene's kernels also run under NUMBA_DISABLE_JIT=1, as plain Python a debugger or
    a coverage tool can step into (tests/test_kernels_pure_python.py: the checker's)."""
    code = (
        "import numpy as np, planning_collision as pc\n"
        "from planning_collision.scene import Scene\n"
        "from planning_collision.geometry.clouds import PointCloud\n"
        "s = Scene(); T = np.eye(4)\n"
        "a = s.add(pc.Box((1, 1, 1)), T)\n"
        "b = s.add(PointCloud(np.array([[2.0, 0, 0], [2.1, 0, 0]]), 0.1), T)\n"
        "s.add(pc.Halfspace((0, 0, 1), -5.0))\n"
        "T[0, 3] = 0.7\n"
        "assert s.collide_object(pc.Sphere(0.25), T) == [a], s.collide_object(pc.Sphere(0.25), T)\n"
        "r = s.min_distance(pc.Sphere(0.25), T)\n"
        "assert r.id == a and abs(r.distance + 0.05) < 1e-9, r\n"
        "assert len(s.distances(pc.Sphere(0.25), T)) == 3\n"
    )
    env = dict(os.environ, NUMBA_DISABLE_JIT="1")
    r = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120
    )
    assert r.returncode == 0, r.stderr[-2000:]


def test_nearest_only_kernels_write_one_row_and_the_batch_leaves_best_clean(rng):
    from planning_collision.kernels.scene.scene_calls import (
        scene_collide_batch,
        scene_min_distance_batch,
        scene_traverse,
    )
    from planning_collision.kernels.scene.scratch import new_scratch
    from planning_collision.kernels.scene.traversal import DISTANCE

    s = Scene()
    for _ in range(30):
        s.add(pc.Box(rng.uniform(0.05, 0.4, 3)), random_pose(rng, 2.0))
    s.add(pc.Halfspace((0, 0, 1), -3.0))
    f = s.flat
    q = pc.Capsule(0.05, 0.3)
    poses = np.stack([random_pose(rng, 2.0) for _ in range(40)])
    blocks = [query_block(q, T) for T in poses]
    qlo = np.concatenate([b.lo for b in blocks])
    qhi = np.concatenate([b.hi for b in blocks])
    n = int(f.n_obj[0])
    sc = new_scratch(n, 1, warm=0)  # no warm starts: the same GJK path as min_distance
    seeds = np.zeros((0, 2), np.int32)
    ref = np.array([s.min_distance(q, T).distance for T in poses])
    # one query, nearest only: row arg is the answer, every other row is left as it was
    for b, T in zip(blocks, poses, strict=True):
        sc.best[:] = 123.0
        best = sc.best
        arg = scene_traverse(
            f, DISTANCE, b.tab, b.poses, b.lo, b.hi, 0, 1, seeds, np.inf, False, sc
        )
        r = s.min_distance(q, T)
        assert arg == list(s.slot_ids).index(r.id)
        assert best[arg, 0] == r.distance and np.allclose(best[arg, 4:7], r.point_b)
        assert np.all(np.delete(best, arg, axis=0) == 123.0)
    # the batch: the same distances, and best back to inf for the next caller
    sc.best[:] = np.nan
    sc.best[:, 0] = np.inf
    out = np.empty(len(poses))
    tab = blocks[0].tab
    assert scene_min_distance_batch(f, tab, poses, qlo, qhi, np.inf, sc, seeds, out) == 0
    assert np.array_equal(out, ref)
    assert np.all(sc.best[:, 0] == np.inf)
    oi = np.empty(len(poses), np.int32)
    assert scene_collide_batch(f, tab, poses, qlo, qhi, 0.0, sc, seeds, oi) == 0
    assert np.array_equal(oi >= 0, ref <= 0) and not sc.hit.any()


@given(
    s=st.floats(0.0, 4.0),
    b=st.floats(0.0, 4.0),
    qr=st.floats(0.0, 1.0),
    bound=st.one_of(st.floats(-1.0, 2.0), st.just(np.inf)),
)
def test_squared_prune_test_equals_the_lower_bound_test(s, b, qr, bound):
    from planning_collision.kernels.scene.boxes import lower_bound as _lower_bound
    from planning_collision.kernels.scene.boxes import pruned as _pruned

    lb = _lower_bound(s, b, qr)
    # away from a tie the squared test decides as the bound does; at a tie (within
    # round-off) either answer is sound, since a pair at exactly the bound cannot improve it
    if abs(lb - bound) > 1e-12 or not np.isfinite(lb):
        assert _pruned(s, b, qr, bound) == (lb > bound)
