"""Shared test set-up: hypothesis profiles, seeded randomness, the shared/ data path."""

import os
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, settings

# The first call of a kernel compiles it: no deadline. CI is derandomized so a red run
# reproduces; locally hypothesis explores.
settings.register_profile(
    "ci",
    deadline=None,
    derandomize=True,
    max_examples=60,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "dev", deadline=None, max_examples=100, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile("ci" if os.environ.get("CI") else os.environ.get("HYPOTHESIS_PROFILE", "dev"))

SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


@pytest.fixture
def rng():
    """A seeded generator; never the global seed."""
    return np.random.default_rng(20261121)


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """`../shared/data`: present in CI, absent on a user's machine (tests skip cleanly)."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"benchmark data not found at {SHARED_DATA} (only CI has ../shared)")
    return SHARED_DATA
