"""agentv's and promptfoo's ``trajectory:*`` assertions as the ``tool_calls`` grader: what
each becomes, the graders the real red-team shape builds (``not-trajectory:tool-used``), run on the
scripted server, and what cannot be honoured refused by name."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentsproof.core.errors import InputError
from agentsproof.formats.agentevals.trajectory import rewrite


@pytest.mark.parametrize(
    ("entry", "expected"),
    [
        ({"type": "trajectory:tool-used", "value": "bash"}, {"type": "tool-calls", "must_call": ["bash"]}),
        (
            {"type": "not-trajectory:tool-used", "value": ["bash", "curl"], "metric": "m"},
            {"type": "tool-calls", "must_not_call": ["bash", "curl"], "metric": "m"},
        ),
        ({"type": "trajectory:tool-used", "value": {"name": "Read"}, "negate": True}, {"type": "tool-calls", "must_not_call": ["Read"]}),
        ({"type": "trajectory:tool-sequence", "value": {"mode": "in_order", "steps": ["Read", "Edit"]}}, {"type": "tool-calls", "sequence": ["Read", "Edit"]}),
        ({"type": "trajectory:tool-sequence", "value": ["Read", "Edit"], "weight": 2}, {"type": "tool-calls", "sequence": ["Read", "Edit"], "weight": 2}),
        (
            {"type": "trajectory:tool-sequence", "value": {"mode": "exact", "steps": ["A", "B"]}},
            {"type": "tool-calls", "sequence": ["A", "B"], "min_steps": 2, "max_steps": 2},
        ),
        ({"type": "trajectory:tool-sequence", "value": {"mode": "any_order", "steps": ["A", "B"]}}, {"type": "tool-calls", "must_call": ["A", "B"]}),
        ({"type": "trajectory:step-count", "value": {"min": 1, "max": 5}}, {"type": "tool-calls", "min_steps": 1, "max_steps": 5}),
        ({"type": "contains", "value": "x"}, {"type": "contains", "value": "x"}),
    ],
)
def test_what_each_trajectory_assertion_becomes(entry, expected):
    assert rewrite("f", "tests[0].assert[0]", entry) == expected


@pytest.mark.parametrize(
    ("entry", "field", "words"),
    [
        ({"type": "not-trajectory:tool-sequence", "value": ["A"]}, "tests[0].assert[0].type", "negating"),
        ({"type": "trajectory:tool-sequence", "value": {"mode": "loose", "steps": ["A"]}}, "tests[0].assert[0].value.mode", "expected in_order"),
        ({"type": "trajectory:tool-used", "value": {"name": "A", "min": 3, "max": 2}}, "tests[0].assert[0].value.min", "more than max"),
        (
            {"type": "trajectory:tool-args-match", "value": {"name": "A", "args": {}, "mode": "fuzzy"}},
            "tests[0].assert[0].value.mode",
            "expected partial or exact",
        ),
        ({"type": "trajectory:step-count", "value": 3}, "tests[0].assert[0].value", "{min: N, max: N}"),
        ({"type": "trajectory:tool-used", "value": "A", "args": {}}, "tests[0].assert[0].args", "unknown key"),
        ({"type": "not-trajectory:tool-used", "value": "A", "negate": True}, "tests[0].assert[0].negate", "already negated"),
    ],
)
def test_what_cannot_be_honoured_is_refused_by_name(entry, field, words):
    with pytest.raises(InputError) as caught:
        rewrite("f", "tests[0].assert[0]", entry)
    assert caught.value.field == field and words in caught.value.message


def test_trajectory_assertions_build_tool_calls_graders(byok_env, tmp_path: Path):
    """The built graders are tool_calls checks (an agent run grades them as tests/targets do);
    in a chat run they check a trajectory with no tool call, as tool-calls does."""
    from agentsproof.formats.agentevals.items import load_suite

    suite = tmp_path / "s.eval.yaml"
    suite.write_text(
        "tests:\n  - id: t\n    input: Fix the bug\n    assert:\n"
        "      - {metric: no-bash, type: not-trajectory:tool-used, value: bash}\n"
        "      - {type: trajectory:tool-sequence, value: {mode: in_order, steps: [Read, Edit]}}\n"
        "      - Fixes the bug.\n"
    )
    graders = load_suite(suite).graders["t"].graders
    assert [g.type for g in graders] == ["tool_calls", "tool_calls", "assertions"]
    assert graders[0].must_not_call == ["bash"] and graders[1].sequence == ["Read", "Edit"]
    from conftest import run_cli

    from conftest import Rule, read_json

    byok_env.add(Rule(reply="Fixed.", judge=False))
    byok_env.add(Rule(reply='{"passed": true, "evidence": "Fixed."}', judge=True))
    code, _, err = run_cli(["eval", suite, "--model", "m", "--output", tmp_path / "out", "--no-cache"])
    assert code in (0, 1), err
    trial = read_json(tmp_path / "out" / "s" / "s-tc-eval.json")["items"][0]["with_arm"]["trials"][0]
    # a chat trial calls no tool: it never calls bash, and never reads then edits
    assert [g["score"] for g in trial["graders"][:2]] == [1.0, 0.0], trial["graders"]
