"""Copying a tree an agent could have touched (a workspace seed, a trial's workspace): never
through a link, bounded in entries and bytes.

The tree is walked without following a symlink (:func:`walk_tree`): folders and regular
files are copied; a symlink that resolves inside the tree is copied **as a symlink**
(rewritten relative, so it leads to the same place in the copy), never followed — a loop
such as ``a -> .`` costs one entry, not an endless copy; a link leading out of the tree, a
broken link, a device, pipe or socket and anything unreadable is refused
(:class:`TreeProblem`). At most :data:`MAX_TREE_ENTRIES` entries (files, folders and links,
counted as copied) and :data:`MAX_TREE_BYTES` of file content. :func:`copy_tree` re-checks
as it goes (the tree may have changed since it was checked) and writes only into the new
folder it makes, every file created with ``O_EXCL | O_NOFOLLOW``.

``isolation/workspace.py`` (workspace seeds), ``executor/regrade.py`` (rebuilt workspaces) and the
oracle use it; it is the only tree copier in the package.
"""

from __future__ import annotations

import os
import shutil
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

MAX_TREE_ENTRIES = 10_000
MAX_TREE_BYTES = 200 * 1024 * 1024


class TreeProblem(Exception):
    """What is wrong with one entry of a tree (``str()`` is the reason)."""


@dataclass(frozen=True)
class TreeEntry:
    """One checked entry of a tree: its relative path, its kind, a link's target, a file's size in bytes."""

    rel: str
    """'/'-separated, relative to the tree."""
    file_type: str
    """'dir', 'file' or 'link'."""
    link: str = ""
    """For a link: its target, relative to the link's folder, inside the tree."""
    size: int = 0


def walk_tree(base: Path) -> Iterator[TreeEntry]:
    """Every entry below ``base`` (resolved), parents before children, checked; raises
    :class:`TreeProblem` on the first entry a tree may not hold or on the limits."""
    count = total = 0
    stack = [""]
    while stack:
        rel_dir = stack.pop()
        folder = base / rel_dir if rel_dir else base
        try:
            names = sorted(os.listdir(folder))
        except OSError as err:
            raise TreeProblem(f"{rel_dir or '.'!r} cannot be read ({err.strerror or err})") from None
        subdirs = []
        for name in names:
            rel = f"{rel_dir}/{name}" if rel_dir else name
            path = folder / name
            try:
                st = path.lstat()
            except OSError as err:
                raise TreeProblem(f"{rel!r} cannot be read ({err.strerror or err})") from None
            count += 1
            if count > MAX_TREE_ENTRIES:
                raise TreeProblem(f"holds over {MAX_TREE_ENTRIES:,} files, folders and links, the limit")
            if stat.S_ISLNK(st.st_mode):
                yield TreeEntry(rel, "link", _link_inside(base, path, rel))
            elif stat.S_ISDIR(st.st_mode):
                if not os.access(path, os.R_OK | os.X_OK):
                    raise TreeProblem(f"{rel!r} is a folder that cannot be read (permission denied)")
                yield TreeEntry(rel, "dir")
                subdirs.append(rel)
            elif stat.S_ISREG(st.st_mode):
                if not os.access(path, os.R_OK):
                    raise TreeProblem(f"{rel!r} cannot be read (permission denied)")
                total += st.st_size
                if total > MAX_TREE_BYTES:
                    raise TreeProblem(f"holds over {MAX_TREE_BYTES // (1024 * 1024)} MB, the limit")
                yield TreeEntry(rel, "file", size=st.st_size)
            else:
                raise TreeProblem(f"{rel!r} is not a regular file")
        stack.extend(reversed(subdirs))


def _link_inside(base: Path, path: Path, rel: str) -> str:
    """The link's target as a path relative to its folder; TreeProblem when it resolves to
    nothing or to a place outside the seed."""
    try:
        target = path.resolve(strict=True)
    except (OSError, RuntimeError):
        raise TreeProblem(f"{rel!r} is a broken symlink (or a link loop)") from None
    if target != base and not target.is_relative_to(base):
        raise TreeProblem(f"{rel!r} is a symlink that leads out of the folder")
    return os.path.relpath(target, path.parent)


def copy_tree(src: Path, dest: Path) -> None:
    """Copy the tree ``src`` into the new folder ``dest`` (which must not exist) by the rules
    above. Raises TreeProblem (an entry a tree may not hold) or OSError (e.g. the disk is full)."""
    base = src.resolve()
    dest.mkdir()
    for entry in walk_tree(base):
        target = dest / entry.rel
        if entry.file_type == "dir":
            target.mkdir()
        elif entry.file_type == "link":
            os.symlink(entry.link, target)
        else:
            _copy_file(base / entry.rel, target)


def _copy_file(src: Path, dest: Path) -> None:
    """The file's bytes and mode, opened without following a symlink (it may have become
    one since the walk saw it)."""
    fd = os.open(src, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    with os.fdopen(fd, "rb") as fh:
        mode = os.fstat(fh.fileno()).st_mode
        if not stat.S_ISREG(mode):
            raise TreeProblem(f"{src.name!r} is not a regular file")
        out = os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, stat.S_IMODE(mode) | stat.S_IWUSR)
        with os.fdopen(out, "wb") as wh:
            shutil.copyfileobj(fh, wh, 1 << 20)
