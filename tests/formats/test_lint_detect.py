"""``agentsproof lint`` tells file kinds apart through the formats registry, as the run
commands do: a promptfooconfig.yaml that ``tc-eval`` runs is read as promptfoo (its loader
runs, then its cases are checked), never as an eval.yaml."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import run_cli

from agentsproof.formats import registry
from agentsproof.formats.lint.lint import kind_of

CONFIG = """\
description: Translations
prompts:
  - "Translate to {{language}}: {{input}}"
providers: [openai:gpt-4o-mini]
defaultTest:
  assert:
    - type: icontains
      value: "{{expected}}"
tests:
  - description: French hello
    vars: {language: French, input: Hello, expected: bonjour}
"""


def _config(tmp_path: Path, text: str = CONFIG) -> Path:
    path = tmp_path / "promptfooconfig.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_lint_reads_a_promptfoo_config_as_promptfoo(tmp_path):
    path = _config(tmp_path)
    assert registry.detect(path, "tc-eval").name == "promptfoo" == kind_of(path)
    code, out, err = run_cli(["lint", path, "--json"])
    assert "defaultTest" not in out + err, "linted as an eval.yaml"
    problems = json.loads(out)["problems"] if out.strip().startswith("{") else json.loads(out)
    assert [(p["rule"], p["severity"]) for p in problems] == [("too-few-cases", "warning")], problems  # checked case by case
    assert code == 0, err  # a warning alone passes, as with ruff or eslint
    assert run_cli(["lint", path, "--strict"])[0] == 1  # --strict fails on it
    code, out, err = run_cli(["lint", path, "--errors-only"])
    assert code == 0, out + err  # what runs lints clean


def test_lint_checks_a_promptfoo_configs_cases(tmp_path):
    text = CONFIG.replace("    vars: {language: French, input: Hello, expected: bonjour}\n", "    vars: {language: French, input: Hello, expected: bonjour}\n    assert: [{type: not-icontains, value: Bonjour}]\n")
    code, out, err = run_cli(["lint", _config(tmp_path, text), "--json"])
    problems = json.loads(out)["problems"]
    assert code == 1 and [(p["rule"], p["field"]) for p in problems if p["severity"] == "error"] == [("impossible-check", "case 'french-hello'.assert")], problems


def test_lint_reports_what_the_promptfoo_loader_refuses(tmp_path):
    path = _config(tmp_path, CONFIG.replace("description: Translations\n", "description: Translations\nbogus: 1\n"))
    code, out, err = run_cli(["lint", path])
    assert code == 1, out + err
    assert "bogus" in out and "unchecked-format" not in out


def test_the_other_kinds_are_detected_as_before(tmp_path):
    for name, text, kind in (("evals.json", "{}", "evals.json"), ("x.json", "{}", "evals.json"), ("eval.yaml", "{}", "eval.yaml"),
                             ("EVAL.yaml", "tests: []\n", "EVAL.yaml"), ("other.yaml", "{}", "eval.yaml"), ("targets.yaml", "{}", "targets")):
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        assert kind_of(path) == kind, name
