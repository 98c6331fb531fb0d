"""agentv's and promptfoo's ``trajectory:*`` assertions on an agent trial's tool calls, as
agentsproof's ``tool-calls`` assertion (the ``tool_calls`` grader, agent trials only)::

    - {type: trajectory:tool-used, value: bash}                # must_call (a name or a list)
    - {type: not-trajectory:tool-used, value: bash}            # must_not_call
    - type: trajectory:tool-sequence                           # sequence (others may come between);
      value: {mode: in_order, steps: [Read, Edit]}             # exact: these calls and no other; any_order: must_call
    - {type: trajectory:step-count, value: {min: 1, max: 5}}   # min_steps / max_steps

``trajectory:tool-args-match`` (arguments) and ``trajectory:goal-success`` (a judge) are
refused by name (:data:`agentsproof.formats.agentevals.negation.REFUSED`), as is a negated
sequence or step count, a count per tool, and any key these do not take.
"""

from __future__ import annotations

from typing import Any

from agentsproof.core.errors import InputError

TRAJECTORY_TYPES = {"trajectory:tool-used": {"value"}, "trajectory:tool-sequence": {"value"}, "trajectory:step-count": {"value"}}
"""The types of this module and their own keys."""
KEPT = ("weight", "metric", "name", "id", "required", "min_score", "description")


def _names(src: str, where: str, value: Any) -> list[str]:
    if isinstance(value, str) and value.strip():
        return [value]
    if isinstance(value, dict) and isinstance(value.get("name"), str):
        if set(value) - {"name"} - ({"min"} if value.get("min") in (None, 1) else set()):
            raise InputError(src, where, "a count per tool (min, max) is not checked; give the tool's name (must be called at least once)")
        return [value["name"]]
    if isinstance(value, list) and value and all(isinstance(v, str) and v.strip() for v in value):
        return list(value)
    raise InputError(src, where, "must name a tool (a name, a list of names, or {name})")


def rewrite(src: str, where: str, entry: Any) -> Any:
    """``entry`` as a ``tool-calls`` assertion when it is a ``trajectory:*`` one this module
    takes; any other entry as it is. InputError naming the field of one it cannot honour."""
    kind = entry.get("type") if isinstance(entry, dict) else None
    if not isinstance(kind, str) or kind.removeprefix("not-") not in TRAJECTORY_TYPES:
        return entry
    base, negate = kind.removeprefix("not-"), kind.startswith("not-")
    if entry.get("negate") is True:
        if negate:
            raise InputError(src, f"{where}.negate", f"{kind!r} is already negated (not-); drop one of them")
        negate = True
    extra = sorted(str(k) for k in entry if k not in {"type", "value", "negate", *KEPT})
    if extra:
        raise InputError(src, f"{where}.{extra[0]}", f"unknown key for {base!r}; expected one of {', '.join(sorted({'type', 'value', 'negate', *KEPT}))}")
    value, at = entry.get("value"), f"{where}.value"
    checks: dict[str, Any]
    if base == "trajectory:tool-used":
        checks = {"must_not_call" if negate else "must_call": _names(src, at, value)}
    elif negate:
        raise InputError(src, f"{where}.type", f"negating {base!r} is not supported: the tool_calls grader's checks cannot be inverted as a whole")
    elif base == "trajectory:tool-sequence":
        steps, mode = (value, "in_order") if isinstance(value, list) else ((value or {}).get("steps"), (value or {}).get("mode", "in_order"))
        if isinstance(value, dict) and set(value) - {"steps", "mode"}:
            raise InputError(src, f"{at}.{sorted(set(value) - {'steps', 'mode'})[0]}", "unknown key; expected one of mode, steps")
        steps = _names(src, f"{at}.steps" if isinstance(value, dict) else at, steps)
        if mode == "in_order":
            checks = {"sequence": steps}
        elif mode == "exact":
            checks = {"sequence": steps, "min_steps": len(steps), "max_steps": len(steps)}
        elif mode in ("any_order", "unordered"):
            checks = {"must_call": steps}
        else:
            raise InputError(src, f"{at}.mode", f"{mode!r}: expected in_order, exact or any_order")
    else:  # trajectory:step-count
        if not isinstance(value, dict) or not value or set(value) - {"min", "max"}:
            raise InputError(src, at, "must be {min: N, max: N} (either or both)")
        for key in ("min", "max"):
            n = value.get(key)
            if n is not None and (isinstance(n, bool) or not isinstance(n, int) or n < 0):
                raise InputError(src, f"{at}.{key}", "must be a whole number of tool calls")
        checks = {k: value[key] for k, key in (("min_steps", "min"), ("max_steps", "max")) if value.get(key) is not None}
    return {"type": "tool-calls", **checks, **{k: entry[k] for k in KEPT if k in entry}}
