"""Deterministic grader: substring and regex checks, instant and free."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from agentsproof.grading import regex
from agentsproof.grading.base import GradeInput, GraderEntry
from agentsproof.grading.hooks import ConvertCase, LintCase, LintFact, Needle, Patterns
from agentsproof.model.graders import MAX_WEIGHT, Checks, FieldError, TurnScoped
from agentsproof.model.results import CheckResult, GraderResult


class DeterministicGrader(TurnScoped):
    """``type: deterministic``: string and regex checks of the answer, no model; the score is the share that pass."""

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
    """The deterministic grader's hook: its checks run on the final answer (in a thread when
    a pattern needs the time-limited Python-``re`` helper, whose wait must not hold the loop)."""
    if any(regex.compile_re2(p) is None for p in spec.checks.regexMatch):
        from agentsproof.core.threads import to_thread

        return await to_thread(grade_deterministic, given.answer, spec)
    return grade_deterministic(given.answer, spec)


def _answer_label(turn: int | Literal["all"] | None) -> str:
    return "the answer" if turn is None else "the replies (turn: all)" if turn == "all" else f"the reply of turn {turn}"


def lint(spec: DeterministicGrader, case: LintCase) -> Iterator[LintFact]:
    """Its texts (a reply of one turn is also in ``turn: all``) and its patterns."""
    where, cs, turn = case.where, spec.checks.caseSensitive, spec.turn
    scope, label = ("answer", turn), _answer_label(turn)
    within = ("answer", "all") if turn != "all" else None
    for i, n in enumerate(spec.checks.mustContain):
        yield Needle(scope, label, True, n, cs, f"{where}.checks.mustContain[{i}]", within)
    for i, n in enumerate(spec.checks.mustNotContain):
        yield Needle(scope, label, False, n, cs, f"{where}.checks.mustNotContain[{i}]", within)
    yield Patterns(f"{where}.checks.regexMatch", spec.checks.regexMatch)


def to_agentevals(spec: DeterministicGrader, case: ConvertCase) -> list[Any]:
    """One EVAL.yaml assertion per check."""
    cs, w = spec.checks.caseSensitive, case.weight
    out: list[Any] = [{"type": "contains" if cs else "icontains", "value": v, **w} for v in spec.checks.mustContain]
    out += [{"type": "not-contains" if cs else "not-icontains", "value": v, **w} for v in spec.checks.mustNotContain]
    out += [{"type": "regex", "value": v, **w} for v in spec.checks.regexMatch]
    if w and len(out) > 1:
        case.warn(f"{case.where}.weight: one grader's checks become {len(out)} assertions, each with the weight")
    return out


GRADER = GraderEntry(
    type="deterministic",
    config=DeterministicGrader,
    grade=grade,
    lint=lint,
    to_agentevals=to_agentevals,
    grade_answer=lambda answer, spec: grade_deterministic(answer, spec),
    logged=False,
)
