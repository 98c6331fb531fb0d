"""What one Copilot session says, turned into our types.

A Copilot session takes a system message and one prompt, then reports everything as
events: assistant messages, ``assistant.usage`` per model call, tool executions, errors and
finally ``session.idle``. :class:`EventCollector` gathers them for one call;
:class:`AgentEventCollector` adds what an agent trial reports (each tool call's result,
latency and outcome; the skills Copilot loaded and invoked; the agent it selected);
:func:`error_from_session_error` classifies a ``session.error``; :func:`render_prompt`
turns a chat-style request into (system message, prompt).
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from typing import Any

from agentsproof.core.scrub import clip
from agentsproof.llm.base import LLMError
from agentsproof.llm.openai_wire import RETRYABLE_STATUS
from agentsproof.llm.replies import MAX_NAME_CHARS, MAX_TOOL_CALLS, cost_value, token_count
from agentsproof.model.results import ToolCall, Usage

MAX_ARGUMENT_CHARS = 2_000
"""A trajectory step keeps this much of a tool call's arguments."""
MAX_RESULT_CHARS = 300
"""... and this much of what the tool returned."""
DEFAULT_SYSTEM = "You are a helpful assistant."
_ROLE_NAMES = {"user": "User", "assistant": "Assistant", "tool": "Tool"}


def render_prompt(messages: list[dict[str, str]], json_schema: dict[str, Any] | None) -> tuple[str, str]:
    """(system message, prompt). Earlier turns, when there are any, become a transcript."""
    system_parts = [m.get("content") or "" for m in messages if m.get("role") in ("system", "developer")]
    turns = [m for m in messages if m.get("role") not in ("system", "developer")]
    system = "\n\n".join(p for p in system_parts if p.strip()) or DEFAULT_SYSTEM
    if json_schema is not None:
        system += "\n\nReply with only a JSON object, no prose and no code fences, that follows this JSON schema: " + json.dumps(json_schema)
    if not turns:
        return system, ""
    if len(turns) == 1:
        return system, turns[0].get("content") or ""
    history = "\n\n".join(f"[{_ROLE_NAMES.get(m.get('role', ''), m.get('role', ''))}]\n{m.get('content') or ''}" for m in turns[:-1])
    last = turns[-1].get("content") or ""
    return system, f"The conversation so far:\n\n{history}\n\n[User]\n{last}"


class EventCollector:
    """Collects the events of one session; ``done`` is set at idle or on a session error."""

    def __init__(self) -> None:
        self.done = asyncio.Event()
        self.error: Any = None
        self.usage = Usage()
        self.cost: float | None = None
        self.model: str | None = None
        self.tool_calls: list[dict[str, Any]] = []
        self._texts: list[str] = []
        self._saw_message = False
        self._tool_ids: set[str] = set()
        self.odd_events = 0
        """Events of an unexpected shape, skipped (their problem is in ``odd_event``)."""
        self.odd_event = ""

    def on_event(self, event: Any) -> None:
        """Take one event. Never raises: an event of an odd shape is counted and skipped,
        and an idle or error event still ends the wait."""
        try:
            self._take(event)
        except Exception as exc:  # noqa: BLE001 - the SDK's callback must not fail
            self.odd_events += 1
            self.odd_event = f"{type(exc).__name__}: {' '.join(str(exc).split())[:200]}"
            kind = type(getattr(event, "data", None)).__name__
            if kind in ("SessionIdleData", "SessionErrorData"):
                self.done.set()

    def _take(self, event: Any) -> None:
        from copilot.session_events import (
            AssistantMessageData,
            AssistantUsageData,
            SessionErrorData,
            SessionIdleData,
            ToolExecutionStartData,
        )

        data = event.data
        top_level = not getattr(event, "agent_id", None)
        if isinstance(data, AssistantUsageData):
            # Sub-agents' model calls cost tokens too: count every usage event.
            prompt, completion = token_count(data.input_tokens), token_count(data.output_tokens)
            self.usage = self.usage + Usage(prompt_tokens=prompt, completion_tokens=completion, total_tokens=prompt + completion)
            cost = cost_value(getattr(data, "cost", None))
            if cost and not getattr(data, "is_byok", False):  # BYOK calls carry no Copilot price
                self.cost = (self.cost or 0.0) + cost
            self.model = self.model or _name(getattr(data, "model", None))
        elif isinstance(data, ToolExecutionStartData):
            self._add_tool(data.tool_call_id, data.tool_name, data.arguments, executed=True)
        elif isinstance(data, AssistantMessageData):
            requests = data.tool_requests if isinstance(data.tool_requests, list) else []
            for req in requests[:MAX_TOOL_CALLS]:
                self._add_tool(getattr(req, "tool_call_id", None), getattr(req, "name", ""), getattr(req, "arguments", None), executed=False)
            if top_level:
                self._saw_message = True
                content = data.content if isinstance(data.content, str) else ""
                if content.strip():
                    self._texts.append(content)
                self.model = _name(getattr(data, "model", None)) or self.model
        elif isinstance(data, SessionErrorData) and top_level:
            self.error = data
            self.done.set()
        elif isinstance(data, SessionIdleData) and top_level:
            self.done.set()

    def _add_tool(self, call_id: Any, name: Any, arguments: Any, *, executed: bool) -> None:
        call_id, name = _name(call_id), _name(name)
        if len(self.tool_calls) >= MAX_TOOL_CALLS or not (call_id or name):
            return  # a tool call without name or id says nothing
        if call_id and call_id in self._tool_ids:
            for call in self.tool_calls:
                if call.get("id") == call_id and executed:
                    call["executed"] = True
            return
        if call_id:
            self._tool_ids.add(call_id)
        if not isinstance(arguments, str):
            try:
                arguments = json.dumps(arguments, default=str) if arguments is not None else ""
            except (TypeError, ValueError, RecursionError):  # an odd shape: keep its type only
                arguments = f"<{type(arguments).__name__}>"
        self.tool_calls.append({"id": call_id or "", "name": name or "", "arguments": arguments, "executed": executed})

    def final_text(self) -> str | None:
        """The last non-empty assistant message; "" if only empty ones came; None if none."""
        if self._texts:
            return self._texts[-1]
        return "" if self._saw_message else None


class AgentEventCollector(EventCollector):
    """:class:`EventCollector` plus what an agent trial reports.

    ``trajectory()`` has one step per tool execution, in the order they started (sub-agents'
    tools included), with a short result, the latency between the start and complete events
    and whether the tool succeeded (a call denied by the permission handler is a failed step).
    ``skills_loaded`` (paths of the skills the session offers; None until Copilot says),
    ``skills_invoked`` ((name, path) per ``skill.invoked``) and ``agents_selected`` tell
    whether a skill or custom agent was in play."""

    def __init__(self) -> None:
        super().__init__()
        self._steps: dict[str, dict[str, Any]] = {}
        self.skills_loaded: list[str] | None = None
        self.skills_invoked: list[tuple[str, str]] = []
        self.agents_selected: list[str] = []

    def _take(self, event: Any) -> None:
        from copilot.session_events import (
            SessionSkillsLoadedData,
            SkillInvokedData,
            SubagentSelectedData,
            ToolExecutionCompleteData,
            ToolExecutionStartData,
        )

        super()._take(event)
        data = event.data
        if isinstance(data, ToolExecutionStartData):
            self._step(data.tool_call_id, data.tool_name, data.arguments)
        elif isinstance(data, ToolExecutionCompleteData):
            step = self._step(data.tool_call_id, None, None)
            if step is None:
                return
            step["ok"] = data.success is True
            step["end"] = time.perf_counter()
            error = getattr(data.error, "message", None)
            content = getattr(data.result, "content", None)
            text = error if isinstance(error, str) and not step["ok"] else content
            step["result"] = " ".join(text.split())[:MAX_RESULT_CHARS] if isinstance(text, str) else ""
        elif isinstance(data, SkillInvokedData):
            self.skills_invoked.append((_name(data.name), data.path if isinstance(data.path, str) else ""))
        elif isinstance(data, SubagentSelectedData):
            self.agents_selected.append(_name(data.agent_name))
        elif isinstance(data, SessionSkillsLoadedData):
            skills = data.skills if isinstance(data.skills, list) else []
            self.skills_loaded = [path for s in skills if isinstance(path := getattr(s, "path", None), str)]

    def _step(self, call_id: Any, name: Any, arguments: Any) -> dict[str, Any] | None:
        call_id = _name(call_id)
        if not call_id:
            return None
        step = self._steps.get(call_id)
        if step is None:
            if len(self._steps) >= MAX_TOOL_CALLS:
                return None
            known = next((c for c in self.tool_calls if c.get("id") == call_id), {})
            step = self._steps[call_id] = {
                "name": _name(name) or known.get("name", ""),
                "arguments": _text(arguments) or known.get("arguments", ""),
                "start": time.perf_counter(),
                "end": None,
                "ok": None,
                "result": "",
            }
        return step

    def trajectory(self) -> list[ToolCall]:
        """The agent's tool calls in the order they started, arguments bounded, with their result and latency in seconds."""
        return [
            ToolCall(
                name=step["name"],
                arguments=step["arguments"][:MAX_ARGUMENT_CHARS],
                result=step["result"],
                latency_s=round(step["end"] - step["start"], 6) if step["end"] is not None else None,
                ok=step["ok"],
            )
            for step in self._steps.values()
        ]


def _text(arguments: Any) -> str:
    if arguments is None:
        return ""
    if isinstance(arguments, str):
        return arguments
    try:
        return json.dumps(arguments, ensure_ascii=False, default=str)
    except (TypeError, ValueError, RecursionError):
        return f"<{type(arguments).__name__}>"


def _name(value: Any) -> str:
    return value[:MAX_NAME_CHARS] if isinstance(value, str) else ""


def error_from_session_error(data: Any, *, auth_hint: str) -> LLMError:
    """Classify a ``session.error``. The CLI retries model calls itself, so an error it
    reports after retrying is not retried again. Fields of odd types are ignored."""
    raw_message = getattr(data, "message", "")
    message = " ".join((raw_message if isinstance(raw_message, str) else "")[:2000].split()) or "session error"
    status = getattr(data, "status_code", None)
    if isinstance(status, bool) or not isinstance(status, int) or not 100 <= status <= 599:
        status = None
    error_type = _name(getattr(data, "error_type", "")).lower()
    retried = re.search(r"retried \d+ times", message) is not None
    if error_type == "authentication" or status in (401, 403):
        # Drop the CLI's own advice (it names the CLI's env vars, not ours).
        message = message.split(" Check your ", 1)[0]
        where = f"HTTP {status}: " if status else ""
        return LLMError(f"Copilot: {where}{clip(message, 300)} ({auth_hint})", status=status, kind="auth")
    lowered = message.lower()
    if status == 429 or error_type == "rate_limit":
        kind = "rate_limit"
    elif "could not connect" in lowered or "connection" in lowered and status is None:
        kind = "connection"
    elif status is not None:
        kind = "http"
    else:
        kind = error_type or "error"
    retryable = (status in RETRYABLE_STATUS or kind in ("rate_limit", "connection")) and not retried
    where = f"HTTP {status}: " if status else ""
    return LLMError(f"Copilot: {where}{clip(message, 400)}", retryable=retryable, status=status, kind=kind)
