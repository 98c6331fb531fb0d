"""Never run wrongly: a promptfoo provider id that names a program, a script or an endpoint
is never sent to the model server as a model name (a program runs as a command target, an
endpoint is refused by name); a provider's ``config`` is sent in the request (``model``,
``max_tokens``, ``temperature``, ``response_format``, ``seed``, ``stop`` …) or refused by name, never
dropped; a case with nothing to check runs in every format (evals.json, promptfoo, EVAL.yaml,
JSONL) and scores 1.0 (seed 000's "neither: score always 1.0"). The scripted server's request
log is read for what actually went out."""

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
    (folder / "provider.py").write_text("def call_api(prompt, options, context):\n    return {'output': 'hello from the program'}\n")
    (folder / "provider.js").write_text("module.exports = class { async callApi(prompt) { return {output: 'hello from the program'}; } };\n")
    (folder / "agent.py").write_text("import sys\nprint('hello from the program')\n")
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
    ("webhook:http://localhost:1/hook", "promptfoo's webhook provider"),
    ("ws://localhost:1/socket", "promptfoo's WebSocket provider"),
    ("browser", "promptfoo's browser provider"),
    ("mcp", "promptfoo's MCP provider"),
]
PROGRAMS = ["file://provider.py", "file://provider.js", "exec: python3 agent.py", "python:provider.py"]


@pytest.mark.parametrize("several", [False, True])
@pytest.mark.parametrize("pid", PROGRAMS)
def test_a_provider_that_is_a_program_runs_it_and_its_name_is_never_sent(byok_env, tmp_path, pid, several):
    byok_env.add(Rule(reply="hello Ada", judge=False))
    providers = f"providers:\n  - openai:gpt-4o-mini\n  - id: {json.dumps(pid)}\n" if several else f"providers:\n  - {json.dumps(pid)}\n"
    code, err = _eval(_write(tmp_path, providers), tmp_path)
    assert code == 0, err
    assert "runs as a command target, confined" in err, err
    assert sorted(r["model"] for r in byok_env.trial_requests()) == (["gpt-4o-mini"] if several else [])
    report = read_json(next((tmp_path / "out").rglob("*.json")))
    answers = [t["response"] for it in report["items"] for t in it["with_arm"]["trials"]]
    assert "hello from the program" in answers, answers


@pytest.mark.parametrize("several", [False, True])
@pytest.mark.parametrize(("pid", "what"), NOT_MODELS)
def test_an_endpoint_or_browser_id_is_refused_by_name_and_never_sent(byok_env, tmp_path, pid, what, several):
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
    path = _write(tmp_path, "providers:\n  - 'webhook:http://localhost:1/hook'\n")
    code, err = _eval(path, tmp_path, "--target", "nope-not-defined")
    assert "providers are not used: every case runs on --target nope-not-defined" in err, err
    assert code == 30 and "unknown target 'nope-not-defined'" in err and "webhook provider" not in err, err


def test_promptfoos_http_provider_runs_as_an_http_target(byok_env, tmp_path):
    """promptfoo's HTTP provider (its http-provider example's shape): the body posted with the prompt at its
    '{{prompt}}', the answer where transformResponse points; the model named in the body is the one sent."""
    byok_env.add(Rule(reply="hello from the endpoint", judge=False))
    providers = (
        "providers:\n  - id: http\n    label: chat endpoint\n    config:\n"
        f"      url: {byok_env.base_url}/chat/completions\n      method: POST\n"
        "      headers: {Content-Type: application/json}\n"
        "      body:\n        model: gpt-4o-mini\n        messages:\n          - {role: system, content: Explain simply}\n"
        "          - {role: user, content: '{{prompt}}'}\n        temperature: 0.7\n"
        "      transformResponse: 'json.choices[0].message.content'\n"
    )
    code, err = _eval(_write(tmp_path, providers), tmp_path)
    assert code == 0, err
    [req] = byok_env.trial_requests()
    assert req["model"] == "gpt-4o-mini" and req["messages"][1] == {"role": "user", "content": "Say hello to Ada"} and req["temperature"] == 0.7
    report = read_json(next((tmp_path / "out").rglob("*.json")))
    assert [t["response"] for it in report["items"] for t in it["with_arm"]["trials"]] == ["hello from the endpoint"]


@pytest.mark.parametrize(
    ("config", "field"),
    [
        ("{url: 'https://x.example/a', body: {q: '{{prompt}}'}, transformResponse: 'json.a', tls: {caPath: ./ca.pem}}", "config.tls"),
        ("{url: 'https://x.example/a', body: {q: '{{prompt}}'}, transformResponse: 'json.items.map(i => i.t)'}", "config.transformResponse"),
        ("{url: 'https://x.example/a', body: {q: '{{prompt}}', who: '{{name}}'}, transformResponse: 'json.a'}", "config.body.who"),
        ("{url: 'https://x.example/a', method: GET, body: {q: '{{prompt}}'}, transformResponse: 'json.a'}", "config.method"),
    ],
)
def test_what_the_http_target_cannot_do_as_promptfoo_is_refused_by_name(byok_env, tmp_path, config, field):
    line = _one_line(*_eval(_write(tmp_path, f"providers:\n  - id: http\n    config: {config}\n"), tmp_path))
    assert f"providers[0].{field}:" in line, line
    assert byok_env.requests == []


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
    ("config", "sent"),
    [
        ("{response_format: {type: json_object}}", {"response_format": {"type": "json_object"}}),
        ("{top_p: 0.5}", {"top_p": 0.5}),
        ("{seed: 4}", {"seed": 4}),
        ("{stop: [END]}", {"stop": ["END"]}),
        ("{max_completion_tokens: 64}", {"max_completion_tokens": 64}),
        ("{passthrough: {logprobs: true}}", {"logprobs": True}),
        ("{generationConfig: {maxOutputTokens: 9, topP: 0.2, responseMimeType: application/json}}", {"max_tokens": 9, "top_p": 0.2}),
    ],
)
def test_provider_config_is_sent_in_the_request(byok_env, tmp_path, config, sent):
    byok_env.add(Rule(reply="hello Ada", judge=False))
    providers = f"providers:\n  - id: openai:gpt-4o\n    config: {config}\n"
    code, err = _eval(_write(tmp_path, providers), tmp_path)
    assert code == 0, err
    [req] = byok_env.trial_requests()
    for key, value in sent.items():
        assert req.get(key) == value, (key, req)
    judge_calls = [r for r in byok_env.requests if r not in byok_env.trial_requests()]
    assert all(k not in r for r in judge_calls for k in sent if k != "max_tokens"), "the judge's calls carry none of it"


def test_a_prompts_config_is_sent_over_its_providers(byok_env, tmp_path):
    """promptfoo: a prompt's ``config`` (structured output) applies to that prompt's calls, over the provider's."""
    byok_env.add(Rule(reply="hello Ada", judge=False))
    folder = _write(tmp_path, "providers:\n  - id: openai:gpt-4o\n    config: {seed: 1, top_p: 0.3}\n").parent
    head = 'prompts:\n  - raw: "Say hello to {{name}}"\n    label: json\n    config: {seed: 2, response_format: {type: json_object}}\n  - "Plain: {{name}}"\n'
    (folder / "promptfooconfig.yaml").write_text(head + "providers:\n  - id: openai:gpt-4o\n    config: {seed: 1, top_p: 0.3}\n" + TESTS)
    code, err = _eval(folder / "promptfooconfig.yaml", tmp_path)
    assert code == 0, err
    by_prompt = {r["messages"][-1]["content"]: r for r in byok_env.trial_requests()}
    assert by_prompt["Say hello to Ada"]["seed"] == 2 and by_prompt["Say hello to Ada"]["response_format"] == {"type": "json_object"}
    assert by_prompt["Plain: Ada"]["seed"] == 1 and "response_format" not in by_prompt["Plain: Ada"]
    assert by_prompt["Say hello to Ada"]["top_p"] == 0.3


def test_a_providers_own_prompts_run_only_on_it(byok_env, tmp_path):
    """promptfoo's ``providers[].prompts``: a provider runs the prompts it names (by label), every other prompt not."""
    byok_env.add(Rule(reply="hello Ada", judge=False))
    folder = _write(tmp_path, "").parent
    head = 'prompts:\n  - {raw: "First {{name}}", label: first}\n  - {raw: "Second {{name}}", label: second}\n'
    providers = "providers:\n  - {id: openai:one, prompts: [first]}\n  - openai:two\n"
    (folder / "promptfooconfig.yaml").write_text(head + providers + TESTS)
    code, err = _eval(folder / "promptfooconfig.yaml", tmp_path)
    assert code == 0, err
    sent = sorted((r["model"], r["messages"][-1]["content"]) for r in byok_env.trial_requests())
    assert sent == [("one", "First Ada"), ("two", "First Ada"), ("two", "Second Ada")], sent


@pytest.mark.parametrize("config", ["{connectors: [{id: web-search}]}", "{thinking: {type: enabled}}", "{generationConfig: {candidateCount: 2}}"])
def test_config_the_api_has_no_field_for_is_refused_by_name_not_dropped(byok_env, tmp_path, config):
    providers = f"providers:\n  - id: openai:gpt-4o\n    config: {config}\n"
    line = _one_line(*_eval(_write(tmp_path, providers), tmp_path))
    assert "providers[0].config." in line and "has no field in the OpenAI-compatible chat API" in line, line
    assert byok_env.requests == []


def test_promptfoo_client_settings_are_noted_not_sent(byok_env, tmp_path):
    byok_env.add(Rule(reply="hello Ada", judge=False))
    providers = "providers:\n  - id: openai:gpt-4o\n    config: {apiBaseUrl: 'http://elsewhere', apiKey: sk-nope}\n"
    code, err = _eval(_write(tmp_path, providers), tmp_path)
    assert code == 0, err
    assert "providers[0].config.apiBaseUrl: not sent" in err and "providers[0].config.apiKey: not sent" in err, err
    [req] = byok_env.trial_requests()
    assert "apiBaseUrl" not in req and "sk-nope" not in json.dumps(byok_env.requests)


@pytest.mark.parametrize(
    ("value", "field"), [("0", "max_tokens"), ("many", "max_tokens"), ("''", "model"), ("hot", "temperature"), ("5", "temperature")]
)
def test_a_bad_config_value_is_one_line(byok_env, tmp_path, value, field):
    providers = f"providers:\n  - id: openai:gpt-4o\n    config: {{{field}: {value}}}\n"
    line = _one_line(*_eval(_write(tmp_path, providers), tmp_path))
    assert f"providers[0].config.{field}:" in line


# ---------------------------------------------------------------- nothing to check


def _scores(out: Path) -> dict[str, list[float]]:
    report = read_json(next(out.rglob("*.json")))
    return {it["name"]: [t["score"] for arm in ("with_arm", "without_arm") for t in (it.get(arm) or {}).get("trials", [])] for it in report["items"]}


def test_promptfoo_test_with_nothing_to_check_runs_and_scores_one(byok_env, tmp_path):
    """promptfoo: a test without assertions passes, its output shown; here it scores 1.0 and the output is in every report."""
    byok_env.add(Rule(reply="hello Ada", judge=False))
    tests = "tests:\n  - vars: {name: Ada}\n  - vars: {name: Bob}\n    assert: [{type: contains, value: Bob}]\n"
    code, err = _eval(_write(tmp_path, "", tests), tmp_path)
    assert code in (0, 1), err
    scores = _scores(tmp_path / "out")
    assert scores["test-1"] == [1.0], scores
    md = next((tmp_path / "out").rglob("*.md")).read_text()
    html = next((tmp_path / "out").rglob("*.html")).read_text()
    assert "nothing to check: every trial scores 1.0" in md and "| 1 | hello Ada |" in md, md
    assert "nothing to check: every trial scores 1.0" in html and "hello Ada" in html


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


def test_evals_json_case_with_nothing_to_check_runs_both_arms_side_by_side(byok_env, tmp_path):
    """Seed 000's weight table: "neither: score always 1.0"; both arms' outputs side by side; lint warns."""
    byok_env.add(Rule(reply="Hello.", judge=False))
    byok_env.add(Rule(reply="Hello friend", judge=False, system_contains="Greet people warmly"))
    path = _evals_json(tmp_path, [{"id": 1, "prompt": "Hi", "assertions": ["Says hi"]}, {"id": 2, "prompt": "Hello"}])
    code, _, err = run_cli(["tc-eval", path, "--model", "m", "--output", tmp_path / "out", "--no-cache", "--trials", "1"])
    assert code in (0, 1), err
    scores = _scores(tmp_path / "out")
    assert scores["case 2"] == [1.0, 1.0], scores
    md = next((tmp_path / "out").rglob("*.md")).read_text()
    assert "| 1 | Hello friend | Hello. |" in md, md
    code, out, _ = run_cli(["lint", path])
    assert "evals[1]: warning: has nothing to check" in out and "[nothing-to-check]" in out, out


def test_evals_json_empty_assertions_list_is_nothing_to_check(byok_env, tmp_path):
    byok_env.add(Rule(reply="Hello.", judge=False))
    path = _evals_json(tmp_path, [{"id": 7, "prompt": "Hi", "assertions": []}])
    code, _, err = run_cli(["tc-eval", path, "--model", "m", "--output", tmp_path / "out", "--no-cache", "--trials", "1"])
    assert code in (0, 1), err
    assert _scores(tmp_path / "out")["case 7"] == [1.0, 1.0]


def test_evals_json_expected_output_alone_is_enough(byok_env, tmp_path):
    byok_env.add(Rule(reply="Hi there!", judge=False))
    path = _evals_json(tmp_path, [{"id": 1, "prompt": "Hi", "expected_output": "A warm greeting"}])
    code, _, err = run_cli(["tc-eval", path, "--model", "m", "--output", tmp_path / "out", "--no-cache"])
    assert code in (0, 1), err
    assert read_json(next((tmp_path / "out").rglob("*-tc-eval.json")))["items"]


def test_eval_yaml_and_jsonl_cases_with_nothing_to_check_run_too(byok_env, tmp_path):
    byok_env.add(Rule(reply="Hello.", judge=False))
    skill = tmp_path / "skills" / "greet"
    (skill / "evals").mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: greet\ndescription: greet\n---\nGreet.\n")
    (skill / "evals" / "EVAL.yaml").write_text("name: greet\ntests:\n  - id: bare\n    input: Hi\n")
    code, _, err = run_cli(["eval", skill / "evals" / "EVAL.yaml", "--model", "m", "--output", tmp_path / "out", "--trials", "1"])
    assert code in (0, 1), err
    assert all(s == 1.0 for v in _scores(tmp_path / "out").values() for s in v) and _scores(tmp_path / "out")
    data = tmp_path / "cases.jsonl"
    data.write_text('{"id": "a", "input": "Hi"}\n')
    code, _, err = run_cli(["tc-eval", data, "--model", "m", "--output", tmp_path / "out2", "--trials", "1"])
    assert code in (0, 1), err
    assert _scores(tmp_path / "out2") == {"a": [1.0]}
