"""agentv's rubric outcomes: the keys an outcome takes, its operators' guidance, and a
``score_ranges`` table as the judge reads it (used by :mod:`agentsproof.formats.agentevals.asserts`).

``score_ranges`` is a map of scores (0 to 10) to descriptions, or agentv's list of
``{score_range: [low, high], outcome}``; an outcome may be named by its ``id`` alone when it has
score ranges, ``expected_outcome`` is agentv's older name for ``outcome`` and
``required_min_score`` (0 to 10) its older gate (``min_score`` of a tenth of it).
"""

from __future__ import annotations

import re
from typing import Any

from agentsproof.core.errors import InputError

RUBRIC_KEYS = {"id", "outcome", "operator", "weight", "required", "min_score", "score_ranges", "required_min_score", "expected_outcome"}
OPERATORS = {
    # agentv's guidance for each rubric operator, given to the judge with the outcome
    "correctness": "The response positively supports or fulfils this outcome (operator: correctness; "
    "omitting it or contradicting it does not satisfy it): {outcome}",
    "contradiction": "The response makes no claim that contradicts this outcome (operator: contradiction guard; "
    "not mentioning it is fine, only an incompatible claim fails): {outcome}",
}


def _low(k: Any) -> float:
    """The low end of a score-range key ("8", or agentv's "7-10"); -1 when it is not one."""
    m = re.fullmatch(r"(\d+(?:\.\d+)?)(?:-(\d+(?:\.\d+)?))?", str(k))
    return float(m.group(1)) if m and all(0 <= float(g) <= 10 for g in m.groups() if g is not None) else -1.0


def ranges_text(src: str, where: str, outcome: str, ranges: Any) -> str:
    """The judge's rubric for ``outcome`` scored on ``ranges``; InputError naming the field of a bad range."""
    if isinstance(ranges, list):  # agentv: [{score_range: [lo, hi], outcome}]
        as_map: dict[str, Any] = {}
        for i, r in enumerate(ranges):
            span = r.get("score_range") if isinstance(r, dict) else None
            if not isinstance(span, list) or len(span) != 2 or not all(isinstance(x, int) and not isinstance(x, bool) and 0 <= x <= 10 for x in span):
                raise InputError(src, f"{where}.score_ranges[{i}].score_range", "must be [low, high], whole scores from 0 to 10")
            as_map[str(span[0]) if span[0] == span[1] else f"{span[0]}-{span[1]}"] = r.get("outcome")
        ranges = as_map
    if not isinstance(ranges, dict) or not ranges:
        raise InputError(src, f"{where}.score_ranges", "must map scores (0-10) to descriptions")
    lines = [outcome, "", "Score on this scale (0 to 10), then report it divided by 10 (0.0 to 1.0):"]
    for k, text in sorted(ranges.items(), key=lambda kv: _low(kv[0])):
        if _low(k) < 0 or not isinstance(text, str):
            raise InputError(src, f"{where}.score_ranges.{k}", "keys are scores from 0 to 10, values descriptions")
        lines.append(f"- {k}: {text}")
    return "\n".join(lines)


def older_outcome(src: str, at: str, item: dict[str, Any]) -> dict[str, Any]:
    """``item`` with agentv's older ``expected_outcome`` / ``required_min_score`` as ``outcome`` / ``min_score`` (required)."""
    if "expected_outcome" in item:
        if "outcome" in item:
            raise InputError(src, f"{at}.expected_outcome", "is agentv's older name for 'outcome'; keep one")
        item = {**{k: v for k, v in item.items() if k != "expected_outcome"}, "outcome": item["expected_outcome"]}
    if "required_min_score" in item:
        v = item["required_min_score"]
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 <= v <= 10:
            raise InputError(src, f"{at}.required_min_score", "must be a score from 0 to 10")
        if "min_score" in item:
            raise InputError(src, f"{at}.required_min_score", "is agentv's older form of min_score (out of 10); keep one")
        item = {**item, "min_score": v / 10, "required": True}
    if item.get("outcome") is None and item.get("score_ranges") is not None and isinstance(item.get("id"), str):
        item = {**item, "outcome": item["id"].replace("_", " ")}  # agentv: a score-range criterion may be named only by its id
    return item


def judge_notes(src: str, where: str, entry: dict[str, Any]) -> None:
    """agentv's judge options that agentsproof reads and says it does not apply: ``max_steps`` (its agentic judge,
    which may explore the workspace), ``temperature`` and an older judge ``target``; InputError for a bad value."""
    from agentsproof.formats.agentevals.providers import say_once

    steps = entry.get("max_steps")
    if steps is not None:
        if isinstance(steps, bool) or not isinstance(steps, int) or steps < 1:
            raise InputError(src, f"{where}.max_steps", "must be a whole number of steps, 1 or more")
        say_once(
            src, f"{where}.max_steps: agentv's judge explores the workspace in up to {steps} steps; here it reads the answer and the files the agent wrote"
        )
    target = entry.get("target")
    if target is not None:
        if not isinstance(target, str) or not target.strip():
            raise InputError(src, f"{where}.target", "must name the judge's target")
        say_once(src, f"{where}.target: {target!r} (agentv's older judge target) is not resolved; the judge is --judge-model / --model")
    temperature = entry.get("temperature")
    if temperature is not None:
        if isinstance(temperature, bool) or not isinstance(temperature, (int, float)) or not 0 <= temperature <= 2:
            raise InputError(src, f"{where}.temperature", "must be a number from 0 to 2")
        say_once(src, f"{where}.temperature: the judge's sampling is the judge model's own (--judge-model); {temperature:g} is not sent")
    config = entry.get("config")
    if config is not None:  # promptfoo's llm-rubric reads no config of its own assertion (its grader is options.provider)
        if not isinstance(config, dict):
            raise InputError(src, f"{where}.config", "must be a mapping")
        keys = ", ".join(sorted(map(str, config))) or "(empty)"
        say_once(src, f"llm-rubric config ({keys}): promptfoo's llm-rubric does not read an assertion's config either; the judge is --judge-model / --model")
