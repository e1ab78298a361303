"""What a robot's checked bodies answer from their geometry: piece poses, link boxes and
motion bounds. A `Robot` checks one body per collision link; robot/rigid.py's `RigidBodies`
joins rigidly linked ones. Both hold the same geometry fields (``pieces``, ``collision``,
``collision_links``, ``bounds``) and the kinematics to pose them (``fk_array``,
``validate_q``, ``link_names``), and take these methods from `LinkBodies`."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from ..kernels.robot.fk import piece_poses
from ..kernels.robot.motion_bounds import motion_bounds as _motion_bounds_kernel
from ..primitives import convex_block_from_table

__all__ = ["LinkBodies"]


class LinkBodies:
    """The geometry methods of a robot's checked bodies (module doc)."""

    def pinned(self):
        """The bodies as they are now (a `Robot` overrides it: an attach replaces its links
        and pieces at once, robot/robot.py); a method that reads several of them in turn
        reads them from one pinned view."""
        return self

    def piece_poses(self, q) -> npt.NDArray[np.float64]:
        """(n_pieces, 4, 4) world pose of every collision piece."""
        self = self.pinned()
        T = self.fk_array(q)
        out = np.empty((len(self.pieces), 4, 4))
        piece_poses(T, self.collision.piece_link, self.collision.piece_pose, out)
        return out

    def link_aabbs(self, q) -> npt.NDArray[np.float64]:
        """(n_links, 2, 3) world AABB (lo, hi) of each link's collision model at q, as the
        engine bounds its pieces (NaN rows for links without geometry)."""
        self = self.pinned()
        block = convex_block_from_table(self.collision.table, self.piece_poses(q))
        out = np.full((len(self.link_names), 2, 3), np.nan)
        for li in self.collision_links:
            s, e = self.collision.link_start[li], self.collision.link_start[li + 1]
            out[li, 0] = block.lo[s:e].min(axis=0)
            out[li, 1] = block.hi[s:e].max(axis=0)
        return out

    # ---- motion bounds ----------------------------------------------------------------

    @property
    def motion_bound_R(self) -> npt.NDArray[np.float64]:
        """(n_collision_links, dof) R rows of the collision links (robot/bounds.py)."""
        return self.bounds.links

    def lowest_common_ancestor(self, a: int, b: int) -> int:
        return self.bounds.lowest_common_ancestor(a, b)

    def pair_speed_rows(self, pairs) -> npt.NDArray[np.float64]:
        """(k, dof) R rows of link pairs (k, 2) (link indices): joints below the LCA only."""
        return self.bounds.pair_rows(pairs)

    def motion_bounds(self, q0, q1) -> npt.NDArray[np.float64]:
        """(n_collision_links,) mu_i: along q0 -> q1, no point of collision link
        `collision_links[i]` moves farther than ``mu_i |t - s|`` (metres)."""
        q0 = self.validate_q(q0, "q0")
        q1 = self.validate_q(q1, "q1")
        out = np.empty(self.bounds.links.shape[0])
        _motion_bounds_kernel(self.bounds.links, q0, q1, out)
        return out

    def pair_motion_bounds(self, q0, q1, pairs=None) -> npt.NDArray[np.float64]:
        """(k,) bound on how fast the two links of each pair approach each other, per unit t,
        along q0 -> q1 (joints below the pair's LCA only). Default pairs: the checked
        self-collision pairs."""
        q0 = self.validate_q(q0, "q0")
        q1 = self.validate_q(q1, "q1")
        R = self.bounds.pair_rows(self.self_collision_pairs() if pairs is None else pairs)
        R.flags.writeable = False  # as `motion_bounds`'s rows: one compiled specialisation
        out = np.empty(R.shape[0])
        _motion_bounds_kernel(R, q0, q1, out)
        return out

    def body_name(self, link: int) -> str:
        """The name of link's checked body: the link's own (a `RigidBodies` names a rigid
        body by its links)."""
        return self.link_names[int(link)]
