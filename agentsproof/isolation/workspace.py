"""Per-trial workspaces: a fresh folder for every agent trial, and what the agent changed.

Every trial gets its own folder, seeded with a copy of the eval's ``workspace:`` folder
(and tc-eval's ``files``); the rules of a seed are below.
Before the agent runs, the folder is snapshotted; afterwards the difference is the trial's
:class:`~agentsproof.model.results.FileRecord` list. Folders are deleted after grading
(:mod:`agentsproof.core.rmtree`: never through a symlink, nothing outside touched)
unless the run keeps them (``--keep-workspaces``): then each run gets a folder of its own
below the one given, so two runs never delete each other's.

Before anything looks at a finished trial's folder, :meth:`Workspaces.check` makes sure
it is still the folder that was created there (an agent could have replaced it, or a
folder above it, by a symlink to somewhere else).

**Seeds**: the eval's ``workspace:`` folder, checked at load, copied per trial. A seed is walked without following a symlink, both when the eval is loaded
(:func:`check_seed_folder`, an input error on the first problem) and when it is copied into
a trial's workspace (:func:`copy_seed`, which re-checks as it goes: the folder may have
changed since), both by the one tree copier, :mod:`agentsproof.core.treecopy`. What a
seed may hold:

* folders and regular files, readable by the user;
* symlinks that resolve to a place inside the seed. They are copied **as symlinks**
  (rewritten relative, so that in the workspace they lead to the same place in the copy),
  never followed: a link to a folder, or a loop such as ``a -> .``, costs one entry, not a
  second copy of what it leads to;
* at most :data:`MAX_SEED_FILES` entries (files, folders and links, counted as copied) and
  :data:`MAX_SEED_BYTES` of file content.

Refused: a symlink leading out of the seed (it would hand the agent a path into the
user's files), a broken symlink or a link loop that resolves to nothing, devices, pipes
and sockets, and anything that cannot be read.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from agentsproof.core.errors import InputError, SeedError
from agentsproof.core.rmtree import remove_tree
from agentsproof.core.treecopy import MAX_TREE_BYTES as MAX_SEED_BYTES
from agentsproof.core.treecopy import MAX_TREE_ENTRIES as MAX_SEED_FILES
from agentsproof.core.treecopy import TreeEntry as SeedEntry
from agentsproof.core.treecopy import TreeProblem as SeedProblem
from agentsproof.core.treecopy import copy_tree as copy_seed
from agentsproof.core.treecopy import walk_tree as walk_seed
from agentsproof.model.results import FileRecord

__all__ = [
    "MAX_SEED_BYTES",
    "MAX_SEED_FILES",
    "SeedEntry",
    "SeedProblem",
    "Workspaces",
    "changes",
    "check_seed_folder",
    "copy_seed",
    "remove_tree",
    "snapshot",
    "walk_seed",
]

MAX_LISTED_FILES = 2_000
"""A trial that leaves more files than this records the first ones (sorted by path)."""
PREVIEW_CHARS = 400
HASH_LIMIT_BYTES = 4 * 1024 * 1024
"""Files up to this size are compared by content; larger ones by size and mtime."""


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


KEPT_RUN = re.compile(r"^run-\d{8}T\d{6}Z-")
"""The name of one run's folder below ``--keep-workspaces``' folder."""


def covered_root(workspace: Path) -> Path:
    """The folder a sandbox hides so that the trial sees no other workspace: the run's
    workspaces root, or for kept workspaces the folder holding every run's (an agent must
    not read an earlier run's with-arm work)."""
    root = workspace.parent.parent
    return root.parent if KEPT_RUN.match(root.name) else root


def _warn(line: str) -> None:
    from agentsproof.core.notice import warn

    warn(line)


class Workspaces:
    """Creates, snapshots and removes the workspaces of one run."""

    def __init__(self, keep_in: Path | None = None, warn: Callable[[str], None] = _warn):
        """``keep_in``: keep every workspace, in a new folder of this run below it
        (``--keep-workspaces``); None: use a private temporary folder and delete each
        workspace after grading. ``warn`` gets one line per workspace that could not be
        deleted. InputError when the folder cannot be created (e.g. a full disk)."""
        self.keep = keep_in is not None
        self.warn = warn
        self._made: dict[Path, tuple[int, int]] = {}
        try:
            if keep_in is not None:
                from agentsproof.core.safepath import make_dir

                make_dir(keep_in.parent, keep_in.name)  # a symlink planted as <report>.workspaces is refused
                stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
                self.root = Path(tempfile.mkdtemp(prefix=f"run-{stamp}-", dir=keep_in)).resolve()
            else:
                self.root = Path(tempfile.mkdtemp(prefix="agentsproof-ws-")).resolve()
        except OSError as err:
            where = str(keep_in) if keep_in is not None else tempfile.gettempdir()
            raise InputError(None, None, f"cannot create the workspaces folder in {where}: {err.strerror or err}") from None

    def create(self, item_id: str, arm: str, index: int, seed: Path | None = None, files: list[tuple[str, bytes]] | None = None) -> Path:
        """A new workspace; SeedError (an errored trial, with the reason) when it cannot
        be made: a seed entry that is no longer fit, a full disk, an unreadable file."""
        folder = self.root / _segment(item_id) / f"{arm}-{index + 1}"
        try:
            if os.path.lexists(folder):
                left = remove_tree(folder, within=self.root)
                if left:
                    raise SeedError(f"cannot create the workspace: {left}")
            seg = folder.parent
            if seg.is_symlink():
                seg.unlink()
            seg.mkdir(exist_ok=True)
            if seed is not None:
                copy_seed(seed, folder)
            else:
                folder.mkdir()
            for rel, data in files or []:
                dest = folder / rel
                if not dest.resolve().is_relative_to(folder.resolve()):
                    raise InputError(rel, None, "leaves the workspace")
                dest.parent.mkdir(parents=True, exist_ok=True)
                dest.write_bytes(data)
            st = folder.lstat()
        except SeedProblem as err:
            self._discard(folder)
            raise SeedError(f"cannot copy the workspace seed {seed}: {err}") from None
        except OSError as err:
            self._discard(folder)
            what = f"cannot copy the workspace seed {seed}" if seed is not None else "cannot create the workspace"
            name = f" ({err.filename})" if err.filename and str(err.filename) != str(folder) else ""
            raise SeedError(f"{what}: {err.strerror or err}{name}") from None
        self._made[folder] = (st.st_dev, st.st_ino)
        return folder

    def _discard(self, folder: Path) -> None:
        left = remove_tree(folder, within=self.root)
        if left:
            self.warn(left)

    def check(self, folder: Path) -> str | None:
        """None when ``folder`` is still the real folder :meth:`create` made, with no
        symlink on the way from the workspaces root; else why not (an errored trial)."""
        here = self.root
        try:
            for part in folder.relative_to(self.root).parts:
                here = here / part
                st = here.lstat()
                if stat.S_ISLNK(st.st_mode):
                    # (where the link leads is the agent's text: not quoted)
                    return f"the workspace was replaced by a symlink ({here.relative_to(self.root)}); nothing in it was graded"
                if not stat.S_ISDIR(st.st_mode):
                    return f"the workspace is gone ({here.relative_to(self.root)} is no longer a folder); nothing in it was graded"
        except (OSError, ValueError) as err:
            return f"the workspace is gone ({getattr(err, 'strerror', None) or err}); nothing in it was graded"
        made = self._made.get(folder)
        if made is not None and made != (st.st_dev, st.st_ino):
            return "the workspace was replaced by another folder; nothing in it was graded"
        return None

    def finish(self, folder: Path) -> str | None:
        """After grading: the kept folder's path, or None once it is deleted (or, when it
        cannot be, left with one warning line naming it)."""
        if self.keep:
            return str(folder)
        self._made.pop(folder, None)
        left = remove_tree(folder, within=self.root)
        if left:
            self.warn(f"workspace {left}")
        return None

    def close(self) -> None:
        """Delete the run's workspaces folder, unless kept (a warning names what could not be deleted)."""
        if not self.keep:
            left = remove_tree(self.root)
            if left:
                self.warn(f"workspaces folder {left}")


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
    if os.path.islink(folder):
        return Snapshot(out)  # never walked into (see Workspaces.check)
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
    out: list[FileRecord] = []
    if os.path.islink(folder):
        return out  # a workspace replaced by a symlink is never previewed (see Workspaces.check)
    after = after or snapshot(folder)
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


def check_seed_folder(folder: Path, source: str, field: str) -> Path:
    """``folder`` resolved, if it is a directory fit to copy into workspaces; InputError
    (one line naming the file, the field and the entry) otherwise."""
    from agentsproof.core.inputs import display

    if not folder.exists():
        raise InputError(source, field, f"folder {display(folder)!r} not found")
    if not folder.is_dir():
        raise InputError(source, field, f"{display(folder)!r} is not a folder")
    base = folder.resolve()
    if not os.access(base, os.R_OK | os.X_OK):
        raise InputError(source, field, f"folder {display(folder)!r} cannot be read (permission denied)")
    try:
        for _entry in walk_seed(base):
            pass
    except SeedProblem as err:
        text = str(err)
        raise InputError(source, field, f"{display(folder)!r} {text}" if text.startswith("holds") else f"{text} in {display(folder)!r}") from None
    return base
