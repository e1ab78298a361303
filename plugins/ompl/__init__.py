"""OMPL adapters (DESIGN §8): StateValidityChecker, MotionValidator, setup helpers.

They come with the checker (DESIGN §7); this package holds them when they land.
"""
