"""What a trial adds to agentv's script payload (``stdin: json``), as agentv fills it.

agentv gives a script grader, on stdin, snake_case JSON: the case's ``criteria``,
``expected_output``, ``input``, ``input_files`` and ``metadata`` (the agentv format puts them
in the grader's ``payload`` when it reads the file), and what the trial produced: ``output``
(the answer), ``messages`` (the assistant's messages, its tool calls in them), ``trace`` and
``trace_summary`` (``event_count``, ``tool_calls`` per name, ``error_count``,
``tool_durations`` in ms per name, ``llm_call_count``, and the ``events``), ``token_usage``
(``input``, ``output``, ``cached``), ``cost_usd``, ``duration_ms``, ``workspace_path`` and
``file_changes`` (a diff of what the agent created, changed and deleted). What the trial
did not record is left out (agentv sends ``null``; its SDK reads both as "not measured",
and a grader that checks ``costUsd !== undefined`` then skips the check rather than fail on a
value it was never given).
"""

from __future__ import annotations

import json
from typing import Any

from agentsproof.grading.context import TrialContext

MAX_DIFF_CHARS = 200_000
"""``file_changes`` is cut here (its files' text, as recorded)."""


def _arguments(text: str) -> Any:
    try:
        return json.loads(text) if text.strip().startswith(("{", "[")) else text
    except ValueError:
        return text


def _trace(ctx: TrialContext, answer: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    counts: dict[str, int] = {}
    durations: dict[str, list[float]] = {}
    events: list[dict[str, Any]] = []
    calls: list[dict[str, Any]] = []
    for i, step in enumerate(ctx.trajectory):
        counts[step.name] = counts.get(step.name, 0) + 1
        ms = None if step.latency_s is None else round(step.latency_s * 1000, 3)
        if ms is not None:
            durations.setdefault(step.name, []).append(ms)
        status = "unknown" if step.ok is None else ("ok" if step.ok else "error")
        tool = {"name": step.name, "call_id": f"call-{i + 1}", "input": _arguments(step.arguments), "output": step.result, "status": status}
        event: dict[str, Any] = {"event_id": f"tool-{i + 1}", "ordinal": i, "type": "tool_call", "tool": tool}
        if ms is not None:
            event["duration_ms"] = ms
        events.append(event)
        call: dict[str, Any] = {"tool": step.name, "input": tool["input"], "output": step.result, "id": tool["call_id"]}
        if ms is not None:
            call["duration_ms"] = ms
        calls.append(call)
    message: dict[str, Any] = {"role": "assistant", "content": answer}
    if calls:
        message["tool_calls"] = calls
    messages = [message]
    events.append({"event_id": "final", "ordinal": len(events), "type": "final_response", "message": {"role": "assistant", "content": answer}})
    summary: dict[str, Any] = {
        "event_count": len(ctx.trajectory),
        "tool_calls": counts,
        "error_count": sum(1 for s in ctx.trajectory if s.ok is False),
        "tool_durations": durations,
        "llm_call_count": ctx.llm_calls if ctx.llm_calls is not None else (1 if not ctx.trajectory else None),
    }
    if summary["llm_call_count"] is None:
        del summary["llm_call_count"]
    trace = {**summary, "messages": messages, "events": events}
    return trace, messages


def _file_changes(ctx: TrialContext) -> str | None:
    if ctx.workspace is None or not ctx.files:
        return None
    parts: list[str] = []
    for rec in ctx.files:
        head = f"diff --git a/{rec.path} b/{rec.path}\n"
        if rec.status == "deleted":
            parts.append(head + f"deleted file\n--- a/{rec.path}\n+++ /dev/null\n")
            continue
        text = None
        try:
            text = (ctx.workspace / rec.path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            text = rec.preview
        body = "" if text is None else "".join(f"+{line}\n" for line in text.splitlines())
        old = "/dev/null" if rec.status == "created" else f"a/{rec.path}"
        parts.append(head + ("new file\n" if rec.status == "created" else "") + f"--- {old}\n+++ b/{rec.path}\n" + body)
    return "".join(parts)[:MAX_DIFF_CHARS]


def trial_fields(ctx: TrialContext, answer: str) -> dict[str, Any]:
    """The payload's keys that come from the trial (snake_case, agentv's wire form)."""
    trace, messages = _trace(ctx, answer)
    usage = None
    if ctx.usage is not None:
        usage = {"input": ctx.usage.prompt_tokens, "output": ctx.usage.completion_tokens, "cached": ctx.usage.cache_read_tokens}
        trace["token_usage"] = usage
    duration = None if ctx.latency_s is None else round(ctx.latency_s * 1000, 3)
    if duration is not None:
        trace["duration_ms"] = duration
    if ctx.cost_usd is not None:
        trace["cost_usd"] = ctx.cost_usd
    summary = {k: trace[k] for k in ("event_count", "tool_calls", "error_count", "tool_durations", "llm_call_count") if k in trace}
    fields = {
        "messages": messages,
        "trace": trace,
        "trace_summary": summary,
        "token_usage": usage,
        "cost_usd": ctx.cost_usd,
        "duration_ms": duration,
        "workspace_path": None if ctx.workspace is None else str(ctx.workspace),
        "file_changes": _file_changes(ctx),
    }
    return {k: v for k, v in fields.items() if v is not None}


def with_score(obj: dict[str, Any]) -> dict[str, Any] | None:
    """A script's JSON verdict with its ``score``: as given, or as agentv's protocol derives it when
    it is left out (the mean of its ``checks`` (or older ``assertions``), each its ``score`` or 1
    when it passed, else 1 or 0 from ``pass``); None when it gives none of them (not a verdict)."""
    if "score" in obj:
        return obj
    checks = obj.get("checks", obj.get("assertions"))
    if isinstance(checks, list) and checks and all(isinstance(c, dict) for c in checks):
        marks = []
        for c in checks:
            own = c.get("score")
            if isinstance(own, (int, float)) and not isinstance(own, bool):
                marks.append(min(max(float(own), 0.0), 1.0))
            else:
                marks.append(1.0 if c.get("pass", c.get("passed")) is True else 0.0)
        return {**obj, "score": sum(marks) / len(marks)}
    if isinstance(obj.get("pass"), bool):
        return {**obj, "score": 1.0 if obj["pass"] else 0.0}
    return None
