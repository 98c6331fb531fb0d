"""Deterministic grader: substring and regex checks, instant and free."""

from __future__ import annotations

from agentsproof.model.evalfile import DeterministicGrader
from agentsproof.grading import regex
from agentsproof.model.results import CheckResult, GraderResult

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
