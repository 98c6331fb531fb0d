"""Dotted paths into JSON bodies (``choices.0.message.content``): what the http target
sends and reads, with a reason when a path is not there."""

from __future__ import annotations

from typing import Any

from agentsproof.llm.replies import _kind

MAX_KEYS_SHOWN = 8
"""Keys of an object listed when a path is not found in it."""
MISSING = object()
"""What :func:`lookup` returns for a path that is not there."""


def overlap(a: str, b: str) -> bool:
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
