"""Files we write for the user get the mode any file they write would get (0666 less their
umask), not mkstemp's private 0600: a report is a CI artifact others must read."""

from __future__ import annotations

import os
import tempfile
import threading
from pathlib import Path

_LOCK = threading.Lock()


def user_file_mode() -> int:
    with _LOCK:  # os.umask can only be read by setting it; set it straight back
        mask = os.umask(0o077)
        os.umask(mask)
    return 0o666 & ~mask


def as_user_file(fd: int) -> None:
    """Give the open temporary file ``fd`` (from mkstemp) the user's default file mode."""
    os.fchmod(fd, user_file_mode())


def write_atomic(path: Path, data: bytes, *, mode: int | None = None, durable: bool = False) -> None:
    """Write ``data`` to a temporary file beside ``path`` (its folder made when missing) and
    rename it over ``path``: a reader sees the old file or the new one, never a part, and an
    existing symlink at ``path`` is replaced, not followed. ``mode``: the file's mode
    (default: the user's default file mode, :func:`user_file_mode`); ``durable``: flushed
    to disk before the rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, user_file_mode() if mode is None else mode)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            if durable:
                fh.flush()
                os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
