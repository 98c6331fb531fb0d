"""Claude Code and Codex through the whole harness: ``agentsproof eval --target claude-code``
(and ``codex``) on a plugin whose skill makes the agent write a file, the real CLIs on the
scripted servers, graded by the ``files`` and ``skill_used`` graders; the baseline, which
lacks the skill, writes nothing and fails."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from agent_clis import plant_home_skills, require
from copilot_cli import cli_cache  # noqa: F401 - a fixture
from anthropic_server import AnthropicServer, tool_results, tool_use
from conftest import Rule, ScriptedServer, make_plugin, read_json, run_cli, simple_eval
from openai_server import response_outputs, tool_call, tool_reply

MARK = "WRITEMARK"
SKILL = f"---\nname: writer\ndescription: Writes the report file.\n---\n{MARK}: always write report.txt with the word done.\n"


def plugin(tmp_path: Path, inject: str) -> tuple[Path, Path]:
    ev = simple_eval([{"type": "files", "exists": ["report.txt"], "mustContain": {"report.txt": ["done"]}}, {"type": "skill_used"}],
                     trials=2, timeout=120, instruction="Do the job.")
    root = make_plugin(tmp_path, skills={"writer": {"prompt": SKILL, "eval": ev}})
    targets = tmp_path / "targets.yaml"
    targets.write_text(yaml.safe_dump({"claude": {"type": "claude-code", "inject": inject}, "cx": {"type": "codex", "inject": inject}}))
    return root / "skills" / "writer", targets


def check(out: Path, target: str) -> dict[str, Any]:
    report = read_json(next(out.rglob("*.json")))
    [item] = report["items"]
    assert item["target"] == target
    for t in item["with_arm"]["trials"]:
        assert t["status"] == "scored" and t["score"] == 1.0, t
        assert [(f["path"], f["status"]) for f in t["files"]] == [("report.txt", "created")]
        assert t["skill_used"] is True
    for t in item["without_arm"]["trials"]:
        assert t["status"] == "scored" and t["files"] == [] and t["score"] < 0.5, t
    return item


@pytest.mark.parametrize("inject", ["system", "skill"])
def test_claude_code_through_the_cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, inject: str) -> None:
    require("claude", monkeypatch)
    plant_home_skills(tmp_path / "home", "HOMEMARK")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    write = tool_use("Bash", {"command": "echo done > report.txt", "description": "write"})

    def reply(req: dict[str, Any]) -> Any:
        text = json.dumps(req)
        if "tools" not in req:
            return "OK"
        n = len(tool_results(req))
        if inject == "skill":
            if "writer: Writes the report file." not in text:
                return "nothing to do"
            steps = [tool_use("Skill", {"skill": "writer"}), write]
        else:
            if MARK not in text:
                return "nothing to do"
            steps = [write]
        return steps[n] if n < len(steps) else "wrote report.txt"

    with AnthropicServer([Rule(reply=reply)]) as srv:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", srv.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-e2e")
        d, targets = plugin(tmp_path, inject)
        target = "claude-code" if inject == "system" else "claude"
        code, _, stderr = run_cli(["eval", d, "--output", tmp_path / "runs", "--target", target, "--targets", targets])
        assert code == 0, stderr
        check(tmp_path / "runs", target)
        assert not [r for r in srv.requests if "HOMEMARK" in json.dumps(r)]


@pytest.mark.parametrize("inject", ["system", "skill"])
def test_codex_through_the_cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, inject: str) -> None:
    require("codex", monkeypatch)
    plant_home_skills(tmp_path / "home", "HOMEMARK")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))

    def reply(req: dict[str, Any]) -> Any:
        text = json.dumps(req)
        n = len(response_outputs(req))
        if inject == "skill":
            if "- writer: Writes the report file." not in text:
                return "nothing to do"
            import re

            root = re.search(r"`r0` = `([^`]+)`", text).group(1)
            steps = [f"cat {root}/writer/SKILL.md", "echo done > report.txt"]
        else:
            if MARK not in text:
                return "nothing to do"
            steps = ["echo done > report.txt"]
        return tool_reply(tool_call("exec_command", {"cmd": steps[n]})) if n < len(steps) else "wrote report.txt"

    srv = ScriptedServer([Rule(reply=reply)])
    with srv:
        monkeypatch.setenv("OPENAI_BASE_URL", srv.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-e2e")
        d, targets = plugin(tmp_path, inject)
        target = "codex" if inject == "system" else "cx"
        code, _, stderr = run_cli(["eval", d, "--output", tmp_path / "runs", "--target", target, "--targets", targets, "--model", "codex-test"])
        assert code == 0, stderr
        check(tmp_path / "runs", target)
        assert not [r for r in srv.responses_requests if "HOMEMARK" in json.dumps(r)]


def test_graders_scoped_to_a_turn_through_claude_code(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A two-turn trial on the real ``claude`` CLI (``--resume`` carries the second turn):
    ``turn: 1`` grades the first reply, ``turn: 2`` the second, ``turn: all`` both."""
    require("claude", monkeypatch)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))

    def reply(req: dict[str, Any]) -> Any:
        if "tools" not in req:
            return "OK"
        return f"reply {json.dumps(req.get('messages', [])).count('FOLLOWUP') + 1}"

    graders = [{"type": "deterministic", "checks": ["reply 1"], "turn": 1}, {"type": "deterministic", "checks": ["reply 2"], "turn": 2},
               {"type": "deterministic", "checks": ["reply 2"], "turn": 1}, {"type": "deterministic", "checks": ["reply 1", "reply 2"], "turn": "all"}]
    ev = simple_eval(graders, trials=1, timeout=120, threshold=0.5, instruction="Do the job.")
    ev["task"]["turns"] = ["FOLLOWUP: and again."]
    d = make_plugin(tmp_path, skills={"writer": {"prompt": SKILL, "eval": ev}}) / "skills" / "writer"
    with AnthropicServer([Rule(reply=reply)]) as srv:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", srv.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-e2e")
        code, _, stderr = run_cli(["eval", d, "--output", tmp_path / "runs", "--target", "claude-code"])
        assert code == 0, stderr
    [item] = read_json(next((tmp_path / "runs").rglob("*.json")))["items"]
    for t in [*item["with_arm"]["trials"], *item["without_arm"]["trials"]]:
        assert t["replies"] == ["reply 1", "reply 2"] and t["response"] == "reply 2", t
        assert [g["score"] for g in t["graders"]] == [1.0, 1.0, 0.0, 1.0], t["graders"]


def test_one_matrix_across_copilot_claude_code_and_codex(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli_cache: Path) -> None:
    """``--target copilot,claude-code,codex``: one command, every item on each real CLI, a
    grade per agent, the agents side by side; nothing of the user's home loads."""
    from copilot_cli import copilot_byok
    from openai_server import tool_results as chat_tool_results

    require("claude", monkeypatch)
    require("codex", monkeypatch)
    servers = copilot_byok(monkeypatch, tmp_path, cli_cache, "sk-copilot-e2e")  # sets HOME to an empty folder
    openai = next(servers)
    try:
        plant_home_skills(Path(__import__("os").environ["HOME"]), "HOMEMARK")

        def openai_reply(req: dict[str, Any]) -> Any:
            text = json.dumps(req)
            if MARK not in text:
                return "nothing to do"
            if "input" in req:  # Codex: the Responses API
                return tool_reply(tool_call("exec_command", {"cmd": "echo done > report.txt"})) if not response_outputs(req) else "wrote it"
            if not chat_tool_results(req):  # Copilot: chat completions
                return tool_reply(tool_call("bash", {"command": "echo done > report.txt", "description": "write"}))
            return "wrote it"

        def anthropic_reply(req: dict[str, Any]) -> Any:
            if "tools" not in req or MARK not in json.dumps(req):
                return "nothing to do"
            return tool_use("Bash", {"command": "echo done > report.txt", "description": "write"}) if not tool_results(req) else "wrote it"

        openai.add(Rule(reply=openai_reply))
        with AnthropicServer([Rule(reply=anthropic_reply)]) as anthropic:
            monkeypatch.setenv("ANTHROPIC_BASE_URL", anthropic.base_url)
            monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-e2e")
            monkeypatch.setenv("OPENAI_BASE_URL", openai.base_url)
            monkeypatch.setenv("OPENAI_API_KEY", "sk-e2e")
            d, _ = plugin(tmp_path, "system")
            out = tmp_path / "runs"
            code, stdout, stderr = run_cli(["eval", d, "--output", out, "--target", "copilot,claude-code,codex", "--model", "test-model"])
            assert code == 0, stderr
            report = read_json(next(out.rglob("*.json")))
            assert [it["target"] for it in report["items"]] == ["copilot", "claude-code", "codex"]
            assert len({it["id"] for it in report["items"]}) == 3
            for item in report["items"]:
                assert item["grade"] == "A", item
                for t in item["with_arm"]["trials"]:
                    assert t["score"] == 1.0 and [(f["path"], f["status"]) for f in t["files"]] == [("report.txt", "created")], (item["target"], t)
                assert all(t["files"] == [] for t in item["without_arm"]["trials"])
            assert "by agent:" in stdout and "writer @ codex" in stdout
            md = next(out.rglob("*.md")).read_text()  # the reports' side-by-side section
            assert "| item | copilot | claude-code | codex |" in md and "| writer | A +1.00" in md and "| **the skill helps** |" in md
            assert 'id="by-agent"' in next(out.rglob("*.html")).read_text()
            assert not [r for r in [*openai.requests, *openai.responses_requests, *anthropic.requests] if "HOMEMARK" in json.dumps(r)]
    finally:
        next(servers, None)


def test_a_matrix_names_each_agent_once(tmp_path: Path) -> None:
    from agentsproof.commands.per_target import target_names

    assert target_names("a, b,c") == ["a", "b", "c"] and target_names(None) == []
    d, _ = plugin(tmp_path, "system")
    for bad, why in (("a,,b", "has an empty name"), ("codex,codex", "names an agent twice")):
        code, _, stderr = run_cli(["eval", d, "--output", tmp_path / "runs", "--target", bad])
        assert code == 30 and why in stderr and "--target" in stderr, stderr
    code, _, stderr = run_cli(["eval", d, "--output", tmp_path / "runs", "--target", "claude-code,nope"])
    assert code == 30 and "unknown target 'nope'" in stderr and stderr.count("\n") == 1, stderr
