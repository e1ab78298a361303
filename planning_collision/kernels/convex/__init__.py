"""Convex pairs: support functions, GJK, EPA and the closed forms, and the pair queries
built on them (the narrow phase)."""
