"""Motion bounds: how far any point of a link can move along a straight joint-space edge.

For link ``i`` and configuration coordinate ``d``, ``R[i, d]`` bounds the speed of any point
of link ``i`` per unit of ``q_d``, for every configuration: for a revolute joint, the
largest distance from the joint's axis origin to any point of the link along the chain
(the joint offsets below it plus the link's bounding radius); for a prismatic joint, 1;
times |mimic multiplier|, summed over the joints ``d`` drives. Along ``q(t) = q0 + t (q1 -
q0)`` no point of link ``i`` moves farther than ``mu_i |t - s|`` from where it was at
``s``, with ``mu_i = sum_d R[i, d] |q1_d - q0_d|`` (kernels/robot/motion_bounds.py).

For a self-collision pair only the joints below the pair's lowest common ancestor count:
in the LCA's frame only they move either link, and distances do not depend on the frame
(KCCD). The bounds assume an edge stays within the joint limits for active prismatic
joints (revolute joints need no limits).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from ..kernels.robot.fk import FIXED, PRISMATIC, RobotModel

__all__ = ["MotionBoundTables"]


def _reach_steps(m: RobotModel) -> np.ndarray:
    """(n_links,) how far each link's joint can carry what hangs on it: the length of its
    offset, plus a prismatic joint's largest travel (held value, limits, mimic map)."""
    steps = np.linalg.norm(m.origin[:, :3, 3], axis=1)
    for k in np.flatnonzero(m.jtype == PRISMATIC):
        d = m.qidx[k]
        v = abs(m.offset[k])
        if d >= 0:
            v += abs(m.mult[k]) * max(abs(m.lower[d]), abs(m.upper[d]))
        steps[k] += v
    return steps


class MotionBoundTables:
    """The R rows of a robot's links and link pairs (module doc)."""

    def __init__(self, model: RobotModel, link_radius, collision_links, dof: int):
        self.model = model
        self.link_radius = np.asarray(link_radius, np.float64)
        self.dof = int(dof)
        self._chains: dict[int, list[int]] = {}
        self._reach = _reach_steps(model)
        rows = [self.speed_row(int(i), -1) for i in collision_links]
        self.links = np.ascontiguousarray(np.array(rows).reshape(len(rows), self.dof))
        self.links.setflags(write=False)
        self._pairs: dict[tuple[int, int], np.ndarray] = {}

    def chain(self, i: int) -> list[int]:
        """Links from the root to i, inclusive (kept: a robot's tables ask for each link's
        chain once per pair it is in)."""
        got = self._chains.get(i)
        if got is None:
            out, k = [], i
            while k >= 0:
                out.append(k)
                k = int(self.model.parent[k])
            got = self._chains[i] = out[::-1]
        return got

    def lowest_common_ancestor(self, a: int, b: int) -> int:
        lca = -1
        for x, y in zip(self.chain(a), self.chain(b), strict=False):  # chains differ in length
            if x != y:
                break
            lca = x
        return lca

    def terms(self, i: int, below: int) -> list[tuple[int, int, float, float]]:
        """The moving joints on link i's chain strictly below link `below` (-1: all), root
        first: (joint link k, configuration index d, |mult|, speed) with speed the largest
        speed of a point of link i per unit of that joint (the joint reach plus the link's
        radius for a revolute joint; 1 for a prismatic one, whose k is given as -1)."""
        m = self.model
        out = []
        chain = self.chain(i)
        start = chain.index(below) + 1 if below >= 0 else 0
        # the reach of the joints after each position, all at once (a sum per position made
        # a 100-link chain's tables cost O(n^4): minutes before its first checker)
        after = np.cumsum(self._reach[chain][::-1])[::-1]  # after[pos]: chain[pos:]'s steps
        for pos in range(start, len(chain)):
            k = chain[pos]
            d = int(m.qidx[k])
            if d < 0 or m.jtype[k] == FIXED:
                continue
            if m.jtype[k] == PRISMATIC:
                out.append((-1, d, abs(float(m.mult[k])), 1.0))
            else:
                reach = float(after[pos + 1]) if pos + 1 < len(chain) else 0.0
                out.append((k, d, abs(float(m.mult[k])), reach + self.link_radius[i]))
        return out

    def speed_row(self, i: int, below: int) -> npt.NDArray[np.float64]:
        """R row (dof,) for link i counting only joints of links strictly below link `below`
        on i's chain (below = -1: every joint)."""
        row = np.zeros(self.dof)
        for _, d, mult, r in self.terms(i, below):
            row[d] += mult * r
        return row

    def body_terms(self, links, pairs):
        """The local motion bounds' tables (kernels/robot/motion_bounds.py) of the bodies `links`
        (collision links against the scene) then `pairs` (self pairs, in the LCA frame):
        (start (n_bodies + 1,) int32, term (n, 3) int32 rows (sphere link, joint link k or
        -1, d), weight (n, 3) rows (|mult|, speed, mult)); a body's terms are grouped by
        sphere link, each group root first."""
        groups = [[(int(i), -1)] for i in links]
        for a, b in np.asarray(pairs, np.int64).reshape(-1, 2):
            c = self.lowest_common_ancestor(int(a), int(b))
            groups.append([(int(a), c), (int(b), c)])
        start, term, weight = [0], [], []
        for g in groups:
            for i, below in g:
                for k, d, mult, r in self.terms(i, below):
                    term.append((i, k, d))
                    signed = float(self.model.mult[k]) if k >= 0 else mult
                    weight.append((mult, r, signed))
            start.append(len(term))
        return (
            np.asarray(start, np.int32),
            np.asarray(term, np.int32).reshape(-1, 3),
            np.asarray(weight, np.float64).reshape(-1, 3),
        )

    def pair_rows(self, pairs) -> npt.NDArray[np.float64]:
        """(k, dof) R rows of link pairs (k, 2) (link indices): joints below the LCA only."""
        rows = []
        for a, b in np.asarray(pairs, np.int64).reshape(-1, 2):
            key = (int(a), int(b))
            if key not in self._pairs:
                c = self.lowest_common_ancestor(*key)
                self._pairs[key] = self.speed_row(key[0], c) + self.speed_row(key[1], c)
            rows.append(self._pairs[key])
        return np.ascontiguousarray(np.array(rows).reshape(len(rows), self.dof))
