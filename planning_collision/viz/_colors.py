"""The colours of the views, RGB 0-255. Chosen apart in hue so that a screenshot test can
tell them from each other and from the viewer's own (blue) controls."""

ROBOT = (255, 140, 0)  # orange
OBSTACLE = (40, 160, 80)  # green
COLLISION = (220, 20, 20)  # red: a link in collision
PATH = (200, 0, 200)  # magenta: the end effector's path
ROADMAP = (110, 70, 200)  # violet: roadmap vertices and edges
GHOST_OPACITY = 0.3  # robot poses along a path
