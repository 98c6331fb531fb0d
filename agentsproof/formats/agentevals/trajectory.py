"""agentv's and promptfoo's ``trajectory:*`` assertions on an agent trial's tool calls, as
agentsproof's ``tool-calls`` assertion (the ``tool_calls`` grader, agent trials only)::

    - {type: trajectory:tool-used, value: bash}                # must_call (a name or a list)
    - {type: not-trajectory:tool-used, value: bash}            # must_not_call
    - type: trajectory:tool-sequence                           # sequence (others may come between);
      value: {mode: in_order, steps: [Read, Edit]}             # exact: these calls and no other; any_order: must_call
    - {type: trajectory:step-count, value: {min: 1, max: 5}}   # min_steps / max_steps

    - type: trajectory:tool-args-match                         # called_with: some call had these arguments
      value: {name: search, args: {query: weather}, mode: partial}   # partial (default) or exact
    - {type: trajectory:tool-used, value: {name: search, min: 1, max: 3}}  # call_count

``trajectory:goal-success`` (a judge) is refused by name
(:data:`agentsproof.formats.agentevals.negation.REFUSED`), as is a negated sequence, step
count, argument match or count, and any key these do not take.
"""

from __future__ import annotations

from typing import Any

from agentsproof.core.errors import InputError

TRAJECTORY_TYPES = {
    "trajectory:tool-used": {"value"},
    "trajectory:tool-sequence": {"value"},
    "trajectory:step-count": {"value"},
    "trajectory:tool-args-match": {"value"},
}
"""The types of this module and their own keys."""
KEPT = ("weight", "metric", "name", "id", "required", "min_score", "description")


def _count(src: str, where: str, value: dict) -> dict[str, Any]:
    """agentv's ``{name, min, max}``: how many times the tool is called (min 1 unless given)."""
    extra = sorted(str(k) for k in value if k not in ("name", "tool", "min", "max"))
    if extra:
        raise InputError(src, f"{where}.{extra[0]}", "unknown key; expected one of max, min, name")
    bounds = {}
    for key in ("min", "max"):
        n = value.get(key)
        if n is not None:
            if isinstance(n, bool) or not isinstance(n, int) or n < 0:
                raise InputError(src, f"{where}.{key}", "must be a whole number of calls")
            bounds[key] = n
    if bounds.get("max") is not None and bounds.get("min", 1) > bounds["max"]:
        raise InputError(src, f"{where}.min", f"{bounds.get('min', 1)} is more than max ({bounds['max']})")
    return bounds


def _tool(value: dict) -> Any:
    return value.get("name", value.get("tool"))


def _names(src: str, where: str, value: Any) -> list[str]:
    if isinstance(value, str) and value.strip():
        return [value]
    if isinstance(value, dict) and isinstance(_tool(value), str):
        _count(src, where, value)
        return [_tool(value)]
    if isinstance(value, list) and value and all(isinstance(v, str) and v.strip() for v in value):
        return list(value)
    raise InputError(src, where, "must name a tool (a name, a list of names, or {name})")


def _args_match(src: str, where: str, value: Any) -> dict[str, Any]:
    """agentv's ``{name, args, mode}`` (``tool`` / ``arguments`` too) as a ``called_with`` entry."""
    if not isinstance(value, dict) or not isinstance(_tool(value), str) or not _tool(value).strip():
        raise InputError(src, where, "must be {name: TOOL, args: {...}, mode: partial|exact}")
    extra = sorted(str(k) for k in value if k not in ("name", "tool", "args", "arguments", "mode", "ignore"))
    if extra:
        raise InputError(src, f"{where}.{extra[0]}", "unknown key; expected one of args, ignore, mode, name")
    args = value.get("args", value.get("arguments"))
    if not isinstance(args, dict):
        raise InputError(src, f"{where}.args", "must be a mapping of argument names to values")
    mode = value.get("mode", "partial")
    if mode not in ("partial", "exact"):
        raise InputError(src, f"{where}.mode", f"{mode!r}: expected partial or exact")
    out = {"name": _tool(value), "args": args, "mode": mode}
    if value.get("ignore") is not None:
        out["ignore"] = value["ignore"]
    return out


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
    if base == "trajectory:tool-used" and isinstance(value, dict) and isinstance(_tool(value), str) and {"min", "max"} & value.keys():
        bounds = _count(src, at, value)  # a count per tool
        if negate:
            raise InputError(src, f"{where}.type", f"negating a count of {_tool(value)!r} calls is not supported: give the bounds it must stay within")
        checks = {"call_count": {_tool(value): bounds}}
    elif base == "trajectory:tool-used":
        checks = {"must_not_call" if negate else "must_call": _names(src, at, value)}
    elif base == "trajectory:tool-args-match":
        if negate:
            raise InputError(
                src, f"{where}.type", "negating 'trajectory:tool-args-match' is not supported: the tool_calls grader's checks cannot be inverted as a whole"
            )
        checks = {"called_with": [_args_match(src, at, value)]}
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
