"""The working range (kernels/base/tolerances.py WORLD_LIMIT, 10 km): outside it shapes, poses,
scenes and robots are refused with a ValueError naming the field and the value; inside it,
obstacles as large as it allows give the answers of small ones."""

from __future__ import annotations

import numpy as np
import pytest

import planning_collision as pc
from planning_collision.conventions import WORLD_LIMIT
from planning_collision.io.urdf import example_robot_data_dir

L = WORLD_LIMIT


def _T(x=0.0, y=0.0, z=0.0):
    T = np.eye(4)
    T[:3, 3] = (x, y, z)
    return T


def _wall_mesh(h: float, x: float = 0.5) -> pc.Mesh:
    """A square of half-size h in the plane X = x."""
    v = np.array([[x, -h, -h], [x, h, -h], [x, h, h], [x, -h, h]], float)
    return pc.Mesh(v, np.array([[0, 1, 2], [0, 2, 3]]))


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda: _wall_mesh(1e9), r"Mesh\.vertices must lie within \+-10000 m"),
        (lambda: pc.Box((1e300,) * 3), r"Box\.extents must lie within"),
        (lambda: pc.Sphere(2 * L), r"Sphere\.radius = 20000\.0 m is outside the working range"),
        (lambda: pc.Capsule(0.1, 1e5), r"Capsule\.length"),
        (lambda: pc.Cylinder(1e5, 1.0), r"Cylinder\.radius"),
        (lambda: pc.Cone(1.0, 1e15), r"Cone\.length"),
        (lambda: pc.Convex([[0, 0, 0], [1e5, 0, 0]]), r"Convex\.points"),
        (lambda: pc.PointCloud([[0, 0, 1e6]], 0.01), r"PointCloud\.points"),
        (lambda: pc.Halfspace((1, 0, 0), 1e5), r"Halfspace\.offset"),
        (
            lambda: pc.VoxelGrid([[0, 0, 1e19]], 0.05),
            r"VoxelGrid\.cells\[0\] = \[0\.0, 0\.0, 1e\+19\]",
        ),
        (lambda: pc.VoxelGrid([[0, 0, 2**62]], 0.05), r"VoxelGrid\.cells\[0\]"),
        (lambda: pc.VoxelGrid([[0, 0, 0]], 1e5), r"VoxelGrid\.voxel_size"),
        (lambda: pc.VoxelGrid([[0, 0, 0]], 0.1, (0, 2e4, 0)), r"VoxelGrid\.origin"),
        (lambda: pc.Scene().add(pc.Sphere(0.1), _T(1e5)), r"pose T translation .* working range"),
        (
            lambda: pc.Scene().add(pc.Box((L, L, L)), _T(0.9 * L)),
            r"obstacle reaches from .* outside the working range",
        ),
        (
            lambda: pc.Scene().add([(pc.Sphere(1.0), _T(0, 0, 0.6 * L))], _T(0, 0, 0.6 * L)),
            r"outside the working range",
        ),
        (lambda: pc.distance(pc.Sphere(1), _T(1e5), pc.Sphere(1), _T()), r"Ta translation"),
        (lambda: pc.collide(pc.Sphere(1), _T(), pc.Sphere(1), _T(z=-1e7)), r"Tb translation"),
    ],
)
def test_sizes_and_positions_outside_the_working_range_are_refused_by_name(make, match):
    with pytest.raises(ValueError, match=match):
        make()


def test_a_voxel_grid_at_the_edge_of_the_range_keeps_its_cells():
    g = pc.VoxelGrid([[0, 0, 1999], [0, 0, -2000]], 5.0)  # corners at +-10,000 m
    assert g.cells.tolist() == [[0, 0, -2000], [0, 0, 1999]]


@pytest.fixture(scope="module")
def panda():
    try:
        example_robot_data_dir()
    except ImportError as e:
        pytest.skip(str(e))
    from planning_collision import robots

    return robots.load(
        "panda", fixed_joints={"panda_finger_joint1": 0.04, "panda_finger_joint2": 0.04}
    )


def _answers(robot, shape, T, Q):
    s = pc.Scene()
    s.add(shape, T, name="wall")
    c = pc.CollisionChecker(robot, s, self_collision=False)
    one = np.array([c.is_valid(q) for q in Q])
    assert np.array_equal(c.is_valid_batch(Q), one)
    assert np.array_equal(np.array([c.clearance(q) > 0 for q in Q]), one)
    return one


def test_walls_as_large_as_the_range_allows_answer_as_small_walls_do(panda, rng):
    """A wall through the Panda's workspace as a mesh and as a box, 4 m wide and as wide as
    the range allows: the same verdicts on 300 configurations (without the range, a 1e9 m
    wall let links through it: kernels/base/tolerances.py)."""
    Q = panda.random_configurations(300, rng)
    small = _answers(panda, _wall_mesh(2.0), np.eye(4), Q)
    assert 30 < small.sum() < 270  # the wall matters
    assert np.array_equal(_answers(panda, _wall_mesh(L), np.eye(4), Q), small)
    box_small = _answers(panda, pc.Box((0.02, 4.0, 4.0)), _T(0.5), Q)
    assert np.array_equal(_answers(panda, pc.Box((0.02, L, L)), _T(0.5), Q), box_small)


def test_a_box_as_large_as_the_range_around_the_robot_collides_everywhere(panda, rng):
    Q = panda.random_configurations(100, rng)
    assert not _answers(panda, pc.Box((L, L, L)), np.eye(4), Q).any()
    # a mesh is a surface: a closed mesh cube around the robot touches nothing
    cube = pc.Mesh.from_trimesh(__import__("trimesh").creation.box(extents=(L, L, L)))
    assert _answers(panda, cube, np.eye(4), Q).all()


@pytest.mark.parametrize("at", [0.0, 0.99 * L, -0.99 * L])
def test_pair_distances_at_the_edge_of_the_range_match_the_closed_form(at):
    """Sphere-sphere and sphere-box near the world box's corner, and a size at the limit."""
    c = np.array([at, at, at])
    d = pc.distance(pc.Sphere(0.5), _T(*c), pc.Sphere(0.25), _T(*(c + (1.0, 0.0, 0.0))))
    assert d.distance == pytest.approx(0.25, abs=1e-9)
    d = pc.distance(pc.Sphere(0.5), _T(*c), pc.Box((1.0, 1.0, 1.0)), _T(*(c + (0.0, 0.0, 1.5))))
    assert d.distance == pytest.approx(0.5, abs=1e-9)
    big = pc.Box((0.5 * L, 0.5 * L, 0.5 * L))
    d = pc.distance(pc.Sphere(0.5), _T(0.25 * L + 3.0), big, _T())
    assert d.distance == pytest.approx(2.5, abs=1e-9)


def _arm(**kw):
    from planning_collision import robots

    return pc.Robot.from_urdf(
        robots.urdf_path("planar_arm"), cache_dir=False, compute_acm=False, **kw
    )


@pytest.mark.parametrize(
    "kw, match",
    [
        # with its base at x = 1e16 m, the shipped arm's self checks gave 19 of 314
        # self-colliding configurations free and 88 free ones colliding
        ({"floating_base": True, "base_bounds": [(-1e16, 1e16)] * 3}, r"base_bounds"),
        ({"floating_base": True, "base_bounds": [(0, 1), (0, 1), (0, 2 * L)]}, r"base_bounds"),
        ({"fixed_joints": {"finger_joint": 1e9}}, r"fixed_joints\['finger_joint'\] = 1000000000"),
        (
            {
                "active_joints": ["joint1", "joint2", "joint3", "finger_joint"],
                "joint_limits": {"finger_joint": (-1e9, 1e9)},
            },
            r"joint_limits\['finger_joint'\]",
        ),
        # each in range, their sum not: the base's travel and the fingers' held offset
        (
            {
                "floating_base": True,
                "base_bounds": [(-0.99 * L, 0.99 * L)] * 3,
                "fixed_joints": {"finger_joint": 0.5 * L},
            },
            r"link 'finger_left' may reach .* m from the root",
        ),
    ],
)
def test_robot_load_options_outside_the_working_range_are_refused_by_name(kw, match):
    with pytest.raises(ValueError, match=match):
        _arm(**kw)


def test_robot_load_options_at_the_edge_of_the_range_are_taken():
    robot = _arm(floating_base=True, base_bounds=[(-0.9 * L, 0.9 * L)] * 3)
    assert robot.upper[0] == 0.9 * L
    assert _arm(fixed_joints={"finger_joint": 0.03}).held_joints["finger_joint"] == 0.03
