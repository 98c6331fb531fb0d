"""``agentsproof activation`` with the chat target's simulated skill tool, end to end: the
real CLI, the real OpenAI-compatible client, the scripted server whose model loads the
skill whose trigger words the prompt names (``openai_server.skill_loader``)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from conftest import SECRET_KEY, Rule, read_json
from openai_server import choose_skills, skill_loader

from agentsproof.formats.activation import load_plugin_suites

PLUGIN = Path(__file__).resolve().parents[2] / "evals" / "csv-plugin"


def hand_count(srv_rule_min_hits: int = 2) -> dict[str, dict[str, int]]:
    """Precision/recall counts from the scripted model's rule applied by hand to every prompt."""
    plugin = load_plugin_suites(PLUGIN)
    from agentsproof.targets.chat.skill_choice import choice_system

    system = choice_system(plugin.skills)
    should = {s.skill.name: {p.text for p in s.should} for s in plugin.suites}
    counts = {s.skill.name: {"tp": 0, "fn": 0, "fp": 0} for s in plugin.suites}
    for suite in plugin.suites:
        for p in suite.prompts:
            req = {"messages": [{"role": "system", "content": system}, {"role": "user", "content": p.text}]}
            fired = choose_skills(req, srv_rule_min_hits)[:1]
            for name in counts:
                hit = name in fired
                if suite.skill.name == name:
                    expect = p.expect
                elif p.expect and p.text not in should[name]:
                    expect = False
                else:
                    continue
                if expect and hit:
                    counts[name]["tp"] += 1
                elif expect:
                    counts[name]["fn"] += 1
                elif hit:
                    counts[name]["fp"] += 1
    return counts


def test_activation_chat_simulation_matches_hand_counts(byok_env, cli, tmp_path):
    byok_env.add(Rule(reply=skill_loader()))
    code, out, err = cli(["activation", PLUGIN, "--model", "m", "--output", tmp_path / "runs"])
    assert code == 0, err
    report = read_json(tmp_path / "runs" / "csv-plugin" / "csv-plugin-activation.json")
    expected = hand_count()
    for s in report["skills"]:
        assert {k: s[k] for k in ("tp", "fn", "fp")} == expected[s["skill"]], s["skill"]
        if s["recall"] is not None:
            lo, hi = s["recall_ci"]
            assert lo <= s["recall"] <= hi
    assert report["trials"] == 60 and report["errored"] == 0
    # every trial offered all three skills, by name and description only
    first = byok_env.requests[0]
    system = first["messages"][0]["content"]
    assert system.count("<skill>") == 3 and "Never change the data" not in system
    assert "| csv-summary |" in out and "Confusion matrix" in out
    page = (tmp_path / "runs" / "csv-plugin" / "csv-plugin-activation.html").read_text()
    assert "<h2>Confusion matrix</h2>" in page and "<script" not in page
    assert SECRET_KEY not in out + err + page
