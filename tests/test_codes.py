"""The kernels' codes (kernels/base/codes.py): each an np.int64 defined once, kinds in ranges that
do not overlap, so a code read where another kind was meant matches nothing."""

import numpy as np

from planning_collision.kernels.base import codes

# the small numbers and sentinels the module gives besides codes (its doc says why)
NOT_CODES = {"ZERO", "ONE", "TWO", "THREE", "FOUR", "YES", "NO", "SECOND_POSE", "MISSING",
             "OVERFLOW", "BAD_Q"}  # fmt: skip


def _codes() -> dict:
    return {
        name: v
        for name, v in vars(codes).items()
        if name.isupper() and not name.startswith("_") and name not in NOT_CODES
    }


def test_every_code_is_an_int64_and_unique():
    found = _codes()
    assert len(found) >= 30, sorted(found)
    for name, v in found.items():
        assert type(v) is np.int64, (name, type(v))
    values = [int(v) for v in found.values()]
    assert len(set(values)) == len(values), sorted(found.items(), key=lambda kv: kv[1])


def test_codes_stay_below_the_refused_configurations_and_pose_codes_do_not_collide():
    """BAD_Q + k names joint k: no code may be >= BAD_Q. A second pose's codes (+10) must
    not be another code."""
    found = {int(v) for v in _codes().values()}
    assert max(found) < codes.BAD_Q
    pose = [codes.POSE_OK, codes.POSE_NOT_FINITE, codes.POSE_LAST_ROW, codes.POSE_NOT_RIGID,
            codes.POSE_OUT_OF_RANGE]  # fmt: skip
    for c in pose:
        assert int(c + codes.SECOND_POSE) not in found


def test_the_verdicts_are_not_edge_methods_or_statuses_of_other_kinds():
    """The overlaps the codes once had (UNDECIDED = BAD_Q = CA = 2) are gone."""
    assert len({int(codes.UNDECIDED), int(codes.BAD_Q), int(codes.CA)}) == 3
    assert codes.MISSING < 0 and codes.OVERFLOW < 0 and codes.MISSING != codes.OVERFLOW
