"""Copies and their sources: a generated eval tests a *copy* of the skill or agent file, so a
changed source must not leave the eval green.

``eval-generate`` writes, beside each eval.yaml, :data:`SIDECAR`: per copied file its name
in the eval folder, the path of its source (relative to that folder, so a moved checkout
keeps it) and the source's SHA-256 at copy time. ``eval`` and ``eval-all`` compare every
copy with its source now (:func:`stale_copies`): a source that differs from its copy (the
skill was edited, or the copy was) or is gone is named in a warning, and under ``--ci``
refuses the file (exit 30). ``eval-generate --refresh`` copies the sources again;
``--live-source`` runs the source files themselves (:func:`live_source`).
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

from agentsproof.core.errors import InputError

SIDECAR = ".agentsproof-copies.json"
"""Beside the eval.yaml; a dot-file, so never part of the skill folder a trial sees."""
MAX_SIDECAR_BYTES = 1_000_000


@dataclass(frozen=True)
class Copied:
    """One copied file: its name in the eval folder, its source, and the source's hash when copied."""

    file: str
    source: str
    sha256: str


def sha256_file(path: Path) -> str | None:
    """The file's SHA-256, or None when it is not a regular file we can read."""
    try:
        if path.is_symlink() or not path.is_file():
            return None
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def record(folder: Path, copied: list[tuple[str, Path, bytes]]) -> bytes:
    """The sidecar's content for ``copied`` (name in ``folder``, source path, the bytes copied)."""
    here = os.path.abspath(folder)
    rows = [
        {"file": rel, "source": Path(os.path.relpath(os.path.abspath(src), here)).as_posix(), "sha256": hashlib.sha256(data).hexdigest()}
        for rel, src, data in copied
    ]
    return (json.dumps({"version": 1, "written_by": "agentsproof eval-generate", "files": rows}, indent=1) + "\n").encode("utf-8")


def read_record(folder: Path) -> list[Copied] | None:
    """The copies recorded in ``folder``; None when it has no sidecar (a hand-written eval).
    A sidecar that is not what eval-generate writes is refused, naming the field."""
    path = folder / SIDECAR
    if not path.exists() and not path.is_symlink():
        return None
    from agentsproof.core.inputs import display, read_json_file

    src = display(path)
    data = read_json_file(path, max_bytes=MAX_SIDECAR_BYTES)
    rows = data.get("files") if isinstance(data, dict) else None
    if not isinstance(rows, list):
        raise InputError(src, "files", "is missing or not a list (eval-generate --refresh rewrites this file)")
    out = []
    for i, row in enumerate(rows):
        if not isinstance(row, dict) or not all(isinstance(row.get(k), str) and row.get(k) for k in ("file", "source", "sha256")):
            raise InputError(src, f"files[{i}]", "needs the strings 'file', 'source' and 'sha256' (eval-generate --refresh rewrites this file)")
        out.append(Copied(row["file"], row["source"], row["sha256"]))
    return out


def source_path(folder: Path, entry: Copied) -> Path:
    """Where ``entry``'s source is now (its recorded path, from ``folder``)."""
    return Path(os.path.normpath(folder / entry.source))


def stale_copies(folder: Path) -> list[str]:
    """One line per copy in ``folder`` that no longer matches its source: ``SKILL.md differs
    from its source ../../my-plugin/skills/x/SKILL.md`` (or that source is gone)."""
    entries = read_record(folder)
    if not entries:
        return []
    lines = []
    for e in entries:
        src = source_path(folder, e)
        now = sha256_file(src)
        copy = sha256_file(folder / e.file)
        if now is None:
            lines.append(f"{e.file}: its source {e.source} is gone (it was copied from there)")
        elif copy != now:
            changed = "the source changed since it was copied" if now != e.sha256 else "the copy was edited"
            lines.append(f"{e.file} differs from its source {e.source} ({changed})")
    return lines


def live_source(folder: Path, name: str) -> Path | None:
    """The recorded source of the copy ``name`` in ``folder`` (``--live-source``); None when not recorded."""
    for e in read_record(folder) or []:
        if e.file == name:
            return source_path(folder, e)
    return None


STALE_HINT = "agentsproof eval-generate --refresh updates the copies; --live-source runs the source files"
