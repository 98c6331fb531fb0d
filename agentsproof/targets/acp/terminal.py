"""The ``terminal/*`` requests of an ACP agent: commands the client runs for it.

Each terminal is one command in its own process group (:mod:`agentsproof.core.procgroup`),
in a folder of the trial's workspace (the caller checks it), with the agent's own built
environment plus what the request adds, under the agent's bubblewrap when it has one (no
network, only the workspace and the harness writable). Output is kept up to the request's
``outputByteLimit`` (at most :data:`MAX_OUTPUT_BYTES`), its start dropped first, as ACP
says. Every terminal still running when the trial ends is stopped with its group.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentsproof.core.procgroup import stop_group
from agentsproof.core.threads import to_thread

if TYPE_CHECKING:
    from agentsproof.isolation.sandbox import Bwrap

MAX_OUTPUT_BYTES = 1024 * 1024
MAX_TERMINALS = 64


def refused(message: str) -> Exception:
    """The JSON-RPC error a request the client will not serve gets (``acp.RequestError``)."""
    from acp import RequestError

    return RequestError(-32602, message)


@dataclass
class _Term:
    proc: asyncio.subprocess.Process
    limit: int
    out: bytearray = field(default_factory=bytearray)
    truncated: bool = False
    reader: asyncio.Task[None] | None = None


@dataclass
class Terminals:
    """The terminals of one trial."""

    env: dict[str, str]
    sandbox: Bwrap | None = None
    """The bubblewrap its commands run under, or None."""
    workspace: Path | None = None
    harness: Path | None = None
    _terms: dict[str, _Term] = field(default_factory=dict)
    _made: int = 0
    outputs: dict[str, str] = field(default_factory=dict)
    """The last output of each terminal by id (kept after release, for the trajectory)."""

    async def create(self, command: str, args: list[str], cwd: Path, env: dict[str, str], limit: int | None) -> str:
        """Start ``command args`` (a lone command line runs through ``/bin/sh -c``); its id."""
        if self._made >= MAX_TERMINALS:
            raise refused(f"terminal/create refused: more than {MAX_TERMINALS} terminals")
        argv = [command, *args] if args else ["/bin/sh", "-c", command]
        if self.sandbox is not None and self.workspace is not None and self.harness is not None:
            from agentsproof.isolation.sandbox import bwrap_argv
            from agentsproof.isolation.workspace import covered_root

            argv = bwrap_argv(
                self.sandbox,
                workspace=self.workspace,
                workspaces_root=covered_root(self.workspace),
                harness=self.harness,
                argv=argv,
                sockets={},
                named=[],
            )
            if cwd != self.workspace:
                i = argv.index("--chdir")
                argv[i + 1] = str(cwd)
        try:
            proc = await asyncio.create_subprocess_exec(
                *argv,
                cwd=str(cwd),
                env={**self.env, **env},
                start_new_session=True,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT,
            )
        except OSError as exc:
            raise refused(f"terminal/create failed: {exc.strerror or exc}") from None
        self._made += 1
        tid = f"term-{self._made}"
        term = _Term(proc=proc, limit=min(limit or MAX_OUTPUT_BYTES, MAX_OUTPUT_BYTES))
        term.reader = asyncio.ensure_future(self._read(term))
        self._terms[tid] = term
        return tid

    async def _read(self, term: _Term) -> None:
        assert term.proc.stdout is not None
        while chunk := await term.proc.stdout.read(65536):
            term.out += chunk
            if len(term.out) > term.limit:
                del term.out[: len(term.out) - term.limit]
                term.truncated = True

    def _get(self, tid: str) -> _Term:
        term = self._terms.get(tid)
        if term is None:
            raise refused(f"no terminal {tid!r}")
        return term

    async def output(self, tid: str) -> dict[str, Any]:
        """``terminal/output``: what it printed so far and, once it ended, how (up to
        :data:`MAX_OUTPUT_BYTES` decoded on a thread, never on the loop)."""
        term = self._get(tid)
        text = await to_thread(bytes.decode, bytes(term.out), "utf-8", "replace")  # a copy: the reader goes on appending
        out: dict[str, Any] = {"output": text, "truncated": term.truncated}
        if term.proc.returncode is not None:
            out["exitStatus"] = _status(term.proc.returncode)
        return out

    async def wait(self, tid: str) -> dict[str, Any]:
        """``terminal/wait_for_exit``: until the command ends; how it ended."""
        term = self._get(tid)
        await term.proc.wait()
        if term.reader is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(term.reader, timeout=5)
        return _status(term.proc.returncode or 0)

    async def kill(self, tid: str) -> None:
        """``terminal/kill``: stop the command's group (the terminal stays readable)."""
        term = self._get(tid)
        await stop_group(term.proc.pid)

    async def release(self, tid: str) -> None:
        """``terminal/release``: stop it and forget it."""
        await self.kill(tid)
        term = self._terms.pop(tid)
        if term.reader is not None:
            term.reader.cancel()
        self.outputs[tid] = await to_thread(bytes.decode, bytes(term.out), "utf-8", "replace")

    async def aclose(self) -> None:
        """Stop every terminal left."""
        for tid in list(self._terms):
            await self.release(tid)


def _status(code: int) -> dict[str, Any]:
    if code < 0:
        try:
            return {"exitCode": None, "signal": signal.Signals(-code).name}
        except ValueError:
            return {"exitCode": None, "signal": str(-code)}
    return {"exitCode": code, "signal": None}
