"""The one rule for every path we create from input: names are checked, writes never follow a link.

Everything agentsproof writes below a folder it was given — reports and their ``history/``
copies, the flight recorder's ``<report>.files/``, kept ``<report>.workspaces/``, ``--atif``
folders, ``convert --out``, the skills an agent target stages, ``tune-description --write`` —
goes through here:

* **names** (a skill's name, an item id, a report name) are one path component:
  :func:`name_problem` refuses an empty name, ``.`` and ``..``, a ``/`` or ``\\``, and
  control characters (a newline, a NUL); input files are checked at load
  (:func:`check_name`: one line naming the file and the field, exit 30);
* a **relative path** below a folder (:func:`parts`) has no absolute start, no ``..`` and
  no empty or control-character component;
* **writes** open each folder below the given root with ``O_NOFOLLOW`` through folder
  descriptors (:func:`open_dir`), so a symlink planted anywhere below the root — an agent's
  ``history -> /etc`` — is refused (:class:`UnsafePath`, an ``OSError`` whose ``strerror``
  names the entry), never written through. A file is written to a temporary name and
  renamed into place (:func:`write_file`): a link at the file's own name is replaced, not
  followed;
* a command never **overwrites its own input** (:func:`refuse_overwrite`).

The root itself (``--output``, ``--atif DIR``, the folder of ``--out``) is the user's
choice and is followed like any path they type; only what lies below it is guarded.
Copies of a tree an agent touched use :mod:`agentsproof.core.treecopy`.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from collections.abc import Iterable
from pathlib import Path, PurePath

from agentsproof.core.errors import InputError

MAX_NAME_BYTES = 255
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class UnsafePath(OSError):
    """A path that would leave its folder or pass through a symlink (``strerror`` says which)."""

    def __init__(self, message: str, filename: str | None = None):
        super().__init__(errno.EPERM, message, filename)


def name_problem(name: object) -> str | None:
    """Why ``name`` cannot be one path component (None: it can)."""
    if not isinstance(name, str) or not name.strip():
        return "is empty"
    if name in (".", ".."):
        return f"{name!r} is not a name"
    if "/" in name or "\\" in name:
        return f"{name!r} holds a path separator; give a plain name"
    if any(not ch.isprintable() for ch in name):
        return f"{name!r} holds a control character"
    try:
        size = len(name.encode("utf-8"))
    except UnicodeEncodeError:
        return f"{name!r} is not valid UTF-8"
    if size > MAX_NAME_BYTES:
        return f"is {size} bytes long; the limit is {MAX_NAME_BYTES}"
    return None


def check_name(name: str, source: str | None, field: str | None) -> str:
    """``name`` if it is one safe path component, else InputError naming file and field."""
    why = name_problem(name)
    if why is not None:
        raise InputError(source, field, f"{why} (it names a folder: no '/', '\\', '..' or control characters)")
    return name


def parts(rel: str | PurePath) -> list[str]:
    """The components of a relative path; UnsafePath when it is absolute, leaves its folder
    (``..``) or holds a bad name."""
    text = str(rel).replace("\\", "/")
    if text.startswith("/") or (len(text) > 1 and text[1] == ":") or text.startswith("~"):
        raise UnsafePath(f"{text!r} is an absolute path")
    out = [p for p in text.split("/") if p not in ("", ".")]
    if not out:
        raise UnsafePath(f"{text!r} names no file")
    for p in out:
        why = name_problem(p)
        if why is not None:
            raise UnsafePath(f"{text!r}: {why}")
    return out


def _shown(root: Path, rel: list[str]) -> str:
    from agentsproof.core.inputs import display

    return display(root.joinpath(*rel))


def _open_root(root: Path, create: bool) -> int:
    if create:
        root.mkdir(parents=True, exist_ok=True)
    return os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)


def _step(fd: int, name: str, create: bool, root: Path, done: list[str]) -> int:
    """The folder ``name`` in ``fd``, opened without following a link (made when missing)."""
    for _ in range(3):
        try:
            return os.open(name, _DIR_FLAGS, dir_fd=fd)
        except FileNotFoundError:
            if not create:
                raise
            try:
                os.mkdir(name, 0o777, dir_fd=fd)
            except FileExistsError:
                continue
        except OSError as err:
            if err.errno in (errno.ELOOP, errno.ENOTDIR):
                st = os.stat(name, dir_fd=fd, follow_symlinks=False)
                what = "a symlink" if stat.S_ISLNK(st.st_mode) else "not a folder"
                raise UnsafePath(f"{_shown(root, [*done, name])} is {what}; refusing to write through it") from None
            raise
    raise UnsafePath(f"{_shown(root, [*done, name])} keeps changing")


def open_dir(root: Path, rel: str | PurePath | Iterable[str] = (), *, create: bool = True) -> int:
    """A descriptor of the folder ``root/rel`` (the caller closes it): every folder below
    ``root`` opened with ``O_NOFOLLOW`` and made when missing (``create``)."""
    names = parts(rel) if isinstance(rel, (str, PurePath)) else list(rel)
    fd = _open_root(root, create)
    try:
        done: list[str] = []
        for name in names:
            nxt = _step(fd, name, create, root, done)
            os.close(fd)
            fd = nxt
            done.append(name)
        return fd
    except BaseException:
        os.close(fd)
        raise


def make_dir(root: Path, rel: str | PurePath) -> Path:
    """``root/rel`` as a real folder (made when missing, no symlink on the way); its path."""
    os.close(open_dir(root, rel))
    return root.joinpath(*parts(rel))


class Staged:
    """A file being written to ``root/rel``: a temporary file in its folder, both held by
    descriptor (the folder opened by :func:`open_dir`); :meth:`commit` renames it into place
    (over a link at that name, never through it), :meth:`discard` removes it. A report's
    formats are all staged before any is committed."""

    def __init__(self, root: Path, rel: str | PurePath, *, mode: int | None = None):
        from agentsproof.core.filemode import user_file_mode

        self.names = parts(rel)
        self.path = root.joinpath(*self.names)
        self._root = root
        self._dir = open_dir(root, self.names[:-1])
        self.name = self.names[-1]
        self._tmp = f".{self.name[:200]}.{secrets.token_hex(6)}.tmp"
        try:
            fd = os.open(self._tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600, dir_fd=self._dir)
            os.fchmod(fd, user_file_mode() if mode is None else mode)
        except BaseException:
            os.close(self._dir)
            raise
        self.fh = os.fdopen(fd, "wb", buffering=1 << 20)

    @property
    def temp_name(self) -> str:
        """The temporary file's name in the target's folder (read back before :meth:`commit`)."""
        return self._tmp

    def write(self, data: bytes) -> None:
        """Append ``data`` to the temporary file."""
        self.fh.write(data)

    def commit(self, *, durable: bool = False, exist: str = "replace") -> bool:
        """Put the file in place; True when it was. ``exist``: ``"replace"`` what is there,
        ``"keep"`` a regular file already there (False), ``"fail"`` (FileExistsError)."""
        try:
            if durable:
                self.fh.flush()
                os.fsync(self.fh.fileno())
            self.fh.close()
            if exist == "replace":
                os.replace(self._tmp, self.name, src_dir_fd=self._dir, dst_dir_fd=self._dir)
            else:
                try:  # link(2) never replaces: what is at the name (a file, a planted link) stays
                    os.link(self._tmp, self.name, src_dir_fd=self._dir, dst_dir_fd=self._dir, follow_symlinks=False)
                except FileExistsError:
                    st = os.stat(self.name, dir_fd=self._dir, follow_symlinks=False)
                    if exist == "fail":
                        raise FileExistsError(errno.EEXIST, "already exists", str(self.path)) from None
                    if not stat.S_ISREG(st.st_mode):
                        raise UnsafePath(f"{_shown(self._root, self.names)} is not a regular file; refusing to write there") from None
                    return False
                finally:
                    os.unlink(self._tmp, dir_fd=self._dir)
            self._tmp = ""
            return True
        finally:
            self.discard()

    def discard(self) -> None:
        """Remove the temporary file (if still there) and close the folder; the target is left as it was."""
        if not self.fh.closed:
            self.fh.close()
        if self._tmp:
            with contextlib.suppress(OSError):
                os.unlink(self._tmp, dir_fd=self._dir)
            self._tmp = ""
        if self._dir >= 0:
            os.close(self._dir)
            self._dir = -1


def write_file(
    root: Path,
    rel: str | PurePath,
    data: bytes | Iterable[bytes],
    *,
    mode: int | None = None,
    exist: str = "replace",
    durable: bool = False,
) -> bool:
    """Write ``data`` (bytes, or pieces of it) to ``root/rel`` through a :class:`Staged`
    file; True when it was written (``exist``: see :meth:`Staged.commit`). ``mode``: the
    file's mode (default: the user's, :func:`~agentsproof.core.filemode.user_file_mode`)."""
    staged = Staged(root, rel, mode=mode)
    try:
        for piece in [data] if isinstance(data, bytes) else data:
            staged.write(piece)
    except BaseException:
        staged.discard()
        raise
    return staged.commit(durable=durable, exist=exist)


def copy_file(src: Path, root: Path, rel: str | PurePath, *, cap: int, mode: int | None = None, exist: str = "replace") -> bool:
    """The regular file ``src`` (opened without following a link, at most ``cap`` bytes)
    written to ``root/rel`` by :func:`write_file`. An ``src`` that is not one is an
    UnsafePath whose ``filename`` is ``src``."""
    try:
        fd = os.open(src, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as err:
        if err.errno == errno.ELOOP:
            raise UnsafePath(f"{src} is a symlink", str(src)) from None
        raise
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fh.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise UnsafePath(f"{src} is not a regular file", str(src))
        if st.st_size > cap:
            raise UnsafePath(f"{src} is over {cap:,} bytes", str(src))
        return write_file(root, rel, iter(lambda: fh.read(1 << 20), b""), mode=mode, exist=exist)


def read_file(path: Path, cap: int) -> bytes:
    """The bytes of the regular file ``path``, its last component opened without following
    a link; OSError when it is not one, UnsafePath when it is over ``cap`` bytes."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fh.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise UnsafePath(f"{path} is not a regular file", str(path))
        data = fh.read(cap + 1)
    if len(data) > cap:
        raise UnsafePath(f"{path} is over {cap:,} bytes", str(path))
    return data


def refuse_overwrite(out: Path, inputs: Iterable[Path | None], source: str, field: str) -> None:
    """InputError when writing ``out`` would replace one of the command's ``inputs`` (the
    same file, by another name or through a link)."""
    from agentsproof.core.inputs import display

    try:
        out_real = out.resolve()
    except (OSError, RuntimeError):
        return
    for given in inputs:
        if given is None:
            continue
        try:
            same = out_real == given.resolve() or (out.exists() and given.exists() and os.path.samefile(out, given))
        except (OSError, RuntimeError):
            same = False
        if same:
            raise InputError(source, field, f"{display(out)} is an input of this command ({display(given)}); not overwritten — give another path")


def replace_link(root: Path, rel: str | PurePath, target: str) -> None:
    """``root/rel`` made a symlink to ``target`` (one name, in the same folder: a relative
    link that cannot lead out): a new link renamed over the old one, never followed; a real
    file or folder at that name is an UnsafePath, left as it is."""
    names = parts(rel)
    if name_problem(target):
        raise UnsafePath(f"{target!r} is not a plain name for a link to point to")
    fd = open_dir(root, names[:-1])
    try:
        try:
            st = os.stat(names[-1], dir_fd=fd, follow_symlinks=False)
        except FileNotFoundError:
            st = None
        if st is not None and not stat.S_ISLNK(st.st_mode):
            raise UnsafePath(f"{_shown(root, names)} is not a symlink; refusing to replace it")
        tmp = f".{names[-1][:200]}.{secrets.token_hex(6)}.tmp"
        os.symlink(target, tmp, dir_fd=fd)
        try:
            os.replace(tmp, names[-1], src_dir_fd=fd, dst_dir_fd=fd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=fd)
            raise
    finally:
        os.close(fd)
