"""Make a run or a step fit what the server takes, on the client, before it is sent.

The limits are the server's own (``agentsproof/data/wire_limits.json``, which
``server/protocol.py`` builds its fields from and the TypeScript SDK embeds), so a run is
never refused for its text or its numbers:

- text is valid Unicode (NUL and lone surrogates become U+FFFD: ``jsonable.text``) and a
  text field over its limit is cut, ending in ``…[truncated N chars]``;
- a list over its limit keeps its first items; a number outside its range is clamped, a
  fraction where an integer is due is rounded, a value that is no number is dropped;
- an unknown step type becomes the closest known one;
- while a value is made plain JSON (``jsonable.to_jsonable``), an integer wider than 64 bits
  and a non-finite number are sent as text, and what is nested too deep, too long a list
  or object, or a value that contains itself is cut;

and every such change is noted (the TypeScript SDK words its notes the same way): a run's notes in ``metadata.agentsproof_fit``, a step's in
``output.agentsproof_fit`` (an output that is not an object is wrapped as
``{"output": ..., "agentsproof_fit": [...]}``), with the original step type and value.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from agentsproof.sdk.jsonable import to_jsonable

LIMITS_FILE = Path(__file__).resolve().parent.parent / "data" / "wire_limits.json"
LIMITS: dict[str, Any] = json.loads(LIMITS_FILE.read_text(encoding="utf-8"))
FIT_KEY: str = LIMITS["fitKey"]
_RUN, _STEP = LIMITS["run"], LIMITS["step"]
_MARKER: str = LIMITS["json"]["truncatedMarker"]
STEP_TYPES: tuple[str, ...] = tuple(_STEP["types"])


def clip(s: str, limit: int) -> str:
    """``s`` at most ``limit`` characters; a cut one ends in the truncation marker."""
    if len(s) <= limit:
        return s
    n = len(s)
    keep = max(0, limit - len(_MARKER.format(n=n)))
    if keep + len(_MARKER.format(n=n - keep)) < limit:  # the count lost a digit: one more character fits
        keep += limit - keep - len(_MARKER.format(n=n - keep))
    return (s[:keep] + _MARKER.format(n=n - keep))[:limit]


def _as_text(v: Any) -> str:
    return v if isinstance(v, str) else json.dumps(to_jsonable(v), ensure_ascii=False)


def _norm(kind: str) -> str:
    return kind.strip().lower().replace("-", "_").replace(" ", "_")


def step_type(value: Any) -> str:
    """The known step type closest to ``value`` (case, ``-`` and spaces ignored; then hints)."""
    norm = _norm(value) if isinstance(value, str) else ""
    if norm in STEP_TYPES:
        return norm
    for kind, hints in _STEP["typeHints"]:
        if any(h in norm for h in hints):
            return str(kind)
    return str(_STEP["defaultType"])


def _number(key: str, v: Any, spec: dict[str, Any], notes: list[str]) -> int | float | None:
    """``v`` within ``spec``'s range (clamped), rounded when an integer is due; None to drop."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        notes.append(f"{key}: {_show(v)} is not a number; dropped")
        return None
    if isinstance(v, float) and not math.isfinite(v):
        notes.append(f"{key}: {v} dropped")
        return None
    lo, hi = spec["min"], spec["max"]
    out: int | float = v
    if spec.get("integer") and not isinstance(v, int):
        out = math.floor(v + 0.5)  # half up, as JavaScript's Math.round (the TypeScript SDK)
        notes.append(f"{key}: {v!r} rounded to {out}")
    if out < lo or out > hi:
        clamped = lo if out < lo else hi
        clamped = int(clamped) if spec.get("integer") else clamped
        notes.append(f"{key}: {_show(v)} clamped to {clamped}")
        out = clamped
    return out


def _show(v: Any) -> str:
    text = json.dumps(to_jsonable(v), ensure_ascii=False) if not isinstance(v, int) or v.bit_length() < 200 else "<a huge integer>"
    return clip(text, 80)


def _fit_texts(out: dict[str, Any], limits: dict[str, int], notes: list[str]) -> None:
    """Each text field of ``out`` named in ``limits`` made text and cut to its limit (noted)."""
    for key, limit in limits.items():
        v = out.get(key)
        if v is None:
            continue
        s = _as_text(v)
        if len(s) > limit:
            notes.append(f"{key}: {len(s)} characters, cut to {limit}")
        out[key] = clip(s, limit)


def fit_run(body: dict[str, Any], made_plain: list[str] | None = None) -> dict[str, Any]:
    """A run-creation body (already plain JSON) that fits the server's limits, changes noted
    (after ``made_plain``: what ``to_jsonable`` changed while making it plain)."""
    out = dict(body)
    notes: list[str] = list(made_plain or ())
    _fit_texts(out, _RUN["text"], notes)
    for key in _RUN["ids"]:
        v = out.get(key)
        if v is not None and not isinstance(v, str):
            out[key] = _as_text(v)
    cid = out.get("clientRunId")
    if isinstance(cid, str) and len(cid) > _RUN["ids"]["clientRunId"]:
        out["clientRunId"] = cid[: _RUN["ids"]["clientRunId"]]  # the same cut on every retry
    for key, limit in _RUN["lists"].items():
        v = out.get(key)
        if v is None:
            continue
        items = [v] if not isinstance(v, list) else v
        items = [_as_text(x) for x in items]
        if len(items) > limit:
            notes.append(f"{key}: {len(items)} items, kept the first {limit}")
            items = items[:limit]
        out[key] = items
    meta = out.get("metadata")
    if meta is not None and not isinstance(meta, dict):
        notes.append("metadata: not an object; kept as metadata.value")
        meta = {"value": meta}
    if notes:
        meta = dict(meta or {})
        earlier = meta.get(FIT_KEY)
        meta[FIT_KEY] = (earlier if isinstance(earlier, list) else []) + notes
    if meta is not None:
        out["metadata"] = meta
    return out


def fit_step(step: dict[str, Any], made_plain: list[str] | None = None) -> dict[str, Any]:
    """A step body (already plain JSON) that fits the server's limits, changes noted in its
    output (after ``made_plain``: what ``to_jsonable`` changed while making it plain)."""
    out = dict(step)
    notes: list[str] = list(made_plain or ())
    kind = out.get("type")
    if kind not in STEP_TYPES:
        mapped = step_type(kind)
        if not isinstance(kind, str) or _norm(kind) != mapped:  # not just a spelling ("LLM-call")
            notes.append(f"type: {_show(kind)} is not a step type; sent as {mapped}")
        out["type"] = mapped
    _fit_texts(out, _STEP["text"], notes)
    for key, spec in _STEP["numbers"].items():
        if key in out and out[key] is not None:
            value = _number(key, out[key], spec, notes)
            if value is None:
                out.pop(key)
            else:
                out[key] = value
    if notes:
        out["output"] = with_notes(out.get("output"), notes)
    return out


def with_notes(output: Any, notes: list[str]) -> Any:
    """``output`` with ``notes`` added to its ``agentsproof_fit`` list (an output that is not
    an object wrapped as ``{"output": ..., "agentsproof_fit": [...]}``); as it is without notes."""
    if not notes:
        return output
    if isinstance(output, dict):
        output = dict(output)
        earlier = output.get(FIT_KEY)
        output[FIT_KEY] = (earlier if isinstance(earlier, list) else []) + notes
        return output
    return {"output": output, FIT_KEY: notes}


__all__ = ["FIT_KEY", "LIMITS", "LIMITS_FILE", "STEP_TYPES", "clip", "fit_run", "fit_step", "step_type", "with_notes"]
