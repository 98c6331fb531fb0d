"""agentv constructs from real files (tests/data/i45-rest/agentv, MIT), run end to end on
the scripted server: ``skill-used`` / ``not-skill-used`` naming a skill with no SKILL.md here
(graded from the skills the trial loaded: a model alone loads none), a var's ``{{ … }}``
text sent as it is (agentv does not render a var's value again), and a missing input file
erroring its own test while the others run."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from conftest import Rule, only_report, run_cli

DATA = Path(__file__).parent.parent / "data" / "i45-rest" / "agentv"


def _copy(tmp_path: Path, name: str) -> Path:
    dst = tmp_path / name
    shutil.copytree(DATA / name, dst)
    return dst


def _trials(report: dict) -> dict[str, dict]:
    return {it["name"]: it["with_arm"]["trials"][0] for it in report["items"]}


def test_skill_used_without_a_skill_md_is_graded_from_the_skills_loaded(tmp_path, byok_env):
    byok_env.add(Rule(reply="The weighted top months are Dec, Nov, Oct."))
    src = _copy(tmp_path, "skill-used") / "csv-analyzer.EVAL.yaml"
    code, _, err = run_cli(["eval", src, "--model", "m", "--output", tmp_path / "out"])
    assert code in (0, 1) and "Traceback" not in err, err
    trials = _trials(only_report(tmp_path / "out"))
    top, other = trials["csv-top-months"], trials["irrelevant-query"]
    assert top["status"] == "scored" and other["status"] == "scored", trials
    used = top["graders"][0]
    assert used["type"] == "skill_used" and used["score"] == 0.0, used  # a model alone loaded no skill
    assert "'csv-analyzer' used" in used["checks"][0]["target"] and "(none)" in used["checks"][0]["evidence"]
    assert top["graders"][1]["score"] == 1.0  # icontains-any: "weighted"
    assert other["graders"][0]["score"] == 1.0 and other["passed"], other  # not-skill-used: not loaded


def test_a_vars_template_text_is_sent_as_written(tmp_path, byok_env):
    byok_env.add(Rule(reply="Escape it: render the text, never evaluate it."))
    src = _copy(tmp_path, "skill-used") / "llm02-insecure-output.eval.yaml"
    code, _, err = run_cli(["eval", src, "--model", "m", "--output", tmp_path / "out"])
    assert code == 0 and "Traceback" not in err, err
    sent = [json.dumps(r) for r in byok_env.requests]
    assert any("{{ config.SECRET_KEY }}" in s and "{{ 7 * 7 }}" in s for s in sent), sent
    assert _trials(only_report(tmp_path / "out"))["template-injection-jinja"]["passed"]


def test_a_missing_input_file_errors_its_test_and_the_others_run(tmp_path, byok_env):
    byok_env.add(Rule(reply="description: a summariser\ntests: []"))
    root = _copy(tmp_path, "missing-file")
    src = root / "evals" / "agentv-dev" / "skills" / "output-correctness.eval.yaml"
    code, _, err = run_cli(["eval", src, "--model", "m", "--output", tmp_path / "out"])
    assert "Traceback" not in err, err
    assert "test 'skill-content-accurate' errors" in err and "agentv-trace-analyst/SKILL.md' not found" in err, err
    trials = _trials(only_report(tmp_path / "out"))
    ok, missing = trials["yaml-valid-structure"], trials["skill-content-accurate"]
    assert ok["status"] == "scored" and ok["passed"], ok
    assert missing["status"] == "errored" and "/skills-data/agentv-trace-analyst/SKILL.md' not found" in missing["error"], missing
    sent = [json.dumps(r) for r in byok_env.requests]
    assert any("Write EVAL.yaml files with description" in s for s in sent)  # /skills-data from the root
    assert code == 30, code  # an errored test: the run says so in its exit code
    code, out, err = run_cli(["lint", src])
    assert code == 0 and "tests[1]: warning: this case errors when run (the others run)" in out + err, out + err


def test_a_test_whose_only_input_is_a_missing_file_errors_with_that_reason(tmp_path, byok_env):
    byok_env.add(Rule(reply="ok"))
    path = tmp_path / "EVAL.yaml"
    path.write_text(
        "tests:\n  - id: a\n    input: [{role: user, content: [{type: file, path: nope.txt}]}]\n    criteria: x\n"
        "  - id: b\n    input: hi\n    assert: [{type: contains, value: ok}]\n",
        encoding="utf-8",
    )
    code, _, err = run_cli(["eval", path, "--model", "m", "--output", tmp_path / "out"])
    assert code == 30 and "Traceback" not in err, err
    trials = _trials(only_report(tmp_path / "out"))
    assert trials["a"]["status"] == "errored" and "tests[0].input[0].content[0].path: file 'nope.txt' not found" in trials["a"]["error"]
    assert trials["b"]["status"] == "scored" and trials["b"]["passed"]


def test_template_looking_text_survives_a_round_trip_through_evals_json(tmp_path, byok_env):
    src = _copy(tmp_path, "skill-used") / "llm02-insecure-output.eval.yaml"
    stub = tmp_path / "stub.SKILL.md"
    stub.write_text("---\nname: stub\ndescription: a stub\n---\nAnswer.\n")
    code, _, err = run_cli(["convert", src, "--to", "evals-json", "--out", tmp_path / "a.evals.json", "--skill", stub])
    assert code == 0, err
    code, _, err = run_cli(["convert", tmp_path / "a.evals.json", "--to", "EVAL.yaml", "--out", tmp_path / "b.eval.yaml"])
    assert code == 0, err
    byok_env.add(Rule(reply="escaped"))
    code, _, err = run_cli(["eval", tmp_path / "b.eval.yaml", "--model", "m", "--output", tmp_path / "out"])
    assert code in (0, 1) and "Traceback" not in err, err
    assert any("{{ config.SECRET_KEY }}" in json.dumps(r) for r in byok_env.requests)


def test_a_typescript_hook_on_a_node_without_strip_types_is_said(tmp_path, byok_env, monkeypatch):
    # agentv's cross-repo-sync names file://../scripts/setup.ts:beforeEach; without bun, node before 22.6 cannot run it
    from agentsproof.formats.agentevals import setup

    (tmp_path / "setup.ts").write_text("export async function beforeEach(ctx: unknown): Promise<void> {}\n")
    suite = tmp_path / "suite.yaml"
    suite.write_text("extensions:\n  - file://setup.ts:beforeEach\ntests:\n  - id: a\n    input: hi\n    assert: [{type: contains, value: hi}]\n")
    import agentsproof.core.bun as bun

    monkeypatch.setattr(bun, "find_bun", lambda: None)  # with bun, agentv's runtime, the hook runs under it and needs no node
    monkeypatch.setattr(setup, "_node_version", lambda: (20, 20))
    code, out, err = run_cli(["lint", suite])
    assert "extensions[0]: a TypeScript hook needs Node.js 22.6 or later" in out + err, out + err
    monkeypatch.setattr(setup, "_node_version", lambda: (22, 6))
    code, out, err = run_cli(["lint", suite])
    assert "TypeScript hook needs" not in out + err


def test_a_named_skill_check_regrades_the_same(tmp_path, byok_env):
    byok_env.add(Rule(reply="The weighted top months are Dec, Nov, Oct."))
    src = _copy(tmp_path, "skill-used") / "csv-analyzer.EVAL.yaml"
    code, _, err = run_cli(["eval", src, "--model", "m", "--output", tmp_path / "out"])
    assert code in (0, 1), err
    report = next((tmp_path / "out").glob("*/*-tc-eval.json"))
    code, _, err = run_cli(["regrade", report, "--output", tmp_path / "again"])
    assert code in (0, 1) and "Traceback" not in err, err
    trials = _trials(json.loads((tmp_path / "again" / "csv-analyzer-tc-eval-regraded.json").read_text()))
    assert trials["irrelevant-query"]["graders"][0]["score"] == 1.0 and trials["csv-top-months"]["graders"][0]["score"] == 0.0


def test_a_vars_input_fills_env_and_keeps_other_template_text(tmp_path, byok_env, monkeypatch):
    # agentv fills {{ env.X }} as the file loads (examples/features/env-interpolation), and shows the rest as written
    monkeypatch.setenv("CUSTOM_SYSTEM_PROMPT", "You are terse.")
    byok_env.add(Rule(reply="ok"))
    suite = tmp_path / "suite.yaml"
    suite.write_text(
        "prompts: ['{{ input }}']\ntests:\n  - id: a\n    assert: [{type: contains, value: ok}]\n    vars:\n      input:\n"
        "        - {role: system, content: '{{ env.CUSTOM_SYSTEM_PROMPT }}'}\n        - {role: user, content: 'Say {{ config.NAME }}'}\n"
    )
    code, _, err = run_cli(["eval", suite, "--model", "m", "--output", tmp_path / "out"])
    assert code == 0 and "Traceback" not in err, err
    sent = json.dumps(byok_env.trial_requests())
    assert "You are terse." in sent and "Say {{ config.NAME }}" in sent and "env.CUSTOM" not in sent, sent
