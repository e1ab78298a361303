"""Progress of the long one-time builds (link models, ACM sampling, the checker's outer
hulls): each is cached afterwards, so only a robot's first run waits for it.

Each step is logged at INFO on the caller's logger (``planning_collision.robot...``,
``planning_collision.checker...``); notes within a step (a V-HACD run, a chunk of a
containment scan) at DEBUG. The caller's ``progress`` argument adds:

- ``None`` (the default): a tqdm bar on stderr when tqdm is installed and stderr is a
  terminal (its text says the step and the note, and its clock moves every 7 s during a
  long one); otherwise the build is announced on stderr as compiles are (notices.py): a
  line once it has run 2 s, one every 7 s while it runs saying where it is, and one when it
  ends (``PLANNING_COLLISION_COMPILE_NOTICE=0`` keeps stderr quiet);
- ``False``: nothing beyond the log;
- a callable ``progress(done, total, message)``: called before each step (``done`` steps
  finished so far), again with the same ``done`` for each note within a step (the message
  says where it is), and once at the end with ``done == total``.

Builds read from the cache take no steps, so they stay quiet.
"""

from __future__ import annotations

import logging
import sys

from ..notices import Ticker, say

__all__ = ["Progress"]


def _tqdm_or_none(total: int, desc: str):
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return None
    if not getattr(sys.stderr, "isatty", lambda: False)():
        return None
    return tqdm(total=total, desc=desc, unit="step", leave=False)


class Progress:
    """Reports `total` steps of one build named `desc` (see the module docstring)."""

    def __init__(self, progress, total: int, desc: str, logger: logging.Logger):
        if progress is not None and progress is not False and not callable(progress):
            raise TypeError(
                f"progress must be None, False or a callable(done, total, message), "
                f"got {progress!r}"
            )
        self.total = int(total)
        self.done = 0
        self.desc = desc
        self.log = logger
        self.callback = progress if callable(progress) else None
        self.bar = _tqdm_or_none(self.total, desc) if progress is None else None
        self.summary = "done"  # the closing message; a build may set a better one
        self.message = "starting"  # where the build is (the last step or note)
        # the default speaks on stderr as compiles do, or keeps the bar moving (a V-HACD
        # run is one call of seconds: the bar's clock and text move meanwhile)
        self.ticker = Ticker(self._speak) if progress is None else None

    def _speak(self, first: bool, seconds: float) -> None:
        """The ticker's line (module doc): the build, its step and where it is."""
        if self.bar is not None:
            self.bar.set_postfix_str(f"{self.message[:50]} ({seconds:.0f} s)")
            return
        where = f"{max(self.done, 1)}/{self.total} {self.message}"
        if first:
            say(self.log, "building %s (once, then cached): %s", self.desc, where)
        else:
            say(self.log, "still building %s (%.0f s): %s", self.desc, seconds, where)

    def step(self, message: str) -> None:
        """Step ``done + 1`` of `total` starts: `message` says what it does."""
        self.log.info("%s: %d/%d %s", self.desc, self.done + 1, self.total, message)
        self.message = message
        if self.callback is not None:
            self.callback(self.done, self.total, message)
        if self.bar is not None:
            self.bar.n = self.done
            self.bar.set_postfix_str(message[:60])
        self.done += 1

    def note(self, message: str) -> None:
        """Where the current step is (`message`), without finishing it: the bar's text
        changes, the callback hears it with the same ``done``, the ticker says it."""
        self.log.debug("%s: %d/%d %s", self.desc, self.done, self.total, message)
        self.message = message
        if self.callback is not None:
            self.callback(max(self.done - 1, 0), self.total, message)
        if self.bar is not None:
            self.bar.set_postfix_str(message[:60])

    def close(self, message: str | None = None, failed: bool = False) -> None:
        """The build ended (`failed`: by an exception; then no final callback)."""
        message = self.summary if message is None else message
        spoke = self.ticker is not None and self.ticker.stop()
        if spoke and self.bar is None and not failed:
            say(self.log, "built %s: %s", self.desc, message)
        elif not failed:
            self.log.info("%s: %s", self.desc, message)
        if self.callback is not None and not failed:
            self.callback(self.total, self.total, message)
        if self.bar is not None:
            self.bar.n = self.total if not failed else self.done
            self.bar.close()

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        self.close(failed=exc_type is not None)
