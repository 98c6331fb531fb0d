"""agentv's multi-turn tests (tests/data/agentv-real: copied from EntityProcess/agentv, MIT, see
the LICENSE there): ``turns`` run as one session of follow-up messages on the scripted server,
each turn's assertions grade that turn's reply, a history of assistant messages in ``input`` is
quoted in the one message sent, and what cannot be honoured is refused by name."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from agentsproof.core.errors import InputError
from conftest import Rule, read_json, run_cli

REAL = Path(__file__).resolve().parents[1] / "data" / "agentv-real" / "examples" / "features"
LIVE = REAL / "multi-turn-conversation-live"
HISTORY = REAL / "multi-turn-conversation"


def _load(path: Path):
    from agentsproof.formats.agentevals.items import load_suite

    return load_suite(path)


def test_turns_become_follow_ups_and_turn_scoped_graders(tmp_path):
    shutil.copytree(LIVE, tmp_path / "live")
    loaded = _load(tmp_path / "live" / "evals" / "suite.yaml")
    test = next(t for t in loaded.suite.tests if t.id == "context-retention")
    assert test.prompt.startswith("Instructions:\nYou are a helpful math tutor") and test.prompt.endswith("What is 15% of 200?")
    assert test.turns == ("Now double that result.", "What were the original numbers I asked about?")
    graders = loaded.graders["context-retention"].graders
    assert [g.turn for g in graders] == ["all", 1, 1, 2, 2, 3, 3]
    weakest = loaded.graders["weakest-link-scoring"].graders  # aggregation: min: every turn's check a gate
    assert [getattr(g, "required", False) for g in weakest] == [False, True, True, True]
    mixed = loaded.graders["mixed-assertions"].graders
    assert [(g.type, g.turn) for g in mixed] == [("assertions", "all"), ("assertions", 1), ("deterministic", 1), ("assertions", 2), ("deterministic", 2)]


def test_real_multi_turn_suite_runs_each_turn_in_one_session_on_the_scripted_server(byok_env, tmp_path):
    shutil.copytree(LIVE, tmp_path / "live")
    suite = tmp_path / "live" / "evals" / "suite.yaml"
    byok_env.add(Rule(reply="def add(a: int, b: int) -> int:\n    return a + b", judge=False))
    byok_env.add(Rule(reply='{"passed": true, "evidence": "ok"}', judge=True))
    out = tmp_path / "out"
    code, _, err = run_cli(["eval", suite, "--model", "m", "--output", out, "--no-cache", "--trials", "1"])
    assert code in (0, 1), err
    items = {i["name"]: i for i in read_json(next(out.rglob("*-tc-eval.json")))["items"]}
    trial = items["mixed-assertions"]["with_arm"]["trials"][0]
    assert trial["status"] == "scored" and len(trial["replies"]) == 2, trial
    contains = [g for g in trial["graders"] if g["type"] == "deterministic"]
    assert [g["score"] for g in contains] == [1.0, 1.0]  # 'def' in turn 1, '->' in turn 2
    follow = [r for r in byok_env.trial_requests() if any(m.get("content") == "Now add type hints to the function." for m in r["messages"])]
    assert follow, "the second turn was never sent"
    roles = [m["role"] for m in follow[0]["messages"]]
    assert roles[-3:] == ["user", "assistant", "user"]  # the first turn and its reply, in the same conversation


def test_a_history_with_assistant_messages_is_quoted_in_the_message_sent(byok_env, tmp_path):
    shutil.copytree(HISTORY, tmp_path / "h")
    suite = tmp_path / "h" / "evals" / "suite.yaml"
    loaded = _load(suite)
    prompt = loaded.suite.tests[0].prompt
    assert "Earlier in this conversation:" in prompt and "\nAssistant: Hello Sarah!" in prompt
    assert prompt.endswith("The express shipping sounds great. Also, can you add gift wrapping?")
    byok_env.add(Rule(reply="Done, Sarah: order #98765 ships express with gift wrapping.", judge=False))
    out = tmp_path / "out"
    code, _, err = run_cli(["eval", suite, "--model", "m", "--output", out, "--no-cache", "--trials", "1"])
    assert code in (0, 1), err
    sent = byok_env.trial_requests()[0]["messages"][-1]["content"]
    assert "Assistant: I completely understand the urgency, Sarah." in sent


@pytest.mark.parametrize(
    ("test", "field", "words"),
    [
        ("turns: [{input: a}]\n    aggregation: max", "tests[0].aggregation", "not supported"),
        ("turns: [{input: a}]\n    window_size: 2", "tests[0].window_size", "not supported"),
        ("turns: [{input: a}]\n    mode: batch", "tests[0].mode", "conversation"),
        ("turns: []", "tests[0].turns", "non-empty"),
        ("turns: [{input: a, expected_output: b}]", "tests[0].turns[0].expected_output", "per turn"),
        ("turns: [{input: a, assert: [{type: tool-calls, must_call: [x]}]}]", "tests[0].turns[0].assert[0].type", "whole trial"),
        ("input: [{role: user, content: a}, {role: assistant, content: b}]", "tests[0].input[1]", "ends with the user's"),
        ("input: [{role: tool, content: a}]", "tests[0].input[0].role", "expected system, user or assistant"),
    ],
)
def test_what_cannot_be_honoured_is_refused_by_name(tmp_path, test, field, words):
    suite = tmp_path / "s.eval.yaml"
    suite.write_text(f"tests:\n  - id: t\n    criteria: Answers\n    {test}\n")
    with pytest.raises(InputError) as caught:
        _load(suite)
    assert caught.value.field == field and words in caught.value.message, caught.value


def test_a_sets_members_take_its_turn_and_a_trajectory_check_stays_whole_trial(tmp_path):
    suite = tmp_path / "s.eval.yaml"
    suite.write_text(
        "tests:\n  - id: t\n    assert:\n      - {type: trajectory:step-count, value: {max: 5}}\n"
        "      - {type: assert-set, assert: [{type: contains, value: a}]}\n    turns:\n      - input: hi\n"
        "        assert:\n          - {type: assert-set, assert: [{type: contains, value: b}]}\n"
        "      - input: again\n        assert: [{type: not-contains, value: z}]\n"
    )
    graders = _load(suite).graders["t"].graders
    assert [(g.type, getattr(g, "turn", None)) for g in graders] == [("tool_calls", None), ("deterministic", "all"), ("deterministic", 1), ("deterministic", 2)]


def test_a_conversation_with_nothing_to_check_runs_ungraded(tmp_path):
    suite = tmp_path / "s.eval.yaml"
    suite.write_text("tests:\n  - id: t\n    turns: [{input: a}, {input: b}]\n")
    loaded = _load(suite)
    assert [list(b.graders) for b in loaded.graders.values()] == [[]]  # seed 000: neither → score always 1.0
