"""Run a command in its own process group; nothing outlives it, and nothing it printed is lost.

Used by the command target (the agent) and the script grader (the check). The command
starts in a new session (its own process group). When it exits, times out or the run is
interrupted, the whole group gets SIGTERM, then SIGKILL after :data:`KILL_GRACE_S`: no
process of the group outlives it, and any group still running when agentsproof exits is
killed. A process that starts its own session (``setsid``) leaves the group; when such a
process still holds the command's stdout or stderr :data:`PIPE_DRAIN_S` after the group is
gone, it is found by the pipe it holds and stopped too, with its own group (inside the
sandbox, :mod:`agentsproof.isolation.sandbox`, its PID namespace catches them all anyway).

Output is read as it comes and kept even when reading has to stop: the first
:data:`MAX_OUTPUT_BYTES` of stdout (and, when asked, its last ``keep_tail`` bytes: the
script grader's score is on the last line of a long output), and the last
:data:`STDERR_LINES` lines of stderr (each cut at :data:`LINE_CHARS`). The rest is read and
dropped, so a command that prints without end never blocks on a full pipe.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import os
import signal
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

from agentsproof.core.errors import TargetError

MAX_OUTPUT_BYTES = 1024 * 1024
"""Of stdout or the answer file; the rest is read and dropped."""
STDERR_LINES = 40
"""The last stderr lines kept for the session log."""
LINE_CHARS = 500
KILL_GRACE_S = 2.0
PIPE_DRAIN_S = 2.0
"""How long to wait for output pipes after the group is gone, before the processes still
holding them are stopped (and as long again after that)."""
_live_groups: set[int] = set()


@dataclass
class Outcome:
    """What a finished process group left: exit code, stdout (bounded), the last stderr lines, latency in seconds, notes."""

    returncode: int
    stdout: bytes
    stdout_cut: bool
    stderr: deque[tuple[float, str]]
    latency_s: float
    timed_out: bool = False
    notes: list[str] = field(default_factory=list)
    stdout_tail: bytes = b""
    """With ``keep_tail``: the last bytes of stdout when it was cut (else empty)."""
    stdout_bytes: int = 0
    """How many bytes of stdout were read in all."""


@dataclass
class _Capture:
    tail_size: int = 0
    head: bytearray = field(default_factory=bytearray)
    tail: bytearray = field(default_factory=bytearray)
    total: int = 0

    def add(self, chunk: bytes) -> None:
        room = MAX_OUTPUT_BYTES - len(self.head)
        if room > 0:
            self.head += chunk[:room]
        self.total += len(chunk)
        if self.tail_size and self.total > MAX_OUTPUT_BYTES:
            self.tail += chunk
            if len(self.tail) > 2 * self.tail_size:
                del self.tail[: -self.tail_size]

    @property
    def cut(self) -> bool:
        return self.total > MAX_OUTPUT_BYTES


async def run_group(
    argv: list[str],
    *,
    cwd: Path,
    env: dict[str, str],
    stdin_text: str | None,
    timeout: float,
    keep_tail: int = 0,
) -> Outcome:
    """Run ``argv`` in a new session; stop its whole process group when it exits, times
    out or this task is cancelled. ``keep_tail``: also keep the last this many bytes of a
    stdout longer than :data:`MAX_OUTPUT_BYTES`."""
    t0 = time.perf_counter()
    stdin: int = asyncio.subprocess.DEVNULL
    if stdin_text is not None:
        try:
            stdin = _stdin_pipe(stdin_text.encode("utf-8", "replace"))
        except OSError as exc:
            raise TargetError(f"cannot run {argv[0]!r}: {exc.strerror or exc}") from None
    try:
        proc = await asyncio.create_subprocess_exec(
            *argv,
            cwd=str(cwd),
            env=env,
            start_new_session=True,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            stdin=stdin,
        )
    except OSError as exc:
        raise TargetError(f"cannot run {argv[0]!r}: {exc.strerror or exc}") from None
    finally:
        if stdin >= 0:
            os.close(stdin)  # the child has its copy
    pgid = proc.pid
    _live_groups.add(pgid)
    stderr: deque[tuple[float, str]] = deque(maxlen=STDERR_LINES)
    assert proc.stdout is not None and proc.stderr is not None
    pipes = _pipe_inodes(proc)
    captured = _Capture(tail_size=keep_tail)
    readers = [asyncio.ensure_future(_read_into(proc.stdout, captured)), asyncio.ensure_future(_read_lines(proc.stderr, stderr, t0))]
    timed_out = False
    notes: list[str] = []
    try:
        try:
            await asyncio.wait_for(_exited(proc), timeout)
        except TimeoutError:
            timed_out = True
        latency = time.perf_counter() - t0
    finally:
        if await stop_group(pgid) and not timed_out and proc.returncode is not None:
            notes.append("the agent left processes running after it exited; they were stopped")
        _live_groups.discard(pgid)
        _done, pending = await asyncio.wait(readers, timeout=PIPE_DRAIN_S)
        if pending and pipes:
            held = await stop_pipe_holders(pipes)
            if held:
                notes.append(
                    f"{len(held)} process(es) it started in a session of their own still held its output; they were stopped "
                    "(what it printed until then is kept)"
                )
                _done, pending = await asyncio.wait(pending, timeout=PIPE_DRAIN_S)
        for task in pending:
            task.cancel()
        if pending:
            transport = getattr(proc, "_transport", None)
            if transport is not None:
                transport.close()
    if proc.returncode is None:
        await proc.wait()
    tail = bytes(captured.tail[-keep_tail:]) if keep_tail and captured.cut else b""
    return Outcome(proc.returncode or 0, bytes(captured.head), captured.cut, stderr, latency, timed_out, notes, tail, captured.total)


def _pipe_inodes(proc: asyncio.subprocess.Process) -> set[int]:
    """The inodes of the pipes the command's stdout and stderr write into."""
    out: set[int] = set()
    transport = getattr(proc, "_transport", None)
    for fd in (1, 2):
        try:
            pipe = transport.get_pipe_transport(fd).get_extra_info("pipe") if transport is not None else None
            if pipe is not None:
                out.add(os.fstat(pipe.fileno()).st_ino)
        except (AttributeError, OSError, ValueError):
            continue
    return out


def pipe_holders(inodes: set[int]) -> list[int]:
    """Processes other than this one that hold one of these pipes open."""
    wanted = {f"pipe:[{ino}]" for ino in inodes}
    me = os.getpid()
    found: list[int] = []
    try:
        entries = [e for e in os.listdir("/proc") if e.isdigit() and int(e) != me]
    except OSError:
        return found
    for entry in entries:
        try:
            fds = os.listdir(f"/proc/{entry}/fd")
        except OSError:
            continue
        for fd in fds:
            try:
                if os.readlink(f"/proc/{entry}/fd/{fd}") in wanted:
                    found.append(int(entry))
                    break
            except OSError:
                continue
    return found


async def stop_pipe_holders(inodes: set[int]) -> list[int]:
    """Stop (with their process groups) the processes still holding these pipes; never this
    process's own group."""
    pids = pipe_holders(inodes)
    own = os.getpgrp()
    groups: set[int] = set()
    for pid in pids:
        try:
            pgid = os.getpgid(pid)
        except OSError:
            continue
        if pgid == own:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        else:
            groups.add(pgid)
    for pgid in groups:
        await stop_group(pgid)
    return pids


async def _exited(proc: asyncio.subprocess.Process) -> None:
    """Until the process itself exits. (``proc.wait()`` also waits for its pipes to close,
    which a backgrounded child holding stdout would put off for ever.)"""
    while proc.returncode is None:
        await asyncio.sleep(0.02)


async def _read_into(stream: asyncio.StreamReader, into: _Capture) -> None:
    while chunk := await stream.read(65536):
        into.add(chunk)


async def _read_lines(stream: asyncio.StreamReader, into: deque[tuple[float, str]], t0: float) -> None:
    while chunk := await _readline(stream):
        text = chunk.decode("utf-8", "replace").rstrip("\r\n")
        into.append((time.perf_counter() - t0, text[:LINE_CHARS]))


async def _readline(stream: asyncio.StreamReader) -> bytes:
    """One line, or the next 64 KB of an endless one."""
    try:
        return await stream.readuntil(b"\n")
    except asyncio.IncompleteReadError as exc:
        return exc.partial
    except asyncio.LimitOverrunError as exc:
        return await stream.read(exc.consumed or 65536)


_F_SETPIPE_SZ = 1031
"""fcntl's F_SETPIPE_SZ (Linux): grow a pipe so that a whole prompt fits before the command starts."""


def _stdin_pipe(data: bytes) -> int:
    """The read end of a pipe that already holds ``data`` (then closed: the command reads
    to its end): the command's input is there when it starts, whatever the event loop is
    doing (a CLI that gives up when no input arrives within seconds never sees an empty
    pipe). What does not fit in the pipe is written by a thread of its own as the command
    reads; a command that stops reading ends it (broken pipe)."""
    read, write = os.pipe()
    try:
        if len(data) > 65536:
            with contextlib.suppress(OSError, ImportError):
                import fcntl

                fcntl.fcntl(write, _F_SETPIPE_SZ, min(len(data), 1 << 20))
        os.set_blocking(write, False)
        sent = 0
        with contextlib.suppress(BlockingIOError):
            while sent < len(data):
                sent += os.write(write, data[sent : sent + 65536])
    except BaseException:
        os.close(read)
        os.close(write)
        raise
    if sent >= len(data):
        os.close(write)
    else:
        os.set_blocking(write, True)
        threading.Thread(target=_write_rest, args=(write, data[sent:]), name="agentsproof-stdin", daemon=True).start()
    return read


def _write_rest(fd: int, data: bytes) -> None:
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view[:65536]) :]
    except OSError:  # the command stopped reading (it exited, or was stopped)
        pass
    finally:
        os.close(fd)


def group_alive(pgid: int) -> bool:
    """Whether a process of group ``pgid`` is still running (zombies do not count: they
    hold nothing and an init that never reaps would keep them for ever)."""
    try:
        entries = os.listdir("/proc")
    except OSError:
        try:
            os.killpg(pgid, 0)
            return True
        except OSError:
            return False
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as fh:
                fields = fh.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if len(fields) > 2 and int(fields[2]) == pgid and fields[0] not in (b"Z", b"X"):
            return True
    return False


def _killpg(pgid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


async def stop_group(pgid: int, grace: float = KILL_GRACE_S) -> bool:
    """SIGTERM to the group, SIGKILL after ``grace``; True when anything was still running."""
    if not group_alive(pgid):
        return False
    _killpg(pgid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    try:
        while time.monotonic() < deadline:
            await asyncio.sleep(0.05)
            if not group_alive(pgid):
                return True
    except BaseException:  # this wait itself cancelled (a second Ctrl-C): no more grace
        _killpg(pgid, signal.SIGKILL)
        raise
    _killpg(pgid, signal.SIGKILL)
    return True


def track_group(pgid: int) -> None:
    """Have a group started elsewhere (an ACP agent's) killed when agentsproof exits, like ours."""
    _live_groups.add(pgid)


def forget_group(pgid: int) -> None:
    """Undo :func:`track_group` once the group has been stopped."""
    _live_groups.discard(pgid)


@atexit.register
def _kill_leftovers() -> None:
    for pgid in list(_live_groups):
        _killpg(pgid, signal.SIGKILL)
