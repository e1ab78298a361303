"""Robot from URDF: FK against yourdfpy, the flat kernel, joints, ACM, registry, bad input."""

from pathlib import Path

import numpy as np
import pytest

from planning_collision import robots
from planning_collision.io.urdf import (
    URDFError,
    URDFJointError,
    URDFMeshNotFoundError,
    URDFParseError,
    URDFTreeError,
    read_urdf,
    validate_urdf,
)
from planning_collision.kernels.robot.fk import fk_batch
from planning_collision.robot import Robot

PLANAR = Path(robots.__file__).parent / "planar_arm" / "planar_arm.urdf"
PANDA_ARM = [f"panda_joint{i}" for i in range(1, 8)]


@pytest.fixture(scope="module")
def panda(example_robot_data):
    return robots.load("panda")


@pytest.fixture(scope="module")
def ur5(example_robot_data):
    return robots.load("ur5")


@pytest.fixture(scope="module")
def planar():
    return robots.load("planar_arm")


# ---- FK against yourdfpy -------------------------------------------------------------


def _yourdfpy(robot):
    import yourdfpy

    return yourdfpy.URDF.load(str(robot.urdf_path), build_scene_graph=True, load_meshes=False)


def _yourdfpy_cfg(u, robot, q):
    """yourdfpy's actuated configuration for our q (held joints at their held values)."""
    vals = dict(zip(robot.joint_names, q, strict=True))
    vals.update(robot.held_joints)
    return np.array([vals[n] for n in u.actuated_joint_names])


def _yourdfpy_joint_fk(u, robot, Q):
    """(m, n_links, 4, 4) link poses composed from yourdfpy's own per-joint transforms
    (`URDF._forward_kinematics_joint`, which applies mimic joints), for many configs."""
    m = Q.shape[0]
    T = np.zeros((m, len(robot.link_names), 4, 4))
    T[:] = np.eye(4)
    jm = {j.child: j for j in u.robot.joints}
    for i, ln in enumerate(robot.link_names):
        j = jm.get(ln)
        if j is None:
            continue
        p = robot.link_index[j.parent]
        J = np.empty((m, 4, 4))
        for k in range(m):
            u._cfg = _yourdfpy_cfg(u, robot, Q[k])
            q = None
            if j.type != "fixed" and j.mimic is None:
                q = float(u._cfg[u.actuated_joint_names.index(j.name)])
            J[k] = u._forward_kinematics_joint(j, q=q)[0]
        T[:, i] = T[:, p] @ J
    return T


@pytest.mark.parametrize("fixture", ["panda", "ur5"])
def test_fk_equals_yourdfpy_on_random_configurations(fixture, request):
    # 400 configurations drive every joint over its whole range many times; the FK is one
    # loop with no data-dependent branch, so 10,000 (as before) proved nothing more
    robot = request.getfixturevalue(fixture)
    u = _yourdfpy(robot)
    Q = robot.random_configurations(400, rng=7)
    ours = robot.fk_batch(Q)
    ref = _yourdfpy_joint_fk(u, robot, Q)
    assert np.abs(ours - ref).max() < 1e-9
    # and yourdfpy's public scene-graph FK on a subset (1 ms per configuration)
    for q in Q[:150]:
        u.update_cfg(_yourdfpy_cfg(u, robot, q))
        got = robot.fk(q)
        for ln in robot.link_names:
            np.testing.assert_allclose(got[ln], u.get_transform(ln), atol=1e-9, rtol=0)


def test_fk_of_mimic_prismatic_and_continuous_joints_equals_yourdfpy(rng):
    # every movable joint active: the finger's mimic follows with multiplier -1
    robot = Robot.from_urdf(PLANAR)
    assert robot.joint_names == ["joint1", "joint2", "joint3", "finger_joint"]
    assert list(robot.continuous) == [True, False, False, False]
    u = _yourdfpy(robot)
    for q in robot.random_configurations(300, rng=rng):
        u.update_cfg(_yourdfpy_cfg(u, robot, q))
        got = robot.fk(q)
        for ln in robot.link_names:
            np.testing.assert_allclose(got[ln], u.get_transform(ln), atol=1e-12, rtol=0)
    # the right finger mirrors the left across the tool's x axis
    T = robot.fk([0.3, 0.2, -0.4, 0.02])
    tool = np.linalg.inv(T["tool"])
    left, right = (tool @ T["finger_left"])[:3, 3], (tool @ T["finger_right"])[:3, 3]
    np.testing.assert_allclose(left, [0.0, 0.025, 0.0], atol=1e-12)
    np.testing.assert_allclose(right, [0.0, -0.025, 0.0], atol=1e-12)


def test_flat_kernel_equals_robot_fk(panda, rng):
    Q = panda.random_configurations(200, rng=rng)
    out = np.empty((len(Q), len(panda.link_names), 4, 4))
    fk_batch(panda.model, Q, out)
    for q, T in zip(Q, out, strict=True):
        d = panda.fk(q)
        for i, ln in enumerate(panda.link_names):
            assert np.array_equal(T[i], d[ln])


def test_floating_base_pose_is_translation_then_yaw_pitch_roll(rng):
    from scipy.spatial.transform import Rotation

    robot = robots.load("free_flyer")
    assert robot.joint_names == [
        f"floating_base_{s}" for s in ("x", "y", "z", "yaw", "pitch", "roll")
    ]
    for q in robot.random_configurations(50, rng=rng):
        T = robot.fk(q)["piano"]
        np.testing.assert_allclose(T[:3, 3], q[:3], atol=1e-12)
        R = Rotation.from_euler("ZYX", q[3:6]).as_matrix()
        np.testing.assert_allclose(T[:3, :3], R, atol=1e-12)


def test_held_joints_take_the_fixed_value_even_beyond_the_urdf_limit(panda):
    p65 = robots.load(
        "panda", fixed_joints={"panda_finger_joint1": 0.065, "panda_finger_joint2": 0.065}
    )
    assert panda.held_joints["panda_finger_joint1"] == 0.04
    assert p65.held_joints == {"panda_finger_joint1": 0.065, "panda_finger_joint2": 0.065}
    q = np.zeros(7)
    T = p65.fk(q)
    hand = np.linalg.inv(T["panda_hand"])
    np.testing.assert_allclose(
        (hand @ T["panda_leftfinger"])[:3, 3], [0, 0.065, 0.0584], atol=1e-12
    )
    np.testing.assert_allclose(
        (hand @ T["panda_rightfinger"])[:3, 3], [0, -0.065, 0.0584], atol=1e-12
    )


def test_joint_names_limits_and_links(panda, ur5):
    assert panda.joint_names == PANDA_ARM and panda.dof == 7
    assert panda.upper[3] == -0.0698 and panda.lower[5] == -0.0175
    assert panda.link_names[0] == "panda_link0"
    assert all(panda.model.parent[i] < i for i in range(1, len(panda.link_names)))
    assert ur5.dof == 6 and ur5.link_names[0] == "world"
    widened = robots.load("panda", joint_limits={"panda_joint4": (-3.0718, 0.0175)})
    assert widened.upper[3] == 0.0175


# ---- motion bounds API ---------------------------------------------------------------


def test_motion_bounds_are_zero_for_no_motion_and_linear_in_the_step(panda, rng):
    q0 = panda.random_configurations(1, rng=rng)[0]
    dq = rng.normal(size=7) * 0.1
    assert np.all(panda.motion_bounds(q0, q0) == 0.0)
    m1 = panda.motion_bounds(q0, q0 + dq)
    m2 = panda.motion_bounds(q0, q0 + 2 * dq)
    np.testing.assert_allclose(m2, 2 * m1, rtol=1e-12)
    assert m1.shape == (len(panda.collision_links),)
    # the base does not move; the hand moves with every joint
    assert m1[0] == 0.0 and np.all(m1[1:] > 0)
    pairs = panda.self_collision_pairs()
    mp = panda.pair_motion_bounds(q0, q0 + dq)
    assert mp.shape == (len(pairs),)
    # the two fingers only move by held joints below their common ancestor (the hand)
    names = [(panda.link_names[a], panda.link_names[b]) for a, b in pairs]
    fingers = names.index(("panda_leftfinger", "panda_rightfinger"))
    assert mp[fingers] == 0.0 and np.all(np.delete(mp, fingers) > 0)


# ---- ACM -----------------------------------------------------------------------------


def test_acm_allows_adjacent_links_and_user_edits_change_the_checked_pairs(planar):
    robot = robots.load("planar_arm")  # a fresh copy: the ACM is per robot object
    assert robot.acm.reason("link2", "link3") == "adjacent"
    assert robot.acm.reason("link3", "finger_left") == "adjacent"  # through the geometry-less tool
    n0 = len(robot.self_collision_pairs())
    a, b = (robot.link_names[i] for i in robot.self_collision_pairs()[0])
    robot.allow(a, b)
    assert robot.acm.is_allowed(b, a) and len(robot.self_collision_pairs()) == n0 - 1
    robot.disallow(a, b)
    assert len(robot.self_collision_pairs()) == n0
    with pytest.raises(ValueError, match="unknown link 'nope'"):
        robot.allow("nope", "link1")
    assert len(planar.self_collision_pairs()) == n0  # other robots untouched


def test_batch_self_collision_counts_agree_with_the_public_queries(planar, rng):
    import planning_collision as pc

    robot = planar
    cl = robot.collision_links
    pairs = np.array([(a, b) for x, a in enumerate(cl) for b in cl[x + 1 :]], np.int32)
    assert np.array_equal(robot.all_link_pairs(), pairs)
    Q = robot.random_configurations(300, rng=rng)
    counts = robot.count_self_collisions(Q, pairs)
    # by default only the pairs the ACM leaves checked are counted
    checked = robot.self_collision_pairs()
    assert len(checked) < len(pairs)
    rows = [np.flatnonzero((pairs == p).all(axis=1))[0] for p in checked]
    assert np.array_equal(robot.count_self_collisions(Q), counts[rows])
    ref = np.zeros(len(pairs), np.int64)
    c = robot.collision
    for q in Q:
        P = robot.piece_poses(q)
        for k, (a, b) in enumerate(pairs):
            hit = any(
                pc.collide(robot.pieces[i].shape, P[i], robot.pieces[j].shape, P[j])
                for i in range(c.link_start[a], c.link_start[a + 1])
                for j in range(c.link_start[b], c.link_start[b + 1])
            )
            ref[k] += hit
    assert np.array_equal(counts, ref)
    assert counts.sum() > 0  # the test sees collisions, not only free states


@pytest.mark.parametrize("name", ["planar_arm", "panda", "kinova", "xarm7"])
def test_stored_acm_is_what_sampling_gives(name, request):
    """The registry's ACM is reproducible: rerunning the sampling recipe recorded in the
    config (10,000 samples, its seed and sampled ranges) gives the same matrix."""
    if name != "planar_arm":
        request.getfixturevalue("example_robot_data")
    cfg = robots.config(name)["acm"]
    assert cfg["samples"] >= 10_000
    kw = robots.robot_kwargs(name)
    kw.update(
        acm=[],
        active_joints=cfg["sampled_joints"],
        fixed_joints={
            k: v for k, v in cfg["held_joints"].items() if k not in cfg["sampled_joints"]
        },
        joint_limits={
            n: r for n, r in zip(cfg["sampled_joints"], cfg["sampled_ranges"], strict=True)
        },
    )
    sampler = Robot.from_urdf(robots.urdf_path(name), **kw)
    sampler.compute_acm(cfg["samples"], cfg["seed"], default_q=cfg["default_q"])
    assert sampler.acm.entries() == cfg["allowed"]


# ---- registry ------------------------------------------------------------------------


def test_registry_overrides_can_activate_a_held_joint():
    robot = robots.load("planar_arm", active_joints=["joint1", "joint2", "joint3", "finger_joint"])
    assert robot.dof == 4 and "finger_joint" not in robot.held_joints
    assert robots.load("planar_arm").held_joints == {"finger_joint": 0.015}


def test_registry_lists_and_loads_every_robot():
    assert {"panda", "ur5", "kinova", "xarm7", "planar_arm", "free_flyer", "baxter"} <= set(
        robots.available()
    )
    with pytest.raises(ValueError, match="unknown robot 'r2d2'"):
        robots.load("r2d2")


@pytest.mark.parametrize(
    "name", ["panda", "ur5", "kinova", "xarm7", "planar_arm", "free_flyer", "baxter"]
)
def test_registry_robot_loads_from_its_committed_cache_without_rebuilding(
    name, monkeypatch, request
):
    if name not in ("planar_arm", "free_flyer"):
        request.getfixturevalue("example_robot_data")
    import planning_collision.robot.geometry as G

    def no_build(*a, **k):
        built = robots.config(name)["urdf"].get("built_with", "the package's own files")
        raise AssertionError(
            f"robots/{name}: the committed geometry cache (built with {built}) does not match the "
            f"installed files; rebuild it with: python -m planning_collision.robots.build {name}"
        )

    robots.load(name)  # imports and JIT out of the timing
    monkeypatch.setattr(G, "build_link_geometry", no_build)
    robot = robots.load(name)
    assert (robots.robot_dir(name) / f"geometry-{robot.geometry_key}.npz").is_file()
    assert len(robot.acm) >= 1 or name == "free_flyer"


# ---- bad input -----------------------------------------------------------------------


def _write(tmp_path, text, name="r.urdf"):
    p = tmp_path / name
    p.write_text(text)
    return p


ARM = """<robot name="t">
  <link name="a"/>
  <link name="b"><collision><geometry>{geom}</geometry></collision></link>
  <joint name="j" type="revolute"><parent link="a"/><child link="b"/>
    <axis xyz="0 0 1"/><limit lower="{lo}" upper="1"/></joint>
</robot>"""


def test_a_urdf_that_does_not_parse_names_the_file(tmp_path):
    p = _write(tmp_path, "<robot name='x'><link name='a'>", "broken.urdf")
    with pytest.raises(URDFParseError, match="broken.urdf"):
        Robot.from_urdf(p)
    with pytest.raises(FileNotFoundError, match="nowhere.urdf"):
        Robot.from_urdf(tmp_path / "nowhere.urdf")


def test_a_missing_mesh_names_the_link_and_the_file(tmp_path):
    p = _write(tmp_path, ARM.format(geom='<mesh filename="package://pkg/gone.stl"/>', lo=-1))
    with pytest.raises(URDFMeshNotFoundError, match=r"link 'b'.*package://pkg/gone.stl") as e:
        Robot.from_urdf(p)
    assert isinstance(e.value, FileNotFoundError) and isinstance(e.value, ValueError)


def test_relative_mesh_paths_resolve_from_the_urdf_directory(tmp_path):
    import trimesh

    (tmp_path / "meshes").mkdir()
    trimesh.creation.box(extents=(0.1, 0.2, 0.3)).export(tmp_path / "meshes" / "b.stl")
    p = _write(tmp_path, ARM.format(geom='<mesh filename="meshes/b.stl"/>', lo=-1))
    robot = Robot.from_urdf(p)
    assert len(robot.pieces) == 1 and robot.volume_ratios()["b"] == pytest.approx(1.0)


def test_unknown_joints_in_active_or_fixed_joints_are_named(tmp_path):
    p = _write(tmp_path, ARM.format(geom='<box size="1 1 1"/>', lo=-1))
    with pytest.raises(URDFJointError, match="unknown joint 'elbow'"):
        Robot.from_urdf(p, active_joints=["elbow"])
    with pytest.raises(URDFJointError, match="unknown joint 'wrist'"):
        Robot.from_urdf(p, fixed_joints={"wrist": 0.0})
    with pytest.raises(URDFJointError, match="both active and in fixed_joints"):
        Robot.from_urdf(p, active_joints=["j"], fixed_joints={"j": 0.0})
    with pytest.raises(ValueError, match=r"fixed_joints\['j'\] must be finite"):
        Robot.from_urdf(p, fixed_joints={"j": float("nan")})


def test_bad_limits_and_trees_are_named(tmp_path):
    p = _write(tmp_path, ARM.format(geom='<box size="1 1 1"/>', lo=2))
    with pytest.raises(URDFJointError, match=r"joint 'j'.*lower <= upper.*\[2.0, 1.0\]"):
        read_urdf(p)
    two_roots = "<robot name='t'><link name='a'/><link name='b'/></robot>"
    with pytest.raises(URDFTreeError, match="one root"):
        read_urdf(_write(tmp_path, two_roots, "two.urdf"))
    bad_box = ARM.format(geom='<box size="1 -1 1"/>', lo=2)
    problems = validate_urdf(_write(tmp_path, bad_box, "both.urdf"))
    assert len(problems) == 2 and all(isinstance(e, URDFError) for e in problems)


def test_q_of_the_wrong_length_or_with_nan_is_named(panda):
    with pytest.raises(ValueError, match=r"shape \(6,\); robot 'panda' has 7 active joints"):
        panda.fk(np.zeros(6))
    q = np.zeros(7)
    q[2] = np.nan
    with pytest.raises(ValueError, match=r"q\[2\] \(panda_joint3\) must be finite, got nan"):
        panda.fk(q)
    with pytest.raises(ValueError, match=r"q0\[3\] \(panda_joint4\) = 0.5 is outside"):
        panda.validate_q([0, 0, 0, 0.5, 0, 1, 0], "q0", check_limits=True)
    with pytest.raises(ValueError, match=r"Q\[1, 0\] \(panda_joint1\) must be finite"):
        panda.fk_batch(np.array([np.zeros(7), [np.inf] + [0] * 6]))


def test_validate_q_takes_and_refuses_float_arrays_as_its_named_path_does(panda):
    """A float64 (dof,) array takes one comparison (robot.py `_q_bounds`): it must accept
    exactly what the checks that name the joint accept, return q itself when it is a
    writeable C array (else a writeable copy), and refuse the rest with their message."""
    rng = np.random.default_rng(3)
    lo, hi = panda.lower, panda.upper
    special = [np.nan, np.inf, -np.inf, 1e308, -1e308]
    for k in range(400):
        q = rng.uniform(lo - 0.3, hi + 0.3)
        if k % 4 == 0:
            q[rng.integers(7)] = special[k % len(special)]
        for limits in (False, True):
            finite = bool(np.isfinite(q).all())
            inside = finite and bool(((q >= lo) & (q <= hi)).all())
            ok = inside if limits else finite
            if ok:
                assert panda.validate_q(q, check_limits=limits) is q
            else:
                with pytest.raises(ValueError, match=r"q\[\d\] \(panda_joint\d\)"):
                    panda.validate_q(q, check_limits=limits)
    q = 0.5 * (lo + hi)
    ro = q.copy()
    ro.flags.writeable = False
    strided = np.repeat(q, 2)[::2]
    for a in (ro, strided):
        got = panda.validate_q(a, check_limits=True)
        assert got is not a and got.flags.writeable and got.flags.c_contiguous
        assert np.array_equal(got, q)
    assert panda.validate_q(lo, check_limits=True) is not lo  # the model's read-only limits
    assert panda.validate_q(hi.copy(), check_limits=True) is not None  # the limits are in


def test_bench_robot_demo_runs_with_small_arguments(capsys, example_robot_data):
    from planning_collision.demos.bench import robot as bench_robot

    assert (
        bench_robot.main(
            ["--configs", "200", "--python-configs", "5", "--samples", "50", "--repeats", "1"]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "FK per configuration, numba fk_batch" in out and "JIT warm-up" in out


FLOATING = """<robot name="f">
  <link name="world"/>
  <link name="body"><collision><geometry><sphere radius="0.1"/></geometry></collision></link>
  <joint name="free" type="floating"><parent link="world"/><child link="body"/>
    <origin xyz="0 0 1"/></joint>
</robot>"""


def test_a_urdf_floating_joint_becomes_six_virtual_joints_after_its_origin(tmp_path):
    robot = Robot.from_urdf(_write(tmp_path, FLOATING), base_bounds=[(-1, 1), (-2, 2), (0, 3)])
    assert robot.joint_names == [f"free_{s}" for s in ("x", "y", "z", "yaw", "pitch", "roll")]
    np.testing.assert_array_equal(robot.lower[:3], [-1, -2, 0])
    T = robot.fk([0.1, 0.2, 0.3, np.pi / 2, 0, 0])["body"]
    np.testing.assert_allclose(T[:3, 3], [0.1, 0.2, 1.3], atol=1e-12)
    np.testing.assert_allclose(T[:3, 0], [0, 1, 0], atol=1e-12)  # yaw turns x onto y


def test_package_paths_resolve_through_package_dirs(tmp_path):
    import trimesh

    (tmp_path / "elsewhere" / "m").mkdir(parents=True)
    trimesh.creation.icosphere(radius=0.1).export(tmp_path / "elsewhere" / "m" / "ball.stl")
    p = _write(tmp_path, ARM.format(geom='<mesh filename="package://mypkg/m/ball.stl"/>', lo=-1))
    with pytest.raises(URDFMeshNotFoundError):
        Robot.from_urdf(p)
    robot = Robot.from_urdf(p, package_dirs={"mypkg": tmp_path / "elsewhere"})
    assert len(robot.pieces) == 1 and robot.volume_ratios()["b"] == pytest.approx(1.0, abs=1e-9)
