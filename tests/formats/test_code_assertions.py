"""promptfoo's ``python`` and ``javascript`` assertions run as promptfoo runs them: inline (an
expression, or a function body) or ``file://x.py[:fn]`` / ``.js``, with ``output`` and
``context`` (vars, prompt), returning a bool, a number (``threshold``) or {pass, score,
reason}; ``not-`` inverts them; a raised error fails the check with its reason; bad values
are one line naming the field. On the scripted server, end to end."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from conftest import Rule, read_json, run_cli

CONFIG = """\
prompts: ["Translate to French: {{input}}"]
providers: [openai:gpt-4o-mini]
tests:
  - description: py-expression
    vars: {input: Hello, expected: bonjour}
    assert:
      - type: python
        value: "context['vars']['expected'] in output.lower()"
  - description: py-body
    vars: {input: Hello}
    assert:
      - type: python
        value: |
          words = output.split()
          if len(words) > 50:
              return {'pass': False, 'score': 0, 'reason': 'too long'}
          return {'pass': True, 'score': 0.9, 'reason': 'short enough'}
  - description: py-file
    vars: {input: Hello}
    assert:
      - type: python
        value: file://checks/tone.py:polite
  - description: py-number-below-threshold
    vars: {input: Hello}
    assert:
      - type: python
        value: "0.3"
        threshold: 0.5
  - description: js-expression
    vars: {input: Hello}
    assert:
      - type: javascript
        value: "output.toLowerCase().includes('bonjour') && context.prompt.includes('French')"
  - description: js-body
    vars: {input: Hello}
    assert:
      - type: javascript
        value: |
          const n = output.length;
          return n < 5 ? {pass: false, score: 0, reason: 'short'} : n / 10;
  - description: js-file
    vars: {input: Hello}
    assert:
      - type: javascript
        value: file://checks/check.js
  - description: js-raises
    vars: {input: Hello}
    assert:
      - type: javascript
        value: "output.nope.deeper"
  - description: not-python
    vars: {input: Hello}
    assert:
      - type: not-python
        value: "'merci' in output.lower()"
"""

EXPECTED = {
    "py-expression": True,
    "py-body": True,
    "py-file": True,
    "py-number-below-threshold": False,
    "js-expression": True,
    "js-body": True,
    "js-file": False,
    "js-raises": False,
    "not-python": True,
}


def _config(tmp_path: Path, text: str = CONFIG) -> Path:
    folder = tmp_path / "code"
    (folder / "checks").mkdir(parents=True)
    (folder / "checks" / "tone.py").write_text(
        "def polite(output, context):\n    return {'pass': 'bonjour' in output.lower(), 'score': 1, 'reason': 'greets ' + context['vars']['input']}\n"
    )
    (folder / "checks" / "check.js").write_text("module.exports = (output, context) => output.includes('Au revoir');\n")
    (folder / "promptfooconfig.yaml").write_text(text)
    return folder / "promptfooconfig.yaml"


def _items(tmp_path: Path) -> dict[str, Any]:
    data = read_json(tmp_path / "out" / "code" / "code-tc-eval.json")
    return {i["name"]: i for i in data["items"]}


def test_python_and_javascript_assertions_run_with_output_and_context(byok_env, tmp_path):
    byok_env.add(Rule(reply="Bonjour, mon ami !", judge=False))
    path = _config(tmp_path)
    code, _, err = run_cli(["eval", path, "--model", "m", "--output", tmp_path / "out", "--no-cache"])
    assert "Traceback" not in err, err
    assert code in (0, 1), err
    items = _items(tmp_path)
    got = {name: item["with_arm"]["trials"][0]["passed"] for name, item in items.items()}
    assert got == EXPECTED, err
    assert all(item["with_arm"]["trials"][0]["error"] is None for item in items.values())
    evidence = {name: str(item["with_arm"]["trials"][0]["graders"]) for name, item in items.items()}
    assert "short enough" in evidence["py-body"] and "returned score 0.9" in evidence["py-body"]
    assert "greets Hello" in evidence["py-file"]  # the file's function got context.vars
    assert "returned score 0.3" in evidence["py-number-below-threshold"]
    assert "TypeError" in evidence["js-raises"]
    assert not byok_env.judge_requests()  # no judge for code assertions


@pytest.mark.parametrize(
    ("assertion", "field", "words"),
    [
        ("{type: python, value: ''}", "tests[0].assert[0].value", "python code"),
        ("{type: python, value: 'file://checks/missing.py'}", "tests[0].assert[0].value", "not found"),
        ("{type: javascript, value: 'file://checks/tone.py'}", "tests[0].assert[0].value", "ends in .js"),
        ("{type: python, value: 'True', threshold: high}", "tests[0].assert[0].threshold", "must be a number"),
        ("{type: python, value: 'file://../../outside.py'}", "tests[0].assert[0].value", "outside"),
        ("{type: python, value: 'True', config: 5}", "tests[0].assert[0].config", "must be a mapping"),
        ("{type: contains, value: 'x', config: {a: 1}}", "tests[0].assert[0].config", "'config' on 'contains' is not supported"),
        ("{type: python, value: 'True', wobble: 1}", "tests[0].assert[0].wobble", "unknown key"),
    ],
)
def test_a_bad_code_assertion_is_one_line_naming_the_field(tmp_path, assertion, field, words):
    text = f"prompts: ['Say {{{{input}}}}']\ntests:\n  - vars: {{input: hi}}\n    assert: [{assertion}]\n"
    path = _config(tmp_path, text)
    (tmp_path / "outside.py").write_text("def get_assert(output, context):\n    return True\n")
    code, out, err = run_cli(["eval", path, "--model", "m", "--output", tmp_path / "out"])
    assert code == 30 and "Traceback" not in err, err
    line = next(line for line in err.splitlines() if field in line)
    assert words in line, err


def test_a_csv_expected_column_takes_python_and_javascript_and_metadata_columns(byok_env, tmp_path):
    byok_env.add(Rule(reply="Bonjour", judge=False))
    path = _config(tmp_path, "prompts: ['Translate to French: {{input}}']\ntests: file://tests.csv\n")
    (path.parent / "tests.csv").write_text(
        "input,__expected,__expected2,__metadata:category,__description\n"
        "Hello,python: output.startswith('Bon'),javascript: output.length < 20,greeting,csv-code\n"
        "Thanks,fn: output.includes('Merci'),not-python: len(output) > 3,thanks,csv-fails\n"
    )
    code, _, err = run_cli(["eval", path, "--model", "m", "--output", tmp_path / "out", "--no-cache"])
    assert "Traceback" not in err and code in (0, 1), err
    got = {name: item["with_arm"]["trials"][0]["passed"] for name, item in _items(tmp_path).items()}
    assert got == {"csv-code": True, "csv-fails": False}, err
    (path.parent / "tests.csv").write_text("input,__expected,__wobble\nHello,contains: Bon,x\n")
    code, _, err = run_cli(["eval", path, "--model", "m", "--output", tmp_path / "out"])
    assert code == 30 and "column '__wobble' is not read by agentsproof" in err, err  # __prefix, __suffix, __threshold, __metric, __config: are


def test_an_assertion_provider_is_that_graders_judge_model(byok_env, tmp_path):
    byok_env.add(Rule(reply="Bonjour", judge=False))
    byok_env.add(Rule(reply='{"reasoning": "ok", "score": 0.9}', judge=True))
    text = (
        "prompts: ['Translate: {{input}}']\ntests:\n  - vars: {input: Hello}\n    assert:\n"
        "      - {type: llm-rubric, value: A French greeting, provider: 'openai:chat:gpt-4o-mini'}\n"
        "      - {type: llm-rubric, value: Polite, provider: {id: 'openai:o4-mini'}}\n"
        "      - {type: llm-rubric, value: Short}\n"
        "  - vars: {input: Bye}\n    options: {provider: 'openai:gpt-4.1'}\n    assert: [{type: llm-rubric, value: A French goodbye}]\n"
        "defaultTest:\n  options: {provider: 'openai:gpt-4.1-nano'}\n"
    )
    path = _config(tmp_path, text)
    code, _, err = run_cli(["eval", path, "--model", "m", "--judge-model", "judge-m", "--output", tmp_path / "out", "--no-cache"])
    assert code == 0, err
    # each assertion's own provider, else its test's options.provider, else defaultTest's
    assert sorted(r["model"] for r in byok_env.judge_requests()) == ["gpt-4.1", "gpt-4.1-nano", "gpt-4o-mini", "o4-mini"]
    assert {r["model"] for r in byok_env.trial_requests()} == {"m"}


@pytest.mark.parametrize(
    ("provider", "field", "words"),
    [
        ("'file://judge.py'", "tests[0].assert[0].provider", "not a model"),
        ("'exec: python3 judge.py'", "tests[0].assert[0].provider", "not a model"),
        ("{id: 'openai:gpt-4o', config: {temperature: 0}}", "tests[0].assert[0].provider.config", "settings are not applied"),
    ],
)
def test_a_judge_provider_that_is_not_a_model_is_refused(tmp_path, provider, field, words):
    text = f"prompts: ['Say {{{{input}}}}']\ntests:\n  - vars: {{input: hi}}\n    assert: [{{type: llm-rubric, value: Greets, provider: {provider}}}]\n"
    code, _, err = run_cli(["eval", _config(tmp_path, text), "--model", "m", "--output", tmp_path / "out"])
    assert code == 30 and "Traceback" not in err, err
    line = next(line for line in err.splitlines() if f"{field}:" in line)
    assert words in line, err
