"""Building the self-pair clearance tables the checker reads (kernels/robot/self_tables.py says
what they hold and how they are used).

A checked self pair gets a table when at most two configuration coordinates lie between its
links (below their lowest common ancestor), none of them a continuous joint (the grid spans
the joint limits). Its axes get cells fine enough that a cell's bound gives away at most
`LOSS` per axis (R_u h_u <= LOSS), at most `MAX_CELLS` per axis. The distance at each cell
centre comes from the checker's own kernels (`pose`, `body_distance`) on the robot alone, resolved
up to `CAP` (a farther cell reads CAP minus its loss); pairs moved by the same joints share
one pass over the grid (about 0.7 s for the Panda's 65,536 cells). Tables depend only on
the robot: they are kept per process and in the per-user cache (robot/cache.py,
``pairtable-<key>.npz``; none when the robot was loaded with ``cache_dir=False``), keyed by
its geometry, kinematics and the grid settings.

On the Panda, link5 and the body of link7, the hand and the fingers (2-4 cm apart by
design, tested with GJK at every state before) get a 256 x 256 grid over joints 6 and 7;
checked per link (``rigid_bodies=False``), its four pairs share one, and the two held
fingers get a single cell.
"""

from __future__ import annotations

import hashlib
import logging

import numpy as np

from ..robot.cache import derived_cache_file, read_entry, write_entry

log = logging.getLogger(__name__)

LOSS = 0.0015  # m given away per axis by a cell's width
MAX_CELLS = 256  # per axis
CAP = 0.1  # m: distances resolved up to this
WIDEN = 1e-9  # rad (or m): the hair a cell's bound also covers beyond the cell

_TABLES: dict = {}


def _axes(robot, a: int, b: int):
    """{configuration index: Lipschitz weight} of the pair (a, b) (robot/bounds.py)."""
    bounds = robot.bounds
    c = bounds.lowest_common_ancestor(a, b)
    w: dict[int, float] = {}
    for link in (a, b):
        for _, d, mult, r in bounds.terms(link, c):
            w[d] = w.get(d, 0.0) + mult * r
    return w


def _robot_key(robot) -> str:
    """What every table of the robot depends on: its geometry, kinematics and limits, and
    the grid settings."""
    h = hashlib.sha1(str(robot.geometry_key).encode())
    for arr in robot.model:
        h.update(np.ascontiguousarray(arr).tobytes())
    h.update(np.asarray(robot.continuous, bool).tobytes())
    h.update(f"{LOSS},{MAX_CELLS},{CAP}".encode())
    return h.hexdigest()


def _key(robot_key: str, a: int, b: int) -> str:
    """The table key of the pair of links (a, b)."""
    return hashlib.sha1(f"{robot_key},{a},{b}".encode()).hexdigest()


def _cache_file(robot, key: str):
    return derived_cache_file(robot, f"pairtable-{key}.npz")


def _table_from(z: dict, robot, axes: tuple) -> tuple:
    """The table of a cache entry's arrays, when it is one for these axes of this robot:
    a grid on the joints' limits of at most MAX_CELLS cells per axis, and a bound per cell,
    finite and at most CAP; ValueError otherwise (a shorter bound array read past its end)."""
    got = tuple(int(d) for d in z["axes"])
    lo, w, n, lb = z["lo"], z["w"], z["n"], z["lb"]
    m = len(axes)
    if got != axes or lo.shape != (m,) or w.shape != (m,) or n.shape != (m,):
        raise ValueError(f"it is a table over joints {got}, not {axes}")
    if np.any(n < 1) or np.any(n > MAX_CELLS) or lb.shape != (int(np.prod(n)),):
        raise ValueError(f"its grid of {n.tolist()} cells holds {lb.size} bounds")
    span = np.array([robot.upper[d] - robot.lower[d] for d in axes], float)
    lower = np.array([robot.lower[d] for d in axes], float)
    if not (
        np.array_equal(lo, lower)
        and np.allclose(w * np.where(span > 0, n, 1), np.where(span > 0, span, 1))
    ):
        raise ValueError("its grid is not on the robot's joint limits")
    if not np.all(np.isfinite(lb)) or np.any(lb > CAP):
        raise ValueError("its bounds are not finite distances up to CAP")
    return (axes, lo, w, n, lb)


def _load(robot, key: str, axes: tuple) -> bool:
    """Read the table `key` (over configuration indices `axes`) from the robot's cache into
    _TABLES; False when absent or not usable (robot/cache.py `read_entry`)."""
    got: list = []
    if read_entry(_cache_file(robot, key), key, "self-pair table",
                  lambda z: got.append(_table_from(z, robot, axes))):  # fmt: skip
        _TABLES[key] = got[0]
        return True
    return False


def _save(robot, key: str, table) -> None:
    f = _cache_file(robot, key)
    if f is not None:
        axes, lo, w, n, lb = table
        write_entry(
            f, key, {"axes": np.asarray(axes, np.int64), "lo": lo, "w": w, "n": n, "lb": lb}
        )


def _grid(robot, axes: tuple, weight: np.ndarray):
    """(lo, w, n, centres) of the grid on axes (one or two configuration indices)."""
    lo = np.array([robot.lower[d] for d in axes], float)
    span = np.array([robot.upper[d] for d in axes], float) - lo
    n = np.clip(np.ceil(span * weight / (2.0 * LOSS)), 1, MAX_CELLS).astype(np.int64)
    w = np.where(span > 0.0, span / n, 1.0)
    centres = [lo[e] + (np.arange(n[e]) + 0.5) * w[e] for e in range(len(axes))]
    return lo, w, n, centres


def _build_group(robot, evaluate, n_links: int, axes: tuple, members: list) -> dict:
    """{j: table} of the pairs `members` ((j, a, b, weights)), all moved by the joints
    `axes`."""
    top = np.array([max(m[3].get(d, 0.0) for m in members) for d in axes], float)
    lo, w, n, centres = _grid(robot, axes, top)
    base = np.clip(np.zeros(robot.dof), robot.lower, robot.upper)
    mesh = np.meshgrid(*centres, indexing="ij") if axes else []
    Q = np.tile(base, (int(np.prod(n)), 1))
    for e, d in enumerate(axes):
        Q[:, d] = mesh[e].ravel()
    log.info(
        "%s: self-pair clearance tables for %d pairs over joints %s, %d cells (once per robot)",
        robot.name, len(members), [robot.joint_names[a] for a in axes], len(Q),
    )  # fmt: skip
    d = evaluate(robot, Q, [n_links + m[0] for m in members], CAP)
    out = {}
    for col, (j, _, _, weight) in enumerate(members):
        loss = sum(weight.get(ax, 0.0) * (0.5 * w[e] + WIDEN) for e, ax in enumerate(axes))
        out[j] = (axes, lo, w, n, d[:, col] - loss)
    return out


def no_tables(pairs) -> dict:
    """The CheckRobot table fields (pt_*, by name) of self pairs `pairs` without tables."""
    k = len(pairs)
    return {
        "pt_q": np.full((k, 2), -1, np.int32),
        "pt_lo": np.zeros((k, 2)),
        "pt_w": np.ones((k, 2)),
        "pt_n": np.ones((k, 2), np.int32),
        "pt_start": np.full(k, -1, np.int32),
        "pt_min": np.full(k, -np.inf),
        "pt_lb": np.zeros(1),
    }


def pair_tables(robot, pairs, n_links: int, evaluate) -> dict:
    """The CheckRobot table fields (pt_q, pt_lo, pt_w, pt_n, pt_start, pt_min, pt_lb), by
    name, of the self pairs `pairs` ((k, 2) link indices; body n_links + j is pair j).
    evaluate(robot, Q, bodies, cap): (len(Q), len(bodies)) lower bounds on those pair
    bodies' distances at the configurations Q, exact up to cap (checker/model.py
    `pair_distances`)."""
    fields = no_tables(pairs)  # filled in below, pair by pair
    pt_q, pt_lo, pt_w, pt_n = fields["pt_q"], fields["pt_lo"], fields["pt_w"], fields["pt_n"]
    pt_start, pt_min = fields["pt_start"], fields["pt_min"]
    continuous = np.asarray(robot.continuous, bool)
    robot_key = _robot_key(robot)
    keys: list = []  # per pair: its table's key, or None (no table)
    groups: dict[tuple, list] = {}
    for j, (a, b) in enumerate(np.asarray(pairs, np.int64).reshape(-1, 2)):
        a, b = int(a), int(b)
        # a joint its limits hold still is no axis: the base configuration has its value
        weight = {d: v for d, v in _axes(robot, a, b).items() if robot.upper[d] > robot.lower[d]}
        if len(weight) > 2 or any(continuous[d] for d in weight):
            keys.append(None)
            continue
        keys.append(_key(robot_key, a, b))
        if keys[j] not in _TABLES and not _load(robot, keys[j], tuple(sorted(weight))):
            groups.setdefault(tuple(sorted(weight)), []).append((j, a, b, weight))
    for axes, members in groups.items():
        tables = _build_group(robot, evaluate, n_links, axes, members)
        for j, _, _, _ in members:
            _TABLES[keys[j]] = tables[j]
            _save(robot, keys[j], tables[j])
    chunks, used = [], 0
    for j, key in enumerate(keys):
        if key is None:
            continue
        axes, lo, w, n, lb = _TABLES[key]
        m = len(axes)
        pt_q[j, :m] = axes
        pt_lo[j, :m] = lo
        pt_w[j, :m] = w
        pt_n[j, :m] = n
        pt_start[j] = used
        pt_min[j] = float(lb.min())
        chunks.append(lb)
        used += lb.size
    pt_lb = np.concatenate(chunks) if chunks else np.zeros(1)
    fields["pt_lb"] = np.ascontiguousarray(pt_lb, np.float64)
    return fields
