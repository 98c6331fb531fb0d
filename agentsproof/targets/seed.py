"""Workspace seeds: the eval's ``workspace:`` folder, checked at load, copied per trial.

A seed is walked without following a symlink, both when the eval is loaded
(:func:`check_seed_folder`, an input error on the first problem) and when it is copied into
a trial's workspace (:func:`copy_seed`, which re-checks as it goes: the folder may have
changed since). What a seed may hold:

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

import os
import shutil
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from agentsproof.core.errors import InputError

MAX_SEED_FILES = 10_000
MAX_SEED_BYTES = 200 * 1024 * 1024


class SeedProblem(Exception):
    """What is wrong with one entry of a seed (``str()`` is the reason)."""


@dataclass(frozen=True)
class SeedEntry:
    rel: str
    """'/'-separated, relative to the seed."""
    kind: str
    """'dir', 'file' or 'link'."""
    link: str = ""
    """For a link: its target, relative to the link's folder, inside the seed."""
    size: int = 0


def walk_seed(base: Path) -> Iterator[SeedEntry]:
    """Every entry below ``base`` (resolved), parents before children, checked; raises
    :class:`SeedProblem` on the first entry a seed may not hold or on the limits."""
    count = total = 0
    stack = [""]
    while stack:
        rel_dir = stack.pop()
        folder = base / rel_dir if rel_dir else base
        try:
            names = sorted(os.listdir(folder))
        except OSError as err:
            raise SeedProblem(f"{rel_dir or '.'!r} cannot be read ({err.strerror or err})") from None
        subdirs = []
        for name in names:
            rel = f"{rel_dir}/{name}" if rel_dir else name
            path = folder / name
            try:
                st = path.lstat()
            except OSError as err:
                raise SeedProblem(f"{rel!r} cannot be read ({err.strerror or err})") from None
            count += 1
            if count > MAX_SEED_FILES:
                raise SeedProblem(f"holds over {MAX_SEED_FILES:,} files, folders and links, the limit")
            if stat.S_ISLNK(st.st_mode):
                yield SeedEntry(rel, "link", _link_inside(base, path, rel))
            elif stat.S_ISDIR(st.st_mode):
                if not os.access(path, os.R_OK | os.X_OK):
                    raise SeedProblem(f"{rel!r} is a folder that cannot be read (permission denied)")
                yield SeedEntry(rel, "dir")
                subdirs.append(rel)
            elif stat.S_ISREG(st.st_mode):
                if not os.access(path, os.R_OK):
                    raise SeedProblem(f"{rel!r} cannot be read (permission denied)")
                total += st.st_size
                if total > MAX_SEED_BYTES:
                    raise SeedProblem(f"holds over {MAX_SEED_BYTES // (1024 * 1024)} MB, the limit")
                yield SeedEntry(rel, "file", size=st.st_size)
            else:
                raise SeedProblem(f"{rel!r} is not a regular file")
        stack.extend(reversed(subdirs))


def _link_inside(base: Path, path: Path, rel: str) -> str:
    """The link's target as a path relative to its folder; SeedProblem when it resolves to
    nothing or to a place outside the seed."""
    try:
        target = path.resolve(strict=True)
    except (OSError, RuntimeError):
        raise SeedProblem(f"{rel!r} is a broken symlink (or a link loop)") from None
    if target != base and not target.is_relative_to(base):
        raise SeedProblem(f"{rel!r} is a symlink that leads out of the folder")
    return os.path.relpath(target, path.parent)


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


def copy_seed(seed: Path, dest: Path) -> None:
    """Copy ``seed`` into the new folder ``dest`` by the rules above. Raises SeedProblem
    (an entry a seed may not hold) or OSError (e.g. the disk is full)."""
    base = seed.resolve()
    dest.mkdir()
    for entry in walk_seed(base):
        target = dest / entry.rel
        if entry.kind == "dir":
            target.mkdir()
        elif entry.kind == "link":
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
            raise SeedProblem(f"{src.name!r} is not a regular file")
        out = os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, stat.S_IMODE(mode) | stat.S_IWUSR)
        with os.fdopen(out, "wb") as wh:
            shutil.copyfileobj(fh, wh, 1 << 20)
