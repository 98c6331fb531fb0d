"""Turn whatever an agent hands us into plain JSON values, without ever raising.

Steps carry model responses, tool results and user objects: pydantic models, dataclasses,
SDK response objects (OpenAI, Anthropic), bytes, sets, datetimes, enums, numpy scalars.
``to_jsonable`` snapshots them when the step is logged (so later mutation by the agent
does not change what is sent) into dict/list/str/int/float/bool/None. Cycles, depth and
size are bounded; anything unknown becomes its ``repr``.
"""

from __future__ import annotations

import base64
import contextlib
import dataclasses
import datetime as _dt
import decimal
import enum
import math
import re
import uuid
from collections import deque
from collections.abc import KeysView, ValuesView
from pathlib import PurePath
from typing import Any

MAX_DEPTH = 32
MAX_ITEMS = 10_000
MAX_STR = 200_000
_PRIMITIVE = (str, int, float, bool, type(None))


class _Notes:
    """Where the changes ``to_jsonable`` makes to a value are written: one note per kind of
    change per field, in the words both SDKs use (``limits.py`` puts them in ``agentsproof_fit``)."""

    __slots__ = ("field", "out", "seen")

    def __init__(self, field: str, out: list[str]) -> None:
        self.field, self.out = field, out
        self.seen: set[str] = set()

    def add(self, kind: str, text: str) -> None:
        if kind not in self.seen:
            self.seen.add(kind)
            self.out.append(f"{self.field}: {text}")


def to_jsonable(value: Any, notes: list[str] | None = None, field: str = "value") -> Any:
    """A JSON-serialisable copy of ``value``; never raises. When ``notes`` is given, every
    change of a value (text made valid Unicode, a huge integer or a non-finite number sent
    as text, something cut for depth, size or a cycle) is noted there as ``field: …``."""
    ctx = _Notes(field, notes) if notes is not None else None
    try:
        return _conv(value, 0, set(), ctx)
    except Exception as err:  # noqa: BLE001 - a logging SDK must not raise
        if ctx is not None:
            ctx.add("unserialisable", f"a {type(value).__name__} that could not be read; sent as a placeholder")
        return f"<unserialisable {type(value).__name__}: {type(err).__name__}>"


_SURROGATES = re.compile("[\ud800-\udfff]")


def text(s: str) -> str:
    """``s`` as valid Unicode, so it always encodes to UTF-8: bytes a surrogate-escaped
    string stands for (``os.fsdecode``, ``errors="surrogateescape"``) are decoded back where
    they form UTF-8, and every other lone surrogate becomes U+FFFD; so does NUL (U+0000),
    which no PostgreSQL text can hold."""
    if "\x00" in s:
        s = s.replace("\x00", "\ufffd")
    if not _SURROGATES.search(s):
        return s
    with contextlib.suppress(UnicodeEncodeError):  # a surrogate outside U+DC80..U+DCFF: not an escaped byte
        s = s.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    return _SURROGATES.sub("\ufffd", s)


def _str(s: str, ctx: _Notes | None = None) -> str:
    if ctx is not None:
        clean = text(s)
        if clean != s:
            ctx.add("text", "NUL or lone surrogates replaced by U+FFFD")
        s = clean
        if len(s) > MAX_STR:
            ctx.add("long", f"a text of {len(s)} characters cut to {MAX_STR}")
    else:
        s = text(s)
    return s if len(s) <= MAX_STR else s[:MAX_STR] + f"…[truncated {len(s) - MAX_STR} chars]"


MAX_INT_BITS = 63
"""Integers wider than a signed 64-bit one become text: no database column, JavaScript number
or JSON parser (Python's refuses over 4,300 digits) takes every size."""


def big_int(v: int) -> str:
    """An integer too wide for the wire, as text: its digits, or its size past 4,000 digits
    (``str()`` itself refuses an integer of over 4,300 digits)."""
    digits = int(v.bit_length() * 0.30102999566398120) + 1
    if digits <= 4000:
        return str(v)
    return f"<integer of about {digits} digits>"


def _conv(v: Any, depth: int, seen: set[int], ctx: _Notes | None = None) -> Any:
    if isinstance(v, bool) or v is None:
        return v
    if isinstance(v, int) and not isinstance(v, enum.Enum):
        if v.bit_length() <= MAX_INT_BITS:
            return v
        if ctx is not None:
            ctx.add("int", "a big integer sent as text")
        return big_int(int(v))
    if isinstance(v, float):
        if math.isfinite(v):
            return v
        if ctx is not None:
            ctx.add(f"float-{v}", f"{v} sent as text")
        return str(v)
    if isinstance(v, str):
        return _str(v, ctx)
    if depth >= MAX_DEPTH:
        if ctx is not None:
            ctx.add("depth", f"nested deeper than {MAX_DEPTH} levels; cut there")
        return f"<max depth: {type(v).__name__}>"
    if isinstance(v, enum.Enum):
        return _conv(v.value, depth + 1, seen, ctx)
    if isinstance(v, (bytes, bytearray, memoryview)):
        b = bytes(v)
        try:
            return _str(b.decode("utf-8"), ctx)
        except UnicodeDecodeError:
            return {"base64": base64.b64encode(b[:MAX_STR]).decode("ascii")}
    if isinstance(v, (_dt.datetime, _dt.date, _dt.time)):
        return v.isoformat()
    if isinstance(v, _dt.timedelta):
        return v.total_seconds()
    if isinstance(v, decimal.Decimal):
        return float(v) if v.is_finite() else str(v)
    if isinstance(v, (uuid.UUID, PurePath, complex)):
        return str(v)
    if id(v) in seen:
        if ctx is not None:
            ctx.add("cycle", "a value that contains itself; the repeat replaced by a marker")
        return f"<cycle: {type(v).__name__}>"
    seen = seen | {id(v)}
    d = depth + 1
    if isinstance(v, dict):
        out: dict[str, Any] = {}
        for i, (k, item) in enumerate(v.items()):
            if i >= MAX_ITEMS:
                if ctx is not None:
                    ctx.add("keys", f"an object of {len(v)} keys; kept the first {MAX_ITEMS}")
                out["…"] = f"{len(v) - MAX_ITEMS} more keys"
                break
            out[_str(k, ctx) if isinstance(k, str) else str(_conv(k, d, seen, ctx))] = _conv(item, d, seen, ctx)
        return out
    if isinstance(v, (list, tuple, set, frozenset)) or _is_iterable_view(v):
        items = list(v)
        if isinstance(v, (set, frozenset)):
            try:
                items = sorted(items)
            except TypeError:
                items = sorted(items, key=repr)
        out_list = [_conv(x, d, seen, ctx) for x in items[:MAX_ITEMS]]
        if len(items) > MAX_ITEMS:
            if ctx is not None:
                ctx.add("items", f"a list of {len(items)} items; kept the first {MAX_ITEMS}")
            out_list.append(f"…{len(items) - MAX_ITEMS} more items")
        return out_list
    return _conv_object(v, d, seen, ctx)


def _is_iterable_view(v: Any) -> bool:
    return isinstance(v, (deque, KeysView, ValuesView))


def _conv_object(v: Any, d: int, seen: set[int], ctx: _Notes | None = None) -> Any:
    # pydantic v2 (OpenAI and Anthropic SDK responses are pydantic models)
    dump = getattr(v, "model_dump", None)
    if callable(dump) and not isinstance(v, type):
        try:
            return _conv(dump(mode="json"), d, seen, ctx)
        except Exception:  # noqa: BLE001 - fall through to the next strategy
            try:
                return _conv(dump(), d, seen, ctx)
            except Exception:  # noqa: BLE001
                pass
    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        return {f.name: _conv(getattr(v, f.name, None), d, seen, ctx) for f in dataclasses.fields(v)}
    # numpy scalars and arrays, without importing numpy
    if type(v).__module__ == "numpy":
        tolist = getattr(v, "tolist", None)
        if callable(tolist):
            return _conv(tolist(), d, seen, ctx)
    # namedtuple-like, attrs, pydantic v1, and other conventional hooks
    for hook in ("_asdict", "to_dict", "dict", "as_dict", "to_json"):
        fn = getattr(v, hook, None)
        if callable(fn) and not isinstance(v, type):
            try:
                res = fn()
            except Exception:  # noqa: BLE001
                continue
            if hook == "to_json" and isinstance(res, str):
                import json

                try:
                    return _conv(json.loads(res), d, seen, ctx)
                except ValueError:
                    return _str(res, ctx)
            if isinstance(res, dict):
                return _conv(res, d, seen, ctx)
    attrs = getattr(v, "__dict__", None)
    if isinstance(attrs, dict) and attrs and not isinstance(v, type) and not callable(v):
        return {"__type__": type(v).__name__, **{_str(k): _conv(x, d, seen, ctx) for k, x in attrs.items() if isinstance(k, str) and not k.startswith("_")}}
    try:
        return _str(repr(v), ctx)
    except Exception:  # noqa: BLE001
        return f"<{type(v).__name__}>"
