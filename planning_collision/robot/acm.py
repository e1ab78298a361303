"""The allowed-collision matrix (ACM): link pairs whose collisions are ignored.

Adjacent links (a link and its nearest ancestor that has geometry, as MoveIt) are allowed
when a robot is built. `sample_acm` adds MoveIt setup-assistant pairs: colliding in the
default configuration, colliding in >= 95 % of random samples ("always"), or in none of
>= 10,000 ("never"). `cached_sample_acm` does the same through the on-disk cache
(robot/cache.py), keyed by the robot's geometry key, its joints and limits and the sampling
settings, so a user's robot pays the sampling once.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time

import numpy as np

from ..stamps import announce, next_stamp
from .cache import read_json_entry, resolve_cache_dir, write_json_entry
from .progress import Progress

__all__ = [
    "ACM_SAMPLES",
    "ALWAYS_FRACTION",
    "AllowedCollisionMatrix",
    "adjacent_pairs",
    "cached_sample_acm",
    "sample_acm",
]

log = logging.getLogger(__name__)

ALWAYS_FRACTION = 0.95  # MoveIt setup assistant's default for "always in collision"
ACM_SAMPLES = 10_000  # MoveIt setup assistant's default sampling density
# Bump when sampling changes what it allows: cached matrices then miss.
ACM_VERSION = 1
_CHUNKS = 10  # sampling is reported in this many steps


class AllowedCollisionMatrix:
    """Link pairs whose collisions are ignored, each with a reason ("adjacent", "never",
    "always", "default", "user", ...). Pairs are unordered."""

    def __init__(self, link_names, entries=()):
        self._links = list(link_names)
        self._known = set(self._links)
        pairs = {}
        for e in entries:
            a, b, *why = e
            pairs[self._key(a, b)] = str(why[0] if why else "user")
        self._pairs = pairs
        self._content = None  # (pairs, their frozenset): `content_key`
        self.version = next_stamp()  # changes on every edit (a checker sees it is stale)

    def __reduce__(self):
        # unpickled with a version of the receiving process (stamps.py): a version pickled
        # from another process is a number this one's counter may take for its own next
        # edit, after which a checker built on the unpickled robot would see no change
        return (_unpickle_acm, (self._links, self._pairs))

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
            self._publish({**self._pairs, key: str(reason)})

    def disallow(self, a: str, b: str) -> None:
        key = self._key(a, b)
        if key in self._pairs:
            self._publish({k: r for k, r in self._pairs.items() if k != key})

    def _publish(self, pairs: dict) -> None:
        """Replace the pairs by a new dict (never edited in place: a checker rebuilding its
        model in another thread iterates over the old one), then the version, then tell
        the checkers (stamps.py)."""
        self._pairs = pairs
        self.version = next_stamp()
        announce()

    def content_key(self) -> frozenset:
        """The allowed pairs, as a set: what a model built from this matrix depends on
        (checker/model.py keys its shared robot parts by it beside the version). The same
        set object while the pairs are the same dict (`_publish` replaces it on every
        edit): its hash is computed once, and a lookup by it compares by identity (a
        checker asks per new scene: ~15 us a time for a new set of the Panda's 32 pairs)."""
        pairs = self._pairs
        got = self._content
        if got is not None and got[0] is pairs:
            return got[1]
        key = frozenset(pairs)
        self._content = (pairs, key)  # one assignment: a thread reads the old or the new
        return key

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


def _unpickle_acm(links, pairs: dict) -> AllowedCollisionMatrix:
    acm = AllowedCollisionMatrix(links)  # a new version, from this process's counter
    acm._pairs = dict(pairs)
    return acm


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


def _default_q(robot, default_q) -> np.ndarray:
    if default_q is None:
        return np.clip(np.zeros(robot.dof), robot.lower, robot.upper)
    return robot.validate_q(default_q, "default_q")


def sample_acm(
    robot,
    n_samples: int = ACM_SAMPLES,
    seed: int = 0,
    always_fraction: float = ALWAYS_FRACTION,
    default_q=None,
    progress=None,
) -> dict:
    """MoveIt setup-assistant sampling on `robot` (a `Robot`): add "default", "always" and
    "never" pairs to its ACM. Returns a summary {reason: count, "samples": n, "seconds": t}.
    `progress`: see robot/progress.py (the samples in ten steps)."""
    if n_samples < 1:
        raise ValueError(f"n_samples must be >= 1, got {n_samples}")
    pairs = robot.self_collision_pairs()
    q_def = _default_q(robot, default_q)
    t0 = time.perf_counter()
    default = robot.count_self_collisions(q_def, pairs)
    Q = robot.random_configurations(n_samples, seed)
    counts = np.zeros(len(pairs), np.int64)
    bounds = np.linspace(0, n_samples, min(_CHUNKS, n_samples) + 1).astype(int)
    desc = f"allowed-collision matrix of {robot.name!r} ({len(pairs)} pairs)"
    with Progress(progress, len(bounds) - 1, desc, log) as prog:
        for a, b in zip(bounds[:-1], bounds[1:], strict=True):
            prog.step(f"configurations {a + 1}-{b} of {n_samples}")
            counts += robot.count_self_collisions(Q[a:b], pairs)
        prog.summary = f"{n_samples} configurations in {time.perf_counter() - t0:.1f} s"
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


def _acm_key(robot, n_samples, seed, always_fraction, q_def) -> str:
    desc = {
        "version": ACM_VERSION,
        "geometry": robot.geometry_key,
        "joints": list(robot.joint_names),
        "lower": [float(x) for x in robot.lower],
        "upper": [float(x) for x in robot.upper],
        "held": {k: float(v) for k, v in sorted(robot.held_joints.items())},
        "start": robot.acm.entries(),
        "samples": int(n_samples),
        "seed": int(seed),
        "always": float(always_fraction),
        "default_q": [float(x) for x in q_def],
    }
    return hashlib.sha256(json.dumps(desc, sort_keys=True).encode()).hexdigest()[:20]


def _check_entry(robot, got: dict) -> None:
    """ValueError unless a cached ACM entry holds a summary and pairs of the robot's links
    (checked before any is allowed: a bad entry leaves the matrix as it was)."""
    summary, allowed = got["summary"], got["allowed"]
    if not isinstance(summary, dict) or not {"samples", "seed"} <= set(summary):
        raise ValueError("its summary is incomplete")
    for e in allowed:
        a, b, why = e
        robot.acm.is_allowed(a, b)  # ValueError for a link the robot lacks
        if not isinstance(why, str):
            raise ValueError(f"pair {a!r}, {b!r} has reason {why!r}")


def cached_sample_acm(
    robot,
    cache_dir=None,
    n_samples: int = ACM_SAMPLES,
    seed: int = 0,
    always_fraction: float = ALWAYS_FRACTION,
    default_q=None,
    progress=None,
) -> dict:
    """`sample_acm` through the on-disk cache (``acm-<key>.json`` beside the geometry cache;
    `cache_dir` as in robot/cache.py). The summary says ``"cached": True`` when read back."""
    q_def = _default_q(robot, default_q)
    key = _acm_key(robot, n_samples, seed, always_fraction, q_def)
    d = resolve_cache_dir(cache_dir)
    f = None if d is None else d / f"acm-{key}.json"
    got = read_json_entry(f, key, "allowed-collision matrix", lambda g: _check_entry(robot, g))
    if got is not None:
        for a, b, why in got["allowed"]:
            robot.acm.allow(a, b, why)
        return dict(got["summary"], cached=True)
    before = {(a, b) for a, b, _ in robot.acm.entries()}
    summary = sample_acm(robot, n_samples, seed, always_fraction, q_def, progress)
    added = [e for e in robot.acm.entries() if (e[0], e[1]) not in before]
    if f is not None:
        write_json_entry(f, key, {"summary": summary, "allowed": added})
    return dict(summary, cached=False)
