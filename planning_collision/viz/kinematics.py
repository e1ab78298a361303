"""Configurations for drawing: validation of paths and roadmaps, the end-effector link,
end-effector positions, and dense joint-space paths."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

__all__ = [
    "end_effector_link",
    "end_effector_positions",
    "densify",
    "as_configurations",
    "as_roadmap",
]

# Joint-space step of a drawn end-effector curve, rad (or m for prismatic joints): fine
# enough that the polyline is within a millimetre or so of the true curve for an arm.
CURVE_STEP = 0.02


def end_effector_link(robot) -> str:
    """The link a path or roadmap is drawn at: from the child link of the last active
    joint, follow single children down the tree; then, if that link has a leaf child
    without collision geometry (a tool frame such as ``panda_hand_tcp`` or ``tool0``), that
    child. Panda: ``panda_hand_tcp``; UR5: ``tool0``."""
    parent = robot.model.parent
    attached = set(getattr(robot, "attached", {}))  # a held object is not the tool
    children: dict[int, list[int]] = {}
    for i, p in enumerate(parent):
        if robot.link_names[i] not in attached:
            children.setdefault(int(p), []).append(i)
    moved = [i for i, j in enumerate(robot.link_joint) if j in set(robot.joint_names)]
    i = moved[-1] if moved else len(robot.link_names) - 1
    while len(children.get(i, [])) == 1:
        i = children[i][0]
    has_geometry = {p.link for p in robot.pieces}
    tools = [
        c
        for c in children.get(i, [])
        if not children.get(c) and robot.link_names[c] not in has_geometry
    ]
    if tools:
        i = tools[0]
    return robot.link_names[i]


def end_effector_positions(robot, Q, link: str) -> npt.NDArray[np.float64]:
    """(m, 3) world positions of `link`'s origin at configurations Q (m, dof), m."""
    i = robot.link_index[link]
    return robot.fk_batch(np.atleast_2d(Q))[:, i, :3, 3].copy()


def densify(path: np.ndarray, step: float = CURVE_STEP) -> npt.NDArray[np.float64]:
    """The straight joint-space segments of `path (n, dof)` sampled so that no joint moves
    more than `step` between samples; the waypoints themselves are kept."""
    out = [path[:1]]
    for a, b in zip(path[:-1], path[1:], strict=True):
        k = max(1, int(np.ceil(np.max(np.abs(b - a)) / step)))
        t = np.arange(1, k + 1)[:, None] / k
        out.append(a + t * (b - a))
    return np.concatenate(out)


def as_configurations(robot, Q, name: str) -> npt.NDArray[np.float64]:
    """`Q` as a finite (m, dof) float64 array (one configuration (dof,) is accepted), else
    ValueError naming `name`."""
    try:
        a = np.array(Q, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a numeric (m, {robot.dof}) array, got {Q!r}") from None
    if a.ndim == 1 and a.size == robot.dof:
        a = a[None]
    if a.size == 0 and a.ndim <= 2:
        return np.zeros((0, robot.dof))
    if a.ndim != 2 or a.shape[1] != robot.dof:
        raise ValueError(
            f"{name} must have shape (m, {robot.dof}) for robot {robot.name!r} "
            f"({robot.dof} joints), got {a.shape}"
        )
    if not np.all(np.isfinite(a)):
        r, c = np.argwhere(~np.isfinite(a))[0]
        raise ValueError(f"{name}[{r}, {c}] ({robot.joint_names[c]}) must be finite, got {a[r, c]}")
    return a


def as_roadmap(robot, roadmap) -> tuple[np.ndarray, np.ndarray]:
    """``(vertices (n, dof) float64, edges (m, 2) int64)`` from a ``(vertices, edges)``
    pair, validated (edges index the vertices)."""
    try:
        vertices, edges = roadmap
    except (TypeError, ValueError):
        raise ValueError(
            f"roadmap must be a pair (vertices (n, {robot.dof}), edges (m, 2)), got "
            f"{type(roadmap).__name__}"
        ) from None
    V = as_configurations(robot, vertices, "roadmap vertices")
    try:
        E = np.array(edges, dtype=np.float64).reshape(-1, 2) if len(edges) else np.zeros((0, 2))
    except (TypeError, ValueError):
        raise ValueError(f"roadmap edges must be an (m, 2) integer array, got {edges!r}") from None
    if not np.all(E == np.round(E)):
        raise ValueError("roadmap edges must hold integer vertex indices")
    E = E.astype(np.int64)
    bad = np.flatnonzero(((E < 0) | (E >= len(V))).any(axis=1))
    if bad.size:
        raise ValueError(
            f"roadmap edges[{bad[0]}] = {E[bad[0]].tolist()} indexes outside the {len(V)} vertices"
        )
    return V, E
