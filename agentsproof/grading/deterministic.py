"""Deterministic grader: substring and regex checks, instant and free."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from agentsproof.grading import regex
from agentsproof.grading.base import GradeInput, GraderKind
from agentsproof.model.graders import MAX_WEIGHT, Checks, FieldError, TurnScoped
from agentsproof.model.results import CheckResult, GraderResult


class DeterministicGrader(TurnScoped):
    type: Literal["deterministic"]
    checks: Checks
    weight: float = Field(1.0, gt=0, le=MAX_WEIGHT, strict=True, allow_inf_nan=False, description="Relative weight in the trial score.")

    @field_validator("checks", mode="before")
    @classmethod
    def _shorthand(cls, value: Any) -> Any:
        # A plain list is shorthand for mustContain.
        if isinstance(value, list):
            return {"mustContain": value}
        return value

    @model_validator(mode="after")
    def _has_checks(self) -> DeterministicGrader:
        if self.checks.count() == 0:
            raise FieldError("checks", "a deterministic grader needs at least one check")
        return self


_CONTEXT = 40


def _snippet(text: str, start: int, end: int) -> str:
    lo, hi = max(0, start - _CONTEXT), min(len(text), end + _CONTEXT)
    s = text[lo:hi].replace("\n", " ")
    return ("…" if lo > 0 else "") + s + ("…" if hi < len(text) else "")


def _find(haystack: str, needle: str, case_sensitive: bool) -> int:
    if case_sensitive:
        return haystack.find(needle)
    return haystack.casefold().find(needle.casefold())


def grade_deterministic(response: str, spec: DeterministicGrader) -> GraderResult:
    """Score = passed checks / all checks; each check carries its evidence."""
    checks: list[CheckResult] = []
    cs = spec.checks.caseSensitive
    for needle in spec.checks.mustContain:
        at = _find(response, needle, cs)
        checks.append(
            CheckResult(
                kind="mustContain",
                target=needle,
                passed=at >= 0,
                evidence=f"found: {_snippet(response, at, at + len(needle))}" if at >= 0 else "not found in the response",
            )
        )
    for needle in spec.checks.mustNotContain:
        at = _find(response, needle, cs)
        checks.append(
            CheckResult(
                kind="mustNotContain",
                target=needle,
                passed=at < 0,
                evidence="absent" if at < 0 else f"present: {_snippet(response, at, at + len(needle))}",
            )
        )
    for pattern in spec.checks.regexMatch:
        found = regex.search(pattern, response)
        if found.error:
            evidence = f"not checked: {found.error}"
        elif found.span is not None:
            evidence = f"matched: {_snippet(response, *found.span)}"
        else:
            evidence = "no match"
        checks.append(CheckResult(kind="regexMatch", target=pattern, passed=found.span is not None, evidence=evidence))
    score = sum(c.passed for c in checks) / len(checks)
    return GraderResult(type="deterministic", weight=spec.weight, score=score, checks=checks)


async def grade(spec: DeterministicGrader, given: GradeInput) -> GraderResult:
    return grade_deterministic(given.answer, spec)


GRADER = GraderKind(type="deterministic", config=DeterministicGrader, grade=grade)
