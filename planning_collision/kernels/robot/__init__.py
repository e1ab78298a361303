"""The robot: forward kinematics over the flat kinematic tree, motion bounds along
straight joint-space edges, self-pair clearance tables and batch self-collision sampling."""
