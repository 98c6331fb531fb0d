"""EVAL.yaml files in both dialects (tests/data/evalyaml): each assertion type against the
scripted server, suite-level assertions, file parts, judge prompt files, required gates,
skill-used on a real command agent, eval-all discovery, and one-line input errors."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conftest import Rule, read_json, run_cli

DATA = Path(__file__).resolve().parents[1] / "data" / "evalyaml"
REPO = Path(__file__).resolve().parents[2]


def _agentv_replies(srv) -> None:
    srv.add(Rule(reply="Hello, world!", user_contains="Say hello world", judge=False))
    srv.add(Rule(reply='{"status": "ok"}', user_contains="JSON API", judge=False))
    srv.add(Rule(reply="four", user_contains="2 + 2", judge=False))
    srv.add(Rule(reply="Pick a pivot. It runs in O(n log n).", user_contains="Explain quicksort", judge=False))
    srv.add(Rule(reply="```python\ndef add(a, b):\n    return a +\n```", user_contains="adds two numbers", judge=False))
    srv.add(Rule(reply='{"evidence": "no partition step", "passed": false}', user_contains="Mentions the partition step", judge=True))
    srv.add(Rule(reply='{"evidence": "says O(n log n)", "passed": true}', user_contains="States the time complexity", judge=True))
    srv.add(Rule(reply='{"evidence": "greets", "passed": true}', user_contains="Response greets the user", judge=True))


def test_agentv_dialect_runs_each_assertion_type_single_armed(byok_env, tmp_path):
    _agentv_replies(byok_env)
    out = tmp_path / "out"
    code, _, err = run_cli(["eval", DATA / "agentv" / "evals" / "suite.yaml", "--model", "m", "--output", out])
    assert code == 0, err
    data = read_json(out / "greetings" / "greetings-tc-eval.json")
    assert data["settings"]["baseline"] == "none" and data["settings"]["threshold"] == 0.8  # no skill: the model alone
    items = {i["name"]: i for i in data["items"]}
    assert {n: i["passed"] for n, i in items.items()} == {
        "says-hello": True, "json-status": True, "exact-four": False, "weighted-rubric": False, "syntax-check": False,
    }
    hello = items["says-hello"]["with_arm"]["trials"][0]
    assert hello["graders"][0]["checks"][0]["kind"] == "greeting: mustContain"  # the metric names the check
    assert hello["graders"][1]["checks"][0]["passed"]  # icontains-any: 'world'
    assert hello["graders"][2]["type"] == "assertions"  # the plain-string criterion, judged
    js = items["json-status"]["with_arm"]["trials"][0]["graders"][0]
    assert js["type"] == "script" and js["checks"][0]["target"] == "the answer is valid JSON" and js["checks"][0]["passed"]
    # the required outcome failed: the score is 0.9 (weights 1 and 9) and still the trial fails
    wr = items["weighted-rubric"]["with_arm"]["trials"][0]
    assert wr["score"] == pytest.approx(0.9) and wr["passed"] is False
    syn = items["syntax-check"]["with_arm"]["trials"][0]["graders"][0]
    assert syn["checks"][0]["target"] == "valid Python" and not syn["checks"][0]["passed"]  # agentv's JSON payload on stdin
    assert "exact-four" in {i["name"] for i in data["items"] if i["with_arm"]["trials"][0]["score"] == 0.0}


def _reference_replies(srv) -> None:
    good = "Done: shipped the login page, fixed the upload test.\nNext: billing.\nRisks: none."
    srv.add(Rule(reply="I shipped the login page.", judge=False))  # the baseline: no sections (newest rules win)
    srv.add(Rule(reply="Nothing was finished. Done: -, Next: -, Risks: -", system_contains="three bullet points", judge=False))
    srv.add(Rule(reply=good, system_contains="three bullet points", user_contains="weekly report from these tasks", judge=False))
    srv.add(Rule(reply="Done", system_contains="three bullet points", user_contains="only the word Done", judge=False))
    srv.add(Rule(reply='{"reasoning": "covers it", "score": 0.9}', user_contains="## Task criteria", judge=True))
    srv.add(Rule(reply='{"reasoning": "factual", "score": 0.8}', user_contains="Score on this scale", judge=True))


def test_reference_dialect_with_its_skill_runs_both_arms(byok_env, tmp_path):
    _reference_replies(byok_env)
    out = tmp_path / "out"
    path = DATA / "reference" / "skills" / "weekly-report" / "evals" / "EVAL.yaml"
    code, _, err = run_cli(["tc-eval", path, "--model", "m", "--output", out, "--trials", "2"])
    assert code == 0, err
    data = read_json(out / "weekly-report" / "weekly-report-tc-eval.json")
    items = {i["name"]: i for i in data["items"]}
    basic = items["basic-report"]
    assert basic["source_path"].endswith("weekly-report/SKILL.md") and basic["delta"] > 0 and basic["grade"] != "F"
    w, wo = basic["with_arm"]["trials"][0], basic["without_arm"]["trials"][0]
    assert w["passed"] and not wo["passed"]
    assert [g["type"] for g in w["graders"]] == ["script", "deterministic", "llm_rubric", "assertions", "assertions", "llm_rubric"]
    assert wo["graders"][0]["score"] == 0.0 and "missing sections" in wo["graders"][0]["checks"][0]["evidence"]
    requests = [json.dumps(r) for r in byok_env.requests]
    # the attached file is in the prompt; the judge prompt file's {{criteria}} is filled in
    assert any("shipped the login page" in r and "tasks.txt" in r for r in requests)
    assert any("A report with Done, Next and Risks sections" in r and "## Task criteria" in r for r in requests)
    assert not any("{{criteria}}" in r for r in requests)
    assert items["no-tasks"]["with_arm"]["trials"][0]["graders"][2]["score"] == 0.0  # is-json fails
    # the suite's required code-grader is merged into every test: "Done" alone equals the
    # value and matches the regex, and still fails the gate (no Next / Risks sections)
    exact = items["exact"]["with_arm"]["trials"][0]
    assert [g["score"] for g in exact["graders"]] == [0.0, 1.0, 1.0] and not exact["passed"] and not items["exact"]["passed"]


AGENT_EVAL = """\
name: csv-report
execution:
  target: mini-agent
tests:
  - id: uses-skill
    input: Summarise data.csv for the team.
    assert:
      - type: skill-used
        value: csv-report
  - id: trigger-form
    input: Summarise data.csv for the team.
    assert:
      - type: skill-trigger
        skill: csv-report
        should_trigger: false
"""


def test_skill_used_is_graded_from_agent_trials(tmp_path, monkeypatch, scripted_server):
    from conftest import SECRET_KEY

    for name in ("AGENTSPROOF_PROVIDER_TYPE", "AGENTSPROOF_PROVIDER_URL", "AGENTSPROOF_PROVIDER_KEY", "AGENTSPROOF_MODEL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OPENAI_BASE_URL", scripted_server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", SECRET_KEY)
    scripted_server.add(Rule(reply="Revenue: 3500."))
    plugin = tmp_path / "agent-plugin"
    shutil.copytree(REPO / "evals" / "agent-plugin", plugin)
    evals = plugin / "skills" / "csv-report" / "evals"
    evals.mkdir()
    (evals / "EVAL.yaml").write_text(AGENT_EVAL, encoding="utf-8")
    out = tmp_path / "out"
    code, _, err = run_cli(["eval", evals / "EVAL.yaml", "--output", out])
    assert code == 0, err
    items = {i["name"]: i for i in read_json(out / "csv-report" / "csv-report-tc-eval.json")["items"]}
    used = items["uses-skill"]
    assert used["target"] == "mini-agent"
    assert used["with_arm"]["trials"][0]["passed"] and not used["without_arm"]["trials"][0]["passed"]
    trig = items["trigger-form"]
    assert not trig["with_arm"]["trials"][0]["passed"] and trig["without_arm"]["trials"][0]["passed"]
    # without an agent target, skill-used is refused before any call
    (evals / "EVAL.yaml").write_text(AGENT_EVAL.replace("execution:\n  target: mini-agent\n", ""), encoding="utf-8")
    code, _, err = run_cli(["eval", evals / "EVAL.yaml", "--output", out])
    assert code == 30 and err.count("\n") == 1 and "tests[0].assert[0].type: a skill-used or files check grades an agent trial" in err


def test_eval_all_runs_eval_yaml_and_evals_json_in_skill_folders(byok_env, tmp_path):
    byok_env.add(Rule(reply="Done: login. Next: x. Risks: y.", judge=False))
    root = tmp_path / "plugin"
    shutil.copytree(DATA / "reference", root)
    other = root / "skills" / "notes"
    (other / "evals").mkdir(parents=True)
    (other / "SKILL.md").write_text("Answer in notes.\n")
    (other / "evals" / "evals.json").write_text(json.dumps({"skill_name": "../SKILL.md", "evals": [{"id": 1, "prompt": "Note this", "assertions": ["Is a note"]}]}))
    # an evals.json beside an EVAL.yaml holds the same cases: only the EVAL.yaml runs
    (root / "skills" / "weekly-report" / "evals" / "evals.json").write_text(json.dumps({"skill_name": "../SKILL.md", "evals": [{"id": 9, "prompt": "x"}]}))
    out = tmp_path / "out"
    code, _, err = run_cli(["eval-all", root, "--model", "m", "--output", out])
    assert code in (0, 1), err
    ids = [i["id"] for i in read_json(out / "plugin" / "eval-all-summary.json")["items"]]
    assert ids == ["notes/case-1", "weekly-report/case-basic-report", "weekly-report/case-no-tasks", "weekly-report/case-exact"]


BAD = [
    ("tests: []\n", "tests: must be a non-empty list of tests"),
    ("tests:\n  - id: a\n    input: hi\n    asert: [x]\n", "tests[0].asert: unknown key"),
    ("nme: x\ntests:\n  - id: a\n    input: hi\n", "nme: unknown key"),
    ("tests:\n  - id: a\n    input: hi\n    assert: [{type: is-sql, value: x}]\n", "tests[0].assert[0].value: must be a mapping (databaseType"),
    ("tests:\n  - id: a\n    input: hi\n    assert: [{type: contains, valu: x}]\n", "tests[0].assert[0].valu: unknown key for 'contains'"),
    ("tests:\n  - id: a\n    input: hi\n    assert: [{type: regex, value: '('}]\n", "tests[0].assert[0].value: '(' is not a valid regex"),
    ("tests:\n  - id: a\n    input: hi\n  - id: a\n    input: ho\n", "tests[1].id: 'a' is also the id of tests[0]"),
    ("prompts: ['{{ input }}']\ntests:\n  - id: a\n    vars: {input: hi}\n    assert: ['{{ missing }} ok']\n", "tests[0].assert[0]: uses {{ missing }} but the test has no var 'missing'"),
    ("tests:\n  - id: a\n    input: [{role: assistant, content: hi}]\n", "tests[0].input[0]: a conversation history ends with the user's message"),
    ("tests:\n  - id: a\n    input: [{role: tool, content: hi}]\n", "tests[0].input[0].role: 'tool': expected system, user or assistant"),
    ("tests:\n  - id: a\n    input: hi\n    rubrics: [{outcome: x, wieght: 2}]\n", "tests[0].rubrics[0].wieght: unknown key"),
    ("tests:\n  - id: a\n    input: hi\n    assert: [{type: llm-grader, prompt: q.md, threshold: 2}]\n", "tests[0].assert[0].threshold: must be a number from 0 to 1"),
    ("providers: [a, b]\ntests:\n  - id: a\n    input: hi\n    criteria: x\n", "providers[1]: one target per run"),
]


@pytest.mark.parametrize("text, message", BAD)
def test_bad_eval_yaml_is_one_line_naming_the_field(tmp_path, byok_env, text, message):
    path = tmp_path / "EVAL.yaml"
    path.write_text(text, encoding="utf-8")
    code, _, err = run_cli(["eval", path, "--model", "m", "--output", tmp_path / "out"])
    assert code == 30 and err.count("\n") == 1 and "Traceback" not in err, err
    assert err.startswith(f"error: {path}: {message}") or f"EVAL.yaml: {message}" in err, err
    assert byok_env.requests == []


AGENT_FILES_EVAL = """\
name: csv-report-files
execution:
  target: mini-agent
tests:
  - id: writes-summary
    input: Summarise data.csv for the team.
    assert:
      - type: files
        exists: [summary.md]
        mustContain: {summary.md: ["Total revenue: 3500"]}
      - type: tool-calls
        must_call: [write_file]
        sequence: [read_file, write_file]
        required: true
"""


def test_files_and_tool_calls_are_typed_assertions_of_agent_trials(tmp_path, monkeypatch, scripted_server):
    """agentsproof's agent graders as EVAL.yaml typed assertions (same fields as in eval.yaml),
    graded from the mini agent's workspace and trajectory; a bad field is one line."""
    from conftest import SECRET_KEY
    from openai_server import tool_call, tool_reply, tool_results

    def skilled(req):
        done = tool_results(req)
        if not done:
            return tool_reply(tool_call("read_file", {"path": "data.csv"}))
        if len(done) == 1:
            return tool_reply(tool_call("write_file", {"path": "summary.md", "content": "# Summary\\nTotal revenue: 3500\\n"}))
        return "Written to summary.md."

    for name in ("AGENTSPROOF_PROVIDER_TYPE", "AGENTSPROOF_PROVIDER_URL", "AGENTSPROOF_PROVIDER_KEY", "AGENTSPROOF_MODEL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OPENAI_BASE_URL", scripted_server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", SECRET_KEY)
    scripted_server.add(Rule(reply=skilled, system_contains="# CSV report"), Rule(reply="Revenue: 3500."))
    plugin = tmp_path / "agent-plugin"
    shutil.copytree(REPO / "evals" / "agent-plugin", plugin)
    skill = plugin / "skills" / "csv-report"
    evals = skill / "evals"
    evals.mkdir()
    (evals / "data.csv").write_text((skill / "fixtures" / "data.csv").read_text())
    (evals / "EVAL.yaml").write_text(AGENT_FILES_EVAL, encoding="utf-8")
    out = tmp_path / "out"
    # data.csv reaches the agent's workspace as the test's file input part
    text = AGENT_FILES_EVAL.replace("    input: Summarise data.csv for the team.\n",
                                    "    input:\n      - role: user\n        content:\n          - {type: text, value: Summarise data.csv for the team.}\n"
                                    "          - {type: file, value: data.csv}\n")
    (evals / "EVAL.yaml").write_text(text, encoding="utf-8")
    code, _, err = run_cli(["eval", evals / "EVAL.yaml", "--output", out])
    assert code == 0, err
    item = read_json(next(out.rglob("*-tc-eval.json")))["items"][0]
    w, b = item["with_arm"]["trials"][0], item["without_arm"]["trials"][0]
    assert [g["type"] for g in w["graders"]] == ["files", "tool_calls"]
    assert w["passed"] and w["score"] == 1.0, w["graders"]
    assert w["trajectory"][0]["name"] == "read_file" and w["trajectory"][0]["ok"] is True, "data.csv was in the workspace"
    assert not b["passed"] and b["graders"][0]["score"] == 0.0
    bad = text.replace("must_call: [write_file]", "must_call: [write_file]\n        max_step: 3")
    (evals / "EVAL.yaml").write_text(bad, encoding="utf-8")
    code, _, err = run_cli(["eval", evals / "EVAL.yaml", "--output", out])
    assert code == 30 and err.count("\n") == 1 and "tests[0].assert[1].max_step" in err, err
