"""One trial's container: the engine behind :class:`agentsproof.model.environment.TrialEnvironment`.

Everything goes through the ``docker`` CLI (``$DOCKER_HOST`` picks the engine, local or
remote: ``unix://``, ``ssh://``, ``tcp://``), run as asyncio subprocesses so the event loop
never waits on the engine (:mod:`agentsproof.isolation.engine`); a
:class:`Container` is one trial's fresh container (started by
:class:`agentsproof.isolation.environments.Environments`, which labels and removes it):

- ``exec(argv, env=, timeout=, workdir=, stdin=, user=)``: ``docker exec`` without a shell.
  Environment values never appear on a command line: ``-e NAME`` hands the value over
  through the CLI's own environment. A command past its timeout stops the whole container
  (``docker kill``: nothing it started lives on; the trial is errored or the grader is, and
  later commands in it fail with that reason).
- ``copy_in(host, dest)``: a tar stream of the host folder (built from our own walk, no link
  followed) piped into ``docker cp -``: never a bind mount back into the user's tree.
- ``copy_out(src, host, cap_bytes=)``: ``docker cp CONTAINER:src/. -`` into a capped
  temporary file, then extracted member by member: regular files, folders and links that
  stay inside the folder; devices, links leading out, and anything past the cap are left
  out (and said).
- ``read_file(path, cap_bytes=)``: one file through the same stream.

While a command runs, a watchdog checks the container every :data:`WATCH_S` seconds: past
``disk_mb`` of writes (its writable layer) or at its process cap, the container is stopped
and the command's :attr:`~agentsproof.model.environment.ExecResult.limit` says which limit;
a memory hog is killed by the kernel inside the container's memory cap (no swap), which
the container's cgroup counts: that command's ``limit`` says so too.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import os
import tarfile
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from agentsproof.core.errors import ContainerError
from agentsproof.core.rmtree import remove_tree
from agentsproof.isolation.engine import DOCKER_CALL_S, docker, get_archive, put_archive
from agentsproof.model.environment import Environment, ExecResult

WATCH_S = 1.0
"""How often a running command's container is checked against its disk and process caps."""


SEED_FAILED = 125
SEED_MARK = b"agentsproof-seed-failed"
SEED_SH = (
    'n=$1; w=$2; shift 2; err=$(head -c "$n" | tar -x -f - -C / 2>&1) || { echo "agentsproof-seed-failed $err" >&2; exit 125; }; '
    'cd "$w" || { echo "agentsproof-seed-failed cannot enter $w" >&2; exit 125; }; exec "$@"'
)
"""The first command's wrapper when the seed is unpacked by its exec: exactly ``n`` bytes of
stdin are the seed's tar (GNU ``head -c`` reads no further), the rest is the command's."""

CARRY_SH = (
    'm=$1; w=$2; x=$3; shift 3; "$@"; rc=$?; printf %s "$m"; set -f; set --; IFS="\n"; '
    'for f in $x; do if [ -f "$f" ]; then [ $# = 0 ] && set -- -C /; set -- "$@" "${f#/}"; fi; done; '
    'tar -c -f - --hard-dereference -C "$w" . "$@" 2>/dev/null </dev/null && printf %s "$m"; exit $rc'
)
"""The wrapper of a command whose exec carries the workdir out (``keep``): after the command
(its stdout as it was, its exit code the wrapper's), the mark, one tar of the workdir
(members ``./...``; a hard link as a file of its own) and of those of the files named in
``$3`` (one a line) that exist (members without the leading ``/``), then the mark again: a tar that did not finish has
no closing mark, and is not kept."""

HARNESS_DIR = "/var/tmp/agentsproof"
"""A folder made in every container's own file system (not the /tmp tmpfs, which ``docker cp`` cannot reach) for the harness's files (a trace)."""


def _kept_file(archive: Path, name: str, cap_bytes: int) -> tuple[bool, bytes | None]:
    """(found, its bytes) of the regular file ``name`` in a carried archive; (False, None):
    not there as a regular file (the engine is asked: a path through a link, a file gone)."""
    with tarfile.open(archive, mode="r:") as tar:
        for member in tar:
            if member.name == name and member.isfile():
                fh = tar.extractfile(member)
                return (True, fh.read(cap_bytes)) if fh is not None else (False, None)
    return False, None


def _kept_name(path: str, workdir: str) -> str | None:
    """``path``'s member name in a carried archive of ``workdir`` (None: a path it cannot hold)."""
    pure, work = PurePosixPath(path), PurePosixPath(workdir)
    if ".." in pure.parts or not pure.is_absolute():
        return None
    return f"./{pure.relative_to(work)}" if pure.is_relative_to(work) and pure != work else str(pure)[1:]


def _closed(archive: Path, mark: bytes) -> bool:
    """The carried tar ended with its closing ``mark`` (then cut off): complete."""
    try:
        with open(archive, "r+b") as fh:
            size = fh.seek(0, os.SEEK_END)
            if size < len(mark):
                return False
            fh.seek(size - len(mark))
            if fh.read() != mark:
                return False
            fh.truncate(size - len(mark))
            return True
    except OSError:
        return False


def _tar_of(folder: Path, dest: str) -> bytes:
    """The folder's contents as a tar archive to unpack at ``/`` with its entries below
    ``dest`` (and :data:`HARNESS_DIR`): our own walk (:func:`agentsproof.core.treecopy.walk_tree`), no link followed."""
    from agentsproof.core.treecopy import walk_tree

    buf = io.BytesIO()
    base = folder.resolve()
    prefix = dest.strip("/")
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for extra in (prefix, HARNESS_DIR.strip("/")):
            if extra:
                info = tarfile.TarInfo(extra)
                info.type, info.mode = tarfile.DIRTYPE, 0o1777 if extra == HARNESS_DIR.strip("/") else 0o755
                tar.addfile(info)
        for entry in walk_tree(base):
            path = base / entry.rel
            info = tar.gettarinfo(str(path), arcname=f"{prefix}/{entry.rel}" if prefix else entry.rel)
            info.uid = info.gid = 0
            info.uname = info.gname = "root"
            if entry.file_type == "file":
                fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
                with os.fdopen(fd, "rb") as fh:
                    tar.addfile(info, fh)
            else:
                tar.addfile(info)
    return buf.getvalue()


def _extract(archive: Path, dest: Path, cap_bytes: int, *, kept: bool = False) -> list[str]:
    """``archive``'s members (prefixed ``./``) into ``dest`` by tarfile's ``data`` rules,
    member by member: what may not be extracted is left out and named in the notes
    (``kept``: a carried archive (see :data:`CARRY_SH`), read whole before anything is
    written, a broken one raising :class:`tarfile.TarError`; only its workdir's members)."""
    notes: list[str] = []
    total = 0
    with tarfile.open(archive, mode="r:") as tar:
        members = [m for m in tar.getmembers() if m.name.startswith("./")] if kept else tar
        for member in members:
            name = member.name[2:] if member.name.startswith("./") else member.name
            if name in ("", ".", "./"):
                continue
            member.name = name
            if member.isfile():
                total += member.size
                if total > cap_bytes:
                    notes.append(f"files past {cap_bytes // (1024 * 1024)} MB were not copied out of the container")
                    break
            try:
                safe = tarfile.data_filter(member, str(dest))
            except tarfile.FilterError as err:
                notes.append(f"{name!r} left in the container: {err}")
                continue
            if not (safe.isfile() or safe.isdir() or safe.issym()):
                notes.append(f"{name!r} left in the container: not a regular file, folder or link")
                continue
            tar.extract(safe, str(dest), set_attrs=True, filter="fully_trusted")
    return notes


@dataclass
class Container:
    """One trial's running container (see the module docstring); made by :class:`~agentsproof.isolation.environments.Environments`."""

    name: str
    workdir: str
    env: Environment
    stopped: str | None = None
    """Why the container was stopped early (a timeout, a limit); later commands fail with it."""
    notes: list[str] = field(default_factory=list)
    oom_kills: int = 0
    """OOM kills counted so far (a later command's are new)."""
    pending: bytes | None = None
    """The workspace seed (a tar archive to unpack at ``/``) not copied in yet: the first
    command run as root unpacks it before it starts, in the same ``docker exec`` (its
    stdin: the archive, then the command's own); any other call copies it in first."""
    can_carry: bool = False
    """The image runs ``sh`` and ``tar`` as root by default: a command's exec may carry the
    workdir out once it ends (``keep``); set by :class:`~agentsproof.isolation.environments.Environments` as it seeds."""
    kept: Path | None = None
    """The workdir's tar carried out by the last command (a temporary folder holding
    ``out.tar``), for :meth:`copy_out` and :meth:`read_file`; any later command or copy in drops it."""
    copied: set[tuple[str, str]] = field(default_factory=set)
    """(host folder, destination) pairs :meth:`copy_in_once` has copied in: held by the
    container, so they go with it (no module-level note to clear)."""

    async def copy_in_once(self, host: Path, dest: str) -> None:
        """:meth:`copy_in`, unless this container already has ``host`` at ``dest`` (an agent's
        harness: a later turn keeps the session's state)."""
        key = (str(host), dest)
        if key not in self.copied:
            await self.copy_in(host, dest)
            self.copied.add(key)

    async def exec(
        self,
        argv: list[str],
        *,
        env: dict[str, str] | None = None,
        timeout: float,
        workdir: str | None = None,
        stdin: bytes | None = None,
        user: str | None = None,
        keep: tuple[str, ...] | None = None,
    ) -> ExecResult:
        """Run ``argv`` in the container (see the module docstring); ``keep`` (an agent's
        last command): the workdir, and those of these files that exist, carried out by the
        same exec once the command ends (:data:`CARRY_SH`) and kept (:attr:`kept`) for
        :meth:`copy_out` and :meth:`read_file` (an image that cannot, or another user: ignored)."""
        if self.stopped:
            raise ContainerError(f"the trial's container was stopped earlier: {self.stopped}")
        await self.drop_kept()
        as_root = user in (None, "root", "0")  # None: the default user, root wherever carrying or a pending seed applies (INLINE_PROBE)
        mark = b""
        if keep is not None and self.can_carry and as_root and not any("\n" in k for k in keep):
            mark = f"agentsproof-carry-{uuid.uuid4().hex}".encode()
            argv = ["/bin/sh", "-c", CARRY_SH, "ap-carry", mark.decode(), self.workdir, "\n".join(keep), *argv]
        seeding = self.pending is not None and as_root
        if seeding:  # the seed unpacked by the same exec, then the command (see ``pending``)
            archive, self.pending = self.pending or b"", None
            argv = ["/bin/sh", "-c", SEED_SH, "ap-seed", str(len(archive)), workdir or self.workdir, *argv]
            stdin, workdir = archive + (stdin or b""), "/"
        else:
            await self.flush()
        args = ["exec", "-w", workdir or self.workdir]
        if stdin is not None:
            args.append("-i")
        if user:
            args += ["-u", user]
        for key in env or {}:
            args += ["-e", key]
        args += [self.name, *argv]
        held = Path(await asyncio.to_thread(tempfile.mkdtemp, prefix="agentsproof-carry-")) if mark else None
        out = held / "out.tar" if held is not None else None
        t0 = time.perf_counter()
        limit: str | None = None
        run = asyncio.ensure_future(docker(args, timeout=timeout, stdin=stdin, env=env, stdout_to=out, split=mark or None))
        watch = asyncio.ensure_future(self._watch())
        try:
            done, _ = await asyncio.wait({run, watch}, return_when=asyncio.FIRST_COMPLETED)
            limit = watch.result() if watch in done else None
            if limit is not None:
                await self.stop(limit)
            called = await run
        finally:
            watch.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await watch
            if not run.done():
                run.cancel()
            if held is not None and self.kept is None:
                # kept only when the tar ended with its closing mark (see CARRY_SH)
                closed = run.done() and not run.cancelled() and run.exception() is None and not run.result().timed_out
                if closed and limit is None and out is not None and await asyncio.to_thread(_closed, out, mark):
                    self.kept = held
                else:
                    await asyncio.to_thread(remove_tree, held)
        if called.timed_out:
            await self.stop(f"a command ran past its {timeout:g}s timeout")
        elif limit is None:
            limit = await self._oom(called.returncode)
            if limit is not None:  # a command the kernel killed leaves no workdir to keep
                await self.drop_kept()
        if called.returncode in (125, 126, 127) and not called.timed_out and limit is None and b"OCI runtime" in called.stderr:
            raise ContainerError(f"the container could not run {argv[0]!r}: {called.reason()}")
        if seeding and called.returncode == SEED_FAILED and SEED_MARK in called.stderr:
            why = called.stderr.replace(SEED_MARK, b"").decode("utf-8", "replace").strip().splitlines()
            raise ContainerError(f"could not copy the workspace into the container: {why[-1][:300] if why else 'tar failed'}")
        return ExecResult(called.returncode, called.stdout, called.stderr, called.timed_out, time.perf_counter() - t0, limit)

    async def drop_kept(self) -> None:
        """The carried workdir (:attr:`kept`) deleted: the container may change from here on."""
        if self.kept is not None:
            held, self.kept = self.kept, None
            await asyncio.to_thread(remove_tree, held)

    async def guard(self) -> None:
        """Until cancelled: the container watched against its disk and process caps, and
        stopped (:attr:`stopped` says why) when it crosses one - for a process started
        outside :meth:`exec` (an ACP agent's ``docker exec -i`` session)."""
        limit = await self._watch()
        if limit is not None:
            await self.stop(limit)

    async def _watch(self) -> str | None:
        """Poll the container's writable layer and process count; the limit it crossed."""
        while True:
            await asyncio.sleep(WATCH_S)
            size = await docker(["container", "inspect", "--size", "-f", "{{.SizeRw}}", self.name], timeout=30)
            if size.returncode == 0:
                with contextlib.suppress(ValueError):
                    if int(size.stdout.strip() or 0) > self.env.disk_mb * 1024 * 1024:
                        return f"disk: the trial wrote over {self.env.disk_mb} MB in its container (disk_mb)"
            stats = await docker(["stats", "--no-stream", "--format", "{{.PIDs}}", self.name], timeout=30)
            if stats.returncode == 0:
                with contextlib.suppress(ValueError):
                    if int(stats.stdout.strip() or 0) >= self.env.pids:
                        return f"pids: the trial's processes reached the cap of {self.env.pids} (pids)"

    async def _oom(self, returncode: int) -> str | None:
        """A memory limit hit inside the container (the kernel's OOM kill), as one line: the
        container's own cgroup counts its OOM kills (v2 ``memory.events``, v1 ``memory.oom_control``)."""
        if returncode != 137 and not self.oom_kills:
            return None
        files = ["/sys/fs/cgroup/memory.events", "/sys/fs/cgroup/memory/memory.oom_control"]
        got = await docker(["exec", self.name, "cat", *files], timeout=30)
        kills = 0
        for line in got.stdout.decode("utf-8", "replace").splitlines():
            key, _, value = line.partition(" ")
            if key == "oom_kill" and value.strip().isdigit():
                kills = max(kills, int(value))
        if kills > self.oom_kills:
            self.oom_kills = kills
            return f"memory: the trial went over its {self.env.memory_mb} MB memory cap (memory_mb); the kernel killed a process"
        return None

    async def stop(self, why: str) -> None:
        """Stop every process of the container now; later commands fail with ``why``."""
        if self.stopped is None:
            self.stopped = why
        await self.drop_kept()
        await docker(["kill", self.name], timeout=60)

    async def flush(self) -> None:
        """The pending seed (if any) copied in now."""
        if self.pending is not None:
            archive, self.pending = self.pending, None
            got = await put_archive(self.name, archive)
            if got.returncode != 0:
                raise ContainerError(f"could not copy the workspace into the container: {got.reason()}")

    async def copy_in(self, host: Path, dest: str, *, defer: bool = False) -> None:
        """Copy ``host``'s contents into ``dest`` (created when missing; not below a tmpfs such as /tmp) in the container
        (``defer``: kept as :attr:`pending`, for the first command to unpack)."""
        if self.stopped:
            raise ContainerError(f"the trial's container was stopped earlier: {self.stopped}")
        await self.drop_kept()
        await self.flush()
        archive = await asyncio.to_thread(_tar_of, host, dest)
        if defer:
            self.pending = archive
            return
        got = await put_archive(self.name, archive)
        if got.returncode != 0:
            raise ContainerError(f"could not copy the workspace into the container: {got.reason()}")

    async def copy_out(self, src: str, host: Path, *, cap_bytes: int) -> list[str]:
        """Copy ``src``'s contents out of the container into the host folder ``host`` (the
        workdir: from the carried tar when one is :attr:`kept`, without asking the engine)."""
        await self.flush()
        if self.kept is not None and src.rstrip("/") == self.workdir.rstrip("/"):
            host.mkdir(parents=True, exist_ok=True)
            try:
                return await asyncio.to_thread(_extract, self.kept / "out.tar", host, cap_bytes, kept=True)
            except tarfile.TarError:  # read whole before anything was written: the engine is asked instead
                await self.drop_kept()
        with tempfile.TemporaryDirectory(prefix="agentsproof-out-") as tmp:
            archive = Path(tmp) / "out.tar"
            got = await get_archive(self.name, f"{src.rstrip('/')}/.", archive, timeout=max(DOCKER_CALL_S, 600))
            if got.returncode != 0:
                raise ContainerError(f"could not copy {src} out of the container: {got.reason()}")
            host.mkdir(parents=True, exist_ok=True)
            return await asyncio.to_thread(_extract, archive, host, cap_bytes)

    async def read_file(self, path: str, *, cap_bytes: int) -> bytes | None:
        """One file's bytes, or None when the container has no such file (a regular file in
        the carried tar, when one is :attr:`kept`, read from it)."""
        await self.flush()
        name = _kept_name(path, self.workdir) if self.kept is not None else None
        if self.kept is not None and name is not None:
            with contextlib.suppress(tarfile.TarError):
                found, data = await asyncio.to_thread(_kept_file, self.kept / "out.tar", name, cap_bytes)
                if found:
                    return data
        with tempfile.TemporaryDirectory(prefix="agentsproof-read-") as tmp:
            archive = Path(tmp) / "one.tar"
            got = await get_archive(self.name, path, archive)
            if got.returncode != 0:
                if b"Could not find" in got.stderr or b"No such" in got.stderr:
                    return None
                raise ContainerError(f"could not read {path} in the container: {got.reason()}")

            def first() -> bytes | None:
                with tarfile.open(archive, mode="r:") as tar:
                    for member in tar:
                        if member.isfile():
                            fh = tar.extractfile(member)
                            return fh.read(cap_bytes) if fh is not None else None
                        return None
                return None

            return await asyncio.to_thread(first)
