"""One ACP agent process and its session: started, spoken to through the SDK, stopped.

:class:`AgentProcess` starts the agent in its own process group (under bubblewrap when
given, with a :class:`agentsproof.isolation.sandbox.LoopbackBridge` for its API's ports, as
:func:`agentsproof.targets.agents.kit.sandboxed` sets it up for every agent; or in the
trial's container, :mod:`agentsproof.targets.acp.container`),
reads its stderr into a bounded tail and is the SDK's message transport: each stdout line
must be one JSON-RPC 2.0 message, anything else ends the connection with that reason.
:func:`converse` runs the session: ``initialize``, ``session/new`` in the workspace, then
one ``session/prompt`` per user message, within one deadline; at the deadline
``session/cancel``, a short grace, then the caller stops the group.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections import deque
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from agentsproof.core.procgroup import forget_group, stop_group, track_group
from agentsproof.core.units import seconds
from agentsproof.targets.acp.client import AcpRecorder
from agentsproof.targets.acp.terminal import Terminals
from agentsproof.targets.agents.kit import Harness, sandboxed, stderr_tail
from agentsproof.targets.base import TargetError, TrialInput

if TYPE_CHECKING:
    from agentsproof.isolation.sandbox import Bwrap, LoopbackBridge
    from agentsproof.model.environment import TrialEnvironment
    from agentsproof.targets.acp.container import InContainer

LINE_CHARS = 500
MAX_LINE_BYTES = 16 * 1024 * 1024
"""Of one JSON-RPC message from the agent."""
CANCEL_GRACE_S = 3.0
"""How long a cancelled prompt may take to end before the process group is stopped."""
STDERR_LINES = 40


class AgentProcess:
    """The agent's process, and the SDK's transport to it (``send``/``receive``/``close``)."""

    def __init__(
        self,
        argv: list[str],
        workspace: Path,
        harness: Harness,
        env: dict[str, str],
        bwrap: Bwrap | None,
        ports: list[int],
        what: str,
        *,
        box: TrialEnvironment | None = None,
    ):
        self.argv, self.workspace, self.harness, self.env = argv, workspace, harness, env
        self.bwrap, self.ports, self.what = bwrap, sorted(set(ports)), what
        self.box = box
        """The trial's container (an :class:`agentsproof.isolation.container.Container`): the
        agent runs there (:mod:`agentsproof.targets.acp.container`), not under ``bwrap``."""
        self.cwd = box.workdir if box is not None else str(workspace)
        """The session's working folder, as the agent sees it."""
        self._inside: InContainer | None = None
        self.proc: asyncio.subprocess.Process | None = None
        self.stderr: deque[tuple[float, str]] = deque(maxlen=STDERR_LINES)
        self.problem: str | None = None
        """Why the connection ended (a malformed line), when it was not the agent's exit."""
        self.ended = asyncio.Event()
        self.conn: Any = None
        self.terminals: Terminals | None = None
        self._bridge: LoopbackBridge | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._t0 = time.monotonic()

    async def start(self, recorder: AcpRecorder) -> None:
        """Start the agent and connect the SDK's client side to it."""
        import acp

        argv, env = self.argv, self.env
        if self.box is not None:
            from agentsproof.targets.acp.container import InContainer

            self._inside = InContainer(self.box, self.harness, self.workspace)
            argv, env = await self._inside.command(argv, env)
        elif self.bwrap is not None:
            # the launch line is the entry's command and args (never a prompt): its paths stay visible under a masked /tmp
            argv, self._bridge = await sandboxed(self.bwrap, self.workspace, self.harness, argv, self.ports, self.argv)
        try:
            self.proc = await asyncio.create_subprocess_exec(
                *argv,
                cwd=str(self.workspace),
                env=env,
                start_new_session=True,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                limit=MAX_LINE_BYTES,
            )
        except OSError as exc:
            raise TargetError(f"cannot run {self.argv[0]!r}: {exc.strerror or exc}") from None
        track_group(self.proc.pid)
        self._tasks.append(asyncio.ensure_future(self._read_stderr()))
        if self.box is None:  # in a container the agent runs its own commands and file work there
            self.terminals = Terminals(env=self.env, sandbox=self.bwrap, workspace=self.workspace, harness=self.harness.root)
            recorder.terminals = self.terminals
        self.conn = acp.connect_to_agent(cast("acp.Client", recorder), self)

    # -- the SDK's transport ---------------------------------------------------

    async def send(self, message: dict[str, Any]) -> None:
        """Write one message to the agent's stdin."""
        assert self.proc is not None and self.proc.stdin is not None
        try:
            self.proc.stdin.write(json.dumps(message, ensure_ascii=False).encode("utf-8") + b"\n")
            await self.proc.stdin.drain()
        except (BrokenPipeError, ConnectionResetError) as exc:
            raise ConnectionError(f"the agent's stdin is closed: {exc}") from None

    async def receive(self) -> dict[str, Any] | None:
        """The agent's next message; None once it closed its stdout or wrote something else."""
        assert self.proc is not None and self.proc.stdout is not None
        while True:
            try:
                line = await self.proc.stdout.readuntil(b"\n")
            except asyncio.IncompleteReadError as exc:
                line = exc.partial
                if not line.strip():
                    self.ended.set()
                    return None
            except (asyncio.LimitOverrunError, ValueError):
                self._bad(f"a message over {MAX_LINE_BYTES // (1024 * 1024)} MB")
                return None
            if not line.strip():
                continue
            msg, why = _json_line(line)
            if msg is None:
                shown = line.decode("utf-8", "replace").strip()
                self._bad(f"{why} on its stdout: {shown[:120]!r}")
                return None
            return msg

    def _bad(self, why: str) -> None:
        self.problem = self.problem or f"malformed JSON-RPC from {self.what}: {why}"
        self.ended.set()

    async def close(self) -> None:
        """Close the agent's stdin."""
        if self.proc is not None and self.proc.stdin is not None:
            with contextlib.suppress(Exception):
                self.proc.stdin.close()

    # -- the process -----------------------------------------------------------

    async def _read_stderr(self) -> None:
        assert self.proc is not None and self.proc.stderr is not None
        while True:
            try:
                line = await self.proc.stderr.readline()
            except (asyncio.LimitOverrunError, ValueError):
                continue
            if not line:
                return
            text = line.decode("utf-8", "replace").rstrip()
            self.stderr.append((time.monotonic() - self._t0, text[:LINE_CHARS]))

    async def failure(self) -> TargetError:
        """Why the session broke off: a malformed message, else the agent's exit."""
        if self.problem:
            return TargetError(self.problem, kind="malformed")
        limit = self._inside.limit() if self._inside is not None else None
        if limit is not None:
            return TargetError(f"the trial's container hit a limit: {limit}", kind="limit")
        code = None
        if self.proc is not None:
            with contextlib.suppress(asyncio.TimeoutError):
                code = await asyncio.wait_for(self.proc.wait(), timeout=5)
        how = f"exited with code {code}" if code is not None else "closed its output"
        return TargetError(f"{self.what} {how} before the session ended" + stderr_tail(self.stderr))

    async def stop(self) -> None:
        """End the agent's process group, its terminals and the sandbox's bridge."""
        if self.conn is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.conn.close(), timeout=2)
        if self.terminals is not None:
            await self.terminals.aclose()
        if self.proc is not None:
            await self.close()
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self.proc.wait(), timeout=0.5)
            if self._inside is not None:
                await self._inside.stop()
            await stop_group(self.proc.pid)
            forget_group(self.proc.pid)
        for task in self._tasks:
            with contextlib.suppress(asyncio.TimeoutError, asyncio.CancelledError):
                await asyncio.wait_for(task, timeout=1)
        if self._bridge is not None:
            await self._bridge.aclose()


async def _call(proc: AgentProcess, what: str, coro: Awaitable[Any], deadline: float, timeout: float, session: str | None = None) -> Any:
    """The request's result; TargetError when the agent fails, answers with an error or the time is up."""
    from acp import RequestError

    task = asyncio.ensure_future(coro)
    ended = asyncio.ensure_future(proc.ended.wait())
    try:
        done, _ = await asyncio.wait({task, ended}, timeout=max(deadline - time.monotonic(), 0), return_when=asyncio.FIRST_COMPLETED)
        if task not in done and ended not in done:
            if session is not None and proc.conn is not None:
                with contextlib.suppress(Exception):
                    await proc.conn.cancel(session_id=session)
                with contextlib.suppress(Exception):
                    await asyncio.wait({task}, timeout=CANCEL_GRACE_S)
            raise timed_out(proc.what, timeout)
        if task not in done:
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait({task}, timeout=0.2)
        if not task.done():
            raise await proc.failure()
        try:
            return task.result()
        except RequestError as exc:
            data = f" ({json.dumps(exc.data, default=str)[:200]})" if getattr(exc, "data", None) else ""
            raise TargetError(f"{proc.what} answered {what} with error {exc.code}: {exc}{data}") from None
        except ConnectionError:
            raise await proc.failure() from None
    finally:
        ended.cancel()
        if not task.done():
            task.cancel()


async def converse(
    proc: AgentProcess,
    rec: AcpRecorder,
    trial: TrialInput,
    first: str,
    timeout: float,
    next_message: Callable[[TrialInput, list[dict[str, str]]], Awaitable[str | None]],
) -> None:
    """Initialize, open a session in the workspace, then send the prompt and every follow-up."""
    from acp import PROTOCOL_VERSION, text_block
    from acp.schema import ClientCapabilities, FileSystemCapabilities, Implementation

    from agentsproof.core.version import __version__

    deadline = time.monotonic() + timeout
    conn = proc.conn
    served = proc.box is None  # files and terminals are served on the host only: in a container the agent has its own
    caps = ClientCapabilities(fs=FileSystemCapabilities(read_text_file=served, write_text_file=served), terminal=served)
    info = Implementation(name="agentsproof", version=__version__)
    init = await _call(proc, "initialize", conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=caps, client_info=info), deadline, timeout)
    agent = getattr(init, "agent_info", None)
    if agent is not None:
        rec.note(f"agent: {getattr(agent, 'name', '?')} {getattr(agent, 'version', '')}".strip())
    session = await _call(proc, "session/new", conn.new_session(cwd=proc.cwd, mcp_servers=[]), deadline, timeout)
    sid = session.session_id
    conversation = [{"role": "user", "content": trial.prompt}]
    prompt = first
    while True:
        rec.begin_turn()
        rec.note("prompt: " + prompt[:300], role="user")
        response = await _call(proc, "session/prompt", conn.prompt(session_id=sid, prompt=[text_block(prompt)]), deadline, timeout, sid)
        stop = str(getattr(response, "stop_reason", "") or "")
        reply = rec.end_turn(response)
        # "cancelled" that we did not ask for: the agent gave the turn up (codex-acp does
        # when a permission is denied); the reply so far is its answer
        rec.note(f"stop reason: {stop}" + (" (by the agent)" if stop == "cancelled" else ""))
        conversation.append({"role": "assistant", "content": reply})
        rec.note(reply, role="assistant")
        follow = await next_message(trial, conversation)
        if follow is None:
            return
        if time.monotonic() >= deadline:
            raise timed_out(proc.what, timeout)
        conversation.append({"role": "user", "content": follow})
        prompt = follow


def timed_out(what: str, timeout: float) -> TargetError:
    """The error of a trial cut at its timeout."""
    return TargetError(f"{what} timed out after {seconds(timeout)}", kind="timeout")


def _json_line(line: bytes) -> tuple[dict[str, Any] | None, str]:
    """(the JSON-RPC message of one line, '') or (None, what is wrong with it)."""
    try:
        msg = json.loads(line)
    except ValueError:
        return None, "a line that is not JSON"
    if not isinstance(msg, dict) or msg.get("jsonrpc") != "2.0" or not ("method" in msg or "id" in msg):
        return None, "a JSON value that is not a JSON-RPC 2.0 message"
    return msg, ""
