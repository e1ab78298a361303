"""Adapters that plug planning_collision into planners."""
