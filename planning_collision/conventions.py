"""The project's conventions, in one place.

- Units: metres, radians, seconds.
- Poses: 4x4 float64 homogeneous matrices, ``p_world = T_world_local @ [p, 1]``.
- Quaternions: ``(x, y, z, w)``, scalar last (ROS order), at every boundary that takes one
  (geometry/poses.py converts).
- Sizes are full sizes: ``Box(extents)`` side lengths; ``Capsule``/``Cylinder``/``Cone``
  ``length`` along local z, centred (a capsule's between its sphere centres; a cone's apex
  at ``+length/2``).
- Signed distance: ``>= 0`` is separation; ``< 0`` is minus the penetration depth.
- Normal: unit vector from shape a to shape b. Moving b by ``-distance * normal`` (when
  penetrating) separates the pair; in every case ``point_b - point_a = distance * normal``.
- Witness points are in the world frame.
- Collision: two shapes collide when their signed distance is ``<= 0`` (touching collides);
  with a margin ``m``, when it is ``<= m``. The margin is one quantity under one name in
  the queries and kernels (``collide(..., margin)``, ``Scene.in_collision(..., margin)``,
  the edge kernels' ``EdgeRequest.margin``); a `CollisionChecker` sets it once for all of
  its checks as ``padding`` (MoveIt's word for a robot's margin).
- A configuration ``q`` is a float64 array of a robot's active joints, in
  ``robot.joint_names`` order.

Every tolerance lives in `planning_collision.kernels.base.tolerances` (kernels read them there) and
is re-exported here.
"""

from .kernels.base.tolerances import *  # noqa: F403

QUATERNION_ORDER = "xyzw"
