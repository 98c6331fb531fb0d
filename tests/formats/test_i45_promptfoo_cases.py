"""promptfoo constructs from real example configs (tests/data/i45-rest/promptfoo, MIT), run end
to end on the scripted server: llm-rubric's ``rubricPrompt`` (a chat-message template file,
rendered with the output, the rubric and the test's vars, as promptfoo renders it), a
``config`` on llm-rubric (read with a note: promptfoo's llm-rubric reads none), ``not-empty``
with a describing value."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from conftest import Rule, only_report, run_cli

DATA = Path(__file__).parent.parent / "data" / "i45-rest" / "promptfoo"


def test_llm_rubric_rubric_prompt_is_the_judge_template(tmp_path, byok_env):
    byok_env.add(Rule(reply="I would not take a side on this statement.", judge=False))
    byok_env.add(Rule(reply=json.dumps({"score": 0.5, "reasoning": "centrist"}), judge=True))
    src = tmp_path / "grok"
    shutil.copytree(DATA / "grok-4-political-bias", src)
    code, _, err = run_cli(["eval", src / "promptfooconfig.yaml", "--model", "m", "--output", tmp_path / "out", "--no-cache"])
    assert code in (0, 1) and "Traceback" not in err, err
    assert "llm-rubric config (temperature): promptfoo's llm-rubric does not read an assertion's config either" in err
    judged = [json.dumps(r["messages"]) for r in byok_env.judge_requests()]
    assert any("7-point Likert scale" in j and 'Statement: \\"The minimum wage should be raised.\\"' in j for j in judged), judged
    assert not any("{{question}}" in j or "{{output}}" in j for j in judged)
    assert {r["model"] for r in byok_env.trial_requests()} == {"m"}  # one provider: the configured model (said once)
    trial = only_report(tmp_path / "out")["items"][0]["with_arm"]["trials"][0]
    assert trial["status"] == "scored", trial
    kinds = [g["type"] for g in trial["graders"]]
    assert kinds == ["deterministic", "llm_rubric"], kinds
    assert trial["graders"][0]["score"] == 1.0 and trial["graders"][1]["score"] == 0.5


def test_options_rubric_prompt_is_the_template_of_each_llm_rubric(tmp_path, byok_env):
    byok_env.add(Rule(reply="Paris", judge=False), Rule(reply=json.dumps({"score": 1, "reasoning": "ok"}), judge=True))
    cfg = tmp_path / "promptfooconfig.yaml"
    cfg.write_text(
        "prompts: ['Capital of {{country}}?']\nproviders: [openai:gpt-4.1]\n"
        "defaultTest:\n  options:\n    rubricPrompt: 'GRADE THIS for {{country}}: {{rubric}} / {{output}}'\n"
        "tests:\n  - vars: {country: France}\n    assert: [{type: llm-rubric, value: names the capital}]\n",
        encoding="utf-8",
    )
    code, _, err = run_cli(["eval", cfg, "--model", "m", "--output", tmp_path / "out", "--no-cache"])
    assert code == 0 and "Traceback" not in err, err
    judged = [json.dumps(r["messages"]) for r in byok_env.judge_requests()]
    assert any("GRADE THIS for France: names the capital / (the assistant response, shown below)" in j for j in judged), judged


SQL = "SELECT SUM(s.quantity) FROM Shipments s JOIN Products p ON p.product_id = s.product_id WHERE p.name = 'apples'"


def test_is_sql_parses_the_answer_in_its_dialect_and_checks_the_allowed_names(tmp_path, byok_env):
    byok_env.add(Rule(reply=SQL, user_contains="apples"), Rule(reply="Sure! Bananas sold last month: 42", user_contains="bananas"))
    byok_env.add(Rule(reply=SQL.replace("apples", "oranges"), user_contains="oranges"))
    src = tmp_path / "sql"
    shutil.copytree(DATA / "sql-validation", src)
    code, _, err = run_cli(["eval", src / "promptfooconfig.yaml", "--model", "m", "--output", tmp_path / "out", "--no-cache"])
    assert code in (0, 1) and "Traceback" not in err, err
    items = {i["name"]: i["with_arm"]["trials"][0] for i in only_report(tmp_path / "out")["items"]}
    bananas, apples, oranges = items["test-1"], items["test-2"], items["test-3"]
    # not SQL: is-sql fails, saying why
    sql = bananas["graders"][0]
    assert sql["score"] == 0.0 and "not valid mysql SQL" in json.dumps(sql["checks"]), sql
    # valid MySQL using only Products and Shipments
    assert apples["graders"][0]["score"] == 1.0 and apples["passed"], apples
    # allowedColumns names a column the query does not use: fails, as promptfoo's example expects
    col = oranges["graders"][0]
    assert col["score"] == 0.0 and "is not in allowedColumns" in json.dumps(col["checks"]), col


def test_is_sql_with_an_unknown_database_type_is_one_line(tmp_path, byok_env):
    cfg = tmp_path / "promptfooconfig.yaml"
    cfg.write_text("prompts: ['q']\nproviders: [openai:gpt-4o]\ntests:\n  - assert: [{type: is-sql, value: {databaseType: Cobol}}]\n", encoding="utf-8")
    code, _, err = run_cli(["eval", cfg, "--model", "m", "--output", tmp_path / "out"])
    assert code == 30 and err.count("\n") == 1 and "tests[0].assert[0].value.databaseType: 'Cobol'" in err, err


def test_a_python_provider_runs_with_promptfoo_python(tmp_path, byok_env, monkeypatch):
    # promptfoo runs file://provider.py with PROMPTFOO_PYTHON (else python3): the provider sees that Python's packages
    import sys

    wrapper = tmp_path / "mypython"
    wrapper.write_text(f"#!/bin/sh\nPICKED=promptfoo-python exec {sys.executable} \"$@\"\n")
    wrapper.chmod(0o755)
    (tmp_path / "provider.py").write_text("import os\n\ndef call_api(prompt, options, context):\n    return {'output': 'ran with ' + os.environ.get('PICKED', 'python3')}\n")
    cfg = tmp_path / "promptfooconfig.yaml"
    cfg.write_text("prompts: ['hi']\nproviders: [file://provider.py]\ntests:\n  - assert: [{type: contains, value: ran with}]\n", encoding="utf-8")
    monkeypatch.setenv("PROMPTFOO_PYTHON", str(wrapper))
    code, _, err = run_cli(["eval", cfg, "--model", "m", "--output", tmp_path / "out", "--no-cache"])
    assert code == 0 and "Traceback" not in err, err
    trial = only_report(tmp_path / "out")["items"][0]["with_arm"]["trials"][0]
    assert trial["response"] == "ran with promptfoo-python", trial["response"]
