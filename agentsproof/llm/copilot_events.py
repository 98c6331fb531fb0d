"""What one Copilot session says, turned into our types.

A Copilot session takes a system message and one prompt, then reports everything as
events: assistant messages, ``assistant.usage`` per model call, tool executions, errors and
finally ``session.idle``. :class:`EventCollector` gathers them for one call;
:func:`error_from_session_error` classifies a ``session.error``; :func:`render_prompt`
turns a chat-style request into (system message, prompt).
"""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

from agentsproof.llm.base import LLMError
from agentsproof.schemas.artifacts import Usage

RETRYABLE_STATUS = {408, 409, 425, 429, 500, 502, 503, 504}
DEFAULT_SYSTEM = "You are a helpful assistant."
_ROLE_NAMES = {"user": "User", "assistant": "Assistant", "tool": "Tool"}


def render_prompt(messages: list[dict[str, str]], json_schema: dict[str, Any] | None) -> tuple[str, str]:
    """(system message, prompt). Earlier turns, when there are any, become a transcript."""
    system_parts = [m.get("content") or "" for m in messages if m.get("role") in ("system", "developer")]
    turns = [m for m in messages if m.get("role") not in ("system", "developer")]
    system = "\n\n".join(p for p in system_parts if p.strip()) or DEFAULT_SYSTEM
    if json_schema is not None:
        system += (
            "\n\nReply with only a JSON object, no prose and no code fences, that follows this JSON schema: "
            + json.dumps(json_schema)
        )
    if not turns:
        return system, ""
    if len(turns) == 1:
        return system, turns[0].get("content") or ""
    history = "\n\n".join(
        f"[{_ROLE_NAMES.get(m.get('role', ''), m.get('role', ''))}]\n{m.get('content') or ''}" for m in turns[:-1]
    )
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

    def on_event(self, event: Any) -> None:
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
            prompt, completion = data.input_tokens or 0, data.output_tokens or 0
            self.usage = self.usage + Usage(
                prompt_tokens=prompt, completion_tokens=completion, total_tokens=prompt + completion
            )
            if data.cost and not data.is_byok:  # BYOK calls carry no Copilot price
                self.cost = (self.cost or 0.0) + float(data.cost)
            self.model = self.model or data.model
        elif isinstance(data, ToolExecutionStartData):
            self._add_tool(data.tool_call_id, data.tool_name, data.arguments, executed=True)
        elif isinstance(data, AssistantMessageData):
            for req in data.tool_requests or []:
                self._add_tool(getattr(req, "tool_call_id", None), getattr(req, "name", ""), getattr(req, "arguments", None), executed=False)
            if top_level:
                self._saw_message = True
                if data.content and data.content.strip():
                    self._texts.append(data.content)
                self.model = data.model or self.model
        elif isinstance(data, SessionErrorData) and top_level:
            self.error = data
            self.done.set()
        elif isinstance(data, SessionIdleData) and top_level:
            self.done.set()

    def _add_tool(self, call_id: str | None, name: str, arguments: Any, *, executed: bool) -> None:
        if call_id and call_id in self._tool_ids:
            for call in self.tool_calls:
                if call.get("id") == call_id and executed:
                    call["executed"] = True
            return
        if call_id:
            self._tool_ids.add(call_id)
        if not isinstance(arguments, str):
            arguments = json.dumps(arguments) if arguments is not None else ""
        self.tool_calls.append({"id": call_id or "", "name": name or "", "arguments": arguments, "executed": executed})

    def final_text(self) -> str | None:
        """The last non-empty assistant message; "" if only empty ones came; None if none."""
        if self._texts:
            return self._texts[-1]
        return "" if self._saw_message else None


def error_from_session_error(data: Any, *, auth_hint: str) -> LLMError:
    """Classify a ``session.error``. The CLI retries model calls itself, so an error it
    reports after retrying is not retried again."""
    message = " ".join(str(getattr(data, "message", "") or "").split())
    status = getattr(data, "status_code", None)
    error_type = str(getattr(data, "error_type", "") or "").lower()
    retried = re.search(r"retried \d+ times", message) is not None
    if error_type == "authentication" or status in (401, 403):
        # Drop the CLI's own advice (it names the CLI's env vars, not ours).
        message = message.split(" Check your ", 1)[0]
        where = f"HTTP {status}: " if status else ""
        return LLMError(f"Copilot: {where}{message[:300]} ({auth_hint})", status=status, kind="auth")
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
    return LLMError(f"Copilot: {where}{message[:400]}", retryable=retryable, status=status, kind=kind)
