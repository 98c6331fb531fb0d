"""Counts that add up and labels that tell the truth: calls / cache / tokens in one table that
matches the JSON; a cached or resumed run says so in one line; not-run items are "not run";
every case's instruction is shown; no -0.00, no float dust, no JUnit case longer than its suite
(the rounding helpers themselves: tests/core/test_units.py); one word for an agent item's
advice; no green PASS on too few trials."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from conftest import Rule, make_plugin, read_json, run_cli


def _tasks_plugin(tmp_path, trials=1):
    tasks = [{"name": f"t{i}", "instruction": f"Instruction number {i}: say hello", "graders": [
        {"type": "deterministic", "checks": {"mustContain": ["hello"]}}]} for i in range(3)]
    ev = {"version": "2", "defaults": {"trials": trials, "timeout": 30, "threshold": 0.6}, "tasks": tasks}
    return make_plugin(tmp_path / "p", skills={"greeter": {"prompt": "Always say hello.", "eval": ev}})


def test_a_cached_rerun_says_so_and_the_table_matches_the_json(byok_env, tmp_path, monkeypatch):
    monkeypatch.delenv("AGENTSPROOF_NO_CACHE")
    monkeypatch.setenv("AGENTSPROOF_CACHE_DIR", str(tmp_path / "cache"))
    byok_env.add(Rule(reply="hello there", system_contains="Always say hello", judge=False))
    plugin = _tasks_plugin(tmp_path)
    out = tmp_path / "out"
    code, first, err = run_cli(["eval", plugin / "skills" / "greeter", "--model", "m", "--output", out, "--trials", "3"])
    assert code == 0, err
    assert "from the cache" not in first
    made = len(byok_env.requests)
    code, second, err = run_cli(["eval", plugin / "skills" / "greeter", "--model", "m", "--output", out, "--trials", "3"])
    assert code == 0, err
    assert len(byok_env.requests) == made  # nothing called
    assert "18 trials from the cache, 0 calls made" in second, second
    report = out / "demo-plugin" / "greeter-eval.json"
    data = read_json(report)
    cache = data["settings"]["cache"]
    assert cache == {"cached_trials": 18, "hits": 18, "calls": 0}
    md = report.with_suffix(".md").read_text()
    assert "| total | 0 | 18 |" in md and "This run: 18 trials from the cache, 0 calls made" in md
    html = report.with_suffix(".html").read_text()
    assert "18 trials from the cache, 18 calls answered from the cache, 0 calls made" in html  # Run settings, in words
    assert "{&#39;cached_trials&#39;" not in html and "{'cached_trials'" not in html


def test_every_case_instruction_is_shown(byok_env, tmp_path):
    byok_env.add(Rule(reply="hello", judge=False))
    out = tmp_path / "out"
    code, _, err = run_cli(["eval", _tasks_plugin(tmp_path) / "skills" / "greeter", "--model", "m", "--output", out, "--no-cache"])
    assert code == 0, err
    report = out / "demo-plugin" / "greeter-eval.json"
    item = read_json(report)["items"][0]
    assert [c["instruction"] for c in item["instructions"]] == [f"Instruction number {i}: say hello" for i in range(3)]
    for text in (report.with_suffix(".md").read_text(), report.with_suffix(".html").read_text()):
        assert all(f"Instruction number {i}" in text for i in range(3))


def test_no_negative_zero_no_float_dust_and_junit_cases_fit_their_suite(byok_env, tmp_path):
    byok_env.add(Rule(reply="hello", judge=False))  # both arms pass: delta 0
    out = tmp_path / "out"
    junit = tmp_path / "j.xml"
    code, stdout, err = run_cli(["eval", _tasks_plugin(tmp_path) / "skills" / "greeter", "--model", "m", "--output", out,
                                 "--no-cache", "--trials", "3", "--junit", junit, "--parallel", "4"])
    assert code in (0, 1), err
    report = out / "demo-plugin" / "greeter-eval.json"
    texts = [stdout, report.read_text(), report.with_suffix(".md").read_text()]
    assert not any("-0.00" in t for t in texts)
    assert not re.search(r"\de-1\d", report.read_text())  # no 1.39e-17
    root = ET.parse(junit).getroot()
    suite = root.find("testsuite")
    assert sum(float(c.get("time")) for c in suite.findall("testcase")) <= float(suite.get("time")) + 1e-9


def test_two_trials_are_not_a_green_pass(byok_env, tmp_path):
    byok_env.add(Rule(reply="hi", judge=False))  # newest rules win
    byok_env.add(Rule(reply="hello", system_contains="Always say hello", judge=False))
    out = tmp_path / "out"
    ev = {"version": "2", "defaults": {"trials": 2, "timeout": 30, "threshold": 0.6},
          "task": {"name": "t", "instruction": "greet", "graders": [{"type": "deterministic", "checks": {"mustContain": ["hello"]}}]}}
    plugin = make_plugin(tmp_path / "p", skills={"greeter": {"prompt": "Always say hello.", "eval": ev}})
    code, stdout, err = run_cli(["eval", plugin / "skills" / "greeter", "--model", "m", "--output", out, "--no-cache"])
    assert code == 0, err
    row = next(line for line in stdout.splitlines() if line.strip().startswith("greeter"))
    assert "UNPROVEN" in row and "PASS" not in row.replace("UNPROVEN", "")
    html = (out / "demo-plugin" / "greeter-eval.html").read_text()
    assert 'class="r r-UNPROVEN"' in html and "too few trials" in html


def test_agent_item_advice_says_agent():
    from agentsproof.executor.suggestions import suggestions_for
    from agentsproof.model.results import ArmResult, CheckResult, GraderResult, ItemResult, TrialResult

    def trial(arm, passed):
        g = GraderResult(type="deterministic", weight=1.0, score=1.0 if passed else 0.0, checks=[CheckResult(kind="mustContain", target="x", passed=passed)])
        return TrialResult(index=0, arm=arm, status="scored", score=g.score, passed=passed, graders=[g])

    item = ItemResult(id="a", name="a", kind="agent", source_path="a.md", source_sha256="", task_name="t", instruction="i",
                      threshold=0.6, trials_requested=1, with_arm=ArmResult(arm="with", system_prompt_kind="agent", trials=[trial("with", False)]),
                      without_arm=ArmResult(arm="without", system_prompt_kind="baseline", trials=[trial("without", True)]), grade="F", delta=-1.0)
    text = " ".join(suggestions_for(item))
    assert "with the agent" in text and "skill" not in text


def test_items_that_never_ran_are_not_run_not_underpowered(byok_env, tmp_path):
    byok_env.add(Rule(reply="hello", judge=False))
    ev = {"version": "2", "defaults": {"trials": 1, "timeout": 30, "threshold": 0.6},
          "task": {"name": "t", "instruction": "greet", "graders": [{"type": "deterministic", "checks": {"mustContain": ["hello"]}}]}}
    plugin = make_plugin(tmp_path / "p", skills={"a-first": {"prompt": "Say hello.", "eval": ev}, "b-second": {"prompt": "Say hello.", "eval": ev}})
    out = tmp_path / "out"
    code, stdout, err = run_cli(["eval-all", plugin, "--model", "m", "--output", out, "--no-cache", "--max-calls", "2", "--parallel", "1"])
    data = read_json(out / "demo-plugin" / "demo-plugin-eval.json") if (out / "demo-plugin" / "demo-plugin-eval.json").exists() else read_json(next(out.glob("*/*.json")))
    never = [i for i in data["items"] if not i["with_arm"]["trials"] and not i["without_arm"]["trials"]]
    assert never, (stdout, err)
    assert all(i["stats"]["verdict"] == "not run" for i in never)
    row = next(line for line in stdout.splitlines() if "b-second" in line and "NOT RUN" in line)
    assert "[underpowered]" not in row and "[not run]" in row
    assert "underpowered: " not in stdout or "b-second" not in stdout.split("underpowered: ", 1)[1].splitlines()[0]


def test_a_trial_that_reports_no_tokens_has_an_unknown_cost_not_zero() -> None:
    """An agent that reports no usage (some ACP agents) must not be priced as $0: its arm's
    cost stays unknown; one trial with tokens makes it a priced sum again."""
    from agentsproof.llm.prices import Price
    from agentsproof.model.results import ArmResult, TrialResult, Usage
    from agentsproof.report.generalise import _arm_spend

    price = Price(input=1.0, output=2.0, cache_read=0.1, cache_write=1.25, cache_write_1h=2.0)
    silent = TrialResult(index=0, arm="with", status="scored", score=1.0, response="done")
    arm = ArmResult(arm="with", system_prompt_kind="skill", trials=[silent])
    assert _arm_spend(arm, price, None).cost_usd is None
    counted = TrialResult(index=1, arm="with", status="scored", score=1.0, response="done",
                          usage=Usage(prompt_tokens=1_000_000, completion_tokens=0, total_tokens=1_000_000))
    arm = ArmResult(arm="with", system_prompt_kind="skill", trials=[silent, counted])
    assert _arm_spend(arm, price, None).cost_usd == 1.0
