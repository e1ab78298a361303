"""The motion bound is never exceeded (robot/bounds.py): along random straight edges, no vertex of
any link model moves farther than mu_i |t - s|, and for self-collision pairs no vertex moves
farther in the pair's lowest-common-ancestor frame than the pair bound allows."""

import os

import numpy as np
import pytest

from planning_collision import robots
from planning_collision.geometry import Box, Convex, Cylinder, Sphere
from planning_collision.kernels._jit import kernel  # its cache recompiles past a stale index
from planning_collision.kernels.robot.fk import fk
from planning_collision.kernels.robot.motion_bounds import motion_bounds

N_TIMES = 50
NO_JIT = os.environ.get("NUMBA_DISABLE_JIT") == "1"


def _link_vertices(robot):
    """(link index per vertex, vertices in the link frame): every vertex of every piece;
    spheres and cylinders by 26 and 2 x 24 points on their surface (their extreme points
    along the directions that matter lie on those circles/poles)."""
    links, pts = [], []
    dirs = np.array(
        [[i, j, k] for i in (-1, 0, 1) for j in (-1, 0, 1) for k in (-1, 0, 1) if i or j or k],
        float,
    )
    dirs /= np.linalg.norm(dirs, axis=1, keepdims=True)
    ang = np.linspace(0, 2 * np.pi, 24, endpoint=False)
    for p in robot.pieces:
        s = p.shape
        if isinstance(s, Convex):
            v = np.asarray(s.hull.vertices)
        elif isinstance(s, Box):
            h = np.asarray(s.extents) / 2
            v = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)]) * h
        elif isinstance(s, Sphere):
            v = dirs * s.radius
        elif isinstance(s, Cylinder):
            rim = np.stack([s.radius * np.cos(ang), s.radius * np.sin(ang), np.zeros_like(ang)], 1)
            v = np.concatenate([rim + [0, 0, -s.length / 2], rim + [0, 0, s.length / 2]])
        else:
            raise TypeError(type(s))
        pts.append(v @ p.pose[:3, :3].T + p.pose[:3, 3])
        links.append(np.full(len(v), robot.link_index[p.link], np.int32))
    return np.concatenate(links), np.ascontiguousarray(np.concatenate(pts))


@kernel
def _moved_over_bound(P, vsel, mu_v, dt, worst):
    """max(worst, moved / bound) over vertices vsel and time pairs (0, k), (k - 1, k), where
    P (n_times, n_verts, 3) are positions and mu_v[v] the bound per unit t of vertex v."""
    nt = P.shape[0]
    for v in vsel:
        m = mu_v[v]
        for k in range(1, nt):
            for s in (0, k - 1):
                dx = P[k, v, 0] - P[s, v, 0]
                dy = P[k, v, 1] - P[s, v, 1]
                dz = P[k, v, 2] - P[s, v, 2]
                d = np.sqrt(dx * dx + dy * dy + dz * dz)
                if d > 1e-12:
                    bound = m * (k - s) * dt
                    r = d / bound if bound > 0.0 else np.inf
                    if r > worst:
                        worst = r
    return worst


@kernel
def _positions(T, frame, vlink, vpts, P):
    """P[k, v] = frame[k] @ T[k, vlink[v]] @ vpts[v] for every time k and vertex v."""
    for k in range(T.shape[0]):
        F = frame[k]
        for v in range(vlink.shape[0]):
            A = T[k, vlink[v]]
            x, y, z = vpts[v, 0], vpts[v, 1], vpts[v, 2]
            wx = A[0, 0] * x + A[0, 1] * y + A[0, 2] * z + A[0, 3]
            wy = A[1, 0] * x + A[1, 1] * y + A[1, 2] * z + A[1, 3]
            wz = A[2, 0] * x + A[2, 1] * y + A[2, 2] * z + A[2, 3]
            for r in range(3):
                P[k, v, r] = F[r, 0] * wx + F[r, 1] * wy + F[r, 2] * wz + F[r, 3]


@kernel
def _worst_link_ratio(model, R, Q0, Q1, ts, vlink, vpts, slot):
    """Over all motions Q0[i] -> Q1[i]: max moved / (mu |t - s|) over every vertex and time
    pairs (0, k), (k - 1, k), world frame, with FK and mu from the robot's own kernels (FK is
    checked against yourdfpy in test_robot.py)."""
    nt = ts.shape[0]
    nl = model.parent.shape[0]
    dt = ts[1] - ts[0]
    T = np.empty((nt, nl, 4, 4))
    pos = np.empty((nt, 3))
    mu = np.empty(R.shape[0])
    q = np.empty(Q0.shape[1])
    worst = 0.0
    for i in range(Q0.shape[0]):
        for k in range(nt):
            q[:] = Q0[i] + ts[k] * (Q1[i] - Q0[i])
            fk(model, q, T[k])
        motion_bounds(R, Q0[i], Q1[i], mu)
        for v in range(vlink.shape[0]):
            li = vlink[v]
            x, y, z = vpts[v, 0], vpts[v, 1], vpts[v, 2]
            m = mu[slot[v]] * dt
            for k in range(nt):
                A = T[k, li]
                pos[k, 0] = A[0, 0] * x + A[0, 1] * y + A[0, 2] * z + A[0, 3]
                pos[k, 1] = A[1, 0] * x + A[1, 1] * y + A[1, 2] * z + A[1, 3]
                pos[k, 2] = A[2, 0] * x + A[2, 1] * y + A[2, 2] * z + A[2, 3]
            for k in range(1, nt):
                for s in (0, k - 1):
                    dx = pos[k, 0] - pos[s, 0]
                    dy = pos[k, 1] - pos[s, 1]
                    dz = pos[k, 2] - pos[s, 2]
                    d2 = dx * dx + dy * dy + dz * dz
                    b = m * (k - s) * worst
                    if d2 > b * b and d2 > 1e-24:  # only then can the worst ratio grow
                        worst = np.sqrt(d2) / (m * (k - s)) if m > 0.0 else np.inf
    return worst


def _robot(name):
    if name == "planar_arm+fingers":
        return robots.load(
            "planar_arm", active_joints=["joint1", "joint2", "joint3", "finger_joint"]
        )
    return robots.load(name)


def _motions(robot, n, rng):
    """n random edges: half uniform over the limits, half short steps."""
    q0 = robot.random_configurations(n, rng=rng)
    q1 = robot.random_configurations(n, rng=rng)
    short = np.arange(n) % 2 == 1
    step = rng.normal(size=(n, robot.dof)) * 0.05
    q1[short] = np.clip(q0[short] + step[short], robot.lower, robot.upper)
    return q0, q1


@pytest.mark.parametrize(
    "name,n_motions",
    [
        ("panda", 10_000),
        ("ur5", 2_000),
        ("planar_arm", 2_000),
        ("planar_arm+fingers", 2_000),  # an active prismatic joint and its mimic
        ("free_flyer", 2_000),
    ],
)
def test_no_vertex_moves_farther_than_its_link_motion_bound(name, n_motions, rng):
    if name in ("panda", "ur5"):
        pytest.importorskip("cmeel")
    if NO_JIT:
        n_motions = 3  # plain Python: coverage of the test path only
    robot = _robot(name)
    vlink, vpts = _link_vertices(robot)
    slot_of_link = {int(li): k for k, li in enumerate(robot.collision_links)}
    slot = np.array([slot_of_link[int(li)] for li in vlink], np.int32)
    ts = np.linspace(0.0, 1.0, N_TIMES)
    q0s, q1s = _motions(robot, n_motions, rng)
    # the kernel's bounds are the public ones
    np.testing.assert_allclose(
        robot.motion_bounds(q0s[0], q1s[0]),
        robot.motion_bound_R @ np.abs(q1s[0] - q0s[0]),
        rtol=1e-14,
    )
    worst = _worst_link_ratio(robot.model, robot.motion_bound_R, q0s, q1s, ts, vlink, vpts, slot)
    assert 0.0 < worst <= 1.0 + 1e-9, f"{name}: a vertex moved {worst:.6f}x its bound"


@pytest.mark.parametrize("name", ["panda", "planar_arm+fingers"])
def test_pair_bound_covers_both_links_moving_in_their_common_ancestor_frame(name, rng):
    """For pair (a, b) with LCA c: in c's frame, max displacement of a's vertices plus max
    displacement of b's vertices (what can close the gap) never exceeds the pair bound."""
    if name == "panda":
        pytest.importorskip("cmeel")
    robot = _robot(name)
    vlink, vpts = _link_vertices(robot)
    pairs = robot.self_collision_pairs()
    lca = [robot.lowest_common_ancestor(int(a), int(b)) for a, b in pairs]
    ts = np.linspace(0.0, 1.0, N_TIMES)
    q0s, q1s = _motions(robot, 3 if NO_JIT else 300, rng)
    P = np.empty((N_TIMES, len(vlink), 3))
    worst = 0.0
    for q0, q1 in zip(q0s, q1s, strict=True):
        T = robot.fk_batch(q0 + ts[:, None] * (q1 - q0))
        mup = robot.pair_motion_bounds(q0, q1)
        for c in set(lca):
            _positions(T, np.linalg.inv(T[:, c]), vlink, vpts, P)
            for (a, b), m, cc in zip(pairs, mup, lca, strict=True):
                if cc != c:
                    continue
                mu_v = np.full(len(vlink), m)
                # each side against the whole pair bound; the two ratios add up
                ra = _moved_over_bound(P, np.flatnonzero(vlink == a), mu_v, ts[1], 0.0)
                rb = _moved_over_bound(P, np.flatnonzero(vlink == b), mu_v, ts[1], 0.0)
                worst = max(worst, ra + rb)
    assert 0.0 < worst <= 1.0 + 1e-9, f"{name}: pair motion {worst:.6f}x its bound"


@pytest.mark.parametrize("name", ["panda", "ur5", "planar_arm", "planar_arm+fingers", "free_flyer"])
def test_local_bound_holds_around_the_posed_configuration(name, rng):
    """The checker's local bounds (kernels/robot/motion_bounds.py): within |t - s| <= h of a posed
    configuration q(s), no vertex of a link moves farther than A(s) h + B h^2 / 2, nor
    than S(s) h + alpha h^2 / 2 (world frame), and for a self pair the two links'
    displacements in their LCA frame add up to no more than the pair's. A is below the
    global rate mu, and S below A, on most motions, else they would not be worth their cost."""
    from planning_collision.kernels.robot.motion_bounds import growth, rate
    from planning_collision.robot.geometry import link_spheres

    if name in ("panda", "ur5"):
        pytest.importorskip("cmeel")
    robot = _robot(name)
    vlink, vpts = _link_vertices(robot)
    links = robot.collision_links
    pairs = robot.self_collision_pairs()
    start, term, weight = robot.bounds.body_terms(links, pairs)
    centre, radius = link_spheres(robot.collision, len(robot.link_names))
    axis = robot.model.axis
    R = np.concatenate([robot.motion_bound_R, robot.pair_speed_rows(pairs)])
    lca = [robot.lowest_common_ancestor(int(a), int(b)) for a, b in pairs]
    bodies = [(int(i), -1, -1) for i in links] + [
        (int(a), int(b), c) for (a, b), c in zip(pairs, lca, strict=True)
    ]
    ts = np.linspace(0.0, 1.0, N_TIMES)
    q0s, q1s = _motions(robot, 3 if NO_JIT else 150, rng)
    P = np.empty((N_TIMES, len(vlink), 3))
    worst, tighter, total = [0.0, 0.0], [0, 0], 0
    for q0, q1 in zip(q0s, q1s, strict=True):
        dqa = np.abs(q1 - q0)
        T = robot.fk_batch(q0 + ts[:, None] * (q1 - q0))
        s = int(rng.integers(N_TIMES))
        h = np.abs(ts - ts[s])
        world = np.broadcast_to(np.eye(4), (N_TIMES, 4, 4))
        frames = {-1: world}
        for c in set(lca):
            frames[c] = np.linalg.inv(T[:, c])
        for b, (la, lb, c) in enumerate(bodies):
            A, S = rate(start, term, weight, centre, radius, axis, T[s], dqa, q1 - q0, b)
            B, alpha = growth(start, term, weight, dqa, b)
            _positions(T, frames[c], vlink, vpts, P)
            moved = np.zeros(N_TIMES)
            for li in (la, lb) if lb >= 0 else (la,):
                d = np.linalg.norm(P[:, vlink == li] - P[s, vlink == li], axis=2)
                moved += d.max(axis=1)
            for k, bound in enumerate((A * h + 0.5 * B * h * h, S * h + 0.5 * alpha * h * h)):
                assert (moved[bound == 0.0] < 1e-12).all(), f"{name}: body {b} moved unbounded"
                ok = bound > 0.0
                if ok.any():
                    worst[k] = max(worst[k], float((moved[ok] / bound[ok]).max()))
            mu = float(R[b] @ dqa)
            total += 1
            tighter[0] += A < mu
            tighter[1] += S < A
    assert worst[0] <= 1.0 + 1e-9, f"{name}: a body moved {worst[0]:.6f}x its local bound"
    assert worst[1] <= 1.0 + 1e-9, f"{name}: a body moved {worst[1]:.6f}x its velocity bound"
    if not NO_JIT and name != "free_flyer":
        assert tighter[0] > 0.5 * total, f"{name}: local rate below mu on {tighter[0]}/{total}"
        assert tighter[1] > 0.5 * total, f"{name}: S below A on {tighter[1]}/{total}"


def _chain_urdf(path, n: int):
    """A chain of n box links joined by revolute joints about alternating axes."""
    box = '<box size="0.04 0.04 0.1"/>'
    box = f'<collision><origin xyz="0 0 0.05"/><geometry>{box}</geometry></collision>'
    links = [f'<link name="l{i}">{box}</link>' for i in range(n)]
    joints = [
        f'<joint name="j{i}" type="revolute"><parent link="l{i - 1}"/><child link="l{i}"/>'
        f'<origin xyz="0 0 0.1"/><axis xyz="{i % 2} {(i + 1) % 2} 0"/>'
        '<limit lower="-1" upper="1" effort="1" velocity="1"/></joint>'
        for i in range(1, n)
    ]
    path.write_text(f'<robot name="chain{n}">{"".join(links + joints)}</robot>')
    return path


def test_a_long_chain_gets_its_checker_in_work_quadratic_in_its_links(tmp_path):
    """A 100-link chain took 218 s to its first checker: each link's and each pair's motion
    bound rows summed the joints' reaches again for every joint (O(n^4) Python). Counted,
    not timed: the Python calls building a checker's model for 20 and 40 links (143,253 and
    1,954,643 before: x13.6; now 29,136 and 154,376)."""
    import cProfile
    import pstats

    import planning_collision as pc

    calls = []
    for n in (6, 20, 40):  # the first loads the kernels: not counted
        robot = pc.Robot.from_urdf(
            _chain_urdf(tmp_path / f"c{n}.urdf", n), cache_dir=False, compute_acm=False
        )
        prof = cProfile.Profile()
        prof.enable()
        pc.CollisionChecker(robot, pc.Scene(), self_tables=False)
        prof.disable()
        calls.append(pstats.Stats(prof).total_calls)
    assert calls[2] / calls[1] < 8, calls  # n^2 pairs with n-long chains; was n^4
