"""The real Claude Code and Codex CLIs and the ACP agents for tests: where they are installed.

``make test`` installs pinned versions into ``.venv/claude-cli`` and ``.venv/codex-cli``
(and the ACP agents into ``.venv/gemini-cli``, ``qwen-cli``, ``claude-acp``, ``codex-acp``)
and passes their paths as CLAUDE_CLI_PATH, CODEX_CLI_PATH, GEMINI_CLI_PATH, .... Without one, the tests that
need it are skipped, and fail under CI (where ``make test`` should have installed it).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from agentsproof.model.items import BASELINE_SYSTEM_PROMPT, EvalItem, SkillFile
from agentsproof.targets.base import TrialInput, TrialRecord

REPO = Path(__file__).resolve().parents[1]
CLIS = {
    "claude": ("CLAUDE_CLI_PATH", "claude-cli", "claude", "make claude-cli"),
    "codex": ("CODEX_CLI_PATH", "codex-cli", "codex", "make codex-cli"),
    # the ACP agents of the acp target's built-ins (make acp-agents)
    "gemini": ("GEMINI_CLI_PATH", "gemini-cli", "gemini", "make acp-agents"),
    "qwen": ("QWEN_CLI_PATH", "qwen-cli", "qwen", "make acp-agents"),
    "claude-code-acp": ("CLAUDE_CODE_ACP_PATH", "claude-acp", "claude-code-acp", "make acp-agents"),
    "codex-acp": ("CODEX_ACP_PATH", "codex-acp", "codex-acp", "make acp-agents"),
}


def installed(which: str) -> str | None:
    env, folder, binary, _ = CLIS[which]
    explicit = os.environ.get(env)
    if explicit:
        return explicit if Path(explicit).is_file() else None
    local = REPO / ".venv" / folder / "node_modules" / ".bin" / binary
    if local.is_file():
        return str(local)
    return shutil.which(binary)


def require(which: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """The CLI's path, set in its env var for the target; skip (fail under CI) without it."""
    env, _, _, make = CLIS[which]
    path = installed(which)
    if path is None:
        if os.environ.get("CI"):
            pytest.fail(f"the {which} CLI is not installed; `make test` should have installed it ({make})")
        pytest.skip(f"the {which} CLI is not installed (run `{make}` or set {env})")
    monkeypatch.setenv(env, path)
    return path


def plant_home_skills(home: Path, marker: str) -> list[Path]:
    """Skills in every place a user's home could hold one for Claude Code, Codex or Copilot."""
    places = [home / ".claude" / "skills", home / ".codex" / "skills", home / ".agents" / "skills", home / ".copilot" / "skills",
              home / ".config" / "claude" / "skills", home / ".gemini" / "skills", home / ".qwen" / "skills",
              home / ".config" / "goose" / "skills", home / ".config" / "opencode" / "skills"]
    out = []
    for place in places:
        folder = place / "home-skill"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "SKILL.md").write_text(f"---\nname: home-skill\ndescription: {marker} a skill of the user's own\n---\n{marker} body\n")
        out.append(folder)
    for memory in (home / ".claude" / "CLAUDE.md", home / ".codex" / "AGENTS.md", home / ".copilot" / "copilot-instructions.md",
                   home / ".gemini" / "GEMINI.md", home / ".qwen" / "QWEN.md"):
        memory.parent.mkdir(parents=True, exist_ok=True)
        memory.write_text(f"{marker}: the user's own instructions\n")
    return out


def make_target(kind: str, model: str, **spec: Any):
    """A built-in agent target of ``kind`` (``claude-code``, ``codex``) from a targets.yaml entry."""
    from agentsproof.targets.config import parse_targets
    from agentsproof.targets.registry import build_target

    defs = parse_targets({"agent": {"type": kind, **spec}}, "targets.yaml")
    return build_target(defs["agent"], model=model)


def agent_trial(tmp_path: Path, arm: str, skill_text: str, *, prompt: str = "Do the task.", skill: SkillFile | None = None,
                timeout: float = 90.0, name: str = "") -> TrialInput:
    """One trial of the item ``csv-summary`` (its skill ``skill_text``) in a fresh workspace."""
    workspace = tmp_path / "runs" / f"item{name}" / f"ws-{arm}"
    workspace.mkdir(parents=True)
    item = EvalItem(id="it1", name="csv-summary", kind="skill", source_path="SKILL.md", system_prompt=skill_text, task_name="t1",
                    prompt=prompt, graders=[], trials=1, timeout=timeout, threshold=0.5)
    if arm == "with" and skill is None:
        skill = SkillFile(name="csv-summary", kind="skill", text=skill_text)
    system = (skill.text if skill else skill_text) if arm == "with" else BASELINE_SYSTEM_PROMPT
    return TrialInput(item=item, arm=arm, index=0, system=system, prompt=prompt, timeout=timeout, workspace=workspace,
                      skill=skill if arm == "with" else None)


async def run_all(target: Any, *trials: TrialInput) -> list[TrialRecord]:
    """The trials one after the other, the target closed after."""
    try:
        return [await target.run(t) for t in trials]
    finally:
        await target.aclose()


def claude_server(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, secret: str, home_marker: str):
    """(for a fixture: ``yield from``) Claude Code aimed at a fresh scripted Messages server,
    with a HOME full of the user's own skills (``home_marker`` in each) that must never load."""
    from anthropic_server import AnthropicServer

    require("claude", monkeypatch)
    home = tmp_path / "home"
    plant_home_skills(home, home_marker)
    monkeypatch.setenv("HOME", str(home))
    for name in ("ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN", "ANTHROPIC_MODEL", "CLAUDE_CONFIG_DIR"):
        monkeypatch.delenv(name, raising=False)
    srv = AnthropicServer()
    srv.start()
    monkeypatch.setenv("ANTHROPIC_BASE_URL", srv.base_url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", secret)
    try:
        yield srv
    finally:
        srv.stop()


def codex_server(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, secret: str, home_marker: str):
    """(for a fixture: ``yield from``) Codex aimed at a fresh scripted Responses server, with
    a HOME full of the user's own skills that must never load."""
    from conftest import ScriptedServer

    require("codex", monkeypatch)
    home = tmp_path / "home"
    plant_home_skills(home, home_marker)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("CODEX_HOME", raising=False)
    srv = ScriptedServer()
    srv.start()
    monkeypatch.setenv("OPENAI_BASE_URL", srv.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    try:
        yield srv
    finally:
        srv.stop()
