"""Run a command in its own process group; nothing outlives it.

Used by the command target (the agent) and the script grader (the check). The command
starts in a new session (its own process group). When it exits, times out or the run is
interrupted, the whole group gets SIGTERM, then SIGKILL after :data:`KILL_GRACE_S`: no
process of the group outlives it, and any group still running when agentsproof exits is
killed. A process that starts its own session (``setsid``) leaves the group; only the
sandbox's PID namespace (:mod:`agentsproof.targets.sandbox`) catches those.

Of its output, the first :data:`MAX_OUTPUT_BYTES` of stdout and the last
:data:`STDERR_LINES` lines of stderr are kept.
"""

from __future__ import annotations

import asyncio
import atexit
import os
import signal
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
"""How long to wait for output pipes after the group is gone (an escaped process may hold them)."""
_live_groups: set[int] = set()


@dataclass
class Outcome:
    returncode: int
    stdout: bytes
    stdout_cut: bool
    stderr: deque[tuple[float, str]]
    latency_s: float
    timed_out: bool = False
    notes: list[str] = field(default_factory=list)


async def run_group(argv: list[str], *, cwd: Path, env: dict[str, str], stdin_text: str | None, timeout: float) -> Outcome:
    """Run ``argv`` in a new session; stop its whole process group when it exits, times
    out or this task is cancelled."""
    t0 = time.perf_counter()
    try:
        proc = await asyncio.create_subprocess_exec(
            *argv, cwd=str(cwd), env=env, start_new_session=True, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, stdin=asyncio.subprocess.PIPE if stdin_text is not None else asyncio.subprocess.DEVNULL,
        )
    except OSError as exc:
        raise TargetError(f"cannot run {argv[0]!r}: {exc.strerror or exc}") from None
    pgid = proc.pid
    _live_groups.add(pgid)
    stderr: deque[tuple[float, str]] = deque(maxlen=STDERR_LINES)
    assert proc.stdout is not None and proc.stderr is not None
    capped = asyncio.ensure_future(_read_capped(proc.stdout))
    readers = [capped, asyncio.ensure_future(_read_lines(proc.stderr, stderr, t0))]
    if stdin_text is not None:
        readers.append(asyncio.ensure_future(_feed(proc.stdin, stdin_text)))
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
        done, pending = await asyncio.wait(readers, timeout=PIPE_DRAIN_S)
        for task in pending:
            task.cancel()
        if pending:
            transport = getattr(proc, "_transport", None)
            if transport is not None:
                transport.close()
    out, cut = capped.result() if capped in done and not capped.cancelled() else (b"", False)
    if proc.returncode is None:
        await proc.wait()
    return Outcome(proc.returncode or 0, out, cut, stderr, latency, timed_out, notes)


async def _exited(proc: asyncio.subprocess.Process) -> None:
    """Until the process itself exits. (``proc.wait()`` also waits for its pipes to close,
    which a backgrounded child holding stdout would put off for ever.)"""
    while proc.returncode is None:
        await asyncio.sleep(0.02)


async def _read_capped(stream: asyncio.StreamReader) -> tuple[bytes, bool]:
    buf = bytearray()
    cut = False
    while chunk := await stream.read(65536):
        room = MAX_OUTPUT_BYTES - len(buf)
        buf += chunk[:room]
        cut = cut or len(chunk) > room
    return bytes(buf), cut


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


async def _feed(stdin: asyncio.StreamWriter | None, text: str) -> None:
    if stdin is None:
        return
    try:
        stdin.write(text.encode("utf-8"))
        await stdin.drain()
    except (BrokenPipeError, ConnectionResetError):
        pass
    finally:
        stdin.close()


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
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


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


@atexit.register
def _kill_leftovers() -> None:
    for pgid in list(_live_groups):
        _killpg(pgid, signal.SIGKILL)
