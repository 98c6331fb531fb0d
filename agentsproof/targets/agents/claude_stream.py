"""Claude Code's ``--output-format stream-json`` read into a trial: answer, trajectory,
usage, cost and the skills it loaded.

The stream is one JSON object a line: ``system``/``init`` (the tools, skills and agents
the session has), ``assistant`` messages (``text`` and ``tool_use`` blocks), ``user``
messages (``tool_result`` blocks, each naming its ``tool_use_id``; a synthetic one carries
a loaded skill's text) and one final ``result`` (the answer, ``is_error``, ``usage``,
``total_cost_usd``, ``session_id``). Lines of other types are ignored.

A skill counts as loaded when a ``Skill`` tool call names it (``plugin:name`` too) and
did not fail, or when a tool call's input names a file in its staged folder (e.g. a
``Read`` of its SKILL.md or a script run from it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from agentsproof.model.results import ToolCall, Usage
from agentsproof.targets.agents.kit import EventStream, clip, mentions

ARGUMENT_CHARS = 2_000
RESULT_CHARS = 300
MAX_STEPS = 2_000
SKILL_TOOL = "Skill"


@dataclass
class _Step:
    name: str
    arguments: Any
    started: float | None
    result: str = ""
    ok: bool | None = None
    latency_s: float | None = None


@dataclass
class ClaudeStream(EventStream):
    """Everything one ``claude -p`` run reported."""

    steps: dict[str, _Step] = field(default_factory=dict)
    texts: list[str] = field(default_factory=list)
    result: dict[str, Any] | None = None
    init: dict[str, Any] | None = None
    dropped: int = 0

    def take(self, event: dict[str, Any]) -> None:
        """Read one event: the init, an assistant or user message (texts and tool steps), or the result."""
        kind = event.get("type")
        if kind == "system" and event.get("subtype") == "init":
            self.init = event
        elif kind == "assistant":
            self._assistant(event)
        elif kind == "user":
            self._user(event)
        elif kind == "result":
            self.result = event

    def _assistant(self, event: dict[str, Any]) -> None:
        if event.get("parent_tool_use_id"):
            return  # a sub-agent's own turn: its Task call is the step
        when = _time(event.get("timestamp"))
        for block in _blocks(event):
            if block.get("type") == "text" and isinstance(block.get("text"), str):
                self.texts.append(block["text"])
            elif block.get("type") == "tool_use" and isinstance(block.get("id"), str):
                if len(self.steps) >= MAX_STEPS:
                    self.dropped += 1
                    continue
                name = str(block.get("name") or "?")[:200]
                self.steps[block["id"]] = _Step(name=name, arguments=block.get("input"), started=when)
                self._note_skill(name, block.get("input"))

    def _user(self, event: dict[str, Any]) -> None:
        when = _time(event.get("timestamp"))
        for block in _blocks(event):
            if block.get("type") != "tool_result":
                continue
            step = self.steps.get(str(block.get("tool_use_id")))
            if step is None:
                continue
            content = block.get("content")
            if isinstance(content, list):
                content = " ".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
            step.result = clip(" ".join(str(content or "").split()), RESULT_CHARS)
            step.ok = not bool(block.get("is_error"))
            if when is not None and step.started is not None:
                step.latency_s = max(0.0, when - step.started)
            if step.name == SKILL_TOOL and not step.ok:
                name = _skill_name(step.arguments)
                if name in self.invoked:  # it was refused: not loaded
                    self.invoked.remove(name)

    def _note_skill(self, tool: str, arguments: Any) -> None:
        if tool == SKILL_TOOL:
            name = _skill_name(arguments)
            if name:
                self.invoked.append(name)
            return
        for name in mentions(clip(arguments, 100_000), self.staged):
            if name not in self.invoked:
                self.invoked.append(name)

    # -- the record ------------------------------------------------------------

    def trajectory(self) -> list[ToolCall]:
        """The tool calls in the order they were first seen, arguments clipped."""
        return [
            ToolCall(name=s.name, arguments=clip(s.arguments, ARGUMENT_CHARS), result=s.result, latency_s=s.latency_s, ok=s.ok) for s in self.steps.values()
        ]

    def answer(self) -> str | None:
        """The result's text, else the last text the assistant wrote; None when it wrote none."""
        if self.result is not None and isinstance(self.result.get("result"), str):
            return str(self.result["result"])
        return self.texts[-1] if self.texts else None

    def error(self) -> tuple[str, int | None] | None:
        """(why the session failed, the HTTP status it names) per its ``result``; None: it did not."""
        r = self.result
        if r is None:
            return "Claude Code ended without a result event", None
        subtype = r.get("subtype")
        if r.get("is_error") or subtype not in (None, "success"):
            text = r.get("result") if isinstance(r.get("result"), str) else ""
            raw_errors = r.get("errors")
            errors: list[Any] = raw_errors if isinstance(raw_errors, list) else []
            detail = " ".join(str(text or " ".join(map(str, errors)) or subtype or "error").split())[:300]
            status = re.match(r"API Error: (\d{3})\b", detail)
            what = f" ({subtype})" if isinstance(subtype, str) and subtype != "success" else ""
            return f"Claude Code reported an error{what}: {detail}", int(status.group(1)) if status else None
        return None

    def usage(self) -> Usage:
        """Tokens per the result (cache reads and writes counted in the prompt tokens); zero without one."""
        u = (self.result or {}).get("usage")
        if not isinstance(u, dict):
            return Usage()
        plain, read, write = (_int(u.get(k)) for k in ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"))
        out = _int(u.get("output_tokens"))
        prompt = plain + read + write
        return Usage(prompt_tokens=prompt, completion_tokens=out, total_tokens=prompt + out, cache_read_tokens=read, cache_write_tokens=write)

    def cost(self) -> float | None:
        """The session's cost in USD as Claude Code reports it; None when it does not."""
        value = (self.result or {}).get("total_cost_usd")
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0:
            return float(value)
        return None

    def session_id(self) -> str | None:
        """The session's id (to resume it for a follow-up turn); None when the stream names none."""
        for source in (self.result, self.init):
            if source and isinstance(source.get("session_id"), str):
                return str(source["session_id"])
        return None


def _blocks(event: dict[str, Any]) -> list[dict[str, Any]]:
    message = event.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def _skill_name(arguments: Any) -> str:
    name = arguments.get("skill") if isinstance(arguments, dict) else None
    if not isinstance(name, str):
        return ""
    return name.strip().lstrip("/").rsplit(":", 1)[-1]


def _time(value: Any) -> float | None:
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def _int(value: Any) -> int:
    return int(value) if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0
