"""OMPL adapters (docs/architecture.md): StateValidityChecker, MotionValidator, setup helpers.

They come with the checker (planning_collision.checker); this package holds them when they land.
"""
