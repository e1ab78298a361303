"""Baselines the benchmark compares against that are not OMPL validators (MPlib)."""
