"""What the http target sends and reads: dotted paths into JSON bodies
(``choices.0.message.content``, with a reason when a path is not there), tool calls and usage
in the shapes agents reply with."""

from __future__ import annotations

import json
from typing import Any

from agentsproof.llm.replies import MAX_NAME_CHARS, _kind
from agentsproof.model.results import ToolCall

MAX_KEYS_SHOWN = 8
"""Keys of an object listed when a path is not found in it."""
MISSING = object()
"""What :func:`lookup` returns for a path that is not there."""
MAX_TEXT_CHARS = 2_000
"""Longest tool-call arguments or result kept in the trajectory."""


def overlap(a: str, b: str) -> bool:
    """Whether one dotted path is the other or lies inside it."""
    return a == b or a.startswith(b + ".") or b.startswith(a + ".")


def _index(container: list[Any], seg: str) -> int | None:
    return int(seg) if seg.isdigit() and len(seg) < 10 and int(seg) < len(container) else None


def put(body: dict[str, Any], path: str, value: Any) -> None:
    """Set ``value`` at dotted ``path``, creating objects on the way; ValueError when a
    value already in the body (from ``extra``) is in the way."""
    cur: Any = body
    segs = path.split(".")
    for depth, seg in enumerate(segs):
        last = depth == len(segs) - 1
        where = ".".join(segs[:depth]) or "the body"
        if isinstance(cur, dict):
            if last:
                cur[seg] = value
                return
            cur = cur.setdefault(seg, {})
        elif isinstance(cur, list) and (i := _index(cur, seg)) is not None:
            if last:
                cur[i] = value
                return
            cur = cur[i]
        else:
            raise ValueError(f"{where} is {_kind(cur)} in extra")
    # not reached: the last segment always returns or raises


def lookup(data: Any, path: str) -> tuple[Any, str | None]:
    """(value at dotted ``path``, None), or (MISSING, what was there instead)."""
    cur = data
    segs = path.split(".")
    for depth, seg in enumerate(segs):
        where = repr(".".join(segs[:depth])) if depth else "the reply"
        if isinstance(cur, dict):
            if seg not in cur:
                keys = [k[:40] for k in list(cur)[:MAX_KEYS_SHOWN]]
                more = ", ..." if len(cur) > MAX_KEYS_SHOWN else ""
                has = f"its keys are {', '.join(map(repr, keys))}{more}" if keys else "it is an empty object"
                return MISSING, f"{where} has no {seg[:40]!r} ({has})"
            cur = cur[seg]
        elif isinstance(cur, list):
            i = _index(cur, seg)
            if i is None:
                return MISSING, f"{where} is an array of {len(cur)} item{'s' if len(cur) != 1 else ''}, no item {seg[:40]!r}"
            cur = cur[i]
        else:
            return MISSING, f"{where} is {_kind(cur)}, not an object"
    if cur is None:
        return MISSING, f"{path!r} is null"
    return cur, None


def openai_usage(raw: Any) -> Any:
    """``input_tokens``/``output_tokens`` (Responses, Anthropic style) as ``prompt_tokens``/``completion_tokens``."""
    if isinstance(raw, dict) and "prompt_tokens" not in raw and ("input_tokens" in raw or "output_tokens" in raw):
        return {**raw, "prompt_tokens": raw.get("input_tokens"), "completion_tokens": raw.get("output_tokens")}
    return raw


def _text_of(value: Any) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        value = json.dumps(value, ensure_ascii=False)  # depth is bounded by load_json
    text: str = value
    return text[:MAX_TEXT_CHARS]


def _first(entry: dict[str, Any], *keys: str) -> Any:
    return next((entry[k] for k in keys if entry.get(k) is not None), None)


def tool_call(entry: Any) -> ToolCall | None:
    """A tool name, or an object with name/tool/function.name, arguments/args/input and
    result/output (and ``ok`` or ``is_error``); None for any other shape."""
    if isinstance(entry, str):
        return ToolCall(name=entry[:MAX_NAME_CHARS]) if entry.strip() else None
    if not isinstance(entry, dict):
        return None
    function = entry.get("function")
    fn: dict[str, Any] = function if isinstance(function, dict) else {}
    name = next((n for n in (entry.get("name"), entry.get("tool"), fn.get("name")) if isinstance(n, str) and n.strip()), None)
    if name is None:
        return None
    ok = entry.get("ok")
    if not isinstance(ok, bool):
        ok = not entry["is_error"] if isinstance(entry.get("is_error"), bool) else None
    args = _first(entry, "arguments", "args", "input")
    return ToolCall(
        name=name[:MAX_NAME_CHARS],
        arguments=_text_of(fn.get("arguments") if args is None else args),
        result=_text_of(_first(entry, "result", "output")),
        ok=ok,
    )
