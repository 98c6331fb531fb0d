"""Hostile judge replies: every verdict shape and every reply body ends as a scored or an
errored grader with its reason (real client, scripted server), and as a scored or errored
trial in a full report through the real CLI. A grader never raises."""

from __future__ import annotations

import json

import pytest

from agentsproof.grading.assertions import AssertionsGrader
from agentsproof.grading.llm_rubric import LLMRubricGrader
from agentsproof.grading.deterministic import DeterministicGrader
from agentsproof.llm.replies import MAX_JSON_DEPTH, MAX_VERDICT_CHARS
from agentsproof.grading.grade import combine, grade_all
from agentsproof.grading.assertions import grade_assertions
from agentsproof.grading.llm_rubric import grade_rubric
from conftest import Rule, make_plugin, read_json, run_cli, simple_eval

RUBRIC = LLMRubricGrader(type="llm_rubric", rubric="Mentions 'pytest'.", weight=1.0)

# (id, judge reply text, expected): ("score", value) or ("error", reason part)
VERDICTS = [
    ("400-digit-score", '{"reasoning": "r", "score": ' + "1" * 400 + "}", ("error", "400 digits exceeds the limit of 40")),
    ("deep-nesting", '{"score": ' + "[" * 40_000 + "]" * 40_000 + "}", ("error", f"the limit is {MAX_JSON_DEPTH}")),
    ("score-string", '{"reasoning": "r", "score": "0.7"}', ("score", 0.7)),
    ("score-42", '{"reasoning": "r", "score": 42}', ("error", "'score' 42 is outside 0..1")),
    ("score-negative", '{"reasoning": "r", "score": -0.5}', ("error", "is outside 0..1")),
    ("score-bool", '{"reasoning": "r", "score": true}', ("error", "'score' is not a number")),
    ("score-nan", '{"reasoning": "r", "score": NaN}', ("error", "NaN is not a valid JSON number")),
    ("score-nan-string", '{"reasoning": "r", "score": "nan"}', ("error", "is outside 0..1")),
    ("score-infinity", '{"reasoning": "r", "score": Infinity}', ("error", "Infinity is not a valid JSON number")),
    ("score-1e400", '{"reasoning": "r", "score": 1e400}', ("error", "1e400 is out of range")),
    ("score-long-string", '{"score": "' + "9" * 400 + '"}', ("error", "is not a number")),
    ("score-object", '{"score": {"value": 1}}', ("error", "'score' is not a number")),
    ("top-level-array", "[0.5]", ("error", "no JSON object found")),
    ("reasoning-nested", '{"reasoning": {"a": [1, 2]}, "score": 1}', ("score", 1.0)),
    ("huge-reply", '{"score": 1, "reasoning": "' + "x" * MAX_VERDICT_CHARS + '"}', ("error", f"the limit is {MAX_VERDICT_CHARS:,}")),
    ("null-bytes", '{"score": 0.25, "reasoning": "a\\u0000b"}', ("score", 0.25)),
]
VIDS = [v[0] for v in VERDICTS]

# (id, judge reply *body* rule kwargs, reason part): the provider layer refuses these
BODIES = [
    ("content-null", {"body": {"choices": [{"message": {"role": "assistant", "content": None}}]}}, "empty reply (content is null"),
    ("choices-empty", {"body": {"choices": []}}, "no choices"),
    ("choices-null", {"body": {"choices": [None]}}, "choices[0] is null"),
    ("top-level-array", {"body": []}, "the reply is an array"),
    ("invalid-utf8", {"raw_body": b'{"choices": [{"message": {"content": "\xff"}}]}'}, "not valid UTF-8"),
]
BIDS = [b[0] for b in BODIES]


@pytest.mark.parametrize("name, reply, expected", VERDICTS, ids=VIDS)
async def test_rubric_verdict_shapes(judge, scripted_server, name, reply, expected):
    scripted_server.add(Rule(reply=reply, judge=True))
    res = await grade_rubric("use pytest", RUBRIC, judge, "t")
    if expected[0] == "score":
        assert not res.errored and res.score == expected[1]
        assert isinstance(res.reasoning, str)
    else:
        assert res.errored and res.score is None and expected[1] in res.error, res.error
        assert "after 3 attempts" in res.error and len(res.error) < 1000
        assert len(scripted_server.requests) == 3


@pytest.mark.parametrize(
    "reply, expected",
    [
        ('{"evidence": "e", "passed": "yes"}', ("passed", True)),
        ('{"evidence": "e", "passed": 1}', ("error", "'passed' is not true/false")),
        ('{"evidence": ' + "[" * 100 + "]" * 100 + ', "passed": true}', ("error", f"the limit is {MAX_JSON_DEPTH}")),
        ('{"evidence": 12345678901234567890123456789012345678901, "passed": true}', ("error", "exceeds the limit of 40")),
    ],
)
async def test_assertion_verdict_shapes(judge, scripted_server, reply, expected):
    scripted_server.add(Rule(reply=reply, judge=True))
    spec = AssertionsGrader(type="assertions", assertions=["It greets"], weight=1.0)
    res = await grade_assertions("hello", spec, judge, "t")
    if expected[0] == "passed":
        assert not res.errored and res.checks[0].passed is expected[1]
    else:
        assert res.errored and expected[1] in res.error, res.error


@pytest.mark.parametrize("name, rule, reason", BODIES, ids=BIDS)
async def test_judge_reply_bodies_error_the_grader(judge, scripted_server, name, rule, reason):
    scripted_server.add(Rule(judge=True, **rule))
    graders = [DeterministicGrader(type="deterministic", checks=["pytest"]), RUBRIC]
    results = await grade_all("use pytest", graders, judge, "t")
    assert results[0].score == 1.0
    assert results[1].errored and "judge call failed" in results[1].error and reason in results[1].error, results[1].error
    assert combine(results) is None


async def test_grade_all_never_raises(scripted_server):
    """An LLM grader without a judge is a bug of the caller, still reported, not raised."""
    results = await grade_all("x", [RUBRIC], None, "t")
    assert results[0].errored and "grader failed" in results[0].error and "judge" in results[0].error


# ---------------------------------------------------------------- through the CLI


@pytest.mark.parametrize(
    "rule, expected",
    [
        ({"reply": '{"reasoning": "r", "score": ' + "1" * 400 + "}"}, ("error", "400 digits")),
        ({"reply": '{"score": ' + "[" * 40_000 + "]" * 40_000 + "}"}, ("error", f"the limit is {MAX_JSON_DEPTH}")),
        ({"reply": '{"reasoning": "r", "score": 42}'}, ("error", "outside 0..1")),
        ({"body": {"choices": [{"message": {"content": None}}]}}, ("error", "empty reply")),
        ({"body": {"choices": [None]}}, ("error", "choices[0] is null")),
        ({"reply": '{"reasoning": "r", "score": "0.7"}'}, ("score", 0.7)),
    ],
    ids=["400-digits", "deep", "score-42", "content-null", "choices-null", "score-string"],
)
def test_cli_judge_shapes(byok_env, tmp_path, monkeypatch, rule, expected):
    monkeypatch.setenv("AGENTSPROOF_MAX_RETRIES", "0")
    byok_env.add(Rule(judge=True, **rule), Rule(reply="We use pytest", judge=False))
    ev = simple_eval([{"type": "llm_rubric", "rubric": "Mentions 'pytest'."}], trials=1)
    make_plugin(tmp_path, skills={"greeter": {"prompt": "Be brief.\n", "eval": ev}})
    out = tmp_path / "out"
    code, stdout, stderr = run_cli(["eval", tmp_path / "demo-plugin/skills/greeter/eval.yaml", "--model", "m", "--output", out])
    assert "Traceback" not in stdout + stderr and "internal error" not in (stdout + stderr).lower(), stderr
    for ext in ("json", "md", "html"):
        assert (out / "demo-plugin" / f"greeter-eval.{ext}").is_file()
    item = read_json(out / "demo-plugin/greeter-eval.json")["items"][0]
    for arm in ("with_arm", "without_arm"):
        (trial,) = item[arm]["trials"]
        if expected[0] == "score":
            assert trial["status"] == "scored" and trial["score"] == pytest.approx(expected[1])
        else:
            assert trial["status"] == "errored" and trial["score"] is None
            assert "llm_rubric" in trial["error"] and expected[1] in trial["error"], trial["error"]
    assert code == (0 if expected[0] == "score" else 30), stderr
    json.dumps(item)  # the report is plain JSON
