"""Activation suites from EVAL.yaml, bad input (one line, exit 30), --skill, the chat
simulation's parsing of the model's choice, and --plan with the plugin arm."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from conftest import Rule, read_json
from openai_server import skill_loader
from plugins import write_plugin

from agentsproof.formats.activation import load_plugin_suites
from agentsproof.targets.base import TargetError
from agentsproof.targets.chat.skill_choice import parse_choice


def test_eval_yaml_skill_used_tests_are_a_suite(tmp_path):
    plugin = write_plugin(tmp_path, suites={"csv-summary": {"should": ["x"]}})
    evals = plugin / "skills" / "csv-summary" / "evals"
    evals.mkdir()
    (evals / "EVAL.yaml").write_text(yaml.safe_dump({"tests": [
        {"id": "a", "input": "Totals and averages per column, please.", "assert": [{"type": "skill-used", "value": "csv-summary"}]},
        {"id": "b", "input": "Write a haiku.", "assert": [{"type": "not-skill-used", "value": "csv-summary"}]},
        {"id": "c", "input": "Trigger?", "assert": [{"type": "skill-trigger", "skill": "csv-summary", "should_trigger": False}]},
        {"id": "d", "input": "Unrelated grading", "assert": [{"type": "contains", "value": "x"}]},
    ]}))
    [suite] = load_plugin_suites(plugin).suites
    got = [(p.text, p.expect) for p in suite.prompts]
    assert got == [("x", True), ("Totals and averages per column, please.", True), ("Write a haiku.", False), ("Trigger?", False)]
    assert "EVAL.yaml" in suite.source


@pytest.mark.parametrize("activation, field", [
    ({"should": [{"prompt": "p", "type": "negative"}]}, "activation.should[0].type"),
    ({"should": ["p"], "min_recall": 1.5}, "activation.min_recall"),
    ({"should": ["p"], "shoud_not": ["q"]}, "activation.shoud_not"),
    ({"should": [{"text": "p"}]}, "activation.should[0]"),
])
def test_bad_suites_are_one_line_naming_the_field(cli, tmp_path, activation, field):
    plugin = write_plugin(tmp_path, suites={"csv-summary": activation})
    code, out, err = cli(["activation", plugin, "--model", "m"])
    assert code == 30 and err.count("\n") == 1 and "eval.yaml" in err and field in err, err


def test_a_plugin_without_suites_and_an_unknown_skill_are_refused(cli, tmp_path):
    bare = tmp_path / "bare"
    (bare / "skills" / "a").mkdir(parents=True)
    (bare / "skills" / "a" / "SKILL.md").write_text("---\nname: a\ndescription: d\n---\nx\n")
    code, out, err = cli(["activation", bare, "--model", "m"])
    assert code == 30 and "has an activation suite" in err and "eval-generate" in err and err.count("\n") == 1
    code, out, err = cli(["activation", write_plugin(tmp_path), "--model", "m", "--skill", "nope"])
    assert code == 30 and "--skill" in err and "'nope' has no activation suite" in err


def test_skill_option_runs_one_suite_with_every_skill_installed(byok_env, cli, tmp_path):
    byok_env.add(Rule(reply=skill_loader()))
    code, out, err = cli(["activation", write_plugin(tmp_path), "--model", "m", "--skill", "chart-builder", "--trials", "2",
                          "--output", tmp_path / "runs"])
    assert code == 0, err
    report = read_json(tmp_path / "runs" / "tables-plugin" / "tables-plugin-activation.json")
    assert [s["skill"] for s in report["skills"]] == ["chart-builder"] and report["trials"] == 6
    assert all(r["messages"][0]["content"].count("<skill>") == 3 for r in byok_env.requests)


def test_provider_failures_are_errored_trials_with_their_reason(byok_env, cli, tmp_path):
    byok_env.add(Rule(status=500, message="boom", user_contains="haiku"), Rule(reply=skill_loader()))
    code, out, err = cli(["activation", write_plugin(tmp_path), "--model", "m", "--output", tmp_path / "runs"])
    report = read_json(tmp_path / "runs" / "tables-plugin" / "tables-plugin-activation.json")
    [bad] = [t for t in report["trial_log"] if t["error"]]
    assert "haiku" in bad["prompt"]["text"] and "500" in bad["error"]
    assert report["errored"] == 1 and code == 0 and "1 errored" in out


@pytest.mark.parametrize("reply, chosen", [
    ('{"skill": "a"}', "a"),
    ('{"skill": null}', None),
    ('Sure! {"skill": "b"} is best.', "b"),
])
def test_the_simulated_skill_tool_reads_the_models_choice(reply, chosen):
    assert parse_choice(reply, ["a", "b"]) == chosen


@pytest.mark.parametrize("reply, why", [
    ('{"skill": "fake evidence"}', "the model chose 'fake evidence', which is not an installed skill (a, b)"),
    ("I would use a.", "not a JSON object with 'skill'"),
    ('{"skill": 3}', "not a name: 3"),
])
def test_an_invalid_simulated_choice_is_an_error_not_no_skill(reply, why):
    with pytest.raises(TargetError, match="invalid simulated skill choice") as info:
        parse_choice(reply, ["a", "b"])
    assert why in str(info.value)


def test_an_invalid_choice_errors_the_trial_and_every_report_names_it(byok_env, cli, tmp_path):
    byok_env.add(Rule(reply='{"skill": "fake evidence"}', user_contains="haiku"), Rule(reply=skill_loader()))
    code, out, err = cli(["activation", write_plugin(tmp_path), "--model", "m", "--output", tmp_path / "runs"])
    assert code == 0, err
    folder = tmp_path / "runs" / "tables-plugin"
    report = read_json(folder / "tables-plugin-activation.json")
    bad = [t for t in report["trial_log"] if t["error"]]
    assert bad and all("haiku" in t["prompt"]["text"] and t["fired"] is None for t in bad)
    reason = "invalid simulated skill choice: the model chose 'fake evidence', which is not an installed skill"
    assert all(reason in t["error"] for t in bad) and report["errored"] == len(bad)
    for page in ("tables-plugin-activation.md", "tables-plugin-activation.html"):
        text = (folder / page).read_text()
        assert "Errored trials" in text and f"{len(bad)} × " in text and "fake evidence" in text, page
    assert "Errored trials" in out and "fake evidence" in out  # the terminal shows the Markdown


def test_plan_counts_the_plugin_arm(byok_env, cli, tmp_path):
    plugin = write_plugin(tmp_path)
    eval_yaml = plugin / "skills" / "csv-summary" / "eval.yaml"
    code, two, err = cli(["eval", eval_yaml, "--model", "m", "--trials", "2", "--plan"])
    assert code == 0, err
    code, three, err = cli(["eval", eval_yaml, "--model", "m", "--trials", "2", "--plan", "--arms", "baseline,skill,plugin"])
    assert code == 0, err
    assert byok_env.requests == []  # --plan calls nothing
    count = lambda text: int(next(ln for ln in text.splitlines() if ln.strip().startswith("trials")).split()[2])  # noqa: E731
    assert count(three) == 2 * count(two), (two, three)
