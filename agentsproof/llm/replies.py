"""The one parser of what providers and judges send back, with limits.

Every reply body is hostile until it has passed through here: its size, its JSON nesting
depth and the length of each number are checked *before* any value is built, so no reply
can raise RecursionError, OverflowError or MemoryError in our code. Non-finite numbers
(``NaN``, ``Infinity``, ``1e400``) are refused. Failures raise :class:`ReplyError`, a
``ValueError`` whose message names the limit, and callers turn it into an errored trial or
judge result with that reason.

- :func:`load_json` parses JSON text or bytes within the limits.
- :func:`parse_chat_completion` reads an OpenAI chat-completion body.
- :func:`find_json_object` finds the first JSON object in a judge's reply text.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import httpx

from agentsproof.core.jsondepth import json_depth
from agentsproof.model.results import Usage

MAX_REPLY_BYTES = 8 * 1024 * 1024
"""Largest reply body read (8 MiB); a chat completion is usually a few KB."""
MAX_JSON_DEPTH = 64
"""Deepest nesting of JSON arrays/objects accepted (a chat completion needs about 7)."""
MAX_NUMBER_CHARS = 40
"""Longest JSON number token accepted, in characters (a float needs at most 24)."""
MAX_TOKEN_COUNT = 10**12
"""Largest token count taken from ``usage``; larger or odd values count as unknown (0)."""
MAX_VERDICT_CHARS = 100_000
"""Longest judge reply searched for a verdict object."""
MAX_NAME_CHARS = 200
"""Longest model or tool name kept."""
MAX_TOOL_CALLS = 1000
"""Most tool calls kept from one reply."""


class ReplyError(ValueError):
    """A reply broke a limit or is not of the expected shape; the message says which."""


def _fmt_bytes(n: int) -> str:
    return f"{n:,} bytes"


def _as_bytes(raw: bytes | str, what: str, max_bytes: int) -> bytes:
    if isinstance(raw, str):
        if len(raw) > max_bytes:  # characters >= bytes/4; cheap pre-check before encoding
            raise ReplyError(f"{what} of {len(raw):,} characters exceeds the limit of {_fmt_bytes(max_bytes)}")
        data = raw.encode("utf-8", "surrogatepass")
    elif isinstance(raw, (bytes, bytearray, memoryview)):
        data = bytes(raw)
    else:
        raise ReplyError(f"{what} is a {type(raw).__name__}, not text")
    if len(data) > max_bytes:
        raise ReplyError(f"{what} of {_fmt_bytes(len(data))} exceeds the limit of {_fmt_bytes(max_bytes)}")
    return data


def _number_hooks(max_number_chars: int) -> dict[str, Any]:
    def parse_int(text: str) -> int:
        if len(text) > max_number_chars:
            raise ReplyError(f"a number of {len(text):,} digits exceeds the limit of {max_number_chars} characters")
        return int(text)

    def parse_float(text: str) -> float:
        if len(text) > max_number_chars:
            raise ReplyError(f"a number of {len(text):,} characters exceeds the limit of {max_number_chars} characters")
        value = float(text)
        if not math.isfinite(value):
            raise ReplyError(f"the number {text} is out of range (not a finite float)")
        return value

    def parse_constant(text: str) -> Any:
        raise ReplyError(f"{text} is not a valid JSON number")

    return {"parse_int": parse_int, "parse_float": parse_float, "parse_constant": parse_constant}


_HOOKS = _number_hooks(MAX_NUMBER_CHARS)


def load_json(
    raw: bytes | str,
    *,
    what: str = "reply",
    max_bytes: int = MAX_REPLY_BYTES,
    max_depth: int = MAX_JSON_DEPTH,
) -> Any:
    """Parse JSON within the limits; :class:`ReplyError` naming the broken limit otherwise."""
    data = _as_bytes(raw, what, max_bytes)
    depth = json_depth(data)
    if depth > max_depth:
        raise ReplyError(f"{what} nests JSON {depth:,} levels deep; the limit is {max_depth}")
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ReplyError(f"{what} is not valid UTF-8 (byte {exc.start:,})") from None
    try:
        return json.loads(text, **_HOOKS)
    except ReplyError:
        raise
    except (ValueError, RecursionError) as exc:  # RecursionError cannot happen after the depth check
        raise ReplyError(f"{what} is not valid JSON ({str(exc)[:120]})") from None


# ---------------------------------------------------------------------------
# Chat completions
# ---------------------------------------------------------------------------


@dataclass
class Completion:
    """What a chat-completion body holds: text, usage, cost in USD (None: not given), tool calls and model."""

    text: str
    usage: Usage = field(default_factory=Usage)
    cost: float | None = None
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    model: str = ""


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def token_count(value: Any) -> int:
    """A usage count: a whole number in 0..MAX_TOKEN_COUNT, else 0 (unknown)."""
    if isinstance(value, bool):
        return 0
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, int) and 0 <= value <= MAX_TOKEN_COUNT:
        return value
    return 0


def cost_value(value: Any) -> float | None:
    """A price: a finite, non-negative number, else None (unknown)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    value = float(value)
    return value if math.isfinite(value) and value >= 0 else None


def usage_of(u: Any) -> tuple[Usage, float | None]:
    """(usage, cost) from a ``usage`` object; anything that is not one counts as unknown."""
    if not isinstance(u, dict):
        return Usage(), None
    pt, ct = token_count(u.get("prompt_tokens")), token_count(u.get("completion_tokens"))
    total = token_count(u.get("total_tokens")) or pt + ct
    # OpenAI-compatible servers report prompt-cache hits as prompt_tokens_details.cached_tokens
    # (a part of prompt_tokens), as Anthropic reports cache reads.
    details = u.get("prompt_tokens_details")
    cached = min(token_count(details.get("cached_tokens")), pt) if isinstance(details, dict) else 0
    usage = Usage(prompt_tokens=pt, completion_tokens=ct, total_tokens=total, cache_read_tokens=cached)
    return usage, cost_value(u.get("cost"))


def _short(value: Any) -> str:
    return value[:MAX_NAME_CHARS] if isinstance(value, str) else ""


def _tool_calls(raw: Any) -> list[dict[str, Any]]:
    """Tool calls kept as (name, arguments); entries of other shapes are skipped."""
    calls: list[dict[str, Any]] = []
    if not isinstance(raw, list):
        return calls
    for tc in raw[:MAX_TOOL_CALLS]:
        fn = tc.get("function") if isinstance(tc, dict) else None
        if not isinstance(fn, dict):
            continue
        args = fn.get("arguments", "")
        if not isinstance(args, str):
            args = json.dumps(args)  # depth is bounded, so this cannot recurse too far
        calls.append({"name": _short(fn.get("name")), "arguments": args})
    return calls


def _content_text(content: Any) -> str | None:
    """The text of ``content`` (a string or a list of text parts); None if there is none."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str)]
        return "".join(texts) if texts else None
    return None


def parse_chat_completion(raw: bytes | str) -> Completion:
    """A chat-completion body read within the limits; ReplyError says what is wrong.

    Metadata of an odd shape (``usage``, ``model``, ``tool_calls``) is ignored; a reply
    without text (``content`` null, missing, not a string or text parts) and without tool
    calls is an error ("empty reply"), never an empty answer to score. An empty string is
    what the model said, and is kept.
    """
    data = load_json(raw, what="reply")
    if not isinstance(data, dict):
        raise ReplyError(f"the reply is {_kind(data)}, not a JSON object")
    choices = data.get("choices")
    if not isinstance(choices, list):
        raise ReplyError(f"'choices' is {_kind(choices)}, not an array")
    if not choices:
        raise ReplyError("the provider returned no choices")
    choice = choices[0]
    if not isinstance(choice, dict):
        raise ReplyError(f"choices[0] is {_kind(choice)}, not an object")
    message = choice.get("message")
    if not isinstance(message, dict):
        raise ReplyError(f"choices[0].message is {_kind(message)}, not an object")
    tool_calls = _tool_calls(message.get("tool_calls"))
    content = message.get("content")
    text = _content_text(content)
    if text is None and not tool_calls:
        finish = _short(choice.get("finish_reason"))
        why = "content has no text parts" if isinstance(content, list) else f"content is {_kind(content)}"
        raise ReplyError(f"empty reply ({why}{', finish_reason ' + finish if finish else ''})")
    usage, cost = usage_of(data.get("usage"))
    return Completion(text=text or "", usage=usage, cost=cost, tool_calls=tool_calls, model=_short(data.get("model")))


async def read_capped(response: httpx.Response, limit: int = MAX_REPLY_BYTES) -> bytes:
    """The body of ``response``, refused (ReplyError) as soon as it passes ``limit`` bytes."""
    try:
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared[:20]) > limit:
            raise ReplyError(f"reply of {int(declared[:20]):,} bytes exceeds the limit of {limit:,} bytes")
        chunks: list[bytes] = []
        size = 0
        async for chunk in response.aiter_bytes():
            size += len(chunk)
            if size > limit:
                raise ReplyError(f"reply of more than {limit:,} bytes exceeds the limit of {limit:,} bytes")
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        await response.aclose()


# ---------------------------------------------------------------------------
# Judge replies: the first JSON object in free text
# ---------------------------------------------------------------------------

_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.S)


def _object_span(text: str, start: int, max_depth: int) -> int:
    """End (exclusive) of the balanced ``{...}`` that starts at ``start``, or -1; iterative."""
    depth = 0
    in_string = escaped = False
    for i in range(start, len(text)):
        c = text[i]
        if in_string:
            if escaped:
                escaped = False
            elif c == "\\":
                escaped = True
            elif c == '"':
                in_string = False
        elif c == '"':
            in_string = True
        elif c in "{[":
            depth += 1
            if depth > max_depth:
                raise ReplyError(f"the reply nests JSON more than {max_depth} levels deep; the limit is {max_depth}")
        elif c in "}]":
            depth -= 1
            if depth == 0:
                return i + 1
            if depth < 0:
                return -1
    return -1


def find_json_object(text: Any, *, max_chars: int = MAX_VERDICT_CHARS) -> dict[str, Any]:
    """The first JSON object in ``text``: bare, fenced, or embedded in prose.

    ValueError when there is none; :class:`ReplyError` (also a ValueError) when a limit is
    broken (too long, too deep, an over-long or non-finite number).
    """
    if not isinstance(text, str):
        raise ReplyError(f"the reply is {_kind(text)}, not text")
    if len(text) > max_chars:
        raise ReplyError(f"the reply has {len(text):,} characters; the limit is {max_chars:,}")
    candidates = [text.strip()]
    candidates += [m.strip() for m in _FENCE.findall(text)]
    start = text.find("{")
    if start >= 0:
        end = _object_span(text, start, MAX_JSON_DEPTH)
        candidates.append(text[start:end] if end > 0 else text[start : text.rfind("}") + 1])
    limit_error: ReplyError | None = None
    for cand in candidates:
        if not cand:
            continue
        try:
            value = load_json(cand, what="the reply", max_bytes=4 * max_chars)
        except ReplyError as exc:
            if "not valid JSON" not in str(exc):
                limit_error = limit_error or exc
            continue
        if isinstance(value, dict):
            return value
    if limit_error is not None:
        raise limit_error
    raise ValueError("no JSON object found in the reply")
