"""A checker's settings and what is made under them, published together
(checker/workspaces.py `Bound`).

Whatever a call reads of its checker, it reads from one `Bound`: the flat model, the
settings the kernels are passed (padding, eta, the caches, front lists) with the edge
requests made from them, and the calling thread's workspaces for that model and those
settings. A rebuilt model, or a setting changed, publishes a new `Bound` with no workspace
yet (a thread's last one, handed on, forgets its caches), so nothing a workspace keeps
between calls outlives what it was made under: its endpoint
cache marks a configuration colliding when it came within ``padding + eta`` of something,
which is no answer for a lower padding (a checker set from padding 0.05 to 0 rejected 43 of
400 planar-arm edges that a new checker at 0 certified free), and `cache=False` keeps no
cache at all. A call that started before the change finishes on what it read; the next call
answers as a new checker with the new settings would.
"""

from __future__ import annotations

from typing import NamedTuple

from ..geometry.validate import bool_flag, length_scalar, positive_scalar
from ..kernels.checker import edges as E

__all__ = ["QUERY_BUDGET", "CheckerSettings", "Settings", "edge_settings", "make_request"]

# Distance queries a certified edge check may make before it gives up (reported not valid,
# `certified=False`): a motion that grazes an obstacle within about eta needs many.
QUERY_BUDGET = 100_000


class Settings(NamedTuple):
    """What the kernels are passed besides the model: padding and eta (m), whether the
    workspaces keep caches between calls, the front lists' reach (0 when off) and whether
    self pairs are checked."""

    padding: float
    eta: float
    cache: bool
    front: float
    self_collision: bool


def edge_settings(padding, eta, cache, front_lists) -> dict:
    """The settings' fields, validated (ValueError naming the field and the value)."""
    return {
        "padding": length_scalar("padding", padding, allow_zero=True),
        "eta": length_scalar("eta", eta),
        "cache": bool_flag("cache", cache),
        "front": E.FRONT_REACH if bool_flag("front_lists", front_lists) else 0.0,
    }


def make_request(s: Settings, check_start: bool, first: bool):
    """The edge kernels' request record (kernels/checker/edges.py `EdgeRequest`) under
    settings s."""
    return E.edge_request(
        margin=s.padding, eta=s.eta, n_steps=1, check_start=check_start, use_cache=s.cache,
        front=s.front, budget=QUERY_BUDGET, first=first,
    )  # fmt: skip


class CheckerSettings:
    """The settings of a `CollisionChecker` as properties: each setter publishes a new
    `Bound` (module doc) through the checker's `_build` and `_rebuilding` lock."""

    # a setter publishes a new Bound: every thread's next call starts on new workspaces
    padding = property(lambda self: self._settings.padding, doc="m, >= 0 (class doc)")
    eta = property(lambda self: self._settings.eta, doc="m, > 0: the edges' contact tolerance")
    cache = property(lambda self: self._settings.cache, doc="keep caches between queries")
    front_lists = property(lambda self: self._settings.front > 0.0, doc="FCL's front lists")
    self_collision = property(lambda self: self._settings.self_collision, doc="check self pairs")
    self_tables = property(lambda self: self._self_tables, doc="read self-pair tables first")
    rigid_bodies = property(lambda self: self._rigid_bodies, doc="one body per rigid body")

    @padding.setter
    def padding(self, value) -> None:
        self._set(padding=value)

    @eta.setter
    def eta(self, value) -> None:
        self._set(eta=value)

    @cache.setter
    def cache(self, value) -> None:
        self._set(cache=value)

    @front_lists.setter
    def front_lists(self, value) -> None:
        self._set(front_lists=value)

    @self_collision.setter
    def self_collision(self, value) -> None:
        self._set(self_collision=bool_flag("self_collision", value))

    @self_tables.setter
    def self_tables(self, value) -> None:
        self._self_tables = bool_flag("self_tables", value)
        self._set()

    @rigid_bodies.setter
    def rigid_bodies(self, value) -> None:
        self._rigid_bodies = bool_flag("rigid_bodies", value)
        self._set()

    @property
    def resolution(self) -> float:
        """The "discrete" method's state spacing (class doc)."""
        return self._resolution

    @resolution.setter
    def resolution(self, value) -> None:
        r = positive_scalar("resolution", value)
        if r > 1.0:
            raise ValueError(f"resolution must be in (0, 1], got {value!r}")
        self._resolution = r

    def _set(self, self_collision=None, **change) -> None:
        """Publish settings with `change` (padding, eta, cache, front_lists) and a new model
        (which the ones without a field, and self_collision, change): the next call of every
        thread starts on new workspaces (module doc)."""
        s = self._settings
        kw = {"padding": s.padding, "eta": s.eta, "cache": s.cache, "front_lists": s.front > 0}
        sc = s.self_collision if self_collision is None else self_collision
        new = Settings(**edge_settings(**{**kw, **change}), self_collision=sc)
        # the same model under new settings, or (the model's options changed) a new model
        self._publish_settings(new, rebuild=not change)
