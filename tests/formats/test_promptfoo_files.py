"""promptfoo configs as they are found: tests from globs (``file://tests/*.yaml``), JSON Lines
and lists mixing inline tests with files; ``assertionTemplates`` taken by ``$ref``; the keys
agentsproof does not honour (``scenarios``, a test's ``options``/``threshold``/``provider``,
``providers[].prompts`` …) each refused with its reason, one line. On the scripted server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import Rule, read_json, run_cli


def _folder(tmp_path: Path, config: str) -> Path:
    folder = tmp_path / "pf"
    (folder / "tests").mkdir(parents=True)
    (folder / "promptfooconfig.yaml").write_text(config)
    return folder


def _names(tmp_path: Path) -> dict[str, bool]:
    data = read_json(tmp_path / "out" / "pf" / "pf-tc-eval.json")
    return {i["name"]: i["with_arm"]["trials"][0]["passed"] for i in data["items"]}


def test_tests_from_globs_jsonl_and_a_mixed_list_with_assertion_templates(byok_env, tmp_path):
    byok_env.add(Rule(reply="Bonjour", judge=False))
    folder = _folder(
        tmp_path,
        "prompts: ['Translate: {{input}}']\n"
        "assertionTemplates:\n  greets: {type: icontains, value: bonjour}\n"
        "tests:\n"
        "  - description: inline\n    vars: {input: Hello}\n    assert: [{$ref: '#/assertionTemplates/greets'}]\n"
        "  - file://tests/*.yaml\n"
        "  - file://cases.jsonl\n",
    )
    (folder / "tests" / "a.yaml").write_text("- description: from-a\n  vars: {input: Hi}\n  assert: [{type: contains, value: Bon}]\n")
    (folder / "tests" / "b.yaml").write_text("description: from-b\nvars: {input: Hey}\nassert: [{$ref: '#/assertionTemplates/greets', weight: 2}]\n")
    (folder / "tests" / "notes.txt").write_text("not a test file\n")
    lines = [{"description": "jsonl-1", "vars": {"input": "Yo"}, "assert": [{"type": "contains", "value": "Bonjour"}]},
             {"description": "jsonl-2", "vars": {"input": "Sup"}, "assert": [{"type": "contains", "value": "Merci"}]}]
    (folder / "cases.jsonl").write_text("\n".join(json.dumps(x) for x in lines) + "\n\n")
    code, _, err = run_cli(["eval", folder / "promptfooconfig.yaml", "--model", "m", "--output", tmp_path / "out", "--no-cache"])
    assert "Traceback" not in err and code in (0, 1), err
    assert _names(tmp_path) == {"inline": True, "from-a": True, "from-b": True, "jsonl-1": True, "jsonl-2": False}
    data = read_json(tmp_path / "out" / "pf" / "pf-tc-eval.json")
    b = next(i for i in data["items"] if i["name"] == "from-b")
    assert b["with_arm"]["trials"][0]["graders"][0]["weight"] == 2  # the template, the entry's own keys over it


@pytest.mark.parametrize(
    ("config", "field", "words"),
    [
        ("tests: file://tests/*.yml\n", "tests", "matches no file"),
        ("tests: file://../*.yaml\n", "tests", "must stay inside"),
        ("tests: [file://gen.py]\n", "tests[0]", "test generators are not run"),
        ("tests:\n  - vars: {input: a}\n    assert: [{$ref: '#/assertionTemplates/nope'}]\n", "tests[0].assert[0].$ref", "names no assertionTemplates entry"),
        ("tests:\n  - vars: {input: a}\n    provider: openai:gpt-4o\n    assert: [{type: contains, value: a}]\n", "tests[0].provider", "own provider"),
        ("providers: [{id: openai:gpt-4o, prompts: [p1]}]\ntests:\n  - vars: {input: a}\n    assert: [{type: contains, value: a}]\n", "providers[0].prompts", "names no prompt"),
        ("tests:\n  - vars: {input: a}\n    options: {storeOutputAs: x}\n    assert: [{type: contains, value: a}]\n", "tests[0].options.storeOutputAs", "in order"),
        ("tests:\n  - vars: {input: a}\n    threshold: 2\n    assert: [{type: contains, value: a}]\n", "tests[0].threshold", "from 0 to 1"),    ],
)
def test_what_is_not_honoured_is_refused_with_its_reason(tmp_path, config, field, words):
    folder = _folder(tmp_path, "prompts: ['Say {{input}}']\n" + config)
    (folder / "gen.py").write_text("def generate(): return []\n")
    code, _, err = run_cli(["eval", folder / "promptfooconfig.yaml", "--model", "m", "--output", tmp_path / "out"])
    assert code == 30 and "Traceback" not in err, err
    line = next(line for line in err.splitlines() if f"{field}:" in line)
    assert words in line, err


def test_a_list_var_is_one_case_per_value_and_a_var_glob_one_per_file(byok_env, tmp_path):
    byok_env.add(Rule(reply="Bonjour", judge=False))
    folder = _folder(
        tmp_path,
        "prompts: ['Translate {{input}} ({{doc}})']\n"
        "tests:\n  - description: words\n    vars: {input: [Hello, Hi], doc: file://docs/*.txt}\n    assert: [{type: icontains, value: bonjour}]\n",
    )
    (folder / "docs").mkdir()
    (folder / "docs" / "a.txt").write_text("first doc")
    (folder / "docs" / "b.txt").write_text("second doc")
    code, _, err = run_cli(["eval", folder / "promptfooconfig.yaml", "--model", "m", "--output", tmp_path / "out", "--no-cache"])
    assert code == 0, err
    assert sorted(_names(tmp_path)) == ["words-1", "words-2", "words-3", "words-4"]
    sent = sorted(str(r["messages"][-1]["content"]) for r in byok_env.trial_requests())
    assert sent == ["Translate Hello (first doc)", "Translate Hello (second doc)", "Translate Hi (first doc)", "Translate Hi (second doc)"]
