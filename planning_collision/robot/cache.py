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
directory); the model is built and used all the same.

**What is read back is checked, never trusted** (`read_entry`, `write_entry`). An entry (the
link models, a sampled ACM, the checker's self-pair tables and outer hulls) is written to a
temporary name, flushed to disk and renamed, so no reader sees half a file. It holds the key
of what it was built from (the files' contents and settings) and a SHA-256 checksum of that
key and of its own arrays. A reader takes it only when it is that key's entry, its checksum
holds and its arrays pass the reader's own checks (sizes that agree, values in range): an
entry that is truncated, empty, of another build or edited is rebuilt (and rewritten) after
one warning. A cache directory is made private (0700), and one that someone else owns or that
others may write (group or world) is not read at all, with a warning, as ssh treats its keys:
whoever can write there could make collisions free. Sizes are read from a file's table of
contents before anything is allocated (at most `MAX_ENTRY_BYTES`).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import stat
import tempfile
import zipfile
from pathlib import Path

import numpy as np

__all__ = [
    "CACHE_ENV",
    "MAX_ENTRY_BYTES",
    "default_cache_dir",
    "derived_cache_file",
    "read_entry",
    "read_json_entry",
    "resolve_cache_dir",
    "trusted_directory",
    "write_cache_file",
    "write_entry",
    "write_json_entry",
]

log = logging.getLogger(__name__)

CACHE_ENV = "PLANNING_COLLISION_CACHE"
_OFF = {"0", "off", "false", "no"}
_warned: set[str] = set()  # directories and entries already warned about (once per process)
# The largest entry read (its arrays' sizes, from the zip's table of contents): the biggest
# real one, a robot's link models, is a few MB.
MAX_ENTRY_BYTES = 1 << 30


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
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        if not trusted_directory(path.parent):
            return False  # said by trusted_directory; nothing of ours goes there
        fd, tmp = tempfile.mkstemp(prefix=f".{path.stem}-", suffix=".tmp", dir=path.parent)
        with os.fdopen(fd, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())  # on disk before the rename makes it the entry
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


def _warn_once(what: str, message: str, *args) -> None:
    if what not in _warned:
        _warned.add(what)
        log.warning(message, *args)


def _owner_and_mode_ok(st: os.stat_result) -> bool:
    """Owned by this user (or root) and writable by nobody else (group or world)."""
    mine = st.st_uid in (os.geteuid(), 0) if hasattr(os, "geteuid") else True
    return mine and not st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def trusted_directory(d: Path) -> bool:
    """Whether cache directory d may be read and written: owned by this user (or root) and
    writable by nobody else. Otherwise False after a warning (once per directory)."""
    try:
        st = os.stat(d)
    except OSError:
        return False
    if _owner_and_mode_ok(st):
        return True
    _warn_once(
        str(d),
        "not using the robot model cache %s: %s (mode %o, owner uid %d), so whoever else can "
        "write there could decide verdicts. Make it yours and private (chmod 700), or pass "
        "cache_dir=<your dir> or set %s.",
        d,
        "others may write it" if st.st_mode & 0o022 else "another user owns it",
        stat.S_IMODE(st.st_mode),
        st.st_uid,
        CACHE_ENV,
    )
    return False


def _checksum(key: str, arrays: dict) -> str:
    h = hashlib.sha256(key.encode())
    for name in sorted(arrays):
        a = np.ascontiguousarray(arrays[name])
        h.update(f"|{name}|{a.dtype.str}|{a.shape}|".encode())
        h.update(a.tobytes())
    return h.hexdigest()


def write_entry(path: Path, key: str, arrays: dict, compressed: bool = False) -> bool:
    """Write the cache entry `path`: `arrays` (name -> array; no "key" or "checksum") with
    the key of what they were built from and the checksum of both (module doc), atomically.
    False (after one warning per directory) when it cannot be written."""
    arrays = {k: np.asarray(v) for k, v in arrays.items()}
    body = {**arrays, "key": np.array(key), "checksum": np.array(_checksum(key, arrays))}
    save = np.savez_compressed if compressed else np.savez
    return write_cache_file(path, lambda f: save(f, **body))


def _bad(path: Path, what: str, why) -> None:
    _warn_once(str(path), "%s: cache entry (%s) not used: %s; building it again", path, what, why)


def _readable(path: Path, what: str) -> bool:
    """Whether the entry file exists in a trusted directory and may be read (module doc)."""
    if path is None or not path.is_file() or not trusted_directory(path.parent):
        return False
    if not _owner_and_mode_ok(os.stat(path)):
        _bad(path, what, "the file may be written by others")
        return False
    return True


def read_entry(path, key: str, what: str, check=None) -> dict | None:
    """The arrays of the cache entry `path` (written by `write_entry`) when it is `key`'s
    entry, intact and, with `check` (``check(arrays)`` raising ValueError), consistent.
    None when there is none; None after one warning (module doc) when there is one but it
    is not usable: `what` names it in the warning (e.g. "self-pair table")."""
    path = None if path is None else Path(path)
    if not _readable(path, what):
        return None
    try:
        with zipfile.ZipFile(path) as z:
            size = sum(i.file_size for i in z.infolist())
        if size > MAX_ENTRY_BYTES:
            raise ValueError(f"its arrays take {size} bytes, more than {MAX_ENTRY_BYTES}")
        with np.load(path, allow_pickle=False) as z:
            arrays = {name: z[name] for name in z.files}
        if "checksum" not in arrays or "key" not in arrays:
            raise ValueError("it has no key and checksum (an older version wrote it)")
        got_key, got_sum = str(arrays.pop("key")), str(arrays.pop("checksum"))
        if got_key != key:
            raise ValueError("it was built from other files or settings")
        if got_sum != _checksum(key, arrays):
            raise ValueError("its checksum does not match its content")
        if check is not None:
            check(arrays)
    # a damaged file can fail anywhere in zipfile, zlib or numpy (BadZipFile, EOFError,
    # zlib.error, KeyError, ValueError, MemoryError, ...): each means "build it again"
    except Exception as e:
        _bad(path, what, f"{type(e).__name__}: {e}")
        return None
    return arrays


def _json_checksum(key: str, payload: dict) -> str:
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(key.encode() + b"|" + text.encode()).hexdigest()


def write_json_entry(path: Path, key: str, payload: dict) -> bool:
    """`write_entry` for a JSON object (the sampled ACM): {"key", "checksum", **payload}."""
    body = {"key": key, "checksum": _json_checksum(key, payload), **payload}
    text = json.dumps(body, indent=1).encode("utf-8")
    return write_cache_file(path, lambda f: f.write(text))


def read_json_entry(path, key: str, what: str, check=None) -> dict | None:
    """`read_entry` for `write_json_entry`'s entries: the payload, or None."""
    path = None if path is None else Path(path)
    if not _readable(path, what):
        return None
    try:
        if path.stat().st_size > MAX_ENTRY_BYTES:
            raise ValueError(f"it is larger than {MAX_ENTRY_BYTES} bytes")
        payload = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(payload, dict):
            raise ValueError("it is not a JSON object")
        if "checksum" not in payload:
            raise ValueError("it has no checksum (an older version wrote it)")
        got_key, got_sum = payload.pop("key", None), payload.pop("checksum", None)
        if got_key != key:
            raise ValueError("it was built from other files or settings")
        if got_sum != _json_checksum(key, payload):
            raise ValueError("its checksum does not match its content")
        if check is not None:
            check(payload)
    except Exception as e:  # as in read_entry
        _bad(path, what, f"{type(e).__name__}: {e}")
        return None
    return payload
