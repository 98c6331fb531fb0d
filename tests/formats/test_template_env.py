"""``{{ vars.x }}`` is ``{{ x }}``; ``{{ env.NAME }}`` is filled only for a name allowed in
AGENTSPROOF_TEMPLATE_ENV and never for one that looks like a secret (it would reach the
report); every other use is one line naming the field. EVAL.yaml and promptfoo alike, on
the scripted server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import Rule, run_cli

SUITE = """\
tests:
  - id: t1
    vars: {who: Ada}
    input: "Greet {{ vars.who }} in {{ env.GREETING_LANG }}"
    assert: [{type: icontains, value: "{{ vars.who }}"}]
"""


def _write(tmp_path: Path, text: str, name: str = "suite.eval.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_vars_and_an_allowed_env_name_are_filled(byok_env, tmp_path, monkeypatch):
    monkeypatch.setenv("GREETING_LANG", "French")
    monkeypatch.setenv("AGENTSPROOF_TEMPLATE_ENV", "GREETING_LANG, OTHER")
    byok_env.add(Rule(reply="Bonjour Ada", judge=False))
    suite = _write(tmp_path, SUITE)
    code, _, err = run_cli(["eval", suite, "--model", "m", "--output", tmp_path / "out", "--no-cache"])
    assert code == 0, err
    sent = [json.dumps(r["messages"]) for r in byok_env.trial_requests()]
    assert sent and all("Greet Ada in French" in s for s in sent)


def test_promptfoo_prompts_take_vars_and_env_too(byok_env, tmp_path, monkeypatch):
    monkeypatch.setenv("GREETING_LANG", "German")
    monkeypatch.setenv("AGENTSPROOF_TEMPLATE_ENV", "GREETING_LANG")
    byok_env.add(Rule(reply="Hallo Ada", judge=False))
    (tmp_path / "pf").mkdir()
    config = _write(
        tmp_path / "pf",
        "prompts: ['Greet {{ vars.who }} in {{ env.GREETING_LANG }}']\ntests:\n  - vars: {who: Ada}\n    assert: [{type: icontains, value: ada}]\n",
        "promptfooconfig.yaml",
    )
    code, _, err = run_cli(["eval", config, "--model", "m", "--output", tmp_path / "out", "--no-cache"])
    assert code == 0, err
    assert any("Greet Ada in German" in json.dumps(r["messages"]) for r in byok_env.trial_requests())


@pytest.mark.parametrize(
    ("env", "words"),
    [
        ({"GREETING_LANG": "French"}, "filled only when named in AGENTSPROOF_TEMPLATE_ENV"),
        ({"AGENTSPROOF_TEMPLATE_ENV": "GREETING_LANG"}, "GREETING_LANG is not set"),
    ],
)
def test_an_env_name_not_allowed_or_not_set_is_one_line(tmp_path, monkeypatch, env, words):
    monkeypatch.delenv("GREETING_LANG", raising=False)
    monkeypatch.delenv("AGENTSPROOF_TEMPLATE_ENV", raising=False)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    suite = _write(tmp_path, SUITE)
    code, _, err = run_cli(["eval", suite, "--model", "m", "--output", tmp_path / "out"])
    assert code == 30 and len(err.strip().splitlines()) == 1, err
    assert "tests[0].input: uses {{ env.GREETING_LANG }}" in err and words in err, err


def test_a_secret_looking_env_name_is_never_filled_even_when_allowed(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-live-do-not-leak-1234")
    monkeypatch.setenv("AGENTSPROOF_TEMPLATE_ENV", "OPENAI_API_KEY")
    suite = _write(tmp_path, SUITE.replace("env.GREETING_LANG", "env.OPENAI_API_KEY"))
    code, out, err = run_cli(["eval", suite, "--model", "m", "--output", tmp_path / "out"])
    assert code == 30 and "looks like a secret" in err, err
    assert "sk-live-do-not-leak-1234" not in out + err
