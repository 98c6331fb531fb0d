"""Per-assertion LLM judge: each assertion is a fresh call returning pass/fail + evidence."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Annotated, Any, Literal

from pydantic import Field

from agentsproof.grading.base import GradeInput, GraderEntry
from agentsproof.grading.hooks import ConvertCase, Finding, LintCase, LintFact
from agentsproof.grading.judge import Judge, JudgeError, judge_json, verdict_text
from agentsproof.model.graders import MAX_WEIGHT, TurnScoped
from agentsproof.model.results import CheckResult, GraderResult, Usage


class AssertionsGrader(TurnScoped):
    """``type: assertions``: claims the judge checks one by one; the score is the share that hold."""

    type: Literal["assertions"]
    assertions: list[Annotated[str, Field(min_length=1)]] = Field(min_length=1)
    weight: float = Field(1.0, gt=0, le=MAX_WEIGHT, strict=True, allow_inf_nan=False)


ASSERTION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "evidence": {"type": "string"},
        "passed": {"type": "boolean"},
    },
    "required": ["evidence", "passed"],
}

ASSERTION_SYSTEM = (
    "You check one claim about an AI assistant's response. Decide only from the response text. "
    "Reply with a JSON object: 'evidence', a short quote from the response (or what is missing), "
    "then 'passed', true only if the claim clearly holds."
)


_VERDICT_KEYS = ("passed", "pass", "verdict", "result")
_TRUE = ("true", "pass", "passed", "yes")
_FALSE = ("false", "fail", "failed", "no")


def _validate(obj: dict[str, Any]) -> tuple[bool, str]:
    """The verdict: 'passed' (or pass/verdict/result) as a boolean or pass/fail, yes/no words."""
    key = next((k for k in _VERDICT_KEYS if k in obj), None)
    if key is None:
        raise ValueError("missing 'passed'")
    passed = obj[key]
    if isinstance(passed, str) and passed.strip().lower() in _TRUE + _FALSE:
        passed = passed.strip().lower() in _TRUE
    if not isinstance(passed, bool):
        raise ValueError(f"'{key}' is not true/false")
    evidence = obj.get("evidence", obj.get("reasoning", obj.get("reason", "")))
    return passed, verdict_text(evidence)


def _assertion_prompt(task: str, assertion: str, response: str) -> str:
    return (
        f"## Task given to the assistant\n{task}\n\n## Claim to check\n{assertion}\n\n"
        f"## Assistant response\n<<<RESPONSE\n{response}\nRESPONSE>>>\n\nDoes the claim hold?"
    )


async def _one(assertion: str, response: str, judge: Judge, task: str) -> tuple[CheckResult, Usage]:
    (passed, evidence), usage, _ = await judge_json(judge, ASSERTION_SYSTEM, _assertion_prompt(task, assertion, response), ASSERTION_SCHEMA, _validate)
    return CheckResult(kind="assertion", target=assertion, passed=passed, evidence=evidence), usage


async def grade_assertions(response: str, spec: AssertionsGrader, judge: Judge, task: str) -> GraderResult:
    """Each assertion asked of ``judge`` about ``response``; errored (with the checks that did answer) when any call fails."""
    results = await asyncio.gather(*(_one(a, response, judge, task) for a in spec.assertions), return_exceptions=True)
    checks: list[CheckResult] = []
    usage = Usage()
    errors: list[str] = []
    for assertion, res in zip(spec.assertions, results, strict=True):
        if isinstance(res, JudgeError):
            errors.append(f"{assertion!r}: {res}")
        elif isinstance(res, Exception):  # never an exception out of a grader
            errors.append(f"{assertion!r}: judge failed unexpectedly: {type(res).__name__}: {str(res)[:300]}")
        elif isinstance(res, BaseException):  # cancellation: not ours to swallow
            raise res
        else:
            checks.append(res[0])
            usage = usage + res[1]
    if errors:
        return GraderResult(type="assertions", weight=spec.weight, errored=True, error="; ".join(errors), checks=checks, usage=usage)
    score = sum(c.passed for c in checks) / len(checks)
    return GraderResult(type="assertions", weight=spec.weight, score=score, checks=checks, usage=usage)


async def grade(spec: AssertionsGrader, given: GradeInput) -> GraderResult:
    """The assertions grader's hook: the judged answer (files included) checked claim by claim."""
    return await grade_assertions(given.judged_answer(), spec, given.need_judge(), given.task)


def lint(spec: AssertionsGrader, case: LintCase) -> Iterator[LintFact]:
    """An ``empty-grader`` finding when every assertion is blank."""
    if not any(a.strip() for a in spec.assertions):
        yield Finding(f"{case.where}.assertions", "empty-grader", "are all blank: the judge has nothing to check", "write the assertions, or remove the grader")


def to_agentevals(spec: AssertionsGrader, case: ConvertCase) -> list[Any]:
    """Plain assertions; with a weight, one ``rubrics`` assertion that carries it."""
    return list(spec.assertions) if not case.weight else [{"type": "rubrics", "criteria": list(spec.assertions), **case.weight}]


GRADER = GraderEntry(
    type="assertions",
    config=AssertionsGrader,
    grade=grade,
    judged=True,
    judge_texts=lambda spec: list(spec.assertions),
    lint=lint,
    to_agentevals=to_agentevals,
)
