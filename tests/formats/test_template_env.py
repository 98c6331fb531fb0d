"""``{{ vars.x }}`` is ``{{ x }}``; ``{{ env.NAME }}`` is filled from the environment as
agentv and promptfoo fill it (a name not set: nothing, said once); a secret's value (a
secret-looking name, or a value registered as a secret) is sent where the file puts it and
masked in every report. EVAL.yaml and promptfoo alike, on the scripted server."""

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
    byok_env.add(Rule(reply="Bonjour Ada", judge=False))
    suite = _write(tmp_path, SUITE)
    code, _, err = run_cli(["eval", suite, "--model", "m", "--output", tmp_path / "out", "--no-cache"])
    assert code == 0, err
    sent = [json.dumps(r["messages"]) for r in byok_env.trial_requests()]
    assert sent and all("Greet Ada in French" in s for s in sent)


def test_promptfoo_prompts_take_vars_and_env_too(byok_env, tmp_path, monkeypatch):
    monkeypatch.setenv("GREETING_LANG", "German")
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


def test_an_env_name_not_set_is_filled_with_nothing_and_said_once(byok_env, tmp_path, monkeypatch):
    monkeypatch.delenv("GREETING_LANG", raising=False)
    byok_env.add(Rule(reply="Hello Ada", judge=False))
    suite = _write(tmp_path, SUITE)
    code, _, err = run_cli(["eval", suite, "--model", "m", "--output", tmp_path / "out", "--no-cache"])
    assert code == 0, err
    assert err.count("tests[0].input: {{ env.GREETING_LANG }} is not set; it is filled with nothing") == 1, err
    assert all("Greet Ada in " in json.dumps(r["messages"]) for r in byok_env.trial_requests())


def test_a_secret_env_value_is_sent_where_the_file_puts_it_and_masked_in_every_report(byok_env, tmp_path, monkeypatch):
    monkeypatch.setenv("SERVICE_API_KEY", "sk-live-do-not-leak-1234")
    byok_env.add(Rule(reply="the key is sk-live-do-not-leak-1234", judge=False))
    suite = _write(tmp_path, SUITE.replace("env.GREETING_LANG", "env.SERVICE_API_KEY"))
    out_dir = tmp_path / "out"
    code, out, err = run_cli(["eval", suite, "--model", "m", "--output", out_dir, "--no-cache"])
    assert code in (0, 1), err
    assert any("Greet Ada in sk-live-do-not-leak-1234" in json.dumps(r["messages"]) for r in byok_env.trial_requests())
    assert "is a secret" in err and "sk-live-do-not-leak-1234" not in out + err
    written = [p for p in out_dir.rglob("*") if p.is_file()]
    assert written and not any("sk-live-do-not-leak-1234" in p.read_text(errors="replace") for p in written)
    assert any("***" in p.read_text(errors="replace") for p in written if p.suffix == ".json")
