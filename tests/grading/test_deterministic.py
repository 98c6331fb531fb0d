"""Deterministic grader: substring and regex checks with evidence."""

from __future__ import annotations

import pytest

from agentsproof.grading.deterministic import DeterministicGrader
from agentsproof.grading.deterministic import grade_deterministic


def grader(checks, weight=1.0) -> DeterministicGrader:
    return DeterministicGrader.model_validate({"type": "deterministic", "checks": checks, "weight": weight})


def test_score_is_share_of_passed_checks_with_evidence():
    res = grade_deterministic(
        "Run pytest -k smoke; exit code 0.",
        grader({"mustContain": ["pytest", "coverage"], "mustNotContain": ["TODO"], "regexMatch": [r"exit code \d"]}, weight=0.4),
    )
    assert res.score == pytest.approx(3 / 4) and res.weight == 0.4 and not res.errored
    by = {(c.kind, c.target): c for c in res.checks}
    assert by[("mustContain", "pytest")].passed and "pytest" in by[("mustContain", "pytest")].evidence
    assert not by[("mustContain", "coverage")].passed and by[("mustContain", "coverage")].evidence
    assert by[("mustNotContain", "TODO")].passed
    assert by[("regexMatch", r"exit code \d")].passed and "exit code 0" in by[("regexMatch", r"exit code \d")].evidence


def test_case_insensitive_by_default_and_sensitive_on_request():
    assert grade_deterministic("HELLO", grader(["hello"])).score == 1.0
    assert grade_deterministic("HELLO", grader({"mustContain": ["hello"], "caseSensitive": True})).score == 0.0
    assert grade_deterministic("Straße", grader(["STRASSE"])).score == 1.0  # casefold
    assert grade_deterministic("no Secret here", grader({"mustNotContain": ["secret"]})).score == 0.0
    assert grade_deterministic("no Secret here", grader({"mustNotContain": ["secret"], "caseSensitive": True})).score == 1.0


def test_regex_is_search_not_fullmatch_and_multiline_text():
    assert grade_deterministic("line one\nversion 2.10 released", grader({"regexMatch": [r"\d+\.\d+"]})).score == 1.0
    assert grade_deterministic("nothing", grader({"regexMatch": [r"^\d+$"]})).score == 0.0


def test_empty_response_fails_contains_passes_not_contains():
    res = grade_deterministic("", grader({"mustContain": ["x"], "mustNotContain": ["y"]}))
    assert res.score == 0.5


def test_long_response_evidence_is_a_short_snippet():
    text = "a" * 5000 + " needle " + "b" * 5000
    c = grade_deterministic(text, grader(["needle"])).checks[0]
    assert c.passed and "needle" in c.evidence and len(c.evidence) < 200
