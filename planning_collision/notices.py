"""Long waits said out loud: a line on stderr (and a log record) once a wait has run `QUIET`
seconds, one every `TICK` seconds while it runs, and one when it ends.

Two kinds of wait use it: a compile (compiling.py) and a one-time build of a robot's models
(robot/progress.py: link models, the ACM's sampling, the checker's outer hulls). Either is
cached afterwards, so a second run says nothing. ``PLANNING_COLLISION_COMPILE_NOTICE=0``
keeps stderr quiet (the log records remain).
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import time

__all__ = ["NOTICE_ENV", "QUIET", "TICK", "Ticker", "say"]

NOTICE_ENV = "PLANNING_COLLISION_COMPILE_NOTICE"
QUIET = 2.0  # seconds a wait runs before it is announced
TICK = 7.0  # seconds between "still ..." lines


def say(log: logging.Logger, msg: str, *args) -> None:
    """`msg % args` as an INFO record of `log` and, unless `NOTICE_ENV` is "0", a line on
    stderr."""
    log.info(msg, *args)
    if os.environ.get(NOTICE_ENV, "1") != "0":
        print("planning_collision: " + msg % args, file=sys.stderr, flush=True)


class Ticker:
    """Calls ``speak(first, seconds)`` from a daemon thread once the wait has run `quiet`
    seconds (``first`` True), then every `tick` seconds (False), until `stop`; a wait
    shorter than `quiet` says nothing. (Default: `QUIET` and `TICK` as they are when the
    wait begins.)"""

    def __init__(self, speak, quiet: float | None = None, tick: float | None = None):
        self.speak = speak
        self.t0 = time.perf_counter()
        self.spoke = False
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._tick = float(TICK if tick is None else tick)
        wait = float(QUIET if quiet is None else quiet)
        threading.Thread(target=self._run, args=(wait,), daemon=True).start()

    def seconds(self) -> float:
        """Seconds since the wait began."""
        return time.perf_counter() - self.t0

    def _run(self, wait: float) -> None:
        while not self._stop.wait(wait):
            with self._lock:
                if self._stop.is_set():
                    return
                self.speak(not self.spoke, self.seconds())
                self.spoke = True
            wait = self._tick

    def stop(self) -> bool:
        """End the wait; True when it was announced (then its end should be said too)."""
        with self._lock:
            self._stop.set()
            return self.spoke
