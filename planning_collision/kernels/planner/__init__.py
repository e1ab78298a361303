"""The planner compiled with the checker: RRT-Connect and path shortcutting."""
