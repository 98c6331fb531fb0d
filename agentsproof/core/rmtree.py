"""Deleting a workspace without touching anything outside it.

An agent controls what its workspace holds when it is deleted: symlinks to the user's
files, read-only folders, a mount point, a file a leftover process keeps writing.
:func:`remove_tree` therefore works through open folder descriptors and never by path:

* no symlink is ever followed — a symlink is unlinked, its target untouched; a folder that
  an agent swaps for a symlink while it is being deleted is noticed (``O_NOFOLLOW``);
* a mode is changed only on a folder inside the tree (to ``0700``, so that its entries can
  be listed and deleted), through its own descriptor or with ``follow_symlinks=False`` —
  never on the folder that holds the tree (for a workspace root that is the system temp
  folder);
* another file system mounted inside the tree is not entered;
* folders nested deeper than :data:`MAX_DEPTH` are moved up to the top before they are
  deleted, so any depth is removed with a bounded number of open descriptors.

What cannot be deleted (a busy mount, an immutable file) is left where it is, and the
caller gets one line naming the path and why.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path

MAX_DEPTH = 32
ATTEMPTS = 3
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_MAX_PASSES = 100_000


@dataclass
class _Removal:
    top: Path
    dev: int
    top_fd: int = -1
    moved: int = 0
    mounts: frozenset[str] = frozenset()
    problems: list[str] = field(default_factory=list)

    def problem(self, rel: str, err: OSError | str) -> None:
        why = err if isinstance(err, str) else (err.strerror or str(err))
        shown = rel or "."
        if not shown.isprintable():  # a name the agent chose: never a second line
            shown = repr(shown)
        self.problems.append(f"{shown}: {why}")


def remove_tree(path: Path, within: Path | None = None) -> str | None:
    """Delete ``path`` (a folder, a file or a symlink) and everything below it.

    ``within`` is a trusted folder above ``path`` (default: its parent); the components
    between them are opened without following symlinks. Returns None when ``path`` is
    gone (or was never there), else one line naming it and what is left."""
    anchor = within if within is not None else path.parent
    try:
        rel_parts = path.relative_to(anchor).parts
    except ValueError:
        return f"{path}: not below {anchor}; not removed"
    if not rel_parts:
        return f"{path}: is the folder that holds it; not removed"
    try:
        parent_fd = os.open(anchor, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as err:
        return f"{path}: could not be removed ({err.strerror or err}); left in place"
    try:
        for part in rel_parts[:-1]:
            try:
                fd = os.open(part, _DIR_FLAGS, dir_fd=parent_fd)
            except (FileNotFoundError, NotADirectoryError):
                return None  # nothing at that path any more
            except OSError as err:
                if err.errno == errno.ELOOP:
                    return None  # a folder above it became a symlink: the path leads nowhere of ours
                return f"{path}: could not be removed ({err.strerror or err}); left in place"
            os.close(parent_fd)
            parent_fd = fd
        return _remove_top(parent_fd, rel_parts[-1], path)
    finally:
        os.close(parent_fd)


def _remove_top(parent_fd: int, name: str, path: Path) -> str | None:
    try:
        st = os.stat(name, dir_fd=parent_fd, follow_symlinks=False)
    except FileNotFoundError:
        return None
    except OSError as err:
        return f"{path}: could not be removed ({err.strerror or err}); left in place"
    for _attempt in range(ATTEMPTS):  # a leftover process may still be adding files: try again
        job = _Removal(top=path, dev=st.st_dev, mounts=_mounts_below(path))
        _remove_once(parent_fd, name, st, job)
        if not job.problems:
            return None
    more = f", and {len(job.problems) - 1} more" if len(job.problems) > 1 else ""
    return f"{path}: could not be removed ({job.problems[0]}{more}); left in place"


def _remove_once(parent_fd: int, name: str, st: os.stat_result, job: _Removal) -> None:
    if stat.S_ISDIR(st.st_mode):
        try:
            job.top_fd = _open_dir(parent_fd, name)
        except OSError as err:
            if err.errno in (errno.ELOOP, errno.ENOTDIR):  # swapped for a symlink or a file meanwhile
                try:
                    os.unlink(name, dir_fd=parent_fd)
                    return
                except OSError:
                    pass
            job.problem("", err)
        else:
            try:
                for _ in range(_MAX_PASSES):  # each pass removes what the last one moved up
                    job.moved = 0
                    _clear(job.top_fd, "", 0, job)
                    if not job.moved:
                        break
            finally:
                os.close(job.top_fd)
    if not job.problems:
        try:
            (os.rmdir if stat.S_ISDIR(st.st_mode) else os.unlink)(name, dir_fd=parent_fd)
        except FileNotFoundError:
            pass
        except OSError as err:
            job.problem("", err)


def _mounts_below(path: Path) -> frozenset[str]:
    """Mount points below ``path`` (a bind mount keeps the device number, so that check
    alone would walk into it)."""
    try:
        with open("/proc/self/mountinfo", encoding="utf-8", errors="surrogateescape") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return frozenset()
    prefix = str(path).rstrip("/") + "/"
    out = set()
    for line in lines:
        fields = line.split(" ")
        if len(fields) > 4:
            point = re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), fields[4])
            if point.startswith(prefix):
                out.add(point)
    return frozenset(out)


def _open_dir(parent_fd: int, name: str) -> int:
    """The folder ``name`` opened without following a symlink; made 0700 first (itself,
    not through a link) when its mode keeps its owner out."""
    try:
        return os.open(name, _DIR_FLAGS, dir_fd=parent_fd)
    except PermissionError:
        _chmod_entry(parent_fd, name)
        return os.open(name, _DIR_FLAGS, dir_fd=parent_fd)


def _chmod_entry(dir_fd: int, name: str) -> None:
    # a symlink (its mode cannot be changed without following it): left alone
    with contextlib.suppress(ValueError, NotImplementedError):
        os.chmod(name, stat.S_IRWXU, dir_fd=dir_fd, follow_symlinks=False)


def _names(fd: int) -> list[str]:
    try:
        return os.listdir(fd)
    except PermissionError:
        os.fchmod(fd, stat.S_IRWXU)  # this folder is inside the tree
        return os.listdir(fd)


def _clear(fd: int, rel: str, depth: int, job: _Removal) -> None:
    """Delete everything in the folder open as ``fd`` (at ``rel`` below the top)."""
    try:
        names = _names(fd)
    except OSError as err:
        job.problem(rel, err)
        return
    chmodded = False
    for name in names:
        child = f"{rel}/{name}" if rel else name
        for attempt in range(2):
            try:
                _remove_entry(fd, name, child, depth, job)
                break
            except PermissionError as err:  # the folder's own mode keeps us out: open it up once
                if attempt or chmodded:
                    job.problem(child, err)
                    break
                try:
                    os.fchmod(fd, stat.S_IRWXU)
                except OSError:
                    job.problem(child, err)
                    break
                chmodded = True
            except OSError as err:
                job.problem(child, err)
                break


def _remove_entry(fd: int, name: str, rel: str, depth: int, job: _Removal) -> None:
    st = os.stat(name, dir_fd=fd, follow_symlinks=False)
    if not stat.S_ISDIR(st.st_mode):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(name, dir_fd=fd)
        return
    if st.st_dev != job.dev or (job.mounts and str(job.top / rel) in job.mounts):
        job.problem(rel, "another file system is mounted there")
        return
    if depth + 1 >= MAX_DEPTH and fd != job.top_fd:
        # deep: move it up to the top (same file system, same tree) and delete it in a later pass
        job.moved += 1
        os.rename(name, f".agentsproof-rm-{os.getpid()}-{st.st_ino}", src_dir_fd=fd, dst_dir_fd=job.top_fd)
        return
    try:
        child_fd = _open_dir(fd, name)
    except OSError as err:
        if err.errno in (errno.ELOOP, errno.ENOTDIR):  # swapped for a symlink or file meanwhile
            os.unlink(name, dir_fd=fd)
            return
        raise
    try:
        if os.fstat(child_fd).st_ino != st.st_ino:
            raise OSError(errno.EAGAIN, "it changed while being deleted")
        _clear(child_fd, rel, depth + 1, job)
    finally:
        os.close(child_fd)
    try:
        os.rmdir(name, dir_fd=fd)
    except FileNotFoundError:
        pass
    except OSError as err:
        if err.errno in (errno.ENOTEMPTY, errno.EEXIST) and any(p.startswith(rel + "/") for p in job.problems):
            return  # what is left below was reported already
        raise
