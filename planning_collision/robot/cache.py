"""Where built robot models are cached, and writing there without ever failing a build.

A robot's link models take seconds to a minute to build (V-HACD) and its sampled ACM a few
seconds more, so both are cached on disk by default, keyed by file contents and settings:

- ``cache_dir=None`` (the default): the per-user cache `default_cache_dir()`:
  ``$PLANNING_COLLISION_CACHE`` if set, else ``$XDG_CACHE_HOME/planning_collision``, else
  ``~/.cache/planning_collision``. ``PLANNING_COLLISION_CACHE=off`` (or ``0``, ``false``,
  ``no``) turns caching off for the process.
- ``cache_dir=<path>``: that directory (the registry passes ``robots/<name>/``).
- ``cache_dir=False``: no cache; every build starts from the files.

A cache directory that cannot be created or written only logs a warning (once per
directory); the model is built and used all the same. Files are written to a temporary name
and renamed, so a reader never sees half a file; an unreadable one is rebuilt.
"""

from __future__ import annotations

import logging
import os
import tempfile
from pathlib import Path

__all__ = [
    "CACHE_ENV",
    "default_cache_dir",
    "derived_cache_file",
    "resolve_cache_dir",
    "write_cache_file",
]

log = logging.getLogger(__name__)

CACHE_ENV = "PLANNING_COLLISION_CACHE"
_OFF = {"0", "off", "false", "no"}
_warned: set[str] = set()  # directories already warned about (once per process)


def default_cache_dir() -> Path | None:
    """The per-user cache directory (see the module docstring); None when turned off."""
    env = os.environ.get(CACHE_ENV, "").strip()
    if env:
        return None if env.lower() in _OFF else Path(env).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME", "").strip()
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "planning_collision"


def resolve_cache_dir(cache_dir) -> Path | None:
    """`cache_dir` as `Robot.from_urdf` takes it -> the directory to use, or None for none."""
    if cache_dir is False:
        return None
    if cache_dir is None:
        return default_cache_dir()
    if cache_dir is True:
        raise TypeError("cache_dir must be a path, None (the per-user cache) or False (none)")
    return Path(cache_dir).expanduser()


def derived_cache_file(robot, name: str) -> Path | None:
    """Where a table derived from a loaded robot (the checker's self-pair tables, its
    pieces' outer hulls) is cached: `name` in the per-user cache, also for a robot whose
    model files live elsewhere (as the registry's do); None when the robot was loaded with
    ``cache_dir=False`` or caching is off."""
    d = resolve_cache_dir(False if getattr(robot, "cache_dir", None) is False else None)
    return None if d is None else d / name


def write_cache_file(path: Path, write) -> bool:
    """Write `path` through ``write(file object)`` via a temporary file and a rename.
    Returns False, after a warning (once per directory), when the directory cannot be
    created or written."""
    path = Path(path)
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.stem}-", suffix=".tmp", dir=path.parent)
        with os.fdopen(fd, "wb") as f:
            write(f)
        os.chmod(tmp, 0o644)  # mkstemp makes it private; a cache is as readable as any file
        os.replace(tmp, path)
        return True
    except OSError as e:
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)
        d = str(path.parent)
        if d not in _warned:
            _warned.add(d)
            log.warning(
                "cannot write the robot model cache in %s (%s); models are rebuilt in every "
                "process. Pass cache_dir=<writable dir>, set %s, or cache_dir=False to "
                "silence this.",
                d,
                e,
                CACHE_ENV,
            )
        return False
