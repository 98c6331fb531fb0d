"""``agentsproof activation`` and the plugin arm with the real Claude Code and Codex CLIs,
their targets left at the default ``inject: system``: every skill of the plugin must still
be staged the way each CLI loads skills (a system prompt holds one skill, not a choice),
and the scores are counted from what the agent really did. The scripted model loads a skill
only when the CLI listed it to the model and the prompt names its trigger words; the
counts are checked against the same rule applied by hand."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from agent_clis import claude_server, codex_server
from anthropic_server import AnthropicServer, tool_results, tool_use
from conftest import Rule, ScriptedServer, read_json
from openai_server import response_outputs, responses_as_chat, tool_call, tool_reply, trigger_words
from plugins import SUITES, write_plugin

from agentsproof.formats.activation import load_plugin_suites
from agentsproof.targets.chat.skill_choice import description_of

MODEL = "agent-test-model"
SECRET = "sk-activation-agent-cli-secret"
HOMEMARK = "HOMEMARK"
PROMPTS = sorted({p if isinstance(p, str) else p["prompt"] for s in SUITES.values() for k in ("should", "should_not") for p in s.get(k, [])}, key=len, reverse=True)


def choose(prompt: str, descriptions: dict[str, str]) -> list[str]:
    """The scripted model's choice: the offered skill whose trigger words the prompt names
    most (at least two), or none."""
    words = set(re.findall(r"[a-z]+", prompt.lower()))
    scored = sorted(((len(trigger_words(d) & words), n) for n, d in sorted(descriptions.items())), key=lambda t: (-t[0], t[1]))
    return [n for hits, n in scored if hits >= 2][:1]


def hand_count(plugin: Path) -> dict[str, dict[str, int]]:
    """tp/fn/fp per skill from :func:`choose` applied by hand to every prompt, every skill offered."""
    loaded = load_plugin_suites(plugin)
    descriptions = {s.name: description_of(s) for s in loaded.skills}
    should = {s.skill.name: {p.text for p in s.should} for s in loaded.suites}
    counts = {s.skill.name: {"tp": 0, "fn": 0, "fp": 0} for s in loaded.suites}
    for suite in loaded.suites:
        for p in suite.prompts:
            fired = choose(p.text, descriptions)
            for name in counts:
                if suite.skill.name == name:
                    expect = p.expect
                elif p.expect and p.text not in should[name]:
                    expect = False
                else:
                    continue
                hit = name in fired
                key = ("tp" if hit else "fn") if expect else ("fp" if hit else None)
                if key:
                    counts[name][key] += 1
    return counts


def listed(text: str, names: list[str]) -> list[str]:
    """The skills a CLI's skill listing (``- name: description`` lines) names."""
    return [n for n in names if re.search(rf"^\s*-\s*\**{re.escape(n)}\**\s*:", text, re.M)]


def the_prompt(text: str) -> str:
    return next((p for p in [TASK, *PROMPTS] if p in text), "")


def check_report(out_dir: Path, plugin: Path, how: str) -> dict[str, Any]:
    report = read_json(out_dir / "tables-plugin" / "tables-plugin-activation.json")
    assert report["errored"] == 0, [t["error"] for t in report["trial_log"] if t["error"]]
    expected = hand_count(plugin)
    by = {s["skill"]: s for s in report["skills"]}
    for name, counts in expected.items():
        assert {k: by[name][k] for k in ("tp", "fn", "fp")} == counts, name
    assert sum(c["tp"] for c in expected.values()) >= 3  # the rule loads skills: recall is not 0 by construction
    assert by["csv-summary"]["recall"] > 0 and by["chart-builder"]["recall"] == 1.0
    assert all(how in t["offered"] and "inject: system" in t["offered"] for t in report["trial_log"])
    return report


def targets_file(tmp_path: Path, kind: str) -> Path:
    path = tmp_path / "targets.yaml"
    path.write_text(yaml.safe_dump({"agent": {"type": kind}}))  # inject: system, the default
    return path


# ------------------------------------------------------------------ Claude Code


@pytest.fixture
def claude_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[AnthropicServer]:
    yield from claude_server(monkeypatch, tmp_path, SECRET, HOMEMARK)


def claude_texts(req: dict[str, Any]) -> str:
    out = []
    for m in req.get("messages", []):
        content = m.get("content")
        blocks = content if isinstance(content, list) else [{"text": content}]
        out += [str(b.get("text") or "") for b in blocks if isinstance(b, dict)]
    return "\n".join(out)


def claude_model(descriptions: dict[str, str], final: Any = "done"):
    """Calls Claude Code's Skill tool with the chosen skill (among those listed to it), then answers."""

    def reply(req: dict[str, Any]) -> Any:
        if not req.get("tools"):
            return "ok"  # Claude Code's own side calls (titles and the like)
        text = claude_texts(req)
        offered = {n: descriptions[n] for n in listed(text, list(descriptions))}
        chosen = choose(the_prompt(text), offered)
        if len(tool_results(req)) < len(chosen):
            return tool_use("Skill", {"skill": chosen[0]})
        return final(req) if callable(final) else final

    return reply


def test_claude_code_activation_offers_every_skill_with_inject_system(claude_env, cli, tmp_path):
    plugin = write_plugin(tmp_path)
    descriptions = {s.name: description_of(s) for s in load_plugin_suites(plugin).skills}
    claude_env.add(Rule(reply=claude_model(descriptions)))
    out_dir = tmp_path / "runs"
    code, out, err = cli(["activation", plugin, "--target", "agent", "--targets", targets_file(tmp_path, "claude-code"),
                          "--model", MODEL, "--parallel", "2", "--output", out_dir])
    report = check_report(out_dir, plugin, "as Claude Code skills")
    trial_reqs = [r for r in claude_env.requests if r.get("tools")]
    assert all(listed(claude_texts(r), list(descriptions)) == sorted(descriptions) for r in trial_reqs)  # all three, every trial
    assert all("Skill" in [t.get("name") for t in r["tools"]] for r in trial_reqs)
    assert not [r for r in claude_env.requests if HOMEMARK in json.dumps(r)]
    assert code == 0 and SECRET not in out + err + json.dumps(report)


# ------------------------------------------------------------------ Codex


@pytest.fixture
def codex_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[ScriptedServer]:
    yield from codex_server(monkeypatch, tmp_path, SECRET, HOMEMARK)


def codex_system(req: dict[str, Any]) -> str:
    return responses_as_chat(req)["messages"][0]["content"]


def codex_user(req: dict[str, Any]) -> str:
    return "\n".join(str(m["content"]) for m in responses_as_chat(req)["messages"] if m["role"] == "user")


def codex_model(descriptions: dict[str, str]):
    """Reads the chosen skill's SKILL.md (listed with its path) with a shell command, then answers."""

    def reply(req: dict[str, Any]) -> Any:
        system = codex_system(req)
        offered = {n: descriptions[n] for n in listed(system, list(descriptions))}
        chosen = choose(the_prompt(codex_user(req)), offered)
        if len(response_outputs(req)) < len(chosen):
            path = re.search(rf"^\s*-\s*{re.escape(chosen[0])}:.*?\(file: ([^)]+)\)", system, re.M)
            assert path, system
            root = re.search(r"`(r\d+)` = `([^`]+)`", system)
            file = path.group(1).replace(f"{root.group(1)}/", f"{root.group(2)}/", 1) if root else path.group(1)
            return tool_reply(tool_call("exec_command", {"cmd": f"cat {file}"}))
        return "done"

    return reply


def test_codex_activation_offers_every_skill_with_inject_system(codex_env, cli, tmp_path):
    plugin = write_plugin(tmp_path)
    descriptions = {s.name: description_of(s) for s in load_plugin_suites(plugin).skills}
    codex_env.add(Rule(reply=codex_model(descriptions)))
    out_dir = tmp_path / "runs"
    code, out, err = cli(["activation", plugin, "--target", "agent", "--targets", targets_file(tmp_path, "codex"),
                          "--model", MODEL, "--parallel", "2", "--output", out_dir])
    report = check_report(out_dir, plugin, "as Codex skills")
    firsts = [r for r in codex_env.responses_requests if not response_outputs(r)]
    assert firsts and all(listed(codex_system(r), list(descriptions)) == sorted(descriptions) for r in firsts)
    assert not [r for r in codex_env.responses_requests if HOMEMARK in json.dumps(r)]
    assert code == 0 and SECRET not in out + err + json.dumps(report)


# ------------------------------------------------------------------ the plugin arm


TASK = "Give me a short report of the totals, averages, missing values and outliers of every column in this table."
MARK = "SUMMARYMARK"


def plugin_with_task(tmp_path: Path) -> Path:
    plugin = write_plugin(tmp_path)
    folder = plugin / "skills" / "csv-summary"
    (folder / "SKILL.md").write_text((folder / "SKILL.md").read_text() + f"\nStart the answer with {MARK}.\n")
    cfg = yaml.safe_load((folder / "eval.yaml").read_text())
    cfg["task"] = {"name": "report", "instruction": TASK, "graders": [{"type": "deterministic", "checks": [MARK]}]}
    cfg["defaults"] = {"trials": 3, "timeout": 60, "threshold": 0.5}
    (folder / "eval.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    return plugin


def test_claude_code_plugin_arm_offers_the_siblings_with_inject_system(claude_env, cli, tmp_path):
    plugin = plugin_with_task(tmp_path)
    descriptions = {s.name: description_of(s) for s in load_plugin_suites(plugin).skills}
    follows = lambda req: f"{MARK} totals ..." if MARK in json.dumps(req) else "a plain answer"  # noqa: E731 - it follows what it was given
    claude_env.add(Rule(reply=claude_model(descriptions, final=follows)))
    out_dir = tmp_path / "runs"
    code, out, err = cli(["eval", plugin / "skills" / "csv-summary" / "eval.yaml", "--target", "agent",
                          "--targets", targets_file(tmp_path, "claude-code"), "--model", MODEL,
                          "--arms", "baseline,skill,plugin", "--output", out_dir])
    assert code == 0, err
    item = read_json(next(out_dir.rglob("*-eval.json")))["items"][0]
    assert item["with_arm"]["mean_score"] == 1.0 and item["without_arm"]["mean_score"] == 0.0
    plugin_trials = item["plugin_arm"]["trials"]
    assert len(plugin_trials) == 3 and all(t["status"] == "scored" and t["score"] == 1.0 for t in plugin_trials)
    assert all(t["skills_invoked"] == ["csv-summary"] for t in plugin_trials)  # it loaded the skill through the Skill tool
    assert all(any("as Claude Code skills" in e["text"] for e in t["log"]) for t in plugin_trials)
    inf = item["interference"]
    assert inf["verdict"] == "none shown" and inf["skill_loaded"] == [3, 3] and inf["siblings_loaded"] == {}
