"""The client side of one ACP session: what the agent streams, asks and is refused, recorded.

:class:`AcpRecorder` is the ``acp.Client`` the :mod:`agentsproof.targets.acp.target` target hands
the SDK. It keeps

* every ``session/update``: message and thought chunks (the reply of each turn, thoughts
  to the trial log), plans (to the trial log), tool calls with their kind, input, status
  and output (the trajectory, in the order they started);
* every **permission request**, answered by the target's :class:`PermissionPolicy`
  (allow / deny per tool kind) and recorded as a ``permission`` step of the trajectory
  and a log line;
* every ``fs/*`` request, served only inside the workspace: a path outside it, or one
  that passes through a symlink, is refused (an error to the agent) and recorded as a
  failed ``fs/...`` step; a ``terminal/*`` request runs its command in the workspace
  (under the same bubblewrap as the agent, when there is one), its ``cwd`` refused when
  it leaves the workspace (:mod:`agentsproof.targets.acp.terminal`).

Which staged skills the agent loaded is read from the tool calls: a skill tool naming one
(``Skill``, ``activate_skill``, ...) or a call whose input or locations name a file of a
staged skill's folder.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentsproof.core.threads import to_thread
from agentsproof.model.results import LogEvent, ToolCall, Usage
from agentsproof.targets.acp.terminal import Terminals, refused
from agentsproof.targets.agents.kit import clip, mentions

TOOL_KINDS = ("read", "edit", "delete", "move", "search", "execute", "think", "fetch", "switch_mode", "other")
"""ACP's tool kinds (``ToolKind``): what a permission policy names."""
ARGUMENT_CHARS = 2_000
RESULT_CHARS = 300
MAX_STEPS = 2_000
MAX_REPLY_CHARS = 1_000_000
"""Of one turn's message chunks kept (the rest is dropped, a note says so)."""
MAX_READ_BYTES = 5 * 1024 * 1024
MAX_WRITE_BYTES = 20 * 1024 * 1024
_CUT = "\x00"
"""Marks a tool call between the message chunks of a turn."""
SKILL_TOOLS = ("skill", "activate_skill", "load_skill", "use_skill")
"""Tool names (lower case, of the title's first word or the tool's own name) that load a skill by name."""


@dataclass(frozen=True)
class PermissionPolicy:
    """How a permission request is answered: a kind in ``deny`` is refused, one in
    ``allow`` allowed, any other by ``default``."""

    allow: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()
    default: str = "allow"

    def decide(self, kind: str | None) -> bool:
        """True to allow a tool call of ``kind`` (None: the agent named none, ``other``)."""
        k = kind or "other"
        if k in self.deny:
            return False
        if k in self.allow:
            return True
        return self.default == "allow"


@dataclass
class _Step:
    id: str
    t0: float
    title: str = ""
    kind: str | None = None
    tool: str | None = None
    raw_input: Any = None
    output: str = ""
    status: str | None = None
    locations: list[str] = field(default_factory=list)
    t1: float | None = None


@dataclass
class AcpRecorder:
    """The ``acp.Client`` of one trial (see the module docstring)."""

    workspace: Path
    policy: PermissionPolicy
    staged: dict[str, Path] = field(default_factory=dict)
    terminals: Terminals | None = None
    t0: float = field(default_factory=time.monotonic)
    steps: dict[str, _Step] = field(default_factory=dict)
    order: list[ToolCall | str] = field(default_factory=list)
    """The trajectory as it happened: a tool call's id (filled in at the end) or a recorded decision."""
    log: list[LogEvent] = field(default_factory=list)
    invoked: list[str] = field(default_factory=list)
    replies: list[str] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    cost: float | None = None
    dropped: int = 0
    _text: list[str] = field(default_factory=list)
    _thought: list[str] = field(default_factory=list)
    _meta_usage: bool = False
    _kept: int = 0
    _cut: bool = False

    def __post_init__(self) -> None:
        self.workspace = Path(os.path.realpath(self.workspace))

    # -- turns -----------------------------------------------------------------

    def begin_turn(self) -> None:
        """A new prompt: its reply starts empty."""
        self._text, self._kept, self._cut = [], 0, False

    def end_turn(self, response: Any) -> str:
        """The turn's reply; its usage (``PromptResponse.usage``, where reported) added."""
        self._flush_thought()
        # the reply is what the agent said after its last tool call of the turn (what came
        # before is narration, or a warning such as codex-acp's about the model's metadata)
        segments = "".join(self._text).split(_CUT)
        reply = next((seg.strip() for seg in reversed(segments) if seg.strip()), "")
        self.replies.append(reply)
        usage = getattr(response, "usage", None)
        if usage is not None and not self._meta_usage:
            self.add_usage(usage.model_dump(by_alias=True, exclude_none=True) if hasattr(usage, "model_dump") else usage)
        return reply

    def add_usage(self, data: Any) -> None:
        """Add tokens in ACP's ``Usage`` shape (``inputTokens``, ``outputTokens``, ...)."""
        if not isinstance(data, dict):
            return
        n: dict[str, int] = {k: v if isinstance(v, int) and not isinstance(v, bool) and v >= 0 else 0 for k, v in data.items()}
        prompt, completion = n.get("inputTokens", 0), n.get("outputTokens", 0)
        self.usage = self.usage + Usage(
            prompt_tokens=prompt,
            completion_tokens=completion,
            total_tokens=n.get("totalTokens", 0) or prompt + completion,
            cache_read_tokens=n.get("cachedReadTokens", 0),
            cache_write_tokens=n.get("cachedWriteTokens", 0),
        )

    def now(self) -> float:
        """Seconds since the trial started."""
        return time.monotonic() - self.t0

    def note(self, text: str, role: str = "info") -> None:
        """A line of the trial log."""
        self.log.append(LogEvent(t=self.now(), role=role, text=text))

    # -- acp.Client: session updates -------------------------------------------

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        """One ``session/update`` notification."""
        d = update.model_dump(mode="json", by_alias=True, exclude_none=True) if hasattr(update, "model_dump") else update
        if not isinstance(d, dict):
            return
        kind = d.get("sessionUpdate")
        meta = d.get("_meta")
        if isinstance(meta, dict) and isinstance(meta.get("usage"), dict):
            self._meta_usage = True  # per model call (Qwen Code): PromptResponse.usage would count it twice
            self.add_usage(meta["usage"])
        if kind == "agent_message_chunk":
            self._flush_thought()
            text = _content_text(d.get("content"))
            if self._kept + len(text) <= MAX_REPLY_CHARS:
                self._text.append(text)
                self._kept += len(text)
            elif not self._cut:
                self._cut = True
                self.note(f"the agent's reply was cut at {MAX_REPLY_CHARS:,} characters")
        elif kind == "agent_thought_chunk" and sum(map(len, self._thought)) < MAX_REPLY_CHARS:
            self._thought.append(_content_text(d.get("content")))
        elif kind in ("tool_call", "tool_call_update"):
            self._flush_thought()
            if kind == "tool_call" and self._text and self._text[-1] != _CUT:
                self._text.append(_CUT)
            self._tool(d)
        elif kind == "plan":
            entries = [f"[{e.get('status', '?')}] {e.get('content', '')}" for e in d.get("entries") or [] if isinstance(e, dict)]
            self.note("plan: " + clip("; ".join(entries), ARGUMENT_CHARS))
        elif kind == "usage_update" and isinstance(d.get("cost"), dict):
            amount = d["cost"].get("amount")
            if isinstance(amount, (int, float)) and not isinstance(amount, bool) and d["cost"].get("currency", "USD") == "USD":
                self.cost = float(amount)  # the session's total so far

    def _flush_thought(self) -> None:
        if self._thought:
            text = "".join(self._thought).strip()
            self._thought = []
            if text:
                self.note("thought: " + clip(text, ARGUMENT_CHARS), role="assistant")

    def _tool(self, d: dict[str, Any]) -> None:
        tid = str(d.get("toolCallId") or "")
        step = self.steps.get(tid)
        if step is None:
            if len(self.steps) >= MAX_STEPS:
                self.dropped += 1
                return
            step = self.steps[tid] = _Step(id=tid, t0=self.now())
            self.order.append(tid)
        if isinstance(d.get("title"), str):
            step.title = d["title"]
        if isinstance(d.get("kind"), str):
            step.kind = d["kind"]
        if d.get("rawInput") not in (None, {}, "") or (step.raw_input is None and "rawInput" in d):
            step.raw_input = d["rawInput"]
        tool = _tool_name(d.get("_meta"))
        if tool:
            step.tool = tool
        for loc in d.get("locations") or []:
            if isinstance(loc, dict) and isinstance(loc.get("path"), str):
                step.locations.append(loc["path"])
        out = _tool_output(d)
        if out:
            step.output = out
        elif "rawOutput" in d and not step.output:
            step.output = clip(d["rawOutput"], RESULT_CHARS)
        if isinstance(d.get("status"), str):
            step.status = d["status"]
            if step.status in ("completed", "failed"):
                step.t1 = self.now()
        self._note_skill(step)

    def _note_skill(self, step: _Step) -> None:
        text = " ".join([step.title, clip(step.raw_input, 10_000), *step.locations])
        found = mentions(text, self.staged)
        names = [step.tool or "", step.title.split(" ", 1)[0] if step.title else ""]
        if any(n.strip("`:").lower() in SKILL_TOOLS for n in names if n):
            named = _skill_named(step.raw_input) or step.title.split(" ", 1)[-1].strip("`\"' ")
            if named in self.staged:
                found.append(named)
        # a tool whose title names a staged skill and whose output names its folder (Gemini
        # CLI's activate_skill: no input, the title is '"<name>": <description>')
        found += [n for n in mentions(step.output, self.staged) if n in step.title]
        for name in found:
            if name not in self.invoked:
                self.invoked.append(name)

    def trajectory(self) -> list[ToolCall]:
        """The tool calls and the recorded decisions, in order."""
        out: list[ToolCall] = []
        for entry in self.order:
            if isinstance(entry, ToolCall):
                out.append(entry)
                continue
            step = self.steps[entry]
            arguments = clip(step.raw_input, ARGUMENT_CHARS) if step.raw_input not in (None, {}, "") else step.title
            ok = True if step.status == "completed" else False if step.status == "failed" else None
            if step.output.startswith("terminal ") and self.terminals is not None:  # a terminal the client ran: its output
                ran = self.terminals.outputs.get(step.output.split(" ", 1)[1])
                step.output = clip(ran.strip(), RESULT_CHARS) if ran is not None else step.output
            latency = round(step.t1 - step.t0, 3) if step.t1 is not None else None
            out.append(ToolCall(name=step.tool or step.kind or "other", arguments=arguments, result=step.output, latency_s=latency, ok=ok))
        return out

    # -- acp.Client: permissions -----------------------------------------------

    async def request_permission(self, session_id: str, tool_call: Any, options: list[Any], **kwargs: Any) -> dict[str, Any]:
        """Answer by the policy: the first option of the decided kind (allow_* / reject_*)."""
        call = tool_call.model_dump(mode="json", by_alias=True, exclude_none=True) if hasattr(tool_call, "model_dump") else dict(tool_call or {})
        if str(call.get("toolCallId") or "") in self.steps:
            self._tool({k: v for k, v in call.items() if k != "status"})  # what it asks about: its input, often not sent before
        known = self.steps.get(str(call.get("toolCallId") or ""))
        kind = call.get("kind") or (known.kind if known else None)
        title = call.get("title") or (known.title if known else "") or ""
        allow = self.policy.decide(kind)
        opts = [o.model_dump(mode="json", by_alias=True) if hasattr(o, "model_dump") else dict(o) for o in options]
        wanted = ("allow_once", "allow_always") if allow else ("reject_once", "reject_always")
        chosen = next((o for w in wanted for o in opts if o.get("kind") == w), None)
        what = f"{kind or 'other'}: {title}".strip()
        if chosen is None:
            outcome: dict[str, Any] = {"outcome": "cancelled"}
            result = f"{'allowed' if allow else 'denied'} by policy, but the agent offered no such option: cancelled"
        else:
            outcome = {"outcome": "selected", "optionId": chosen.get("optionId")}
            result = f"{'allowed' if allow else 'denied'} ({chosen.get('kind')}: {chosen.get('name', '')})"
        self.order.append(ToolCall(name="permission", arguments=clip(what, ARGUMENT_CHARS), result=result, ok=allow and chosen is not None))
        self.note(f"permission {what}: {result}")
        return {"outcome": outcome}

    # -- acp.Client: files, confined to the workspace --------------------------

    def _inside(self, path: str, request: str) -> list[str]:
        """The path's components below the workspace; refused (and recorded) when it is not below it."""
        from agentsproof.core import safepath

        try:
            if not os.path.isabs(path):
                raise safepath.UnsafePath(f"{path!r} is not an absolute path")
            rel = os.path.relpath(os.path.normpath(path), self.workspace)
            return safepath.parts(rel)
        except (safepath.UnsafePath, ValueError) as exc:
            raise self._refuse(request, path, f"outside the workspace ({exc})") from None

    def _refuse(self, request: str, target: str, why: str) -> Exception:
        self.order.append(ToolCall(name=request, arguments=clip(target, ARGUMENT_CHARS), result=f"refused: {why}", ok=False))
        self.note(f"{request} {target}: refused: {why}")
        return refused(f"{request} refused: {why}")

    async def read_text_file(self, session_id: str, path: str, line: int | None = None, limit: int | None = None, **kwargs: Any) -> dict[str, Any]:
        """``fs/read_text_file`` of a file inside the workspace, opened without following a link."""
        rel = self._inside(path, "fs/read_text_file")
        try:  # the read, the decoding and the slicing on a thread: never on the loop
            size, text = await to_thread(_read_text, self.workspace, rel, line, limit)
        except OSError as exc:
            raise self._refuse("fs/read_text_file", path, exc.strerror or str(exc)) from None
        self.note(f"fs/read_text_file {path}: {size} bytes")
        return {"content": text}

    async def write_text_file(self, session_id: str, path: str, content: str, **kwargs: Any) -> dict[str, Any]:
        """``fs/write_text_file`` inside the workspace, through :func:`agentsproof.core.safepath.write_file`."""
        from agentsproof.core import safepath

        rel = self._inside(path, "fs/write_text_file")
        data = content.encode("utf-8")
        if len(data) > MAX_WRITE_BYTES:
            raise self._refuse("fs/write_text_file", path, f"over {MAX_WRITE_BYTES:,} bytes")
        try:
            await to_thread(safepath.write_file, self.workspace, "/".join(rel), data)
        except OSError as exc:
            raise self._refuse("fs/write_text_file", path, exc.strerror or str(exc)) from None
        self.note(f"fs/write_text_file {path}: {len(data)} bytes")
        return {}

    # -- acp.Client: terminals -------------------------------------------------

    def _terms(self) -> Terminals:
        if self.terminals is None:
            raise refused("this client offers no terminals")
        return self.terminals

    async def create_terminal(self, session_id: str, command: str, args: list[str] | None = None, env: Any = None, cwd: str | None = None,
                              output_byte_limit: int | None = None, **kwargs: Any) -> dict[str, Any]:  # fmt: skip
        """``terminal/create``: the command in the workspace (or a folder of it)."""
        where = cwd or str(self.workspace)
        real = await to_thread(os.path.realpath, where)
        if not os.path.isabs(where) or not Path(real).is_relative_to(self.workspace):
            raise self._refuse("terminal/create", f"{command} (cwd {where})", "its cwd is outside the workspace")
        pairs = [(e.name, e.value) if hasattr(e, "name") else (e.get("name"), e.get("value")) for e in env or []]
        tid = await self._terms().create(command, list(args or []), Path(real), dict(p for p in pairs if p[0]), output_byte_limit)
        self.note(f"terminal/create {tid}: {clip(' '.join([command, *(args or [])]), ARGUMENT_CHARS)}")
        return {"terminalId": tid}

    async def terminal_output(self, session_id: str, terminal_id: str, **kwargs: Any) -> dict[str, Any]:
        """``terminal/output``."""
        return await self._terms().output(terminal_id)

    async def wait_for_terminal_exit(self, session_id: str, terminal_id: str, **kwargs: Any) -> dict[str, Any]:
        """``terminal/wait_for_exit``."""
        return await self._terms().wait(terminal_id)

    async def kill_terminal(self, session_id: str, terminal_id: str, **kwargs: Any) -> dict[str, Any]:
        """``terminal/kill``."""
        await self._terms().kill(terminal_id)
        return {}

    async def release_terminal(self, session_id: str, terminal_id: str, **kwargs: Any) -> dict[str, Any]:
        """``terminal/release``."""
        await self._terms().release(terminal_id)
        return {}

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """An extension request: none is served."""
        from acp import RequestError

        raise RequestError.method_not_found(method)

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        """An extension notification: ignored."""
        return None


def _read_text(root: Path, rel: list[str], line: int | None, limit: int | None) -> tuple[int, str]:
    """(bytes read, the text of lines ``line`` .. ``line + limit``) of the file ``root/rel`` (:func:`_read_below`)."""
    data = _read_below(root, rel)
    text = data.decode("utf-8", "replace")
    if line is not None or limit is not None:
        lines = text.splitlines(keepends=True)
        start = max((line or 1) - 1, 0)
        text = "".join(lines[start : start + limit] if limit is not None else lines[start:])
    return len(data), text


def _read_below(root: Path, rel: list[str]) -> bytes:
    """The regular file ``root/rel``, no link followed on the way (OSError otherwise)."""
    import stat

    from agentsproof.core import safepath

    fd = safepath.open_dir(root, rel[:-1], create=False)
    try:
        ffd = os.open(rel[-1], os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=fd)
    finally:
        os.close(fd)
    with os.fdopen(ffd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(ffd).st_mode):
            raise safepath.UnsafePath(f"{'/'.join(rel)} is not a regular file")
        data = fh.read(MAX_READ_BYTES + 1)
    if len(data) > MAX_READ_BYTES:
        raise safepath.UnsafePath(f"{'/'.join(rel)} is over {MAX_READ_BYTES:,} bytes")
    return data


def _content_text(content: Any) -> str:
    if isinstance(content, dict) and content.get("type") == "text" and isinstance(content.get("text"), str):
        return str(content["text"])
    return ""


def _tool_output(d: dict[str, Any]) -> str:
    parts = []
    for item in d.get("content") or []:
        if not isinstance(item, dict):
            continue
        if item.get("type") == "content":
            parts.append(_content_text(item.get("content")))
        elif item.get("type") == "diff":
            parts.append(f"diff {item.get('path', '')}")
        elif item.get("type") == "terminal":
            parts.append(f"terminal {item.get('terminalId', '')}")
    return clip(" ".join(p for p in parts if p), RESULT_CHARS)


def _tool_name(meta: Any) -> str | None:
    """The agent's own name of a tool, where it says: ``_meta.toolName`` (Qwen Code),
    ``_meta.claudeCode.toolName`` (claude-code-acp)."""
    if not isinstance(meta, dict):
        return None
    inner = meta.get("claudeCode")
    name = inner.get("toolName") if isinstance(inner, dict) else meta.get("toolName")
    return name if isinstance(name, str) and name else None


def _skill_named(raw: Any) -> str | None:
    if isinstance(raw, dict):
        for key in ("skill", "name", "skill_name", "command"):
            if isinstance(raw.get(key), str):
                return str(raw[key]).strip()
    return None
