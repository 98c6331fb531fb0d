"""Calls to the engine: the ``docker`` CLI as an asyncio subprocess, and the archive endpoints.

:func:`docker` runs one CLI call with a timeout (never blocking the event loop).

A trial copies its workspace in and out of its container (``docker cp``). Each ``docker``
CLI call starts a process; when ``DOCKER_HOST`` names a local socket (``unix://…``) the
same archive endpoints of the Engine API (``PUT``/``GET /containers/NAME/archive``) are
called directly with httpx, in the event loop. Any other engine (``ssh://``, ``tcp://``, a
CLI context) goes through the CLI as before (:func:`agentsproof.targets.container.docker`).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from agentsproof.core.errors import TargetError

OUTPUT_CAP = 1024 * 1024
"""Bytes of a command's stdout (and of stderr) kept; the rest is read and dropped."""
DOCKER_CALL_S = 120.0
"""Seconds an engine call (start, copy, inspect, remove) may take."""


def docker_cli() -> str:
    """The ``docker`` CLI on PATH; TargetError saying how to get one when missing."""
    found = shutil.which("docker")
    if not found:
        raise TargetError("the docker CLI is not on PATH (install docker.io, or docker-ce-cli for a remote engine via DOCKER_HOST)")
    return found


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
) -> Called:
    """``docker ARGS`` with a timeout (the CLI is killed past it); ``env`` is added to the
    CLI's environment (the values ``-e NAME`` hands on); ``stdout_to`` streams stdout to a file."""
    full_env = {**os.environ, **(env or {})}
    out_fh = open(stdout_to, "wb") if stdout_to is not None else None  # noqa: SIM115 - closed below
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
        raise TargetError(f"the docker CLI could not be started: {exc.strerror or exc}") from None

    async def feed() -> None:
        if stdin is not None and proc.stdin is not None:
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                proc.stdin.write(stdin)
                await proc.stdin.drain()
            proc.stdin.close()

    async def collect() -> tuple[bytes, bytes]:
        out, err, _, _ = await asyncio.gather(_read_capped(proc.stdout, cap), _read_capped(proc.stderr, cap), feed(), proc.wait())
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


def local_socket() -> str | None:
    """The engine's unix socket when ``DOCKER_HOST`` names one, else None (use the CLI)."""
    host = os.environ.get("DOCKER_HOST", "")
    return host[len("unix://") :] if host.startswith("unix://") else None


async def put_archive(name: str, data: bytes, dest: str = "/") -> Called:
    """Unpack the tar ``data`` at ``dest`` in the container ``name``."""
    sock = local_socket()
    if sock is None:
        return await docker(["cp", "-", f"{name}:{dest}"], stdin=data)
    import httpx

    try:
        async with httpx.AsyncClient(transport=httpx.AsyncHTTPTransport(uds=sock), base_url="http://docker", timeout=DOCKER_CALL_S) as client:
            resp = await client.put(f"/containers/{name}/archive", params={"path": dest}, content=data, headers={"Content-Type": "application/x-tar"})
    except httpx.HTTPError as err:
        return Called(1, b"", f"the engine did not answer: {err}".encode())
    return Called(0 if resp.status_code == 200 else 1, b"", b"" if resp.status_code == 200 else _message(resp.content))


async def get_archive(name: str, path: str, out: Path, *, timeout: float = DOCKER_CALL_S) -> Called:
    """The tar of ``path`` in the container ``name`` written to ``out``; a missing path says ``No such``."""
    sock = local_socket()
    if sock is None:
        return await docker(["cp", f"{name}:{path}", "-"], stdout_to=out, timeout=timeout)
    import httpx

    try:
        transport = httpx.AsyncHTTPTransport(uds=sock)
        async with (
            httpx.AsyncClient(transport=transport, base_url="http://docker", timeout=timeout) as client,
            client.stream("GET", f"/containers/{name}/archive", params={"path": path}, headers={"Accept-Encoding": "identity"}) as resp,
        ):
            if resp.status_code != 200:
                body = await resp.aread()
                text = b"No such file or directory: " + path.encode() if resp.status_code == 404 else _message(body)
                return Called(1, b"", text)
            with open(out, "wb") as fh:
                async for chunk in resp.aiter_bytes():
                    fh.write(chunk)
    except httpx.HTTPError as err:
        return Called(1, b"", f"the engine did not answer: {err}".encode())
    return Called(0, b"", b"")


def _message(body: bytes) -> bytes:
    """The engine's ``{"message": ...}`` error as bytes (or the body as it is)."""
    import json

    try:
        msg = json.loads(body).get("message")
    except (ValueError, AttributeError):
        msg = None
    return str(msg).encode() if msg else body[:300]
