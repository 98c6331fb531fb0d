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

agentv's ``tool-trajectory`` (``mode: any_order | in_order | exact | superset``, ``minimums``,
``expected: [{tool, args, args_match}]``) becomes the same checks (:func:`tool_trajectory`).

``latency`` (``threshold`` ms), ``cost`` (``budget`` / ``threshold`` USD) and ``token-usage``
(``max_total``) are the ``execution-metrics`` bound on what the trial recorded
(:func:`metric_bound`).

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
    "tool-trajectory": {"mode", "minimums", "expected", "args_match", "argsMatch"},
    "latency": {"threshold"},
    "cost": {"threshold", "budget"},
    "token-usage": {"max_total", "max_input", "max_output"},
}
METRICS = {"latency": ("threshold", "max_duration_ms"), "cost": ("budget", "max_cost_usd"), "token-usage": ("max_total", "max_tokens")}
"""agentv's (and promptfoo's) bounds on a trial's record → the ``execution-metrics`` bound they are."""
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


ARGS_MODES = {"exact": "exact", "superset": "partial"}
"""agentv's ``args_match`` → ``called_with``'s mode (``ignore``: the tool's name only)."""


def tool_trajectory(src: str, where: str, entry: dict[str, Any]) -> dict[str, Any]:
    """agentv's ``tool-trajectory`` (``mode``, ``minimums``, ``expected: [{tool, args, args_match}]``) as a
    ``tool-calls`` assertion: ``any_order`` the minimum calls per tool, ``in_order`` the sequence, ``exact`` the
    sequence and nothing else, ``superset`` every expected call; an expected call's ``args`` a ``called_with``."""
    allowed = {"type", "mode", "minimums", "expected", "args_match", "argsMatch", *KEPT}
    extra = sorted(str(k) for k in entry if k not in allowed)
    if extra:
        raise InputError(src, f"{where}.{extra[0]}", f"unknown key for 'tool-trajectory'; expected one of {', '.join(sorted(allowed))}")
    mode = entry.get("mode")
    if mode not in ("any_order", "in_order", "exact", "superset"):
        why = "(every call among the expected ones) is not checked" if mode == "subset" else "expected any_order, in_order, exact or superset"
        raise InputError(src, f"{where}.mode", f"{mode!r}: {why}")
    checks: dict[str, Any] = {}
    minimums = entry.get("minimums") or {}
    if not isinstance(minimums, dict) or not all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in minimums.values()):
        raise InputError(src, f"{where}.minimums", "must map tool names to whole numbers of calls")
    if minimums:
        checks["call_count"] = {str(k): {"min": n} for k, n in minimums.items()}
    expected = entry.get("expected") or []
    if not isinstance(expected, list) or not all(isinstance(e, dict) and isinstance(e.get("tool"), str) for e in expected):
        raise InputError(src, f"{where}.expected", "must be a list of {tool, args}")
    tools = [e["tool"] for e in expected]
    if mode in ("in_order", "exact") and tools:
        checks["sequence"] = tools
    if mode == "exact":
        checks["min_steps"] = checks["max_steps"] = len(tools)
    if mode in ("any_order", "superset") and tools:
        checks["must_call"] = sorted(set(tools))
    called = []
    for i, e in enumerate(expected):
        how = e.get("args_match", e.get("argsMatch", entry.get("args_match", entry.get("argsMatch", "exact"))))
        if how == "ignore" or e.get("args") in (None, "any"):
            continue
        if how not in ARGS_MODES:
            raise InputError(src, f"{where}.expected[{i}].args_match", f"{how!r}: expected exact, superset or ignore")
        if not isinstance(e["args"], dict):
            raise InputError(src, f"{where}.expected[{i}].args", "must be a mapping of argument names to values, or any")
        called.append({"name": e["tool"], "args": e["args"], "mode": ARGS_MODES[how]})
    if called:
        checks["called_with"] = called
    if not checks:
        raise InputError(src, f"{where}.expected", "required field is missing: the expected calls (or minimums)")
    return {"type": "tool-calls", **checks, **{k: entry[k] for k in KEPT if k in entry}}


def metric_bound(src: str, where: str, entry: dict[str, Any], kind: str) -> dict[str, Any]:
    """``latency`` (``threshold`` ms), ``cost`` (agentv's ``budget``, promptfoo's ``threshold``, USD), ``token-usage``
    (``max_total``) as the ``execution-metrics`` bound on what the trial recorded; ``max_input`` / ``max_output``
    (tokens one way) are refused by name: the record keeps them, execution-metrics bounds their sum."""
    key, bound = METRICS[kind]
    allowed = {"type", *TRAJECTORY_TYPES[kind], *KEPT}
    extra = sorted(str(k) for k in entry if k not in allowed)
    if extra:
        raise InputError(src, f"{where}.{extra[0]}", f"unknown key for {kind!r}; expected one of {', '.join(sorted(allowed))}")
    if kind == "token-usage" and ({"max_input", "max_output"} & entry.keys()):
        field = "max_input" if "max_input" in entry else "max_output"
        raise InputError(src, f"{where}.{field}", "a bound on prompt or completion tokens alone is not checked; bound their sum with max_total")
    if kind == "cost" and "budget" in entry and "threshold" in entry:
        raise InputError(src, f"{where}.threshold", "is the same as 'budget'; keep one")
    value = entry.get(key, entry.get("threshold"))
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        raise InputError(src, f"{where}.{key if key in entry or kind == 'token-usage' else 'threshold'}", "must be a number of 0 or more")
    value = int(value) if kind == "token-usage" and float(value).is_integer() else value
    return {"type": "execution-metrics", bound: value, **{k: entry[k] for k in KEPT if k in entry}}


def rewrite(src: str, where: str, entry: Any) -> Any:
    """``entry`` as a ``tool-calls`` assertion when it is a ``trajectory:*`` one this module
    takes; any other entry as it is. InputError naming the field of one it cannot honour."""
    kind = entry.get("type") if isinstance(entry, dict) else None
    if isinstance(kind, str) and kind.replace("_", "-").removeprefix("not-") == "tool-trajectory" and isinstance(entry, dict):
        if kind.startswith("not-") or entry.get("negate") is True:
            raise InputError(src, f"{where}.type", "negating 'tool-trajectory' is not supported: the tool_calls grader's checks cannot be inverted as a whole")
        return tool_trajectory(src, where, entry)
    if not isinstance(kind, str) or kind.removeprefix("not-") not in TRAJECTORY_TYPES:
        return entry
    if kind.removeprefix("not-") in METRICS:
        if kind.startswith("not-") or entry.get("negate") is True:
            raise InputError(src, f"{where}.type", f"negating {kind.removeprefix('not-')!r} is not supported: its bound is an upper one, its own check")
        return metric_bound(src, where, entry, kind)
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
