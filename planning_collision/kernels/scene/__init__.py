"""The scene: AABB trees, point clouds, the flat form of one-primitive scenes, and the
traversal that walks the KCD hierarchy and asks the pair queries at its leaves (the broad
phase)."""
