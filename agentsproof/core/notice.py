"""Notes and warnings for the user from below the commands layer: one line each on stderr.

The lower layers have no terminal (CONTRIBUTING.md: they return values and raise); what
they must still say while they work — a load-time note, a warning that does not stop the
run — goes through here, never through a bare ``print``. ``sys.stderr`` is looked up at
each call, so the console scrubber (:func:`agentsproof.core.scrub.scrubbed_console`) and
pytest's capture see every line.

A say-once line (a file loaded again by a retry, a note per target per run) is kept in a
:class:`Said` set: the process-wide :data:`SAID` by default, or a set of its own for a
scope shorter than the process (one flight-recorder store).
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Hashable


def say(line: str) -> None:
    """``line`` on stderr as it is."""
    print(line, file=sys.stderr)


def note(line: str) -> None:
    """``note: line`` on stderr."""
    say(f"note: {line}")


def warn(line: str) -> None:
    """``warning: line`` on stderr."""
    say(f"warning: {line}")


class Said:
    """What was already said in one scope: each key once."""

    def __init__(self) -> None:
        self._keys: set[Hashable] = set()
        self._lock = threading.Lock()

    def first(self, key: Hashable) -> bool:
        """True the first time ``key`` is seen here (and it is remembered)."""
        with self._lock:
            if key in self._keys:
                return False
            self._keys.add(key)
            return True

    def note(self, line: str, key: Hashable | None = None) -> None:
        """:func:`note` ``line`` unless ``key`` (the line itself by default) was said here."""
        if self.first(("note", line) if key is None else key):
            note(line)

    def warn(self, line: str, key: Hashable | None = None) -> None:
        """:func:`warn` ``line`` unless ``key`` (the line itself by default) was said here."""
        if self.first(("warning", line) if key is None else key):
            warn(line)

    def __contains__(self, key: object) -> bool:
        return key in self._keys

    def clear(self) -> None:
        """Forget everything said (for tests)."""
        with self._lock:
            self._keys.clear()


SAID = Said()
"""The process-wide say-once set."""


def note_once(line: str, key: Hashable | None = None) -> None:
    """:func:`note` ``line`` once per process (per ``key``, the line itself by default)."""
    SAID.note(line, key)


def warn_once(line: str, key: Hashable | None = None) -> None:
    """:func:`warn` ``line`` once per process (per ``key``, the line itself by default)."""
    SAID.warn(line, key)
