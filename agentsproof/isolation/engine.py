"""Calls to the engine: the ``docker`` CLI as an asyncio subprocess (never blocking the event loop).

:func:`docker` runs one CLI call with a timeout; :func:`put_archive` and :func:`get_archive`
copy a tar stream in and out of a container. (Calling the Engine API's archive and exec
endpoints over a local socket directly was measured no faster than the CLI: the engine's
own work dominates; ``bench/environments.py``.)
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from agentsproof.core.errors import ContainerError

OUTPUT_CAP = 1024 * 1024
"""Bytes of a command's stdout (and of stderr) kept; the rest is read and dropped."""
SPLIT_FILE_CAP = 640 * 1024 * 1024
"""Bytes after the ``split`` mark written to the file at most: past them the file is emptied
and the rest read and dropped (a command that found the mark cannot fill the host's disk)."""
DOCKER_CALL_S = 120.0
"""Seconds an engine call (start, copy, inspect, remove) may take."""


def docker_cli() -> str:
    """The ``docker`` CLI on PATH; ContainerError saying how to get one when missing."""
    found = shutil.which("docker")
    if not found:
        raise ContainerError("the docker CLI is not on PATH (install docker.io, or docker-ce-cli for a remote engine via DOCKER_HOST)")
    return found


async def _read_split(stream: asyncio.StreamReader | None, cap: int, mark: bytes, out: Path, file_cap: int = SPLIT_FILE_CAP) -> bytes:
    """What comes before the first ``mark`` (capped, the rest dropped); what comes after it
    streamed to the file ``out`` (written in a thread; past ``file_cap`` bytes the file is
    emptied and the rest dropped, so it cannot end with a closing mark)."""
    from agentsproof.core.threads import to_thread

    head = bytearray()
    tail = b""
    fh = None
    written = 0
    over = False

    async def write(data: bytes) -> None:
        nonlocal written, over
        if over or fh is None:
            return
        written += len(data)
        if written > file_cap:
            over = True
            await to_thread(fh.truncate, 0)
            return
        await to_thread(fh.write, data)

    try:
        while stream is not None:
            chunk = await stream.read(1 << 16)
            if not chunk:
                break
            if fh is not None:
                await write(chunk)
                continue
            data = tail + chunk
            at = data.find(mark)
            if at >= 0:
                head += data[: max(0, min(at, cap - len(head)))]
                fh = await to_thread(open, out, "wb")
                await write(data[at + len(mark) :])
                continue
            keep = max(0, len(data) - len(mark) + 1)  # a mark cut between two chunks is found in the next
            head += data[: max(0, min(keep, cap - len(head)))]
            tail = data[keep:]
        if fh is None:
            head += tail[: max(0, cap - len(head))]
        return bytes(head)
    finally:
        if fh is not None:
            await to_thread(fh.close)


async def _read_capped(stream: asyncio.StreamReader | None, cap: int) -> bytes:
    if stream is None:
        return b""
    buf = bytearray()
    while True:
        chunk = await stream.read(1 << 16)
        if not chunk:
            return bytes(buf)
        if len(buf) < cap:
            buf += chunk[: cap - len(buf)]


@dataclass
class Called:
    """One finished docker CLI call."""

    returncode: int
    stdout: bytes
    stderr: bytes
    timed_out: bool = False

    def reason(self) -> str:
        """The last non-empty line of stderr (the engine's message), one line."""
        lines = [ln.strip() for ln in self.stderr.decode("utf-8", "replace").splitlines() if ln.strip()]
        return lines[-1][:300] if lines else f"exit {self.returncode}"


async def docker(
    args: list[str],
    *,
    timeout: float = DOCKER_CALL_S,
    stdin: bytes | None = None,
    env: dict[str, str] | None = None,
    cap: int = OUTPUT_CAP,
    stdout_to: Path | None = None,
    split: bytes | None = None,
    file_cap: int = SPLIT_FILE_CAP,
) -> Called:
    """``docker ARGS`` with a timeout (the CLI is killed past it); ``env`` is added to the
    CLI's environment (the values ``-e NAME`` hands on); ``stdout_to`` streams stdout to a
    file; with ``split`` too, only what follows the first ``split`` mark on stdout goes to that
    file (none: the file is not made; emptied past ``file_cap`` bytes), what precedes it is the call's ``stdout``."""
    full_env = {**os.environ, **(env or {})}
    out_fh = open(stdout_to, "wb") if stdout_to is not None and split is None else None  # noqa: SIM115 - closed below
    try:
        proc = await asyncio.create_subprocess_exec(
            docker_cli(),
            *args,
            stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
            stdout=out_fh if out_fh is not None else asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=full_env,
        )
    except OSError as exc:
        if out_fh is not None:
            out_fh.close()
        raise ContainerError(f"the docker CLI could not be started: {exc.strerror or exc}") from None

    async def feed() -> None:
        if stdin is not None and proc.stdin is not None:
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                proc.stdin.write(stdin)
                await proc.stdin.drain()
            proc.stdin.close()

    async def collect() -> tuple[bytes, bytes]:
        reader = _read_split(proc.stdout, cap, split, stdout_to, file_cap) if split is not None and stdout_to is not None else _read_capped(proc.stdout, cap)
        out, err, _, _ = await asyncio.gather(reader, _read_capped(proc.stderr, cap), feed(), proc.wait())
        return out, err

    reading = asyncio.ensure_future(collect())
    timed_out = False
    try:
        out, err = await asyncio.wait_for(asyncio.shield(reading), timeout)
    except TimeoutError:
        timed_out = True
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
        out, err = await reading
    except asyncio.CancelledError:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
        with contextlib.suppress(Exception):
            await asyncio.shield(reading)
        raise
    finally:
        if out_fh is not None:
            out_fh.close()
    return Called(proc.returncode if proc.returncode is not None else -1, out, err, timed_out)


async def put_archive(name: str, data: bytes, dest: str = "/") -> Called:
    """Unpack the tar ``data`` at ``dest`` in the container ``name`` (``docker cp -``)."""
    return await docker(["cp", "-", f"{name}:{dest}"], stdin=data)


async def get_archive(name: str, path: str, out: Path, *, timeout: float = DOCKER_CALL_S) -> Called:
    """The tar of ``path`` in the container ``name`` written to ``out`` (``docker cp … -``)."""
    return await docker(["cp", f"{name}:{path}", "-"], stdout_to=out, timeout=timeout)
