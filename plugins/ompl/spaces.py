"""OMPL state spaces for a robot, and states <-> numpy.

`make_state_space(robot)` gives the space whose straight-line interpolation is the motion
the checker certifies:

- joints with limits (revolute, prismatic): `RealVectorStateSpace` components, bounds from
  the joint limits;
- continuous joints: `SO2StateSpace` components. OMPL interpolates an SO2 angle the short
  way round; the plugin unwraps the end angle of every motion relative to its start
  (`StateCodec.unwrap`), so the checker's joint-space segment is that same short way;
- a floating base is the robot's six virtual joints (x, y, z, yaw, pitch, roll;
  robot/kinematics.py): x, y, z and pitch as real vectors, yaw and roll as SO2. Not
  `SE3StateSpace`: OMPL interpolates SE3 rotations by slerp, a motion the checker does not
  check, so an SE3 edge "certified" in these coordinates would not be the one the path
  follows.

Consecutive limited joints share one real-vector component, so a robot without continuous
joints (the Panda) gets a plain `RealVectorStateSpace`.

States are read and written through the space's serialization (a float64 buffer wrapped
in a PyCapsule, about 50 ns per state; OMPL_BINDINGS.md), never element by element.
"""

from __future__ import annotations

import ctypes
import math
import sys
import threading

import numpy as np
from ompl import base as ob

__all__ = ["StateCodec", "make_state_space", "new_state"]

_capsule_new = ctypes.pythonapi.PyCapsule_New
_capsule_new.restype = ctypes.py_object
_capsule_new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]


def _capsule(buf: np.ndarray):
    """A PyCapsule named "nb_handle" around buf's memory (the caller keeps buf alive)."""
    return _capsule_new(buf.ctypes.data, b"nb_handle", None)


def _real_vector(lower, upper) -> ob.RealVectorStateSpace:
    space = ob.RealVectorStateSpace(len(lower))
    bounds = ob.RealVectorBounds(len(lower))
    for k, (lo, hi) in enumerate(zip(lower, upper, strict=True)):
        bounds.setLow(k, float(lo))
        bounds.setHigh(k, float(hi))
    space.setBounds(bounds)
    return space


def _runs(continuous) -> list[tuple[int, int, bool]]:
    """[(start, stop, continuous)] runs of q: each continuous joint alone, limited joints
    grouped while consecutive."""
    runs: list[tuple[int, int, bool]] = []
    for d, c in enumerate(continuous):
        if c or not runs or runs[-1][2]:
            runs.append((d, d + 1, bool(c)))
        else:
            runs[-1] = (runs[-1][0], d + 1, False)
    return runs


def make_state_space(robot) -> ob.StateSpace:
    """The OMPL state space of `robot`'s configurations q (module doc), in q's order."""
    lower = np.asarray(robot.lower, float)
    upper = np.asarray(robot.upper, float)
    if robot.dof == 0:
        raise ValueError(f"robot {robot.name!r} has no active joints: nothing to plan")
    bad = np.flatnonzero(~(np.isfinite(lower) & np.isfinite(upper) & (upper > lower)))
    if bad.size:
        d = int(bad[0])
        raise ValueError(
            f"joint {robot.joint_names[d]!r} has limits [{lower[d]}, {upper[d]}]: a state "
            "space needs finite limits with lower < upper (give joint_limits= when loading)"
        )
    runs = _runs(robot.continuous)
    if len(runs) == 1 and not runs[0][2]:
        return _real_vector(lower, upper)
    space = ob.CompoundStateSpace()
    for a, b, cont in runs:
        space.addSubspace(ob.SO2StateSpace() if cont else _real_vector(lower[a:b], upper[a:b]), 1.0)
    space.lock()
    return space


def _refs_of_a_fresh_local() -> int:
    """What `sys.getrefcount` says of an object only a local variable holds (2 on CPython
    3.11: the variable and the call's argument; measured, not assumed)."""
    x = object()
    return sys.getrefcount(x)


_LOCAL_REFS = _refs_of_a_fresh_local()


def new_state(si) -> ob.State:
    """A new state of si's space, for the caller to fill (starts, goals, states to test).

    Use it instead of `si.allocState()`, which the `ompl` 2.0 binding makes unsafe: it
    returns the state in a `shared_ptr`, and when a Python wrapper of an earlier state at
    the same address is still alive (a state passed to a callback and kept after it, e.g.
    by a stored exception's traceback, after OMPL freed that state), nanobind hands back
    that old wrapper and drops the `shared_ptr`, freeing the new state at once: writing to
    it corrupts the heap (measured: a segfault, tests/test_ompl_plugin.py). Such a stale
    wrapper is seen by its reference count, and then the state is allocated through the
    space instead, whose raw-pointer binding leaves it alive (at the cost of its few bytes
    never being freed)."""
    s = si.allocState()
    if sys.getrefcount(s) <= _LOCAL_REFS:  # nobody else holds it
        return s
    del s  # a stale wrapper: its new state is already freed
    return si.getStateSpace().allocState()


class StateCodec:
    """OMPL states of `space` <-> float64 arrays of the robot's q (module doc).

    `read(state)` returns a buffer the codec reuses (one set per thread): copy it to keep
    it. `continuous`
    (dof,) marks the SO2 components, whose motions `unwrap` turns into joint-space segments.
    """

    def __init__(self, space: ob.StateSpace, continuous=None):
        self.space = space
        n = space.getSerializationLength()
        if n % 8:
            raise ValueError(f"a state of this space serializes to {n} bytes, not float64s")
        self.dof = n // 8
        self.continuous = (
            np.zeros(self.dof, bool) if continuous is None else np.asarray(continuous, bool)
        )
        if self.continuous.shape != (self.dof,):
            raise ValueError(f"continuous must have shape ({self.dof},)")
        self._wrap = bool(self.continuous.any())
        self._local = threading.local()

    def _buffers(self):
        """This thread's buffers and their capsules (PRM calls the validators from two
        threads, and the checker's kernels release the GIL while they run)."""
        try:
            return self._local.bufs, self._local.caps
        except AttributeError:
            bufs = [np.zeros(self.dof) for _ in range(3)]
            self._local.bufs, self._local.caps = bufs, [_capsule(b) for b in bufs]
            return self._local.bufs, self._local.caps

    def read(self, state, slot: int = 0) -> np.ndarray:
        """q of `state` into this thread's buffer `slot` (0, 1 or 2; overwritten by the
        next read into it)."""
        bufs, caps = self._buffers()
        self.space.serialize(caps[slot], state)
        return bufs[slot]

    def write(self, q, state) -> None:
        """state <- q (continuous joints wrapped into [-pi, pi))."""
        bufs, caps = self._buffers()
        buf = bufs[2]
        buf[:] = q
        if self._wrap:
            c = self.continuous
            buf[c] = (buf[c] + math.pi) % (2.0 * math.pi) - math.pi
        self.space.deserialize(state, caps[2])

    def unwrap(self, q0: np.ndarray, q1: np.ndarray) -> np.ndarray:
        """q1 with each continuous joint moved by a multiple of 2 pi to within pi of q0:
        the segment q0 -> q1 is then OMPL's SO2 interpolation (the short way round)."""
        if not self._wrap:
            return q1
        c = self.continuous
        d = q1[c] - q0[c]
        q1[c] = q0[c] + (d + math.pi) % (2.0 * math.pi) - math.pi
        return q1

    def path(self, states) -> np.ndarray:
        """(n, dof) the configurations of `states`, each continuous joint unwrapped from the
        one before: the joint-space polyline the plugin checked."""
        Q = np.array([self.read(s).copy() for s in states]).reshape(-1, self.dof)
        for k in range(1, len(Q)):
            self.unwrap(Q[k - 1], Q[k])
        return Q
