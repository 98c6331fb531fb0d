"""Judge schemas the embedded model can only answer within range.

llama.cpp turns a JSON schema into a grammar, but the grammar ignores ``minimum`` and
``maximum`` (a 0–1 score came back as 42) and does not bound strings (a long
``reasoning`` ran out of tokens and the JSON was cut off). Before a constrained call the
local provider rewrites the schema:

- a number bounded to [0, 1] becomes an integer from 0 to 10 (``enum``), which the
  grammar *can* enforce; the reply's value is divided by 10 afterwards, so the judge
  layer still reads a 0–1 score;
- any other bounded integer becomes an ``enum`` of its values (when at most 101 of them);
- every string gets a ``maxLength`` (:data:`MAX_STRING_CHARS`), so the object always
  closes within the token budget the judge asks for.
"""

from __future__ import annotations

import copy
import json
from typing import Any

MAX_STRING_CHARS = 300
SCALE = 10
"""A 0–1 number is asked for as an integer 0..SCALE."""


def constrain(schema: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """(grammar-friendly schema, names of top-level properties to divide by SCALE)."""
    out = copy.deepcopy(schema)
    scaled: list[str] = []
    found = out.get("properties")
    props: dict[str, Any] = found if isinstance(found, dict) else {}
    for name, prop in props.items():
        if not isinstance(prop, dict):
            continue
        kind = prop.get("type")
        lo, hi = prop.get("minimum"), prop.get("maximum")
        if kind == "number" and lo == 0 and hi == 1:
            props[name] = {"type": "integer", "enum": list(range(SCALE + 1))}
            scaled.append(name)
        elif kind == "integer" and isinstance(lo, int) and isinstance(hi, int) and 0 <= hi - lo <= 100:
            props[name] = {"type": "integer", "enum": list(range(lo, hi + 1))}
        elif kind == "string" and "enum" not in prop:
            prop.setdefault("maxLength", MAX_STRING_CHARS)
    return out, scaled


def rescale(text: str, scaled: list[str]) -> str:
    """The constrained reply as strict JSON, each scaled property mapped back to 0–1.

    The grammar llama-cpp-python builds lets a raw newline or tab into a string (seen in CI:
    ``{"reasoning": ");\n\nS: ...", "score": 2}``), which strict JSON forbids; such a reply
    is read leniently and written back escaped. A reply that does not parse at all is
    returned unchanged, so the judge reports it as unparseable.
    """
    try:
        data = json.loads(text, strict=False)
    except (ValueError, RecursionError):
        return text
    if not isinstance(data, dict):
        return text
    for name in scaled:
        value = data.get(name)
        if isinstance(value, int) and not isinstance(value, bool):
            data[name] = round(value / SCALE, 4)
    return json.dumps(data)
