"""promptfooconfig.yaml: prompts × tests × providers, vars, defaultTest, the common
assertion types, --skill's two arms, unknown assertion types refused by name, and
``convert`` to an EVAL.yaml that runs the same cases."""

from __future__ import annotations

from pathlib import Path

import yaml

from conftest import Rule, read_json, run_cli

CONFIG = """\
# yaml-language-server: $schema=https://promptfoo.dev/config-schema.json
description: Translations
prompts:
  - "Translate to {{language}}: {{input}}"
  - file://prompts/formal.txt
providers:
  - openai:gpt-4o-mini
  - id: openai:chat:gpt-4o
    label: big
defaultTest:
  vars:
    tone: plain
  assert:
    - type: icontains
      value: "{{expected}}"
tests:
  - description: French hello
    vars: {language: French, input: Hello, expected: bonjour}
    assert:
      - type: llm-rubric
        value: A natural French greeting such as 'bonjour'
  - vars: {language: German, input: Thanks, expected: danke}
    assert:
      - type: not-icontains
        value: merci
evaluateOptions:
  maxConcurrency: 2
"""


def _config(tmp_path: Path, text: str = CONFIG) -> Path:
    folder = tmp_path / "translate"
    (folder / "prompts").mkdir(parents=True)
    (folder / "prompts" / "formal.txt").write_text("Formally ({{tone}}), translate into {{language}}: {{input}}\n")
    (folder / "SKILL.md").write_text("---\nname: translator\ndescription: t\n---\nTranslate exactly.\n")
    (folder / "promptfooconfig.yaml").write_text(text)
    return folder / "promptfooconfig.yaml"


def _out_lines(out: Path) -> list[str]:
    return (out / "translate" / "translate-tc-eval.md").read_text().splitlines()


def _replies(srv) -> None:
    srv.add(Rule(reply="Bonjour", user_contains="French", judge=False))
    srv.add(Rule(reply="Danke", user_contains="German", judge=False))


def test_prompts_by_tests_by_providers_each_on_its_model(byok_env, tmp_path):
    _replies(byok_env)
    path = _config(tmp_path)
    out = tmp_path / "out"
    code, stdout, err = run_cli(["eval", path, "--model", "judge-m", "--output", out, "--no-cache"])
    assert code == 0, err
    assert "evaluateOptions: not used" in err and "'big' (model gpt-4o)" in err
    data = read_json(out / "translate" / "translate-tc-eval.json")
    names = sorted(i["name"] for i in data["items"])
    assert len(names) == 8 and "big/formal.txt.french-hello" not in names
    assert "big/prompts-formal.txt.french-hello" in names and "openai:gpt-4o-mini/prompt-1.test-2" in names
    assert all(i["passed"] for i in data["items"]), [(i["name"], i["with_arm"]["trials"][0]["score"]) for i in data["items"]]
    models = sorted(r["model"] for r in byok_env.trial_requests())
    assert models == ["gpt-4o"] * 4 + ["gpt-4o-mini"] * 4
    assert {r["model"] for r in byok_env.judge_requests()} == {"judge-m"}
    prompts = {str(r["messages"][-1]["content"]) for r in byok_env.trial_requests()}
    assert "Formally (plain), translate into German: Thanks" in prompts and "Translate to French: Hello" in prompts
    assert data["settings"]["baseline"] == "none"  # no --skill: single-armed
    assert {i["model"] for i in data["items"]} == {"gpt-4o", "gpt-4o-mini"}
    assert "target chat · provider openai · model gpt-4o, gpt-4o-mini · judge judge-m" in stdout.splitlines()[0]
    assert any("Model `gpt-4o, gpt-4o-mini`" in line or "model `gpt-4o, gpt-4o-mini`" in line for line in _out_lines(out))


def test_skill_adds_both_arms_and_one_provider_is_the_configured_model(byok_env, tmp_path):
    _replies(byok_env)
    path = _config(tmp_path, CONFIG.replace("  - id: openai:chat:gpt-4o\n    label: big\n", ""))
    out = tmp_path / "out"
    code, _, err = run_cli(["eval", path, "--model", "m", "--skill", path.parent / "SKILL.md", "--output", out, "--no-cache"])
    assert code in (0, 1), err
    assert "provider 'openai:gpt-4o-mini' runs as the configured model" in err
    data = read_json(out / "translate" / "translate-tc-eval.json")
    assert len(data["items"]) == 4 and all(len(i["without_arm"]["trials"]) == 1 for i in data["items"])
    assert {r["model"] for r in byok_env.trial_requests()} == {"m"}
    systems = [str(r["messages"][0]["content"]) for r in byok_env.trial_requests()]
    assert sum("Translate exactly." in s for s in systems) == 4


def test_unknown_assertion_type_is_refused_by_name(byok_env, tmp_path):
    path = _config(tmp_path, CONFIG.replace("type: not-icontains", "type: moderation"))
    code, _, err = run_cli(["eval", path, "--model", "m", "--output", tmp_path / "out"])
    assert code == 30 and len(err.strip().splitlines()) <= 3, err
    assert "tests[1].assert[0].type: promptfoo assertion 'moderation' is not graded by agentsproof" in err


def test_list_vars_and_unknown_keys_are_one_line(byok_env, tmp_path):
    path = _config(tmp_path, CONFIG.replace("input: Thanks", "input: []"))
    code, _, err = run_cli(["eval", path, "--model", "m", "--output", tmp_path / "out"])
    assert code == 30 and "tests[1].vars.input: is an empty list" in err, err
    path.write_text(CONFIG + "redteam: {}\n")
    code, _, err = run_cli(["eval", path, "--model", "m", "--output", tmp_path / "out"])
    assert code == 30 and "redteam: is not supported: red-team generation" in err, err
    path.write_text(CONFIG + "wobble: []\n")
    code, _, err = run_cli(["eval", path, "--model", "m", "--output", tmp_path / "out"])
    assert code == 30 and "wobble: unknown key" in err, err


def test_convert_to_eval_yaml_runs_the_same_cases(byok_env, tmp_path):
    _replies(byok_env)
    path = _config(tmp_path)
    target = path.parent / "evals" / "EVAL.yaml"
    code, _, err = run_cli(["convert", path, "--to", "EVAL.yaml", "--out", target])
    assert code == 0 and "lossy: providers:" in err and "openai:gpt-4o-mini, big are left out" in err, err
    text = target.read_text()
    assert "&id" not in text  # no YAML anchors: every test spelled out
    suite = yaml.safe_load(text)
    assert [t["id"] for t in suite["tests"]] == ["prompt-1.french-hello", "prompts-formal.txt.french-hello", "prompt-1.test-2", "prompts-formal.txt.test-2"]
    assert suite["tests"][1]["input"] == "Formally (plain), translate into French: Hello"
    assert suite["tests"][2]["assert"] == [{"type": "icontains", "value": "danke"}, {"type": "not-icontains", "value": "merci"}]
    out = tmp_path / "out"
    code, _, err = run_cli(["eval", target, "--model", "m", "--output", out, "--no-cache"])
    assert code == 0, err
    data = read_json(out / "translate" / "translate-tc-eval.json")
    assert len(data["items"]) == 4 and all(i["passed"] for i in data["items"])


def test_csv_tests_with_expected_columns(byok_env, tmp_path):
    _replies(byok_env)
    config = "prompts: ['Translate to {{language}}: {{input}}']\ntests: file://tests.csv\n"
    path = _config(tmp_path, config)
    (path.parent / "tests.csv").write_text(
        "language,input,__expected,__description\n"
        "French,Hello,icontains: bonjour,french greeting\n"
        "German,Thanks,Danke,german thanks\n"
    )
    out = tmp_path / "out"
    code, _, err = run_cli(["eval", path, "--model", "m", "--output", out, "--no-cache"])
    assert code == 0, err
    data = read_json(out / "translate" / "translate-tc-eval.json")
    assert [i["name"] for i in data["items"]] == ["french-greeting", "german-thanks"]
    assert all(i["passed"] for i in data["items"])  # icontains: bonjour; a bare value: equals 'Danke'
    (path.parent / "tests.csv").write_text("language,input,__expected\nFrench,Hello,levenshtein: bonjour\n")
    code, _, err = run_cli(["eval", path, "--model", "m", "--output", out])
    assert code == 30 and "tests (tests.csv row 2): __expected: promptfoo assertion 'levenshtein' is not graded" in err, err
