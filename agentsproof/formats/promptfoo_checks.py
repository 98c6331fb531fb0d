"""promptfoo's assertions before the EVAL.yaml assertion table grades them: a number in a text check is its text,
``equals ''`` is an empty answer, an assertion's own ``transform`` runs it as a javascript check on the transformed
output, and a type agentsproof does not grade is refused by name with its reason."""

from __future__ import annotations

import json
from typing import Any

from agentsproof.core.errors import InputError


def _err(src: str, where: str | None, message: str) -> InputError:
    """An InputError at ``where`` in ``src``, to raise."""
    return InputError(src, where, message)


TEXT_TYPES = {"contains", "icontains", "contains-any", "icontains-any", "contains-all", "icontains-all", "starts-with", "equals", "ends-with"}


def _text_values(entry: Any) -> Any:
    """promptfoo compares a number in a text check as its text (``contains: 24.01``, ``contains-any: [-3.625]``)."""
    if not isinstance(entry, dict) or str(entry.get("type", "")).removeprefix("not-") not in TEXT_TYPES:
        return entry
    value = entry.get("value")
    if value == "" and entry.get("type") in ("equals", "not-equals"):  # promptfoo: output === '' (or not)
        rest = {k: v for k, v in entry.items() if k not in ("type", "value")}
        return {**rest, "type": "not-empty"} if entry["type"] == "not-equals" else {**rest, "type": "not-not-empty"}

    def text(v: Any) -> Any:
        return str(v) if isinstance(v, int | float) and not isinstance(v, bool) else v

    if isinstance(value, list):
        return {**entry, "value": [text(v) for v in value]}
    return {**entry, "value": text(value)} if "value" in entry else entry


_JS_CHECKS = {
    # an assertion's own transform: the check on the transformed output's text, in JavaScript (as promptfoo runs it)
    "contains": "s.includes(String(v))",
    "icontains": "s.toLowerCase().includes(String(v).toLowerCase())",
    "contains-any": "v.some((x) => s.includes(String(x)))",
    "icontains-any": "v.some((x) => s.toLowerCase().includes(String(x).toLowerCase()))",
    "contains-all": "v.every((x) => s.includes(String(x)))",
    "icontains-all": "v.every((x) => s.toLowerCase().includes(String(x).toLowerCase()))",
    "starts-with": "s.startsWith(String(v))",
    "equals": "s.trim() === String(v).trim()",
    "regex": "new RegExp(String(v)).test(s)",
    "is-json": "(() => { try { JSON.parse(s); return true; } catch (e) { return false; } })()",
}


def _own_transform(src: str, where: str, entry: Any) -> Any:
    """promptfoo's ``transform`` on one assertion: that assertion as a javascript one that transforms the output first."""
    if not isinstance(entry, dict) or "transform" not in entry:
        return entry
    kind = str(entry.get("type", ""))
    base = kind.removeprefix("not-")
    code = entry["transform"]
    if not isinstance(code, str) or not code.strip() or code.strip().startswith("file://"):
        raise _err(src, f"{where}.transform", "must be JavaScript code (an expression or a function body) on output")
    if base not in _JS_CHECKS:
        raise _err(src, f"{where}.transform", f"an assertion's own transform is run for {', '.join(sorted(_JS_CHECKS))} (not {kind!r})")
    body = code if "\n" in code.strip() or code.strip().startswith("return") else f"return ({code.strip()});"
    check = _JS_CHECKS[base]
    if kind.startswith("not-"):
        check = f"!({check})"
    js = (
        f"const o = ((output, context) => {{ {body} }})(output, context);\n"
        "const s = typeof o === 'string' ? o : JSON.stringify(o);\n"
        f"const v = {json.dumps(entry.get('value'))};\n"
        f"return {check};"
    )
    out = {k: v for k, v in entry.items() if k not in ("transform", "value", "type")}
    return {**out, "type": "javascript", "value": js}


def check_type(src: str, where: str, entry: Any) -> Any:
    """One promptfoo assertion as the EVAL.yaml table takes it (trajectory:* as tool-calls, the rewrites above); a
    type agentsproof does not grade refused by name with its reason."""
    from agentsproof.formats.agentevals.asserts import EXTRA, supported
    from agentsproof.formats.agentevals.negation import REFUSED
    from agentsproof.formats.agentevals.trajectory import rewrite

    entry = _own_transform(src, where, _text_values(rewrite(src, where, entry)))  # trajectory:* as tool-calls
    if isinstance(entry, dict):
        kind = entry.get("type")
        if kind in ("assert-set", "not-assert-set"):  # its assertions, each checked (formats/agentevals/assert_set.py)
            inner = entry.get("assert")
            return {**entry, "assert": [check_type(src, f"{where}.assert[{i}]", a) for i, a in enumerate(inner)]} if isinstance(inner, list) else entry
        if isinstance(kind, str) and not supported(kind):
            reason = REFUSED.get(kind.replace("_", "-").removeprefix("not-"))
            if reason is not None:
                raise _err(src, f"{where}.type", f"promptfoo assertion {kind!r} is not graded by agentsproof: {reason}")
            types = sorted([*(k for k in EXTRA if k not in ("files", "tool-calls", "skill-trigger")), "assert-set"])
            raise _err(src, f"{where}.type", f"promptfoo assertion {kind!r} is not graded by agentsproof; supported: {', '.join(types)} (and not-<type>)")
    return entry
