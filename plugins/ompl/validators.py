"""OMPL's two questions answered by a `CollisionChecker`.

- `CollisionValidityChecker` (`ob.StateValidityChecker`): `isValid` is `checker.is_valid`,
  `clearance` is `checker.clearance` (OMPL's clearance objectives and the benchmark's
  "solution clearance" read it).
- `CollisionMotionValidator` (`ob.MotionValidator`): `checkMotion(s1, s2)` is one compiled
  edge check (`checker.edge_free`): the end state and the whole segment, certified free for
  "dichotomy" and "ca". s1 is not checked again (OMPL's contract: it is a valid state).

Both catch every exception inside a callback, log it once with its traceback, and report
the state or motion invalid: an exception escaping a callback aborts the process in PRM and
in benchmark runs (OMPL_BINDINGS.md). They return Python bools (anything else is fatal
there too).

OMPL's binding never passes `lastValid` to Python (`checkMotion(s1, s2, lastValid)` reaches
the two-argument method, and lastValid stays (s1, 0)). KPIECE1 and BKPIECE1 therefore never
keep partial motions, and LBKPIECE1 drops a whole motion instead of its valid prefix.
`CollisionMotionValidator.last_valid(s1, s2)` gives the valid prefix from Python. OMPL's own
motion counters stay at zero with a Python validator; `counts` keeps ours.
"""

from __future__ import annotations

import logging
import time
import traceback

from ompl import base as ob

from .spaces import StateCodec

__all__ = ["CollisionMotionValidator", "CollisionValidityChecker", "METHODS", "Guarded", "guarded"]

log = logging.getLogger("planning_collision.plugins.ompl")

METHODS = ("dichotomy", "ca", "discrete")


class _OnceLog:
    """Logs the first exception of each kind of callback, with its traceback; counts all.

    The traceback is logged as text and the exception's frames are cleared: a log record
    holding the exception (`exc_info`) would keep the callback's state wrappers alive after
    OMPL frees their states, and the binding then hands such a stale wrapper back from a
    later `si.allocState()` with its new state already freed (spaces.new_state)."""

    def __init__(self):
        self.errors = 0

    def __call__(self, what: str, exc: BaseException) -> None:
        self.errors += 1
        if self.errors == 1:
            log.error(
                "%s raised %s: reported invalid (later errors are counted, not logged)\n%s",
                what,
                type(exc).__name__,
                "".join(traceback.format_exception(exc)).rstrip(),
            )
        traceback.clear_frames(exc.__traceback__)


class Guarded:
    """A callback of yours made safe to hand to OMPL: it returns `fn(*args)` as a Python bool, and
    when `fn` raises, it logs the first exception with its traceback (logger
    `planning_collision.plugins.ompl`), counts every one (`errors`) and returns `invalid` (False:
    the state or motion is reported invalid) instead of letting it reach OMPL, where it aborts the
    process in PRM and in benchmark runs (docs/ompl.md)::

        def my_check(state):
            q = codec.read(state)
            return checker.is_valid(q) and my_constraint(q)

        ss.setStateValidityChecker(guarded(my_check))

    A non-bool result (a numpy bool, an int) is converted; anything `bool()` refuses is an
    error like any other. The plugin's own validators already behave this way."""

    def __init__(self, fn, what: str | None = None, invalid: bool = False):
        if not callable(fn):
            raise TypeError(f"fn must be callable, got {type(fn).__name__}")
        self.fn = fn
        self.what = what or getattr(fn, "__qualname__", repr(fn))
        self.invalid = bool(invalid)
        self._error = _OnceLog()

    @property
    def errors(self) -> int:
        """Exceptions caught so far (each answered with `invalid`)."""
        return self._error.errors

    def __call__(self, *args) -> bool:
        try:
            return bool(self.fn(*args))
        except Exception as e:  # noqa: BLE001 - a callback must never raise (class doc)
            self._error(self.what, e)
            return self.invalid


def guarded(fn, what: str | None = None, invalid: bool = False) -> Guarded:
    """`Guarded(fn, what, invalid)`: your validity callback, logging instead of raising."""
    return Guarded(fn, what, invalid)


class CollisionValidityChecker(ob.StateValidityChecker):
    """`ob.StateValidityChecker` over `checker` (module doc). `codec`: the `StateCodec` of
    si's space (built from si when omitted)."""

    def __init__(self, si, checker, codec: StateCodec | None = None):
        super().__init__(si)
        self.checker = checker
        self.codec = codec or StateCodec(si.getStateSpace(), checker.robot.continuous)
        self._error = _OnceLog()
        self.calls = 0
        self.seconds = 0.0

    @property
    def errors(self) -> int:
        """Exceptions caught in callbacks (each reported as an invalid state)."""
        return self._error.errors

    def isValid(self, state) -> bool:
        self.calls += 1
        t0 = time.perf_counter()
        try:
            return bool(self.checker.is_valid(self.codec.read(state)))
        except Exception as e:  # noqa: BLE001 - a callback must never raise (module doc)
            self._error("isValid", e)
            return False
        finally:
            self.seconds += time.perf_counter() - t0

    def clearance(self, state) -> float:
        try:
            return float(self.checker.clearance(self.codec.read(state)))
        except Exception as e:  # noqa: BLE001
            self._error("clearance", e)
            return 0.0


class CollisionMotionValidator(ob.MotionValidator):
    """`ob.MotionValidator` over `checker` with edge `method` ("dichotomy", "ca": certified;
    "discrete": states at the checker's resolution, not certified). Keeps no reference to
    si (that would leak it: OMPL_BINDINGS.md, Lifetime)."""

    def __init__(self, si, checker, method: str = "dichotomy", codec: StateCodec | None = None):
        super().__init__(si)
        if method not in METHODS:
            raise ValueError(f"method must be one of {METHODS}, got {method!r}")
        self.checker = checker
        self.method = method
        self.codec = codec or StateCodec(si.getStateSpace(), checker.robot.continuous)
        self._error = _OnceLog()
        self.counts = {"valid": 0, "invalid": 0}
        self.seconds = 0.0

    @property
    def errors(self) -> int:
        """Exceptions caught in callbacks (each reported as an invalid motion)."""
        return self._error.errors

    def _qs(self, s1, s2):
        q0 = self.codec.read(s1, 0)
        return q0, self.codec.unwrap(q0, self.codec.read(s2, 1))

    def checkMotion(self, s1, s2) -> bool:
        t0 = time.perf_counter()
        try:
            q0, q1 = self._qs(s1, s2)
            ok = bool(self.checker.edge_free(q0, q1, self.method))
        except Exception as e:  # noqa: BLE001 - a callback must never raise (module doc)
            self._error("checkMotion", e)
            ok = False
        self.seconds += time.perf_counter() - t0
        self.counts["valid" if ok else "invalid"] += 1
        return ok

    def last_valid(self, s1, s2) -> tuple[bool, float]:
        """(valid, t): the motion s1 -> s2 is free on [0, t] (t = 1 when valid), t up to the
        first contact: what OMPL's three-argument checkMotion would report, which its
        binding cannot pass to Python. Conservative advancement ("ca") finds it, whatever
        the validator's method ("dichotomy" rejects most colliding motions by boolean
        probes, before certifying any prefix)."""
        q0, q1 = self._qs(s1, s2)
        r = self.checker.check_edge(q0, q1, "ca" if self.method != "discrete" else "discrete")
        return bool(r.valid), float(r.last_valid_t)
