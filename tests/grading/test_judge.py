"""judge_json and the JSON extraction it relies on."""

from __future__ import annotations

import pytest

from agentsproof.grading.judge import JUDGE_ATTEMPTS, JudgeError, extract_json_object, judge_json
from conftest import Rule


@pytest.mark.parametrize(
    "text, expected",
    [
        ('{"a": 1}', {"a": 1}),
        ('  {"a": 1}  \n', {"a": 1}),
        ('```json\n{"a": 2}\n```', {"a": 2}),
        ('```\n{"a": 3}\n```', {"a": 3}),
        ('Sure! {"a": 4} Anything else?', {"a": 4}),
        ('{"a": {"b": [1, 2]}} trailing', {"a": {"b": [1, 2]}}),
    ],
)
def test_extract_json_object(text, expected):
    assert extract_json_object(text) == expected


@pytest.mark.parametrize("text", ["", "no braces", "[1, 2]", "{not json}", '"a string"'])
def test_extract_json_object_rejects(text):
    with pytest.raises(ValueError):
        extract_json_object(text)


def _needs_ok(obj):
    if obj.get("ok") is not True:
        raise ValueError("'ok' must be true")
    return "fine"


SCHEMA = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}


async def test_judge_json_retries_with_the_problem_then_succeeds(judge, scripted_server):
    scripted_server.add(Rule(reply='{"ok": true}', judge=None, user_contains="could not be used"), Rule(reply='{"ok": false}'))
    value, usage, raw = await judge_json(judge, "sys", "question", SCHEMA, _needs_ok)
    assert value == "fine" and raw == ['{"ok": false}', '{"ok": true}']
    assert usage.total_tokens > 0
    second = scripted_server.requests[1]["messages"]
    assert "'ok' must be true" in second[3]["content"]


async def test_judge_json_gives_up_after_attempts(judge, scripted_server):
    scripted_server.add(Rule(reply="nope"))
    with pytest.raises(JudgeError, match=f"after {JUDGE_ATTEMPTS} attempts"):
        await judge_json(judge, "sys", "q", SCHEMA, _needs_ok)
    assert len(scripted_server.requests) == JUDGE_ATTEMPTS


async def test_judge_json_provider_error_is_judge_error(judge, scripted_server):
    scripted_server.add(Rule(status=401))
    with pytest.raises(JudgeError, match="401"):
        await judge_json(judge, "sys", "q", SCHEMA, _needs_ok)
    assert len(scripted_server.requests) == 1  # 401 is not retried
