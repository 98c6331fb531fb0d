"""LLM rubric grader through the real client and the scripted server."""

from __future__ import annotations

import json

import pytest

from agentsproof.grading.llm_rubric import LLMRubricGrader
from agentsproof.grading.llm_rubric import grade_rubric
from conftest import Rule


def spec(rubric="Mentions 'pytest'.", weight=0.3):
    return LLMRubricGrader(type="llm_rubric", rubric=rubric, weight=weight)


async def test_score_reasoning_and_request_shape(judge, scripted_server):
    res = await grade_rubric("use pytest", spec(), judge, "Write a test")
    assert res.score == 1.0 and res.weight == 0.3 and not res.errored
    assert res.reasoning and res.checks[0].kind == "rubric" and res.checks[0].passed
    assert res.usage.total_tokens > 0
    (req,) = scripted_server.requests
    assert req["model"] == "judge-model" and req["temperature"] == 0
    assert req["response_format"]["type"] == "json_schema"
    user = req["messages"][1]["content"]
    assert "Write a test" in user and "Mentions 'pytest'." in user and "use pytest" in user


@pytest.mark.parametrize(
    "reply, score",
    [
        ('{"reasoning": "ok", "score": 0.25}', 0.25),
        ('```json\n{"reasoning": "fenced", "score": 1}\n```', 1.0),
        ('Here you go: {"reasoning": "prose", "score": "0.5"} hope that helps', 0.5),
    ],
)
async def test_tolerated_reply_shapes(judge, scripted_server, reply, score):
    scripted_server.add(Rule(reply=reply, judge=True))
    res = await grade_rubric("x", spec(), judge, "t")
    assert res.score == score and len(scripted_server.requests) == 1


@pytest.mark.parametrize("bad", ["not json at all", '{"reasoning": "x"}', '{"score": 1.5}', '{"score": true}'])
async def test_unusable_reply_is_retried_then_errored_never_zero(judge, scripted_server, bad):
    scripted_server.add(Rule(reply=bad, judge=True))
    res = await grade_rubric("x", spec(), judge, "t")
    assert res.errored and res.score is None and "3 attempts" in res.error
    assert len(scripted_server.requests) == 3
    # the retry tells the judge what was wrong and repeats the schema
    follow_up = scripted_server.requests[1]["messages"]
    assert follow_up[2] == {"role": "assistant", "content": bad}
    assert "could not be used" in follow_up[3]["content"] and json.dumps({"type": "object"})[:10] in follow_up[3]["content"]


async def test_one_bad_reply_then_good_is_scored(judge, scripted_server):
    scripted_server.add(Rule(reply="hmm", judge=True, times=1))
    res = await grade_rubric("pytest", spec(), judge, "t")
    assert res.score == 1.0 and len(scripted_server.requests) == 2


async def test_provider_failure_errors_the_grader(judge, scripted_server):
    scripted_server.add(Rule(status=500))
    res = await grade_rubric("x", spec(), judge, "t")
    assert res.errored and res.score is None and "500" in res.error
