"""The flight recorder's file store: what an agent trial produced, kept for ``regrade``.

Every trial record already holds its answer, trajectory, skill use, usage and the list of
files it created, changed or deleted (:class:`agentsproof.model.results.FileRecord`). The
recorder adds each produced file's *content*, up to a size cap, to a content-addressed
store beside the report (``<report>.files/<sha256[:2]>/<sha256>``) and writes the digest
into the file's record (``sha256``). A file over the cap (or unreadable) keeps no digest:
a re-grade that needs it says so by name. Registered secrets are masked in what is
stored, as in every other output.

Files are read without following symlinks (an agent could have planted one), and only
regular files are stored; the store is written through :mod:`agentsproof.core.safepath`. Identical contents are stored once.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Sequence
from pathlib import Path

from agentsproof.core.notice import Said
from agentsproof.model.results import FileRecord

DEFAULT_FILE_CAP = 1_000_000
"""Bytes per file (``AGENTSPROOF_RECORD_MAX_FILE_BYTES``)."""
DEFAULT_TRIAL_CAP = 20_000_000
"""Bytes per trial, all files together (``AGENTSPROOF_RECORD_MAX_TRIAL_BYTES``)."""


def store_dir(report_json: Path) -> Path:
    """Where a report's recorded files live: ``<report>.files/`` beside it."""
    return report_json.with_name(report_json.stem + ".files")


def caps() -> tuple[int, int]:
    """(bytes per file, bytes per trial) the recorder keeps, from the environment or the defaults."""
    from agentsproof.core.envcfg import env_int

    return (
        env_int("AGENTSPROOF_RECORD_MAX_FILE_BYTES", DEFAULT_FILE_CAP, lo=0),
        env_int("AGENTSPROOF_RECORD_MAX_TRIAL_BYTES", DEFAULT_TRIAL_CAP, lo=0),
    )


class FileStore:
    """A report's content-addressed store of recorded files (``<report>.files/``), with its size caps."""

    def __init__(self, root: Path, file_cap: int | None = None, trial_cap: int | None = None):
        self.root = root
        default_file, default_trial = caps() if file_cap is None or trial_cap is None else (0, 0)
        self.file_cap = default_file if file_cap is None else file_cap
        self.trial_cap = default_trial if trial_cap is None else trial_cap
        self.warned = Said()
        """What this store has warned about (each line once)."""

    def path(self, digest: str) -> Path:
        """Where ``digest``'s content is (or would be) stored."""
        return self.root / digest[:2] / digest

    def put(self, data: bytes) -> str:
        """Store ``data`` (once) as ``<root>/<sha256[:2]>/<sha256>``, through
        :mod:`agentsproof.core.safepath`: a symlink planted at the store, its sub-folder or
        the file is refused (UnsafePath, an OSError), never written through."""
        from agentsproof.core.safepath import write_file

        digest = hashlib.sha256(data).hexdigest()
        write_file(self.root.parent, f"{self.root.name}/{digest[:2]}/{digest}", data, mode=0o600, exist="keep")
        return digest

    def get(self, digest: str) -> bytes | None:
        """The content of ``digest``; None when it is missing or does not match its name."""
        if len(digest) != 64 or any(c not in "0123456789abcdef" for c in digest):
            return None
        try:
            data = _read_regular(self.path(digest), 1 << 40)
        except OSError:
            return None
        return data if data is not None and hashlib.sha256(data).hexdigest() == digest else None

    def keep(self, workspace: Path, files: Sequence[FileRecord]) -> None:
        """Store the trial's produced files (created or changed) and note their digests."""
        left = self.trial_cap
        for rec in files:
            if rec.status == "deleted" or rec.size > self.file_cap or rec.size > left:
                continue
            try:
                data = _read_regular(workspace / rec.path, self.file_cap)
            except OSError:
                continue
            if data is None:
                continue
            data = _masked(data)
            try:
                rec.sha256 = self.put(data)
            except OSError as err:  # e.g. a symlink planted at the store: its content is not kept
                self._warn(f"the flight recorder cannot store produced files: {err.strerror or err}")
                continue
            left -= len(data)

    def _warn(self, line: str) -> None:
        self.warned.warn(line)


def _masked(data: bytes) -> bytes:
    """``data`` with every registered secret masked, for a text file (the store is an output
    like the report: a secret the agent wrote into a file is not kept in clear); binary
    files have each secret's raw bytes masked."""
    from agentsproof.core.scrub import MASK, active, registered, scrub

    if not active():
        return data
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        for value in registered():
            data = data.replace(value.encode("utf-8", "surrogatepass"), MASK.encode())
        return data
    clean = scrub(text)
    return data if clean == text else clean.encode("utf-8", "surrogatepass")


def _read_regular(path: Path, cap: int) -> bytes | None:
    """The bytes of a regular file (never through a symlink); None when it is not one or is over ``cap``."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > cap:
            return None
        with os.fdopen(fd, "rb", closefd=False) as fh:
            data = fh.read(min(cap, st.st_size) + 1)
        return data if len(data) <= cap else None
    finally:
        os.close(fd)
