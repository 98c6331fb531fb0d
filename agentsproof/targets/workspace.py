"""Per-trial workspaces: a fresh folder for every agent trial, and what the agent changed.

Every trial gets its own folder, seeded with a copy of the eval's ``workspace:`` folder
(and tc-eval's ``files``). Before the agent runs, the folder is snapshotted; afterwards the
difference is the trial's :class:`~agentsproof.model.results.FileRecord` list. Folders
are deleted after grading unless the run keeps them (``--keep-workspaces``).

A seed folder may not hold symlinks that lead out of it (they would hand the agent a path
into the user's files), nor more than :data:`MAX_SEED_FILES` files or :data:`MAX_SEED_BYTES`.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import stat
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from agentsproof.core.errors import InputError
from agentsproof.model.results import FileRecord

MAX_SEED_FILES = 10_000
MAX_SEED_BYTES = 200 * 1024 * 1024
MAX_LISTED_FILES = 2_000
"""A trial that leaves more files than this records the first ones (sorted by path)."""
PREVIEW_CHARS = 400
HASH_LIMIT_BYTES = 4 * 1024 * 1024
"""Files up to this size are compared by content; larger ones by size and mtime."""


def check_seed_folder(folder: Path, source: str, field: str) -> Path:
    """``folder`` if it is a directory fit to copy into workspaces; InputError otherwise."""
    from agentsproof.core.inputs import display

    if not folder.exists():
        raise InputError(source, field, f"folder {display(folder)!r} not found")
    if not folder.is_dir():
        raise InputError(source, field, f"{display(folder)!r} is not a folder")
    base = folder.resolve()
    count = total = 0
    for dirpath, dirnames, filenames in os.walk(base):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            if path.is_symlink():
                target = path.resolve()
                if not target.is_relative_to(base):
                    rel = path.relative_to(base).as_posix()
                    raise InputError(source, field, f"{rel!r} in {display(folder)!r} is a symlink that leads out of the folder")
        for name in filenames:
            path = Path(dirpath) / name
            try:
                st = path.stat()
            except OSError:
                raise InputError(source, field, f"{path.relative_to(base).as_posix()!r} in {display(folder)!r} is a broken symlink") from None
            if not stat.S_ISREG(st.st_mode):
                raise InputError(source, field, f"{path.relative_to(base).as_posix()!r} in {display(folder)!r} is not a regular file")
            count += 1
            total += st.st_size
        if count > MAX_SEED_FILES:
            raise InputError(source, field, f"{display(folder)!r} holds over {MAX_SEED_FILES:,} files, the limit")
        if total > MAX_SEED_BYTES:
            raise InputError(source, field, f"{display(folder)!r} holds over {MAX_SEED_BYTES // (1024 * 1024)} MB, the limit")
    return base


_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def _segment(text: str) -> str:
    """A folder name for an item id: readable, and distinct for distinct ids (``a/b`` and
    ``a-b`` would read alike, so a short digest of the id follows)."""
    readable = _UNSAFE.sub("-", text).strip("-.")[:80] or "item"
    return f"{readable}-{hashlib.sha256(text.encode('utf-8', 'surrogatepass')).hexdigest()[:6]}"


@dataclass(frozen=True)
class Snapshot:
    files: dict[str, tuple[int, str]]
    """relative path → (size, content digest or size:mtime)"""


class Workspaces:
    """Creates, snapshots and removes the workspaces of one run."""

    def __init__(self, keep_in: Path | None = None):
        """``keep_in``: keep every workspace below this folder (``--keep-workspaces``);
        None: use a private temporary folder and delete each workspace after grading."""
        self.keep = keep_in is not None
        if keep_in is not None:
            keep_in.mkdir(parents=True, exist_ok=True)
            self.root = keep_in
        else:
            self.root = Path(tempfile.mkdtemp(prefix="agentsproof-ws-"))

    def create(self, item_id: str, arm: str, index: int, seed: Path | None = None, files: list[tuple[str, bytes]] | None = None) -> Path:
        folder = self.root / _segment(item_id) / f"{arm}-{index + 1}"
        if folder.exists():
            remove_tree(folder)
        folder.parent.mkdir(parents=True, exist_ok=True)
        if seed is not None:
            # symlinks=False: files are copied, never linked back into the user's tree
            shutil.copytree(seed, folder, symlinks=False)
        else:
            folder.mkdir()
        for rel, data in files or []:
            dest = folder / rel
            if not dest.resolve().is_relative_to(folder.resolve()):
                raise InputError(rel, None, "leaves the workspace")
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(data)
        return folder

    def finish(self, folder: Path) -> str | None:
        """After grading: the kept folder's path, or None once it is deleted."""
        if self.keep:
            return str(folder)
        remove_tree(folder)
        return None

    def close(self) -> None:
        if not self.keep:
            remove_tree(self.root)


def remove_tree(path: Path) -> None:
    """Delete a workspace even when the agent left read-only files or folders in it."""

    def on_error(func: Callable[[str], object], p: str, _exc: object) -> None:
        try:
            os.chmod(p, stat.S_IRWXU)
            parent = os.path.dirname(p)
            os.chmod(parent, stat.S_IRWXU)
            func(p)
        except OSError:
            pass

    if path.is_symlink():
        path.unlink()
    elif path.exists():
        shutil.rmtree(path, onerror=on_error)


def _digest(path: Path, st: os.stat_result) -> str:
    if st.st_size > HASH_LIMIT_BYTES:
        return f"{st.st_size}:{st.st_mtime_ns}"
    h = hashlib.sha256()
    try:
        with open(path, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 16), b""):
                h.update(block)
    except OSError:
        return f"{st.st_size}:{st.st_mtime_ns}"
    return h.hexdigest()


def snapshot(folder: Path) -> Snapshot:
    """Every regular file below ``folder`` (symlinks are not followed)."""
    out: dict[str, tuple[int, str]] = {}
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames[:] = sorted(d for d in dirnames if not (Path(dirpath) / d).is_symlink())
        for name in filenames:
            path = Path(dirpath) / name
            try:
                st = path.lstat()
            except OSError:
                continue
            rel = path.relative_to(folder).as_posix()
            if stat.S_ISLNK(st.st_mode):
                out[rel] = (0, "symlink:" + os.readlink(path))
            elif stat.S_ISREG(st.st_mode):
                out[rel] = (st.st_size, _digest(path, st))
    return Snapshot(out)


def preview(path: Path) -> str | None:
    """The start of a text file; None for binary files, symlinks and unreadable files."""
    try:
        if path.is_symlink() or not path.is_file():
            return None
        with open(path, "rb") as fh:
            head = fh.read(PREVIEW_CHARS * 4)
    except OSError:
        return None
    if b"\x00" in head:
        return None
    text = head.decode("utf-8", errors="ignore")
    if head and not text:
        return None
    return text[:PREVIEW_CHARS]


def changes(folder: Path, before: Snapshot, after: Snapshot | None = None) -> list[FileRecord]:
    """Files created, changed or deleted in ``folder`` since ``before``."""
    after = after or snapshot(folder)
    out: list[FileRecord] = []
    for rel in sorted(set(before.files) | set(after.files)):
        old, new = before.files.get(rel), after.files.get(rel)
        if old == new:
            continue
        if new is None:
            out.append(FileRecord(path=rel, status="deleted", size=0))
        else:
            out.append(FileRecord(path=rel, status="created" if old is None else "changed", size=new[0], preview=preview(folder / rel)))
        if len(out) >= MAX_LISTED_FILES:
            break
    return out
