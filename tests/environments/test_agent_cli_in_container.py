"""A real agent CLI inside a trial's container: the pinned Codex CLI (its static binary
mounted read-only from the host install, no network at trial time) against the scripted
Responses server on loopback, reached through the relay of a ``--network none``
container; its shell tool runs in the container, and its file comes back to the report."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from agent_clis import claude_server, codex_server
from anthropic_server import tool_results, tool_use
from conftest import Rule, ScriptedServer, read_json, run_cli
from docker_engine import own_containers
from openai_server import response_outputs, tool_call, tool_reply

MARK = "SKILLMARK"


@pytest.fixture
def codex_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[ScriptedServer]:
    """Codex aimed at a fresh scripted Responses server."""
    yield from codex_server(monkeypatch, tmp_path, "sk-codex-container-secret", "HOMEMARK")


def with_arm(req: dict[str, Any]) -> Any:
    """Write a file only a container has the marker for, then answer."""
    if not response_outputs(req):
        return tool_reply(tool_call("exec_command", {"cmd": "test -f /.dockerenv && echo boxed > result.txt; cat /etc/debian_version"}))
    return "wrote result.txt"


def boxed_run(tmp_path: Path, image: str, entry: dict[str, Any], timeout: float, graders: list[dict[str, Any]] | None = None,
              skill: str = f"---\nname: boxed\ndescription: writes result.txt\n---\n{MARK}: write result.txt.\n",
              instruction: str = "Do the task.", extra: list[str] | None = None) -> tuple[int, str, dict[str, Any], Path]:
    """An eval of one agent target (``entry``, named ``t``) in a container of ``image``, run:
    (exit code, stdout + stderr, its item, the eval's folder)."""
    root = tmp_path / "ev"
    root.mkdir(exist_ok=True)
    (root / "SKILL.md").write_text(skill)
    (root / "targets.yaml").write_text(yaml.safe_dump({"t": {**entry, "timeout": timeout}}))
    cfg = {
        "skill": "SKILL.md",
        "execution": {"mode": "agent", "target": "t"},
        "environment": {"image": image},
        "defaults": {"trials": 1, "timeout": timeout},
        "task": {"name": "box", "instruction": instruction, "graders": graders or [{"type": "files", "mustContain": {"result.txt": ["boxed"]}}]},
    }
    (root / "eval.yaml").write_text(yaml.safe_dump(cfg))
    out = tmp_path / "runs"
    code, stdout, stderr = run_cli(["eval", root / "eval.yaml", "--output", out, *(extra or [])])
    return code, stdout + stderr, read_json(next(out.rglob("*.json")))["items"][0], root


def test_codex_runs_inside_the_container_and_its_file_comes_back(tmp_path: Path, docker_base_image: str, codex_env: ScriptedServer) -> None:
    codex_env.add(Rule(reply=with_arm, system_contains=MARK), Rule(reply="nothing to do"))
    code, said, item, _ = boxed_run(tmp_path, docker_base_image, {"type": "codex", "model": "codex-test-model"}, 120)
    (trial,) = item["with_arm"]["trials"]
    assert trial["status"] == "scored" and trial["score"] == 1.0, (trial.get("error"), trial.get("log"), said)
    assert [(f["path"], f["status"]) for f in trial["files"]] == [("result.txt", "created")], trial["files"]
    assert any("exec_command" in s["name"] or "shell" in s["name"] for s in trial["trajectory"]), trial["trajectory"]
    (base,) = item["without_arm"]["trials"]
    assert base["status"] == "scored" and base["score"] == 0.0, base
    assert code in (0, 1), said
    assert own_containers() == []


@pytest.fixture
def claude_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Any]:
    """Claude Code aimed at a fresh scripted Messages server."""
    yield from claude_server(monkeypatch, tmp_path, "sk-ant-container-secret", "HOMEMARK")


def test_claude_code_runs_inside_the_container_and_its_file_comes_back(tmp_path: Path, docker_base_image: str, claude_env: Any) -> None:
    def with_arm_claude(req: dict[str, Any]) -> Any:
        if not tool_results(req):
            return tool_use("Bash", {"command": "test -f /.dockerenv && echo boxed > result.txt", "description": "write the file"})
        return "wrote result.txt"

    claude_env.add(Rule(reply=with_arm_claude, system_contains=MARK), Rule(reply="nothing to do"))
    code, said, item, _ = boxed_run(tmp_path, docker_base_image, {"type": "claude-code", "model": "claude-test-model", "inject": "system"}, 120)
    (trial,) = item["with_arm"]["trials"]
    assert trial["status"] == "scored" and trial["score"] == 1.0, (trial.get("error"), trial.get("log"), said)
    assert [(f["path"], f["status"]) for f in trial["files"]] == [("result.txt", "created")], trial["files"]
    (base,) = item["without_arm"]["trials"]
    assert base["status"] == "scored" and base["score"] == 0.0, base
    assert own_containers() == []


@pytest.fixture
def copilot_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[ScriptedServer]:
    """Copilot (BYOK) aimed at a fresh scripted chat-completions server; empty HOME, no tokens."""
    from copilot_cli import copilot_byok

    cache = Path(os.environ.get("COPILOT_CACHE_HOME") or Path.home() / ".cache" / "copilot")
    cache.mkdir(parents=True, exist_ok=True)
    yield from copilot_byok(monkeypatch, tmp_path, cache, "sk-copilot-container-secret")


def test_copilot_runs_inside_the_container_and_its_file_comes_back(tmp_path: Path, docker_base_image: str, copilot_env: ScriptedServer) -> None:
    """The copilot target's CLI (its native binary mounted read-only) runs in the trial's
    ``--network none`` container, the model reached through the relay; its bash tool writes
    in the container (outside the workdir too: the container is the boundary), the file comes back."""
    from openai_server import tool_results as chat_results

    def with_arm_copilot(req: dict[str, Any]) -> Any:
        if not chat_results(req):
            return tool_reply(tool_call("bash", {"command": "test -f /.dockerenv && echo boxed > result.txt && echo x > /etc/agent-was-here", "description": "write"}))
        return "wrote result.txt"

    copilot_env.add(Rule(reply=with_arm_copilot, system_contains=MARK), Rule(reply="nothing to do"))
    checks = [{"type": "files", "mustContain": {"result.txt": ["boxed"]}}, {"type": "script", "script": "check.sh"}]
    (tmp_path / "ev").mkdir()
    (tmp_path / "ev" / "check.sh").write_text("#!/bin/sh\ntest -f /etc/agent-was-here\n")
    code, said, item, _ = boxed_run(tmp_path, docker_base_image, {"type": "copilot", "model": "test-model"}, 180, checks)
    (trial,) = item["with_arm"]["trials"]
    assert trial["status"] == "scored" and trial["score"] == 1.0, (trial.get("error"), trial.get("log"), said)
    assert [(f["path"], f["status"]) for f in trial["files"]] == [("result.txt", "created")], trial["files"]
    assert [s["name"] for s in trial["trajectory"]] == ["bash"], trial["trajectory"]
    (base,) = item["without_arm"]["trials"]
    assert base["status"] == "scored" and base["score"] == 0.0, base
    assert not Path("/etc/agent-was-here").exists()  # the host untouched
    assert code in (0, 1), said
    assert own_containers() == []


def test_a_copilot_trial_past_its_timeout_in_a_container_is_errored_and_stops_it(tmp_path: Path, docker_base_image: str, copilot_env: ScriptedServer) -> None:
    """A copilot session whose shell tool outlives the trial's timeout: the trial is errored
    (timed out), the container is stopped (nothing it started lives on) and removed."""
    copilot_env.add(Rule(reply=tool_reply(tool_call("bash", {"command": "sleep 300", "description": "wait", "initial_wait": 300}))))
    code, said, item, _ = boxed_run(
        tmp_path, docker_base_image, {"type": "copilot", "model": "test-model"}, 15, [{"type": "files", "exists": ["never.txt"]}],
        skill="---\nname: slow\ndescription: waits\n---\nWait.\n", instruction="Wait.", extra=["--baseline", "none"],
    )
    (trial,) = item["with_arm"]["trials"]
    assert trial["status"] == "errored" and "timed out" in trial["error"], (trial.get("error"), said)
    assert code != 0, said  # an errored run
    assert own_containers() == []
