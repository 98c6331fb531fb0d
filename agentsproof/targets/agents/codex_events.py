"""``codex exec --json`` events read into a trial: answer, trajectory, usage, skills.

The stream is one JSON object a line: ``thread.started`` (the ``thread_id``, which
``codex exec resume`` takes), ``turn.started``, ``item.started`` / ``item.updated`` /
``item.completed`` (an ``item`` with an ``id`` and a ``type``: ``agent_message``,
``reasoning``, ``command_execution``, ``file_change``, ``mcp_tool_call``, ``web_search``,
``todo_list``, ``error``), ``turn.completed`` (with ``usage``), ``turn.failed`` and
``error``. Steps are the completed tool-like items, in order; the answer is the last
``agent_message``. A staged skill counts as loaded when a command or a changed file names
a file in its folder (Codex reads a skill's SKILL.md with a shell command).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from agentsproof.model.results import ToolCall, Usage
from agentsproof.targets.agents.kit import EventStream, clip, mentions

ARGUMENT_CHARS = 2_000
RESULT_CHARS = 300
MAX_STEPS = 2_000
TOOL_ITEMS = ("command_execution", "file_change", "mcp_tool_call", "web_search")


@dataclass
class CodexEvents(EventStream):
    """Everything one ``codex exec --json`` run reported."""

    items: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Completed (or last seen) items by id, in first-seen order."""
    messages: list[str] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    thread_id: str | None = None
    failure: str | None = None
    warnings: list[str] = field(default_factory=list)

    def take(self, event: dict[str, Any]) -> None:
        """Read one event: the thread's start, an item (tool call or message), a turn's usage, or a failure."""
        kind = event.get("type")
        if kind == "thread.started" and isinstance(event.get("thread_id"), str):
            self.thread_id = event["thread_id"]
        elif kind in ("item.started", "item.updated", "item.completed"):
            item = event.get("item")
            if isinstance(item, dict) and isinstance(item.get("id"), str):
                self._item(item, done=kind == "item.completed")
        elif kind == "turn.completed":
            self._usage(event.get("usage"))
        elif kind == "turn.failed":
            error = event.get("error")
            message = error.get("message") if isinstance(error, dict) else None
            self.failure = " ".join(str(message or "the turn failed").split())[:300]
        elif kind == "error":
            self.failure = " ".join(str(event.get("message") or "error").split())[:300]

    def _item(self, item: dict[str, Any], *, done: bool) -> None:
        kind = item.get("type")
        if kind == "agent_message" and done and isinstance(item.get("text"), str):
            self.messages.append(item["text"])
        elif kind == "error" and done:
            self.warnings.append(" ".join(str(item.get("message") or "").split())[:300])
        elif kind in TOOL_ITEMS:
            if item["id"] not in self.items and len(self.items) >= MAX_STEPS:
                return
            self.items[item["id"]] = item
            if done:
                for name in mentions(clip(_arguments(item), 100_000), self.staged):
                    if name not in self.invoked:
                        self.invoked.append(name)

    def _usage(self, usage: Any) -> None:
        if not isinstance(usage, dict):
            return
        prompt, cached, out = (_int(usage.get(k)) for k in ("input_tokens", "cached_input_tokens", "output_tokens"))
        self.usage = self.usage + Usage(prompt_tokens=prompt, completion_tokens=out, total_tokens=prompt + out, cache_read_tokens=cached)

    def trajectory(self) -> list[ToolCall]:
        """The tool calls in the order they were first seen."""
        return [_step(item) for item in self.items.values()]

    def answer(self) -> str | None:
        """The last agent message; None when there was none."""
        return self.messages[-1] if self.messages else None


def _arguments(item: dict[str, Any]) -> Any:
    kind = item.get("type")
    if kind == "command_execution":
        return item.get("command")
    if kind == "file_change":
        return item.get("changes")
    if kind == "mcp_tool_call":
        return item.get("arguments")
    return item.get("query")


def _step(item: dict[str, Any]) -> ToolCall:
    kind = item.get("type")
    status = item.get("status")
    ok: bool | None = None if status in (None, "in_progress") else status == "completed"
    if kind == "command_execution":
        name, result = "shell", item.get("aggregated_output")
        if isinstance(item.get("exit_code"), int):
            ok = item["exit_code"] == 0
    elif kind == "file_change":
        name, result = "apply_patch", ", ".join(f"{c.get('kind')} {c.get('path')}" for c in item.get("changes") or [] if isinstance(c, dict))
    elif kind == "mcp_tool_call":
        name = f"{item.get('server')}.{item.get('tool')}"
        result = item.get("error") or item.get("result")
    else:
        name, result = str(kind), ""
    return ToolCall(
        name=name[:200], arguments=clip(_arguments(item), ARGUMENT_CHARS), result=clip(" ".join(clip(result, 100_000).split()), RESULT_CHARS), ok=ok
    )


def _int(value: Any) -> int:
    return int(value) if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0
