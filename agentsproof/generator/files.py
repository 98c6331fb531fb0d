"""What eval-generate writes: an item's files beside its eval, and rejected replies.

A skill's whole folder is copied (SKILL.md plus the files :func:`agentsproof.model.skillfolder.folder_files`
takes: regular files only, no dot-files, no symlinks, not an eval.yaml or evals/ folder);
a file over :data:`MAX_COPY_FILE_BYTES`, or past :data:`MAX_COPY_TOTAL_BYTES` in all, is
skipped and named in the output. Every file is read with the rules of
:mod:`agentsproof.core.inputs` and written atomically.
"""

from __future__ import annotations

import os
from pathlib import Path

from agentsproof.core.errors import InputError
from agentsproof.core.inputs import display, read_regular, safe_name
from agentsproof.core.safepath import UnsafePath, write_file
from agentsproof.generator.plugin import PluginItem
from agentsproof.model.skillfolder import folder_files

MAX_COPY_FILE_BYTES = 5_000_000
MAX_COPY_TOTAL_BYTES = 50_000_000
REJECTED_DIR = ".rejected"


def write_seeds(seeds: dict[str, dict[str, str]], folder: Path) -> None:
    """An agent eval's workspace seed files (paths checked by the validator: relative, no ..),
    written through :mod:`agentsproof.core.safepath` (never outside ``folder``, never through a link)."""
    for sub, files in seeds.items():
        for rel, text in files.items():
            try:
                write_file(folder, f"{sub}/{rel}", text.encode("utf-8"))
            except UnsafePath as err:  # the validator refuses such paths; never write outside
                raise InputError(display(folder), rel, err.strerror or "is outside the workspace folder") from None


def item_files(item: PluginItem) -> tuple[list[tuple[str, Path]], list[str]]:
    """(files to copy as (name in the eval folder, source), notes on skipped files)."""
    files: list[tuple[str, Path]] = [(item.file_name, item.source)]
    skipped: list[str] = []
    if item.kind != "skill":
        return files, skipped
    total = 0
    for f in folder_files(item.source.parent):
        if f.size > MAX_COPY_FILE_BYTES:
            skipped.append(f"{f.rel} ({f.size:,} bytes; the limit is {MAX_COPY_FILE_BYTES:,})")
            continue
        if total + f.size > MAX_COPY_TOTAL_BYTES:
            skipped.append(f"{f.rel} (the folder is over {MAX_COPY_TOTAL_BYTES:,} bytes in all)")
            continue
        total += f.size
        files.append((f.rel, f.path))
    return files, skipped


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.exists() and b.exists() and os.path.samefile(a, b)
    except OSError:
        return False


def copy_item_files(item: PluginItem, target: Path) -> list[str]:
    """Copy the item's files into ``target``, and record each copy's source path and hash
    beside them (:mod:`agentsproof.formats.copies`: eval and eval-all warn when a source
    changes, ``--ci`` fails); returns the notes on skipped files."""
    from agentsproof.formats.copies import SIDECAR, record

    files, skipped = item_files(item)
    copied: list[tuple[str, Path, bytes]] = []
    for rel, src in files:
        dest = target / rel
        if _same_file(src, dest):
            continue
        try:
            data = read_regular(src, source=display(src), field=None, max_bytes=MAX_COPY_FILE_BYTES)
        except InputError as err:
            skipped.append(f"{rel} ({err.message})")
            continue
        write_file(target, rel, data)
        copied.append((rel, src, data))
    if copied:
        write_file(target, SIDECAR, record(target, copied))
    return skipped


def save_rejected(out: Path, item: PluginItem, number: int, reply: str, reason: str) -> Path | None:
    """Keep a rejected reply under ``<out>/.rejected/`` with its reason on top; None if that fails."""
    name = f"{item.kind}s-{safe_name(item.name)}-{number}.yaml"
    path = out / REJECTED_DIR / name
    header = "".join(f"# {line}\n" for line in f"rejected: {reason}".splitlines() or ["rejected"])
    try:
        write_file(out, f"{REJECTED_DIR}/{name}", (header + reply).encode("utf-8", "replace"))
    except OSError:
        return None
    return path
