"""Distances at one configuration named per link, for what a user reads: contacts, error
messages, `link_distances`.

The checker checks rigid bodies (robot/rigid.py): the Panda's link7, hand and fingers are
one body, named by its links joined by "+". A contact of that body says nothing of which
link touches. `link_view(robot, m, self_collision)` gives the checker's model `m` seen per
collision link: the robot's own pieces, one body per collision link, every checked link
pair, over the same flat scene (the same snapshot, so the answer is for one scene). It is
made once per model (from the robot's shared parts: `checker.model.robot_part`, without
self-pair tables, which only speed up a state check) and answered by the kernel
`state_distances` that `clearance` already compiled: no new compiled entry point. Link
pairs within one rigid group never move apart; the checker does not check them, and the
view reads them as far (`ignored`).
"""

from __future__ import annotations

import dataclasses
import math
import threading
import time
import weakref

import numpy as np

from ..geometry.validate import bool_flag, real_scalar
from ..kernels.checker import states as K
from ..results import Contact, LinkDistances
from ..robot.rigid import rigid_roots
from .model import CheckModel, CheckWorkspace, body_distances, robot_part

__all__ = ["DistanceQueries", "LinkView", "contacts_of", "link_view"]


class LinkView:
    """A checker model seen per collision link (module doc): `model`, a `CheckModel` over
    the same scene; `ignored` (n_bodies,) bool, the link pairs within one rigid group;
    `workspace()`, the calling thread's workspace for it."""

    __slots__ = ("model", "ignored", "_local", "__weakref__")

    def __init__(self, model: CheckModel, ignored: np.ndarray):
        self.model = model
        self.ignored = ignored
        self._local = threading.local()

    def workspace(self) -> CheckWorkspace:
        ws = getattr(self._local, "ws", None)
        if ws is None:  # no endpoint cache: a distance query never reads it
            ws = self._local.ws = CheckWorkspace(self.model, cache=False, endpoints=1)
        return ws


STALE = object()  # link_view's answer for a model older than its robot
_VIEWS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # checker model -> view
_LOCK = threading.Lock()


def link_view(robot, m: CheckModel, self_collision: bool) -> LinkView | None:
    """`m` (a checker's model of `robot`) seen per collision link, or None when its bodies
    are single links already, or `STALE` when the robot changed since m was built (an
    attach in another thread: the view would be of another robot). Made once per model and
    kept while the model lives."""
    with _LOCK:
        view = _VIEWS.get(m)
    if view is not None:
        return view
    pinned = robot.pinned()  # one state of the robot, whatever attach runs meanwhile
    if pinned.version != m.robot_version:
        return STALE  # attached or edited since m was built: the caller reads a new model
    if m.n_links == len(pinned.collision_links):
        return None
    part = robot_part(robot, self_collision, tables=False, rigid=False)  # shared per robot
    if part.version != m.robot_version:
        return STALE
    n = len(part.table)  # a robot's address rows, the same count for every CheckRobot
    model = dataclasses.replace(
        m,
        robot=part.robot,
        table=np.concatenate([part.table, m.table[n:]]),
        body_names=part.body_names,
        n_links=part.n_links,
        keep=part.keep + m.keep,
    )
    roots = rigid_roots(pinned.model)
    pairs = part.robot.pairs
    ignored = np.zeros(len(part.body_names), bool)
    ignored[part.n_links :] = roots[pairs[:, 0]] == roots[pairs[:, 1]]
    view = LinkView(model, ignored)
    with _LOCK:
        return _VIEWS.setdefault(m, view)


def distance_caps(m: CheckModel, cap: float, self_pairs: bool, ignored=None) -> np.ndarray:
    """(n_bodies,) the kernel's cap per body: `cap`, and 0 (nothing refined) for the self
    pairs without `self_pairs` and for the `ignored` bodies."""
    caps = np.full(len(m.body_names), float(cap))
    if not self_pairs:
        caps[m.n_links :] = 0.0
    if ignored is not None:
        caps[ignored] = 0.0
    return caps


def unrefined(rows: np.ndarray, m: CheckModel, self_pairs: bool, ignored=None) -> None:
    """Mark in place the rows `distance_caps` capped at 0 as not refined (final 0): a cap
    of 0 still reports a touching body as touching, which these rows must not say."""
    if not self_pairs:
        rows[m.n_links :, 1] = 0.0
    if ignored is not None:
        rows[ignored, 1] = 0.0


def contacts_of(rows: np.ndarray, m: CheckModel, padding: float) -> list[Contact]:
    """The `Contact`s of distance rows (d, final, slot) of model m: each body or link
    closer than `padding` to an obstacle or a checked partner, nearest first."""
    out = []
    for k, name in enumerate(m.body_names):
        d = float(rows[k, 0])
        if rows[k, 1] == 0 or d > padding:  # farther than asked (not refined)
            continue
        if k < m.n_links:
            oid = int(m.slot_ids[int(rows[k, 2])])
            o = m.names.get(oid)
            out.append(Contact(name, f"obstacle {o!r}" if o else f"obstacle #{oid}", d))
        else:
            a, b = name.split("|")
            out.append(Contact(a, b, d))
    return sorted(out, key=lambda c: c.distance)


class DistanceQueries:
    """`CollisionChecker`'s distance queries at one configuration: `clearance` (with or
    without the self pairs), `link_distances` and `contacts` per link (module doc). A mixin
    of the checker: it reads the checker's model, workspaces and q checks."""

    def _distances(self, q, cap: float, links: bool = False, self_pairs: bool = True):
        """(n, 3) rows (d, exact, slot) at q, each refined up to `cap`, and the model they
        belong to: one per body the checker checks, or with `links` one per collision link
        (checker/distances.py). Without `self_pairs` the self pairs are not refined."""
        q = self._q(q)
        b = self._current()
        while True:  # a model and its link view of one robot state (an attach may interleave)
            m = b.model
            view = link_view(self.robot, m, self.self_collision) if links else None
            if view is not STALE:
                break
            b = self._refresh()  # rebuilds the model when the robot is newer than it
        ws = self._workspace(b)
        if view is not None:
            m, ws = view.model, view.workspace()
        ignored = None if view is None else view.ignored
        out = np.empty((len(m.body_names), 3))
        t0 = time.perf_counter()
        code = K.state_distances(
            m.table, ws.table, q, distance_caps(m, cap, self_pairs, ignored), out
        )
        self._seconds += time.perf_counter() - t0
        if code >= K.BAD_Q:
            self._raise_bad_q(code, q, "q")
        unrefined(out, m, self_pairs, ignored)
        return out, m

    def clearance(self, q, self_collision: bool = True) -> float:
        """The smallest distance at q (m) of a collision link to the scene or, with
        `self_collision` (and the checker's), of a checked self pair. <= 0 means in
        collision (the depth is not computed). ``self_collision=False``: the scene's
        clearance alone, which a gripper's fingers near each other do not hide."""
        pairs = bool_flag("self_collision", self_collision)
        rows, m = self._distances(q, np.inf, self_pairs=pairs)
        rows = rows if pairs else rows[: m.n_links]
        return float(rows[:, 0].min()) if len(rows) else math.inf

    def link_distances(
        self, q, max_distance: float = np.inf, bodies: bool = False
    ) -> LinkDistances:
        """Per collision link at q: its distance to the scene and the nearest obstacle (id
        and name), and its distance to its checked self-collision partners and the nearest
        one (`LinkDistances`, which also reads as the dict this returned before). With
        `bodies`, per body the checker checks instead (with `rigid_bodies`, a rigid body's
        links joined by "+").

        max_distance : m, > 0 (inf by default); distances beyond it are not refined
        (reported as inf)."""
        md = real_scalar("max_distance", max_distance)
        if not md > 0.0:  # NaN too
            raise ValueError(f"max_distance must be > 0 (inf for no cap), got {max_distance!r}")
        rows, m = self._distances(q, md, links=not bool_flag("bodies", bodies))
        return body_distances(rows, m)

    def contacts(self, q) -> list[Contact]:
        """What makes configuration q (dof,) collide: a `Contact(body, other, distance)`
        for each collision link closer than `padding` to an obstacle (other: ``obstacle
        'name'``, or ``obstacle #id`` when it has no name) or to a checked self-collision
        partner (other: the partner link), nearest first; [] when q is free. Links, not
        rigid bodies: the links of a gripper that actually touch. distance in m (<= 0 is
        touching or overlapping; the depth is not computed)."""
        cap = max(2.0 * self.padding, 1e-3)
        rows, m = self._distances(q, cap)
        found = contacts_of(rows, m, self.padding)
        if found:  # name the links (the bodies' rows decided: a cheaper call when free)
            rows, m = self._distances(q, cap, links=True)
            found = contacts_of(rows, m, self.padding) or found
        return found
