"""The collision checker: state and certified edge checks of a robot in a scene
(checker/checker.py), its flat model and per-thread workspaces (checker/model.py)."""

from .checker import METHODS, CollisionChecker

__all__ = ["METHODS", "CollisionChecker"]
