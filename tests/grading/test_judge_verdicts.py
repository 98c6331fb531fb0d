"""How judge verdicts are read: the accepted spellings, and what is refused (then retried)."""

from __future__ import annotations

import pytest

from agentsproof.grading.assertions import _validate as assertion_verdict
from agentsproof.grading.llm_rubric import _validate as rubric_verdict


@pytest.mark.parametrize(
    "obj, expected",
    [
        ({"passed": True, "evidence": "q"}, (True, "q")),
        ({"passed": "FAIL", "evidence": "q"}, (False, "q")),
        ({"pass": "yes", "reason": "r"}, (True, "r")),
        ({"verdict": "pass"}, (True, "")),
        ({"result": "failed", "reasoning": "x"}, (False, "x")),
    ],
)
def test_assertion_verdict_spellings(obj, expected):
    assert assertion_verdict(obj) == expected


@pytest.mark.parametrize("obj", [{}, {"passed": "maybe"}, {"passed": 1}, {"evidence": "only"}])
def test_assertion_verdict_refused(obj):
    with pytest.raises(ValueError):
        assertion_verdict(obj)


@pytest.mark.parametrize(
    "obj, expected",
    [({"score": 0.25, "reasoning": "r"}, (0.25, "r")), ({"rating": "1", "reason": "ok"}, (1.0, "ok")), ({"score": 0}, (0.0, ""))],
)
def test_rubric_verdict_spellings(obj, expected):
    assert rubric_verdict(obj) == expected


@pytest.mark.parametrize("obj", [{}, {"score": 7}, {"score": -0.1}, {"score": True}, {"score": "high"}])
def test_rubric_verdict_refused(obj):
    with pytest.raises((ValueError, TypeError)):
        rubric_verdict(obj)
