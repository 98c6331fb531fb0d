"""Every run kept in a folder of its own, and a ``latest`` link to the newest.

A run's reports go where the README says (``runs/<plugin>/<name>-eval.html`` …: the last
good run) and, as well, into ``runs/<plugin>/<UTC time>-<id>/`` beside them, so no run
replaces another: another provider, a same-named plugin or a run that failed keeps its own
folder. ``runs/<plugin>/latest`` links to the newest run folder (a relative symlink, replaced
atomically; a real folder or file named ``latest`` is left alone). A run that stopped at a
failure every trial would repeat (a refused key, an endpoint that cannot be reached:
:mod:`agentsproof.executor.fatal`) writes its reports into its run folder only, beside the
last good report, never over it. ``agentsproof view`` lists the run folders
(:func:`run_folders`).
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import time
from pathlib import Path

RUN_FOLDER = re.compile(r"^(\d{8}T\d{6}Z)-([0-9a-f]{6})$")
"""A run folder's name: its UTC start time and an id (the milliseconds of the moment its reports
were written, in 3 hex digits, then 3 random ones: runs in one second sort in order and differ)."""
LATEST = "latest"
KEPT = ("md", "json", "html")
"""The report formats each run folder holds (the journal, the flight recorder's files and the
exports stay where they were)."""


def run_folder_name(created_at: str) -> str:
    """``20261206T143300Z-1a2b3c`` for a run started at ``created_at`` (ISO 8601, UTC)."""
    digits = "".join(ch for ch in created_at if ch.isdigit())[:14].ljust(14, "0")
    millis = int(time.time() * 1000) % 1000
    return f"{digits[:8]}T{digits[8:]}Z-{millis:03x}{secrets.token_hex(2)[:3]}"


def run_targets(targets: dict[str, Path], name: str) -> dict[str, Path]:
    """The report paths of ``targets`` moved into the run folder ``name`` beside them (the
    formats of :data:`KEPT`; exports such as --junit stay where they were asked for)."""
    return {fmt: (path.parent / name / path.name if fmt in KEPT else path) for fmt, path in targets.items()}


def keep_run(written: dict[str, Path], name: str) -> Path | None:
    """Copies of the reports just ``written`` in the run folder ``name`` beside them, and the
    ``latest`` link set to it; the folder (None when nothing was written). Never through a link."""
    from agentsproof.core.safepath import copy_file

    kept = {fmt: path for fmt, path in written.items() if fmt in KEPT}
    if not kept:
        return None
    base = next(iter(kept.values())).parent
    for path in kept.values():
        if path.parent.name == name:  # written there already (a run that stopped at a fatal error)
            continue
        copy_file(path, path.parent, Path(name) / path.name, cap=1 << 40)
    folder = base if base.name == name else base / name
    link_latest(folder)
    return folder


def link_latest(folder: Path) -> None:
    """``<folder's parent>/latest`` -> ``<folder's name>`` (:func:`agentsproof.core.safepath.replace_link`:
    never followed); a real file or folder named ``latest`` is left as it is."""
    from agentsproof.core.safepath import UnsafePath, replace_link

    with contextlib.suppress(UnsafePath):
        replace_link(folder.parent, LATEST, folder.name)


def run_folders(root: Path) -> list[Path]:
    """Every run folder below ``root`` (``root`` itself may be one), oldest first; links are
    never followed (``latest`` among them), and hidden folders are skipped."""
    found: list[Path] = []
    if RUN_FOLDER.match(root.name) and root.is_dir() and not root.is_symlink():
        return [root]
    for dirpath, dirnames, _files in os.walk(root, followlinks=False):
        here = Path(dirpath)
        keep = []
        for d in sorted(dirnames):
            if d.startswith(".") or (here / d).is_symlink():
                continue
            if RUN_FOLDER.match(d):
                found.append(here / d)
            elif d not in ("history",) and not d.endswith((".files", ".workspaces")):
                keep.append(d)
        dirnames[:] = keep
    return sorted(found, key=lambda p: (p.name, str(p)))
