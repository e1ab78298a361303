"""The allowed-collision matrix (ACM): link pairs whose collisions are ignored.

Adjacent links (a link and its nearest ancestor that has geometry, as MoveIt) are allowed
when a robot is built. `sample_acm` adds MoveIt setup-assistant pairs: colliding in the
default configuration, colliding in >= 95 % of random samples ("always"), or in none of
>= 10,000 ("never").
"""

from __future__ import annotations

import time

import numpy as np

__all__ = ["ALWAYS_FRACTION", "AllowedCollisionMatrix", "adjacent_pairs", "sample_acm"]

ALWAYS_FRACTION = 0.95  # MoveIt setup assistant's default for "always in collision"


class AllowedCollisionMatrix:
    """Link pairs whose collisions are ignored, each with a reason ("adjacent", "never",
    "always", "default", "user", ...). Pairs are unordered."""

    def __init__(self, link_names, entries=()):
        self._links = list(link_names)
        self._known = set(self._links)
        self._pairs: dict[tuple[str, str], str] = {}
        self.version = 0  # changes on every edit (a checker built on it sees it is stale)
        for e in entries:
            a, b, *why = e
            self.allow(a, b, why[0] if why else "user")

    def _key(self, a: str, b: str) -> tuple[str, str]:
        for n in (a, b):
            if n not in self._known:
                raise ValueError(
                    f"unknown link {n!r} in the allowed-collision matrix; links: {self._links}"
                )
        if a == b:
            raise ValueError(f"a link pair needs two different links, got {a!r} twice")
        ia, ib = self._links.index(a), self._links.index(b)
        return (a, b) if ia < ib else (b, a)

    def allow(self, a: str, b: str, reason: str = "user") -> None:
        key = self._key(a, b)
        if self._pairs.get(key) != str(reason):
            self._pairs[key] = str(reason)
            self.version += 1

    def disallow(self, a: str, b: str) -> None:
        if self._pairs.pop(self._key(a, b), None) is not None:
            self.version += 1

    def is_allowed(self, a: str, b: str) -> bool:
        return self._key(a, b) in self._pairs

    def reason(self, a: str, b: str) -> str | None:
        return self._pairs.get(self._key(a, b))

    def entries(self) -> list[list[str]]:
        """[[a, b, reason], ...] in link order (the JSON form)."""
        idx = {n: i for i, n in enumerate(self._links)}
        return [
            [a, b, r]
            for (a, b), r in sorted(
                self._pairs.items(), key=lambda kv: (idx[kv[0][0]], idx[kv[0][1]])
            )
        ]

    def __len__(self) -> int:
        return len(self._pairs)

    def __contains__(self, pair) -> bool:
        return self.is_allowed(*pair)


def adjacent_pairs(parent, has_geometry) -> list[tuple[int, int]]:
    """(ancestor, link) index pairs: each link with geometry and its nearest ancestor with
    geometry (MoveIt's adjacency). parent (n,) int, -1 at the root; has_geometry (n,) bool."""
    out = []
    for i in np.flatnonzero(has_geometry):
        p = parent[i]
        while p >= 0 and not has_geometry[p]:
            p = parent[p]
        if p >= 0:
            out.append((int(p), int(i)))
    return out


def sample_acm(robot, n_samples: int, seed: int, always_fraction: float, default_q) -> dict:
    """MoveIt setup-assistant sampling on `robot` (a `Robot`): add "default", "always" and
    "never" pairs to its ACM. Returns a summary {reason: count, "samples": n, "seconds": t}."""
    if n_samples < 1:
        raise ValueError(f"n_samples must be >= 1, got {n_samples}")
    pairs = robot.self_collision_pairs()
    q_def = (
        np.clip(np.zeros(robot.dof), robot.lower, robot.upper)
        if default_q is None
        else robot.validate_q(default_q)
    )
    t0 = time.perf_counter()
    default = robot.count_self_collisions(q_def, pairs)
    counts = robot.count_self_collisions(robot.random_configurations(n_samples, seed), pairs)
    dt = time.perf_counter() - t0
    summary = {"default": 0, "always": 0, "never": 0, "checked": 0}
    names = robot.link_names
    for (a, b), d, c in zip(pairs, default, counts, strict=True):
        if d > 0:
            why = "default"
        elif c >= always_fraction * n_samples:
            why = "always"
        elif c == 0:
            why = "never"
        else:
            summary["checked"] += 1
            continue
        summary[why] += 1
        robot.acm.allow(names[a], names[b], why)
    summary.update(samples=int(n_samples), seed=int(seed), seconds=dt)
    return summary
