"""The JSONL trace a command target's agent may write, read into tool calls.

The format is in :func:`parse_trace`: one JSON object a line, each a tool call or a mark
that the skill was used; ``skill_used`` is None when no trace was written.
:func:`skills_in_trace` reads which skills the agent loaded, by name, in order. Files the agent
wrote (the trace, the answer file) are read with :func:`read_bounded`: regular files only,
never through a final symlink or from outside their folder, and bounded.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

from agentsproof.core.procgroup import MAX_OUTPUT_BYTES
from agentsproof.model.results import ToolCall

MAX_TRACE_BYTES = 5 * 1024 * 1024
MAX_TRACE_STEPS = 2_000
ARGUMENT_CHARS = 2_000
RESULT_CHARS = 300


def read_bounded(path: Path, inside: Path, limit: int = MAX_OUTPUT_BYTES) -> tuple[bytes, bool] | None:
    """(the first ``limit`` bytes, whether there was more) of a regular file, not followed
    through a final symlink and not outside ``inside``; None when there is no such file."""
    try:
        if not Path(os.path.realpath(path)).is_relative_to(os.path.realpath(inside)):
            return None
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        data = fh.read(limit + 1)
    return data[:limit], len(data) > limit


def _text(value: Any, cap: int) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        value = json.dumps(value, ensure_ascii=False, default=str)
    text: str = value
    return text if len(text) <= cap else text[: cap - 1] + "…"


def _number(value: Any) -> float | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0 and value == value and value != float("inf"):
        return float(value)
    return None


def _first(obj: dict[str, Any], *keys: str) -> Any:
    return next((obj[k] for k in keys if k in obj), None)


def parse_trace(path: Path, workspace: Path, mentions: list[str], skill_name: str) -> tuple[list[ToolCall], bool | None, list[str]]:
    """(tool calls, skill_used, notes) from a JSONL trace; skill_used None without a trace.

    One JSON object a line: ``tool``/``name``; ``arguments``/``args``/``input`` (text, or
    any JSON, kept as JSON text); ``result``/``output`` (summarised); ``latency_s`` or
    ``duration_ms``; ``ok`` or ``error``. ``{"type": "skill", "name": ...}`` (the name
    optional), ``{"skill": "<its name>"}`` and ``{"skill_used": true}`` mark the skill as
    used (``{"skill": "<another name>"}`` is another skill's load, not malformed), as does any step whose
    arguments or result mention the installed skill file. Malformed lines are skipped and
    counted in a note; at most :data:`MAX_TRACE_STEPS` steps and :data:`MAX_TRACE_BYTES`."""
    inside = workspace if path.is_relative_to(workspace) else path.parent
    data = read_bounded(path, inside, limit=MAX_TRACE_BYTES)
    if data is None:
        return [], None, []
    raw, cut = data
    steps: list[ToolCall] = []
    used = False
    bad = dropped = 0
    notes = [f"the trace was cut at {MAX_TRACE_BYTES:,} bytes"] if cut else []
    for line in raw.decode("utf-8", "replace").splitlines():
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except ValueError:
            obj = None
        if not isinstance(obj, dict):
            bad += 1
            continue
        if obj.get("skill_used") is True:
            used = True
        if obj.get("type") == "skill":
            used = used or obj.get("name") in (None, skill_name) or any(m and m in line for m in mentions)
            continue
        if "skill" in obj and _first(obj, "tool", "name") is None:  # {"skill": "<name>"}: a load (skills_in_trace)
            loaded = obj["skill"]
            used = used or (isinstance(loaded, str) and loaded.strip() == skill_name)
            continue
        name = _first(obj, "tool", "name")
        if not isinstance(name, str) or not name.strip():
            bad += 0 if "skill_used" in obj else 1
            continue
        args = _text(_first(obj, "arguments", "args", "input"), 100_000)
        result = _text(_first(obj, "result", "output"), 100_000)
        if any(m and (m in args or m in result) for m in mentions):
            used = True
        ok = obj["ok"] if isinstance(obj.get("ok"), bool) else (not obj["error"] if "error" in obj else None)
        if not result and isinstance(obj.get("error"), str):
            result = "error: " + obj["error"]
        latency = _number(obj.get("latency_s"))
        if latency is None and _number(obj.get("duration_ms")) is not None:
            latency = obj["duration_ms"] / 1000.0
        if len(steps) >= MAX_TRACE_STEPS:
            dropped += 1
            continue
        steps.append(
            ToolCall(
                name=name.strip()[:200], arguments=_text(args, ARGUMENT_CHARS), result=_text(" ".join(result.split()), RESULT_CHARS), latency_s=latency, ok=ok
            )
        )
    if bad:
        notes.append(f"trace: skipped {bad} malformed line{'s' if bad != 1 else ''}")
    if dropped:
        notes.append(f"trace: kept the first {MAX_TRACE_STEPS:,} steps, dropped {dropped:,}")
    return steps, used, notes


MAX_SKILL_NAME_CHARS = 200


def skills_in_trace(path: Path, workspace: Path) -> list[str] | None:
    """The names of the skills a trace says the agent loaded, in order; None without a trace.

    A load is a line ``{"skill": "<name>"}`` or ``{"type": "skill", "name": "<name>"}``
    (the same mark :func:`parse_trace` counts as using the skill). A name that is not text
    is skipped; the same name twice counts each time (callers deduplicate)."""
    inside = workspace if path.is_relative_to(workspace) else path.parent
    data = read_bounded(path, inside, limit=MAX_TRACE_BYTES)
    if data is None:
        return None
    names: list[str] = []
    for line in data[0].decode("utf-8", "replace").splitlines():
        try:
            obj = json.loads(line) if line.strip() else None
        except ValueError:
            continue
        if not isinstance(obj, dict):
            continue
        name = obj.get("skill") if isinstance(obj.get("skill"), str) else (obj.get("name") if obj.get("type") == "skill" else None)
        if isinstance(name, str) and name.strip():
            names.append(name.strip()[:MAX_SKILL_NAME_CHARS])
    return names
