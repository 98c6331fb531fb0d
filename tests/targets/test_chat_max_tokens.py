"""eval.yaml ``defaults.max_tokens``: the reply cap of the agent-under-test's chat calls,
in both arms and every turn, never the judge's; on the scripted server, through both
OpenAI-compatible paths. It is part of the journal fingerprint, and an agent target
(which sets its own limits) says it ignores it."""

from __future__ import annotations

import sys
from pathlib import Path

import yaml

from conftest import Rule, make_plugin, read_json, run_cli, simple_eval
from openai_server import is_judge, skill_loader

ACTIVATION_TESTS = str(Path(__file__).resolve().parent.parent / "activation")


def _eval(max_tokens: int | None, **kw) -> dict:
    ev = simple_eval([{"type": "deterministic", "checks": ["hello"], "weight": 0.5}, {"type": "llm_rubric", "rubric": "Is it a greeting?", "weight": 0.5}], trials=2, **kw)
    ev["task"]["turns"] = ["And once more, please."]
    if max_tokens is not None:
        ev["defaults"]["max_tokens"] = max_tokens
    return ev


def _trial_bodies(srv) -> list[dict]:
    return [r for r in srv.requests if not is_judge(srv.as_chat(r))]


def test_every_trial_call_of_both_arms_carries_the_cap_and_the_judge_does_not(byok_env, openai_path, tmp_path):
    byok_env.add(Rule(reply="hello there", judge=False))
    plugin = make_plugin(tmp_path, skills={"greeter": {"prompt": "Greet warmly.\n", "eval": _eval(7)}})
    out = tmp_path / "runs"
    code, _, err = run_cli(["eval", plugin / "skills" / "greeter" / "eval.yaml", "--model", "m", "--output", out])
    assert code in (0, 1), err
    trials = _trial_bodies(byok_env)
    # 2 trials per arm x 2 arms x 2 turns (the instruction and one follow-up)
    assert len(trials) == 8
    assert [r.get("max_tokens") for r in trials] == [7] * 8
    systems = {r["messages"][0]["content"] for r in trials}
    assert any("Greet warmly." in s for s in systems) and "You are a helpful assistant." in systems  # both arms
    judged = byok_env.judge_requests()
    assert judged and all(r.get("max_tokens") != 7 for r in judged)
    [item] = read_json(next(out.rglob("*.json")))["items"]
    assert item["with_arm"]["trials"][0]["response"] == "hello there"


def test_without_the_setting_no_cap_is_sent(byok_env, tmp_path):
    byok_env.add(Rule(reply="hello", judge=False))
    plugin = make_plugin(tmp_path, skills={"greeter": {"eval": _eval(None)}})
    code, _, err = run_cli(["eval", plugin / "skills" / "greeter" / "eval.yaml", "--model", "m", "--output", tmp_path / "runs"])
    assert code in (0, 1), err
    trials = _trial_bodies(byok_env)
    assert trials and all("max_tokens" not in r for r in trials)


def test_changing_the_cap_refuses_to_resume_the_journal(byok_env, tmp_path):
    plugin = make_plugin(tmp_path, skills={"greeter": {"eval": _eval(16)}})
    out = tmp_path / "runs"
    code, _, err = run_cli(["eval-all", plugin, "--model", "m", "--output", out])
    assert code in (0, 1), err
    # the same cap resumes (nothing left to run) ...
    calls = len(byok_env.requests)
    code, _, err = run_cli(["eval-all", plugin, "--model", "m", "--output", out, "--resume"])
    assert code in (0, 1), err
    assert len(byok_env.requests) == calls
    # ... another one is another configuration
    (plugin / "skills" / "greeter" / "eval.yaml").write_text(yaml.safe_dump({**_eval(32), "skill": "SKILL.md"}, sort_keys=False))
    code, _, err = run_cli(["eval-all", plugin, "--model", "m", "--output", out, "--resume"])
    lines = err.strip().splitlines()
    assert code == 30 and len(lines) == 1 and "skills/greeter: the reply cap (defaults.max_tokens) changed" in lines[0], err
    assert len(byok_env.requests) == calls


def test_the_plugin_arms_skill_choice_is_not_cut_off(byok_env, tmp_path):
    """The simulated skill choice is a JSON object the target reads: uncapped; the answer
    written with the chosen skill is capped like every reply."""
    if ACTIVATION_TESTS not in sys.path:
        sys.path.insert(0, ACTIVATION_TESTS)
    from plugins import write_plugin  # the plugin-arm tests' plugin (tests/activation/plugins.py)

    mark = "SUMMARYMARK"
    plugin = write_plugin(tmp_path, planted=False)
    folder = plugin / "skills" / "csv-summary"
    (folder / "SKILL.md").write_text((folder / "SKILL.md").read_text() + f"\nStart the answer with {mark}.\n")
    cfg = yaml.safe_load((folder / "eval.yaml").read_text())
    cfg["task"] = {"name": "report", "instruction": "Give me a short report of the totals, averages, missing values and outliers of every column in this table.",
                   "graders": [{"type": "deterministic", "checks": [mark]}]}
    cfg["defaults"] = {"trials": 2, "timeout": 60, "threshold": 0.5, "max_tokens": 11}
    (folder / "eval.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    byok_env.add(Rule(reply=skill_loader(final=lambda req: f"{mark} totals" if mark in str(req["messages"]) else "plain")))
    code, _, err = run_cli(["eval-all", folder, "--model", "m", "--arms", "baseline,skill,plugin", "--output", tmp_path / "runs"])
    assert code == 0, err
    choices = [r for r in byok_env.requests if "response_format" in r]
    answers = [r for r in byok_env.requests if "response_format" not in r]
    assert len(choices) == 2 and all("max_tokens" not in r for r in choices)
    assert len(answers) == 6 and all(r.get("max_tokens") == 11 for r in answers)  # 2 with, 2 without, 2 plugin answers


def test_an_agent_target_warns_that_it_ignores_the_cap(tmp_path):
    from agentsproof.formats.eval_yaml.models import AGENT_MAX_TOKENS_WARNING, load_eval
    from agentsproof.formats.eval_yaml.items import item_from_eval

    plugin = make_plugin(tmp_path, skills={"greeter": {"eval": _eval(7)}})
    ev = load_eval(plugin / "skills" / "greeter" / "eval.yaml")
    chat = item_from_eval(ev)
    assert chat.max_tokens == 7 and AGENT_MAX_TOKENS_WARNING not in chat.warnings
    agent = item_from_eval(ev, target="some-agent")
    assert agent.max_tokens is None and AGENT_MAX_TOKENS_WARNING in agent.warnings
