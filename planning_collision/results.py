"""Query results: frozen dataclasses (conventions.py says what the signs mean)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import NamedTuple

import numpy as np
import numpy.typing as npt


@dataclasses.dataclass(frozen=True, eq=False, init=False)
class DistanceResult:
    """Signed distance between two shapes.

    distance : float, metres; >= 0 separation, < 0 minus the penetration depth.
    point_a, point_b : (3,) float64, world frame, m; witness points on a and b with
        ``point_b - point_a == distance * normal``.
    normal : (3,) float64, unit, world frame; from a to b.
    id : int or None; the obstacle id when the result comes from a scene query.
    """

    distance: float
    point_a: npt.NDArray[np.float64]
    point_b: npt.NDArray[np.float64]
    normal: npt.NDArray[np.float64]
    id: int | None = None

    def __init__(self, distance, point_a, point_b, normal, id=None):
        # Fields go straight into the instance dict: the generated frozen __init__ calls
        # object.__setattr__ per field, 0.35 µs of a 2 µs public query. Assignment after
        # construction still raises FrozenInstanceError.
        d = self.__dict__
        d["distance"] = distance
        d["point_a"] = point_a
        d["point_b"] = point_b
        d["normal"] = normal
        d["id"] = id

    def __repr__(self):
        tail = "" if self.id is None else f", id={self.id}"
        return (
            f"DistanceResult(distance={self.distance:.9g}, point_a={self.point_a.tolist()}, "
            f"point_b={self.point_b.tolist()}, normal={self.normal.tolist()}{tail})"
        )


@dataclasses.dataclass(frozen=True, eq=False, init=False)
class PenetrationResult:
    """Penetration of two overlapping shapes (EPA, or closed form).

    depth : float, metres, >= 0 (0 when the shapes only touch or are apart).
    normal : (3,) unit, world frame, from a to b: translating b by ``depth * normal``
        separates the pair.
    point_a, point_b : (3,) world frame; the deepest point of a inside b and of b inside a,
        ``point_a - point_b == depth * normal``.
    """

    depth: float
    normal: npt.NDArray[np.float64]
    point_a: npt.NDArray[np.float64]
    point_b: npt.NDArray[np.float64]

    def __init__(self, depth, normal, point_a, point_b):
        d = self.__dict__  # as DistanceResult.__init__
        d["depth"] = depth
        d["normal"] = normal
        d["point_a"] = point_a
        d["point_b"] = point_b


@dataclasses.dataclass(frozen=True)
class EdgeResult:
    """The check of a straight joint-space motion q0 -> q1, ``q(t) = q0 + t (q1 - q0)``.

    valid : bool; True when the whole motion is free (certified for "dichotomy" and "ca").
    last_valid_t : float in [0, 1]; the motion is free on [0, last_valid_t] (1 when valid):
        the valid prefix OMPL's ``checkMotion(s1, s2, lastValid)`` asks for. "ca" gives it
        up to the first contact; "dichotomy" whatever it certified before finding the
        collision, often 0 (its boolean probes find most collisions first).
    toc : float; where a collision was found (NaN when valid): for "ca" the first contact
        (within the contact tolerance), for "dichotomy" and "discrete" a colliding t, not
        necessarily the first ("discrete" with the first colliding sample of its grid).
    n_queries : int; distance queries ("dichotomy", "ca": one per body evaluated, plus one
        per boolean probe state for "dichotomy") or states checked ("discrete").
    method : str; "discrete", "dichotomy" or "ca".
    certified : bool; the answer holds for every t, not only at sampled states. False for
        "discrete", and when a certified method ran out of its query budget (the motion is
        then reported not valid).
    """

    valid: bool
    last_valid_t: float
    toc: float
    n_queries: int
    method: str
    certified: bool


@dataclasses.dataclass(frozen=True, eq=False)
class PathResult:
    """The check of a joint-space path through the rows of Q (n, dof): its states and the
    straight motions between them, segment k from Q[k] to Q[k + 1]
    (`CollisionChecker.check_path`).

    valid : bool; True when the whole path is free (certified for "dichotomy" and "ca").
    segment : int; the first segment not shown free (-1 when valid; 0 for a path of one
        colliding state).
    last_valid_t : float in [0, 1]; that segment is free on [0, last_valid_t): up to its
        first contact (found by "ca", within the contact tolerance eta, for the certified
        methods; the first colliding sample for "discrete"); 1.0 when valid, 0.0 when the
        segment's start collides.
    last_valid : (dof,) float64; the configuration there, Q[segment] + last_valid_t *
        (Q[segment + 1] - Q[segment]) (Q[-1] when valid): the path's free prefix ends at it.
    n_queries : int; distance queries (or states, "discrete") over all segments checked.
    method : str; the method of the segments ("dichotomy", "ca" or "discrete").
    certified : bool; the answer holds for every configuration along the path, not only
        at sampled ones (False for "discrete", and when a certified check ran out of its
        query budget: the path is then reported not valid).
    """

    valid: bool
    segment: int
    last_valid_t: float
    last_valid: npt.NDArray[np.float64]
    n_queries: int
    method: str
    certified: bool

    def __bool__(self) -> bool:
        return self.valid


# the keys `LinkDistances` answers to as a mapping, and the fields they name
_LINK_DISTANCE_KEYS = {
    "links": "links",
    "scene": "scene",
    "object": "object",
    "name": "name",
    "self": "self_distance",
    "partner": "partner",
    "distance": "distance",
}


@dataclasses.dataclass(frozen=True, eq=False)
class LinkDistances(Mapping):
    """Per checked body at one configuration (`CollisionChecker.link_distances`): a
    collision link, or with ``rigid_bodies`` its links joined by "+". Arrays over bodies:

    links : (n,) object; the bodies' names.
    scene : (n,) float64, m; the distance to the scene (inf when farther than the query's
        max_distance, or no obstacle).
    object : (n,) int64; the nearest obstacle's id, -1 when there is none.
    name : (n,) object; that obstacle's name, None when it has none (or there is none).
    self_distance : (n,) float64, m; the distance to its nearest checked self-collision
        partner (inf when it has none).
    partner : (n,) object; that partner's name, "" when it has none.
    distance : (n,) float64, m; the smaller of ``scene`` and ``self_distance``.

    It also reads as the mapping `link_distances` once returned (``d["scene"]``,
    ``d["self"]`` for ``self_distance``, ``dict(d)``, ``d.items()``).
    """

    links: npt.NDArray[np.object_]
    scene: npt.NDArray[np.float64]
    object: npt.NDArray[np.int64]
    name: npt.NDArray[np.object_]
    self_distance: npt.NDArray[np.float64]
    partner: npt.NDArray[np.object_]
    distance: npt.NDArray[np.float64]

    def __getitem__(self, key: str):
        try:
            return getattr(self, _LINK_DISTANCE_KEYS[key])
        except (KeyError, TypeError):
            raise KeyError(f"{key!r}: LinkDistances has {list(_LINK_DISTANCE_KEYS)}") from None

    def __iter__(self):
        return iter(_LINK_DISTANCE_KEYS)

    def __len__(self) -> int:
        return len(_LINK_DISTANCE_KEYS)

    def nearest(self) -> tuple[str, float]:
        """The body nearest to collision and its distance (m)."""
        k = int(np.argmin(self.distance))
        return str(self.links[k]), float(self.distance[k])

    def __repr__(self) -> str:
        if len(self.links) == 0:
            return "LinkDistances(0 bodies)"
        body, d = self.nearest()
        return f"LinkDistances({len(self.links)} bodies, nearest {body!r} at {d:.6g} m)"


class Contact(NamedTuple):
    """A body of the robot too close to something (`CollisionChecker.contacts`)."""

    body: str  # a collision link, or a rigid body's links joined by "+"
    other: str  # "obstacle 'name'" (or "obstacle #id"), or the self-collision partner
    distance: float  # m; <= padding (<= 0: touching or overlapping, depth not computed)
