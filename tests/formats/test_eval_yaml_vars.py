"""EVAL.yaml ``{{ name }}`` templates are filled from the test's ``vars`` wherever a test
has text — input (string or messages), expected_output, rubrics, as prompts, criteria and
assertion values already were — and a name with no such var is one line naming the file,
the field and the var (it used to be sent to the model verbatim)."""

from __future__ import annotations

import json

import pytest

from conftest import Rule, run_cli

BAD = [
    ("tests:\n  - id: a\n    input: 'Say {{ nope }}'\n    criteria: x\n", "tests[0].input: uses {{ nope }} but the test has no var 'nope'"),
    ("tests:\n  - id: a\n    input: [{role: user, content: 'Hi {{nope}}'}]\n    criteria: x\n", "tests[0].input: uses {{ nope }} but the test has no var 'nope'"),
    ("tests:\n  - id: a\n    input: hi\n    expected_output: '{{ nope }}'\n", "tests[0].expected_output: uses {{ nope }} but the test has no var 'nope'"),
    ("tests:\n  - id: a\n    input: hi\n    rubrics: ['mentions {{ nope }}']\n", "tests[0].rubrics[0]: uses {{ nope }} but the test has no var 'nope'"),
]


@pytest.mark.parametrize("text, message", BAD)
def test_an_unknown_template_var_is_one_line_naming_file_field_and_var(tmp_path, byok_env, text, message):
    path = tmp_path / "EVAL.yaml"
    path.write_text(text, encoding="utf-8")
    code, _, err = run_cli(["eval", path, "--model", "m", "--output", tmp_path / "out"])
    assert code == 30 and err.count("\n") == 1 and "Traceback" not in err, err
    assert f"EVAL.yaml: {message}" in err, err
    assert byok_env.requests == [], "nothing was sent"


def test_known_vars_are_filled_in_the_input_and_the_expected_output(tmp_path, byok_env):
    byok_env.add(Rule(reply="HELLO WORLD", judge=False), Rule(reply=json.dumps({"score": 1, "reasoning": "ok"}), judge=True))
    path = tmp_path / "EVAL.yaml"
    path.write_text(
        "tests:\n  - id: a\n    vars: {who: world}\n    input: 'Say hello to the {{ who }}'\n"
        "    expected_output: 'HELLO {{who}}'\n    assert: [{type: icontains, value: 'hello {{ who }}'}]\n",
        encoding="utf-8",
    )
    code, _, err = run_cli(["eval", path, "--model", "m", "--output", tmp_path / "out"])
    assert code in (0, 1) and "Traceback" not in err, err
    sent = [json.dumps(r) for r in byok_env.requests]
    assert any("Say hello to the world" in s for s in sent), sent
    assert not any("{{" in s for s in sent)
