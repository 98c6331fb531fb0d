"""Assertions grader: one fresh judge call per assertion, pass/fail with evidence."""

from __future__ import annotations


import pytest

from agentsproof.grading.assertions import AssertionsGrader
from agentsproof.grading.grade import grade_all
from agentsproof.grading.assertions import grade_assertions
from conftest import Rule
from openai_server import default_reply


def spec(*assertions, weight=1.0):
    return AssertionsGrader(type="assertions", assertions=list(assertions), weight=weight)


async def test_each_assertion_is_its_own_call(judge, scripted_server):
    res = await grade_assertions("We use 'pytest' and 'tox'", spec("Uses 'pytest'", "Uses 'tox'", "Uses 'nox'"), judge, "task")
    assert res.score == pytest.approx(2 / 3) and not res.errored
    assert [(c.target, c.passed) for c in res.checks] == [("Uses 'pytest'", True), ("Uses 'tox'", True), ("Uses 'nox'", False)]
    assert all(c.kind == "assertion" and c.evidence for c in res.checks)
    assert len(scripted_server.requests) == 3
    for req in scripted_server.requests:
        assert len(req["messages"]) == 2 and req["temperature"] == 0


async def test_string_verdicts_are_accepted(judge, scripted_server):
    scripted_server.add(Rule(reply='{"evidence": "q", "passed": "true"}', judge=True))
    res = await grade_assertions("x", spec("a"), judge, "t")
    assert res.score == 1.0


async def test_one_unusable_assertion_errors_the_grader(judge, scripted_server):
    def reply(req):  # every attempt at assertion b gets prose, whatever the follow-up says
        return "maybe?" if "Uses 'b'" in req["messages"][1]["content"] else default_reply(req)

    scripted_server.add(Rule(reply=reply, judge=True))
    res = await grade_assertions("a b", spec("Uses 'a'", "Uses 'b'"), judge, "t")
    assert res.errored and res.score is None and "Uses 'b'" in res.error
    assert [c.target for c in res.checks] == ["Uses 'a'"]
    assert len(scripted_server.requests) == 1 + 3


async def test_grade_all_mixes_graders_and_runs_judge_calls_concurrently(judge, scripted_server):
    from agentsproof.grading.deterministic import DeterministicGrader

    scripted_server.latency = 0.1
    graders = [
        DeterministicGrader.model_validate({"type": "deterministic", "checks": ["a"]}),
        spec("Uses 'a'", "Uses 'b'", "Uses 'c'", "Uses 'd'"),
    ]
    results = await grade_all("a b", graders, judge, "t")
    assert [r.score for r in results] == [1.0, 0.5]
    assert scripted_server.max_in_flight == 4  # the four judge calls were at the server together
