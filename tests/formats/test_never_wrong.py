"""Never run wrongly: a promptfoo provider id that names a program, a script or an endpoint
is never sent to the model server as a model name; a provider's ``config`` is honoured
(``model``, ``max_tokens``, ``temperature``) or refused by name, never dropped; a case with nothing to check
is refused in every format (evals.json, promptfoo, EVAL.yaml, JSONL), one line, exit 30.
The scripted server's request log is read for what actually went out."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import Rule, read_json, run_cli

HEAD = """\
description: never wrong
prompts:
  - "Say hello to {{name}}"
"""
TESTS = """\
tests:
  - vars: {name: Ada}
    assert:
      - type: icontains
        value: hello
"""


def _write(tmp_path: Path, providers: str, tests: str = TESTS) -> Path:
    folder = tmp_path / "pf"
    folder.mkdir(exist_ok=True)
    (folder / "provider.py").write_text("def call_api(prompt, options, context):\n    return {'output': 'hello'}\n")
    (folder / "promptfooconfig.yaml").write_text(HEAD + providers + tests)
    return folder / "promptfooconfig.yaml"


def _eval(path: Path, tmp_path: Path, *extra: object) -> tuple[int, str]:
    code, _, err = run_cli(["eval", path, "--model", "judge-m", "--output", tmp_path / "out", "--no-cache", *extra])
    return code, err


def _one_line(code: int, err: str) -> str:
    assert code == 30, err
    assert len(err.strip().splitlines()) == 1, err
    return err


NOT_MODELS = [
    ("file://provider.py", "a script provider"),
    ("file://provider.js", "a script provider"),
    ("exec: python3 agent.py", "a command provider"),
    ("python:provider.py", "a Python provider"),
    ("https://api.example.com/chat", "promptfoo's HTTP provider"),
    ("http://localhost:8080/generate", "promptfoo's HTTP provider"),
    ("echo", "promptfoo's echo provider"),
    ("http", "promptfoo's HTTP provider"),
    ("webhook:http://localhost:1/hook", "promptfoo's webhook provider"),
]


@pytest.mark.parametrize("several", [False, True])
@pytest.mark.parametrize(("pid", "what"), NOT_MODELS)
def test_an_id_that_is_not_a_model_is_refused_by_name_and_never_sent(byok_env, tmp_path, pid, what, several):
    byok_env.add(Rule(reply="hello Ada", judge=False))
    providers = f"providers:\n  - openai:gpt-4o-mini\n  - id: {json.dumps(pid)}\n" if several else f"providers:\n  - {json.dumps(pid)}\n"
    code, err = _eval(_write(tmp_path, providers), tmp_path)
    line = _one_line(code, err)
    at = "providers[1]" if several else "providers[0]"
    assert f"promptfooconfig.yaml: {at}:" in line and repr(pid) in line and what in line and "--target" in line, line
    assert byok_env.requests == [], "nothing may reach the model server"


def test_model_ids_still_run_on_their_model_and_nothing_else_goes_out(byok_env, tmp_path):
    byok_env.add(Rule(reply="hello Ada", judge=False))
    providers = "providers:\n  - openai:chat:gpt-4o\n  - id: anthropic:messages:claude-x\n    label: claude\n"
    code, err = _eval(_write(tmp_path, providers), tmp_path)
    assert code == 0, err
    models = sorted(r["model"] for r in byok_env.trial_requests())
    assert models == ["claude-x", "gpt-4o"]
    for r in byok_env.requests:  # no file, exec or http id ever reaches the server as a model
        assert not any(m in str(r["model"]) for m in ("file:", "exec:", "http", "python:", ".py")), r["model"]


def test_with_a_target_the_providers_are_not_used_and_not_refused(byok_env, tmp_path):
    """``--target`` is the way to run an exec/http provider: the providers are then only said to be unused."""
    path = _write(tmp_path, "providers:\n  - 'exec: python3 agent.py'\n")
    code, err = _eval(path, tmp_path, "--target", "nope-not-defined")
    assert "providers are not used: every case runs on --target nope-not-defined" in err, err
    assert code == 30 and "unknown target 'nope-not-defined'" in err and "is a command provider" not in err, err


def test_config_max_tokens_and_model_are_honoured(byok_env, tmp_path):
    byok_env.add(Rule(reply="hello Ada", judge=False))
    providers = "providers:\n  - id: openai:chat:gpt-4o\n    config:\n      model: gpt-4o-2024-08-06\n      max_tokens: 77\n"
    code, err = _eval(_write(tmp_path, providers), tmp_path)
    assert code == 0, err
    [req] = byok_env.trial_requests()
    assert req["model"] == "gpt-4o-2024-08-06"
    assert req.get("max_tokens", req.get("max_completion_tokens")) == 77, req
    assert "config.model 'gpt-4o-2024-08-06'" in err


def test_config_max_tokens_per_provider_when_several(byok_env, tmp_path):
    byok_env.add(Rule(reply="hello Ada", judge=False))
    providers = "providers:\n  - id: openai:a\n    config: {max_tokens: 11}\n  - openai:b\n"
    code, err = _eval(_write(tmp_path, providers), tmp_path)
    assert code == 0, err
    caps = {r["model"]: r.get("max_tokens", r.get("max_completion_tokens")) for r in byok_env.trial_requests()}
    assert caps["a"] == 11 and caps["b"] != 11, caps


def test_config_temperature_reaches_the_request_per_provider(byok_env, tmp_path):
    byok_env.add(Rule(reply="hello Ada", judge=False))
    providers = "providers:\n  - id: openai:cold\n    config: {temperature: 0}\n  - id: openai:warm\n    config: {temperature: 0.9}\n  - openai:plain\n"
    code, err = _eval(_write(tmp_path, providers), tmp_path)
    assert code == 0, err
    temps = {r["model"]: r.get("temperature") for r in byok_env.trial_requests()}
    assert temps["cold"] == 0 and temps["warm"] == 0.9 and temps["plain"] is None, temps


def test_config_temperature_with_one_provider(byok_env, tmp_path):
    byok_env.add(Rule(reply="hello Ada", judge=False))
    code, err = _eval(_write(tmp_path, "providers:\n  - id: openai:gpt-4o\n    config: {temperature: 0}\n"), tmp_path)
    assert code == 0, err
    [req] = byok_env.trial_requests()
    assert req["temperature"] == 0 and req["model"] == "judge-m"  # one provider without config.model: the configured model


@pytest.mark.parametrize(
    ("config", "key"),
    [
        ("{response_format: {type: json_object}}", "response_format"),
        ("{top_p: 0.5}", "top_p"),
        ("{seed: 4}", "seed"),
        ("{stop: ['\\n']}", "stop"),
        ("{apiBaseUrl: 'http://elsewhere'}", "apiBaseUrl"),
    ],
)
def test_config_that_cannot_be_honoured_is_refused_by_name_not_dropped(byok_env, tmp_path, config, key):
    byok_env.add(Rule(reply="hello Ada", judge=False))
    providers = f"providers:\n  - id: openai:gpt-4o\n    config: {config}\n"
    line = _one_line(*_eval(_write(tmp_path, providers), tmp_path))
    assert f"providers[0].config.{key}: is not applied by agentsproof" in line, line
    assert byok_env.requests == []


@pytest.mark.parametrize(
    ("value", "field"), [("0", "max_tokens"), ("many", "max_tokens"), ("''", "model"), ("hot", "temperature"), ("5", "temperature")]
)
def test_a_bad_config_value_is_one_line(byok_env, tmp_path, value, field):
    providers = f"providers:\n  - id: openai:gpt-4o\n    config: {{{field}: {value}}}\n"
    line = _one_line(*_eval(_write(tmp_path, providers), tmp_path))
    assert f"providers[0].config.{field}:" in line


# ---------------------------------------------------------------- nothing to check


def test_promptfoo_test_with_nothing_to_check_is_refused(byok_env, tmp_path):
    tests = "tests:\n  - vars: {name: Ada}\n  - vars: {name: Bob}\n    assert: [{type: contains, value: Bob}]\n"
    line = _one_line(*_eval(_write(tmp_path, "", tests), tmp_path))
    assert "promptfooconfig.yaml: tests[0].assert: has nothing to check" in line
    assert byok_env.requests == []


def test_promptfoo_default_test_assert_is_enough(byok_env, tmp_path):
    byok_env.add(Rule(reply="hello Ada", judge=False))
    tests = "defaultTest:\n  assert: [{type: icontains, value: hello}]\ntests:\n  - vars: {name: Ada}\n"
    code, err = _eval(_write(tmp_path, "", tests), tmp_path)
    assert code == 0, err


def _evals_json(tmp_path: Path, cases: list[dict]) -> Path:
    (tmp_path / "skill.md").write_text("Greet people warmly.\n")
    path = tmp_path / "evals.json"
    path.write_text(json.dumps({"skill_name": "skill.md", "evals": cases}))
    return path


def test_evals_json_case_with_nothing_to_check_is_refused(byok_env, tmp_path):
    path = _evals_json(tmp_path, [{"id": 1, "prompt": "Hi", "assertions": ["Says hi"]}, {"id": 2, "prompt": "Hello"}])
    code, _, err = run_cli(["tc-eval", path, "--model", "m", "--output", tmp_path / "out", "--no-cache"])
    line = _one_line(code, err)
    assert "evals.json: evals[1]: case 2 has nothing to check; give assertions or expected_output" in line, line
    assert byok_env.requests == []  # it used to score 1.00 in both arms and PASS


def test_evals_json_empty_assertions_list_is_nothing_to_check(byok_env, tmp_path):
    path = _evals_json(tmp_path, [{"id": 7, "prompt": "Hi", "assertions": []}])
    code, _, err = run_cli(["tc-eval", path, "--model", "m", "--output", tmp_path / "out", "--no-cache"])
    assert "evals[0]: case 7 has nothing to check" in _one_line(code, err)


def test_evals_json_expected_output_alone_is_enough(byok_env, tmp_path):
    byok_env.add(Rule(reply="Hi there!", judge=False))
    path = _evals_json(tmp_path, [{"id": 1, "prompt": "Hi", "expected_output": "A warm greeting"}])
    code, _, err = run_cli(["tc-eval", path, "--model", "m", "--output", tmp_path / "out", "--no-cache"])
    assert code in (0, 1), err
    assert read_json(next((tmp_path / "out").rglob("*-tc-eval.json")))["items"]


def test_eval_yaml_and_jsonl_cases_with_nothing_to_check_are_refused_too(byok_env, tmp_path):
    skill = tmp_path / "skills" / "greet"
    (skill / "evals").mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: greet\ndescription: greet\n---\nGreet.\n")
    (skill / "evals" / "EVAL.yaml").write_text("name: greet\ntests:\n  - id: bare\n    input: Hi\n")
    code, _, err = run_cli(["eval", skill / "evals" / "EVAL.yaml", "--model", "m", "--output", tmp_path / "out"])
    assert "has nothing to check" in _one_line(code, err)
    data = tmp_path / "cases.jsonl"
    data.write_text('{"id": "a", "input": "Hi"}\n')
    code, _, err = run_cli(["tc-eval", data, "--model", "m", "--output", tmp_path / "out"])
    assert "a case needs an expected answer or expected tools" in _one_line(code, err)
    assert byok_env.requests == []
