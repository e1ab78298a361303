"""The project's conventions, in one place (DESIGN §2, STYLE §4).

- Units: metres, radians, seconds.
- Poses: 4x4 float64 homogeneous matrices, ``p_world = T_world_local @ [p, 1]``.
- Quaternions: ``(x, y, z, w)``, scalar last (ROS order), at every boundary that takes one.
- Signed distance: ``>= 0`` is separation; ``< 0`` is minus the penetration depth.
- Normal: unit vector from shape a to shape b. Moving b by ``-distance * normal`` (when
  penetrating) separates the pair; in every case ``point_b - point_a = distance * normal``.
- Witness points are in the world frame.
- Collision: two shapes collide when their signed distance is ``<= 0`` (touching collides).
"""

QUATERNION_ORDER = "xyzw"
