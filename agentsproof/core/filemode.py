"""Files we write for the user get the mode any file they write would get (0666 less their
umask), not mkstemp's private 0600: a report is a CI artifact others must read."""

from __future__ import annotations

import os
import threading

_LOCK = threading.Lock()


def user_file_mode() -> int:
    """The mode a new file of the user's gets: 0666 less their umask."""
    with _LOCK:  # os.umask can only be read by setting it; set it straight back
        mask = os.umask(0o077)
        os.umask(mask)
    return 0o666 & ~mask


def as_user_file(fd: int) -> None:
    """Give the open temporary file ``fd`` (from mkstemp) the user's default file mode."""
    os.fchmod(fd, user_file_mode())
