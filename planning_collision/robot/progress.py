"""Progress of the long robot builds (link decomposition, ACM sampling).

Each step is logged at INFO on the ``planning_collision.robot`` loggers. The caller's
``progress`` argument adds:

- ``None`` (the default): a tqdm bar on stderr when tqdm is installed and stderr is a
  terminal, else nothing beyond the log;
- ``False``: nothing beyond the log;
- a callable ``progress(done, total, message)``: called before each step (``done`` steps
  finished so far) and once at the end with ``done == total``.

Builds read from the cache take no steps, so they stay quiet.
"""

from __future__ import annotations

import logging
import sys

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

    def step(self, message: str) -> None:
        """Step ``done + 1`` of `total` starts: `message` says what it does."""
        self.log.info("%s: %d/%d %s", self.desc, self.done + 1, self.total, message)
        if self.callback is not None:
            self.callback(self.done, self.total, message)
        if self.bar is not None:
            self.bar.n = self.done
            self.bar.set_postfix_str(message[:40])
        self.done += 1

    def close(self, message: str | None = None, failed: bool = False) -> None:
        """The build ended (`failed`: by an exception; then no final callback)."""
        message = self.summary if message is None else message
        if self.callback is not None and not failed:
            self.callback(self.total, self.total, message)
        if self.bar is not None:
            self.bar.n = self.total if not failed else self.done
            self.bar.close()
        if not failed:
            self.log.info("%s: %s", self.desc, message)

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        self.close(failed=exc_type is not None)
