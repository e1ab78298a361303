"""Readers and writers: URDF, scene files, benchmark problem files."""
