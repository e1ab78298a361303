"""Edit stamps: every edit of a scene or an allowed-collision matrix takes the next number
of one process-wide counter as its new version, and announces itself once it is in place.

A version is then unique across objects (a replaced ACM can never repeat the number of the
one it replaced), and a checker asks "was anything edited since I last looked?" with one
comparison, ``seen == LATEST[0]``, before it compares its robot's and scene's versions
(the two property reads cost ~130 ns, 6 % of a state check called from Python).

The order matters when edits and queries run in different threads. An edit first puts its
new state (and version) in place, then calls `announce`, which moves `LATEST`. A checker
reads `LATEST` before it reads the versions: if it read a version before the edit was in
place, the announcement that follows changes `LATEST` again, and its next call looks
again. (Moving `LATEST` when the number is taken, before the state is in place, would let a
checker record the new `LATEST` beside the old version and never look again.)
"""

import threading

from .processes import fork_safe

LATEST = [0]  # moved by every announced edit
_COUNTER = [0]
_lock = fork_safe(threading.Lock())


def next_stamp() -> int:
    """A new version number, larger than every earlier one (not yet announced)."""
    with _lock:
        _COUNTER[0] += 1
        return _COUNTER[0]


def announce() -> None:
    """Tell every checker that an edit is in place: their next call compares versions."""
    with _lock:
        _COUNTER[0] += 1
        LATEST[0] = _COUNTER[0]
