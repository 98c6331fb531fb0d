"""agentv's llm judge with no rubric of its own (``llm-rubric`` with no ``value``,
``llm-grader`` with no ``prompt``) is graded against the test's ``criteria`` (or its expected
output), as agentv's default judge does; with neither it is refused by name. A
test whose only grader has ``weight: 0`` (agentv: reported, not scored) is refused: nothing is scored."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import Rule, read_json, run_cli

SUITE = """\
name: judge-default
execution:
  target: llm
tests:
  - id: capital
    input: What is the capital of France?
    criteria: The answer names Paris as the capital.
    assertions:
      - type: {kind}
"""


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "judge.eval.yaml"
    path.write_text(text)
    return path


@pytest.mark.parametrize("kind", ["llm-rubric", "llm-grader"])
def test_a_judge_without_a_rubric_is_given_the_tests_criteria(byok_env, tmp_path, kind):
    suite = _write(tmp_path, SUITE.format(kind=kind))
    byok_env.add(Rule(reply="Paris is the capital of France.", judge=False))
    byok_env.add(Rule(reply='{"reasoning": "names Paris", "score": 1.0}', judge=True))
    out = tmp_path / "out"
    code, _, err = run_cli(["eval", suite, "--model", "m", "--output", out, "--no-cache"])
    assert code == 0, err
    reports = sorted(out.rglob("*.json"))
    data = read_json(next(p for p in reports if p.name.endswith("-tc-eval.json")))
    trial = data["items"][0]["with_arm"]["trials"][0]
    assert trial["error"] is None and [g["type"] for g in trial["graders"]] == ["llm_rubric"]
    judged = [json.dumps(r["messages"]) for r in byok_env.judge_requests()]
    assert judged and all("The answer names Paris as the capital." in j for j in judged)


@pytest.mark.parametrize(("kind", "field"), [("llm-rubric", "value"), ("llm-grader", "prompt")])
def test_a_judge_without_a_rubric_or_criteria_is_refused_by_name(tmp_path, kind, field):
    text = SUITE.format(kind=kind).replace("    criteria: The answer names Paris as the capital.\n", "")
    suite = _write(tmp_path, text)
    code, _, err = run_cli(["eval", suite, "--model", "m", "--output", tmp_path / "out"])
    assert code == 30 and len(err.strip().splitlines()) == 1, err
    assert "judge.eval.yaml" in err and f"tests[0].assertions[0].{field}" in err and "no criteria or expected_output" in err


def test_an_expected_output_is_the_rubric_when_there_are_no_criteria(tmp_path):
    from agentsproof.formats.agentevals.items import load_suite

    text = SUITE.format(kind="llm-rubric").replace(
        "    criteria: The answer names Paris as the capital.\n", "    expected_output: Paris\n"
    )
    suite = _write(tmp_path, text)
    graders = load_suite(suite).graders["capital"].graders
    assert [g.type for g in graders] == ["llm_rubric"] and "Expected output (a reference answer):\nParis" in graders[0].rubric


def test_a_test_whose_only_assertion_has_weight_zero_is_refused_as_scoring_nothing(tmp_path):
    text = SUITE.format(kind="llm-rubric") + "        weight: 0\n"
    suite = _write(tmp_path, text)
    code, _, err = run_cli(["eval", suite, "--model", "m", "--output", tmp_path / "out"])
    assert code == 30 and len(err.strip().splitlines()) == 1, err
    assert "tests[0]: every assertion has weight 0" in err and "nothing is scored" in err
