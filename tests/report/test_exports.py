"""--junit, --jsonl and GITHUB_STEP_SUMMARY on every run command, end to end on the
scripted server. The JUnit file is validated against the common JUnit schema
(tests/data/junit.xsd) with xmlschema (the `dev` extra)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import xmlschema

from conftest import SECRET_KEY, Rule, make_plugin, run_cli, simple_eval, write_tc_eval

MARK = "EXPMARK"
SKILL = f"{MARK}: answer with pytest code.\n"
XSD = Path(__file__).resolve().parents[1] / "data" / "junit.xsd"


@pytest.fixture(scope="module")
def junit_schema() -> xmlschema.XMLSchema:
    return xmlschema.XMLSchema(str(XSD))


def _cases(tmp_path: Path) -> Path:
    return write_tc_eval(
        tmp_path / "cases",
        [
            {"id": 1, "prompt": "write a test", "assertions": ["Uses 'pytest'"]},
            {"id": 2, "prompt": "write a fixture", "assertions": ["Defines a 'fixture'", "Uses 'pytest'"]},
            {"id": 3, "prompt": "BREAKME now", "assertions": ["Uses 'pytest'"]},
        ],
        skill_text=SKILL,
    )


def _serve(srv) -> None:
    # newest rule first: case 3's with-arm call fails with a non-retried 400, which makes
    # an errored trial, never a failed one
    srv.add(Rule(reply="import pytest\n\x07def test_x(): ...", system_contains=MARK, judge=False))
    srv.add(Rule(status=400, message="scripted bad request", user_contains="BREAKME", system_contains=MARK, judge=False))


def test_tc_eval_junit_jsonl_and_step_summary(byok_env, tmp_path, monkeypatch, junit_schema):
    _serve(byok_env)
    summary = tmp_path / "gh" / "summary.md"
    summary.parent.mkdir()
    summary.write_text("earlier step\n", encoding="utf-8")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    junit, jsonl = tmp_path / "ci" / "junit.xml", tmp_path / "ci" / "trials.jsonl"
    code, out, err = run_cli(["tc-eval", _cases(tmp_path), "--model", "m", "--output", tmp_path / "out", "--trials", "2",
                              "--junit", junit, "--jsonl", jsonl, "--config", "prompt=pirate", "--config", "api_key=" + SECRET_KEY])
    assert code == 30, err  # one case errored
    assert not (tmp_path / "ci" / "junit.xml.tmp").exists()

    junit_schema.validate(str(junit))  # raises with the offending element when invalid
    root = ET.parse(junit).getroot()
    suite = root.find("testsuite")
    assert suite.get("tests") == "3" and suite.get("failures") == "2" and suite.get("errors") == "1"
    cases = {c.get("name"): c for c in suite.findall("testcase")}
    # case 1 passed on 2 trials per arm: UNPROVEN, a failure of type "unproven", never a green pass
    assert cases["case 1"].find("failure").get("type") == "unproven" and cases["case 1"].find("error") is None
    assert "fewer than 3 scored trials" in cases["case 1"].find("failure").get("message")
    failure = cases["case 2"].find("failure")
    assert "pass rate 0% is below the threshold 60%" in failure.get("message")
    assert "assertion \"Defines a 'fixture'\": 0/2 trials passed" in failure.text
    error = cases["case 3"].find("error")
    assert "no scored trial in the with-skill arm" in error.get("message") and "scripted bad request" in error.text
    props = {p.get("name"): p.get("value") for p in suite.iter("property")}
    assert props["case-1.grade"] == "A" and props["case-1.delta"] == "+1.00"
    assert props["case-1.delta_ci"].startswith("[") and props["case-1.pass_rate"] == "100%"
    assert props["config.prompt"] == "pirate" and props["config.api_key"] == "(redacted)"
    assert "grade A" in cases["case 1"].find("system-out").text

    lines = [json.loads(line) for line in jsonl.read_text(encoding="utf-8").splitlines()]
    assert len(lines) == 3 * 2 * 2  # cases × arms × trials
    first = lines[0]
    assert {"item", "case", "arm", "trial", "status", "score", "passed", "checks", "tokens", "latency_s", "error"} <= set(first)
    assert first["item"] == "case-1" and first["case"] == "1" and first["arm"] == "with" and first["trial"] == 0
    assert first["passed"] is True and first["checks"][0]["kind"] == "assertion" and first["tokens"]["total"] > 0
    errored = [r for r in lines if r["status"] == "errored"]
    assert len(errored) == 2 and all(r["item"] == "case-3" and r["arm"] == "with" and "400" in r["error"] for r in errored)
    assert all(r["score"] is None and r["passed"] is None for r in errored)

    text = summary.read_text(encoding="utf-8")
    assert text.startswith("earlier step\n")  # appended, not replaced
    assert "### agentsproof tc-eval · cases — ERROR" in text and "| case 1 | 1.00 | 0.00 | +1.00 |" in text
    for f in (junit, jsonl, summary):
        assert SECRET_KEY not in f.read_text(encoding="utf-8")


@pytest.mark.parametrize("command", ["eval", "eval-all"])
def test_eval_commands_write_junit(byok_env, tmp_path, junit_schema, command):
    byok_env.add(Rule(reply="hello there", system_contains="SKILLMARK", judge=False))
    plugin = make_plugin(tmp_path, skills={"greeter": {"prompt": "SKILLMARK greet.\n", "eval": simple_eval(trials=2)}})
    target = plugin / "skills" / "greeter" / "eval.yaml" if command == "eval" else plugin
    junit = tmp_path / "junit.xml"
    code, _, err = run_cli([command, target, "--model", "m", "--output", tmp_path / "out", "--junit", junit, "--ci", "--trials", "3"])
    assert code == 0, err
    junit_schema.validate(str(junit))
    case = ET.parse(junit).getroot().find("testsuite/testcase")
    assert case.get("name") == "greeter" and case.get("classname") == "demo-plugin.skills"
    assert case.find("failure") is None


def test_unwritable_export_path_is_one_line_before_any_call(byok_env, tmp_path):
    (tmp_path / "adir").mkdir()
    (tmp_path / "afile").write_text("x")
    code, _, err = run_cli(["tc-eval", _cases(tmp_path), "--model", "m", "--output", tmp_path / "out", "--junit", tmp_path / "adir"])
    assert code == 30 and len(err.strip().splitlines()) == 1 and "--junit" in err and "is a directory" in err
    bad = tmp_path / "afile" / "t.jsonl"
    code, _, err = run_cli(["tc-eval", _cases(tmp_path), "--model", "m", "--output", tmp_path / "out", "--jsonl", bad])
    assert code == 30
    assert err.strip().splitlines() == [f"error: {bad}: --jsonl: cannot write here ({tmp_path / 'afile'} is not a writable folder)"]
    assert byok_env.trial_requests() == []


def test_bad_config_pair_is_one_line(byok_env, tmp_path):
    code, _, err = run_cli(["tc-eval", _cases(tmp_path), "--model", "m", "--config", "novalue"])
    assert code == 30 and err.strip() == "error: command line: --config: 'novalue' is not KEY=VALUE"


def test_junit_holds_no_control_characters_from_model_output(junit_schema, tmp_path):
    from agentsproof.report.exports import render_junit
    from agentsproof.model.results import ArmResult, CheckResult, GraderResult, ItemResult, RunResult, TrialResult

    bad = "evidence \x00\x1b[31m with \ud800 controls"
    trial = TrialResult(index=0, arm="with", status="scored", score=0.0, passed=False,
                        graders=[GraderResult(type="assertions", weight=1, score=0, checks=[CheckResult(kind="assertion", target="x\x0b", passed=False, evidence=bad)])])
    item = ItemResult(id="case-1", name="case \x01 1", kind="case", source_path="s", source_sha256="", task_name="t", instruction="i",
                      threshold=0.6, trials_requested=1, with_arm=ArmResult(arm="with", system_prompt_kind="skill", trials=[trial]).summarize(),
                      without_arm=ArmResult(arm="without", system_prompt_kind="baseline"), pass_rate=0.0)
    path = tmp_path / "j.xml"
    path.write_text(render_junit(RunResult(tool_version="0", command="tc-eval", plugin="p", provider="x", model="m", judge_model="m", items=[item])), encoding="utf-8")
    junit_schema.validate(str(path))
    assert "evidence [31m with  controls" in path.read_text(encoding="utf-8")


def test_tc_eval_json_carries_assertion_results_and_summary(byok_env, tmp_path):
    byok_env.add(Rule(reply="import pytest", system_contains=MARK, judge=False))
    path = write_tc_eval(tmp_path / "cases", [{"id": 1, "prompt": "p", "assertions": ["Uses 'pytest'", "Defines a 'fixture'"]}], skill_text=SKILL)
    code, _, err = run_cli(["tc-eval", path, "--model", "m", "--output", tmp_path / "out"])
    assert code == 0, err
    item = json.loads((tmp_path / "out" / "cases" / "cases-tc-eval.json").read_text())["items"][0]
    assert item["summary"] == {"passed": 1, "failed": 1, "total": 2, "pass_rate": 0.5}
    results = {r["text"]: r for r in item["assertion_results"]}
    assert results["Uses 'pytest'"]["passed"] is True and results["Uses 'pytest'"]["passed_trials"] == 1
    assert results["Defines a 'fixture'"]["passed"] is False and results["Defines a 'fixture'"]["evidence"]
