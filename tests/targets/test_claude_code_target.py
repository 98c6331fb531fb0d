"""The claude-code target end to end: the real Claude Code CLI (pinned, installed by ``make
test``) in print mode against the scripted Anthropic Messages API server on loopback,
streamed, whose replies call Claude Code's own tools (``Bash``, ``Read``, ``Skill``) in the
trial's workspace. HOME is a temporary folder holding skills and instructions of "the
user's own", which must never reach a trial.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from agent_clis import agent_trial, claude_server, run_all
from agent_clis import make_target as agent_cli_target
from anthropic_server import AnthropicServer, offered_tools, tool_results, tool_use
from conftest import Rule

from agentsproof.model.items import BASELINE_SYSTEM_PROMPT, SkillFile
from agentsproof.targets.base import TargetError, TrialInput
from agentsproof.targets.config import parse_targets

MODEL = "claude-test-model"
SECRET = "sk-ant-claude-target-secret"
MARK = "SKILLMARK"
HOMEMARK = "HOMEMARK"
SKILL_TEXT = f"---\nname: csv-summary\ndescription: Summarises CSV files (DESCMARK).\n---\n{MARK}: write result.txt.\n"


@pytest.fixture
def claude_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[AnthropicServer]:
    yield from claude_server(monkeypatch, tmp_path, SECRET, HOMEMARK)


def make_target(**spec: Any):
    return agent_cli_target("claude-code", MODEL, **spec)


def trial(tmp_path: Path, arm: str, **kw: Any) -> TrialInput:
    return agent_trial(tmp_path, arm, SKILL_TEXT, **kw)


def script(*steps: list[dict[str, Any]] | Callable[[dict[str, Any]], list[dict[str, Any]]], final: str | Callable[[dict[str, Any]], str]):
    """A reply that makes tool call ``steps[n]`` once ``n`` tool results came back, then ``final``."""

    def reply(req: dict[str, Any]) -> Any:
        n = len(tool_results(req))
        if n < len(steps):
            step = steps[n]
            return step(req) if callable(step) else step
        return final(req) if callable(final) else final

    return reply


def system_of(req: dict[str, Any]) -> str:
    system = req.get("system")
    return "\n".join(b.get("text", "") for b in system) if isinstance(system, list) else str(system or "")


def user_says(req: dict[str, Any], text: str) -> bool:
    return text in json.dumps([m for m in req.get("messages", []) if m.get("role") == "user"])


def texts(req: dict[str, Any]) -> str:
    """Every text of a request's messages (strings and text blocks)."""
    out = []
    for m in req.get("messages", []):
        content = m.get("content")
        blocks = content if isinstance(content, list) else [{"text": content}]
        out += [str(b.get("text") or "") for b in blocks if isinstance(b, dict)]
    return "\n".join(out)


def files_in(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())


# ---------------------------------------------------------------- trials with the real CLI


async def test_with_arm_writes_in_its_workspace_and_the_baseline_does_not(claude_env, tmp_path):
    srv = claude_env
    write = tool_use("Bash", {"command": "printf 'written by the with-arm\\n' > result.txt", "description": "write the file"})
    srv.add(Rule(reply=script(write, final="wrote result.txt"), system_contains=MARK),
            Rule(reply="nothing to do", system_contains=BASELINE_SYSTEM_PROMPT))
    target = make_target()
    with_t, without_t = trial(tmp_path, "with"), trial(tmp_path, "without", name="-b")

    with_r, without_r = await run_all(target, with_t, without_t)

    assert (with_t.workspace / "result.txt").read_text() == "written by the with-arm\n"
    assert with_r.answer == "wrote result.txt"
    [step] = with_r.trajectory
    assert step.name == "Bash" and step.ok is True and "result.txt" in step.arguments and step.latency_s is not None
    assert with_r.usage.prompt_tokens > 0 and with_r.usage.completion_tokens > 0
    assert with_r.cost_usd is not None and with_r.cost_usd >= 0
    assert with_r.skill_used is True and with_r.skills_invoked == ["csv-summary"]
    assert without_r.answer == "nothing to do" and without_r.trajectory == [] and without_r.skill_used is False
    assert files_in(without_t.workspace) == []
    trial_reqs = [r for r in srv.requests if r.get("tools")]
    assert MARK in system_of(trial_reqs[0]) and BASELINE_SYSTEM_PROMPT not in system_of(trial_reqs[0])
    assert BASELINE_SYSTEM_PROMPT in system_of(trial_reqs[-1]) and MARK not in json.dumps(trial_reqs[-1])
    for req in trial_reqs:
        assert req["model"] == MODEL and req.get("stream") is True
        assert {"Bash", "Read", "Write", "Edit"} <= set(offered_tools(req)) and "Skill" not in offered_tools(req)
        assert "WebFetch" not in offered_tools(req) and "Agent" not in offered_tools(req)  # the allowlist, nothing else
    assert all(s["x-api-key"] == SECRET for s in srv.seen)
    # nothing of the user's home reached any request: no skill, no CLAUDE.md
    assert not [r for r in srv.requests if HOMEMARK in json.dumps(r)]


async def test_inject_skill_installs_it_where_claude_code_loads_it(claude_env, tmp_path):
    source = tmp_path / "src" / "csv-summary"
    (source / "references").mkdir(parents=True)
    (source / "SKILL.md").write_text(SKILL_TEXT)
    (source / "references" / "guide.md").write_text("GUIDEMARK: sum the columns\n")
    from agentsproof.formats.eval_yaml.items import skill_file

    skill = skill_file("csv-summary", "skill", SKILL_TEXT, source / "SKILL.md")
    base: dict[str, str] = {}

    def read_guide(req: dict[str, Any]) -> list[dict[str, Any]]:
        import re

        base["dir"] = re.search(r"Base directory for this skill: (\S+)", texts(req)).group(1)
        return tool_use("Read", {"file_path": f"{base['dir']}/references/guide.md"})

    write = tool_use("Bash", {"command": "echo done > result.txt", "description": "write"})
    use = script(tool_use("Skill", {"skill": "csv-summary"}), read_guide, write, final=lambda req: "used: " + tool_results(req)[1])
    claude_env.add(Rule(reply=lambda req: use(req) if user_says(req, "use the skill") else "no skill needed"))
    target = make_target(inject="skill")
    used = trial(tmp_path, "with", prompt="Please use the skill.", skill=skill)
    unused = trial(tmp_path, "with", prompt="Just ignore it.", skill=SkillFile(name="plain-skill", kind="skill", text="PLAINMARK: no front matter.\n"), name="-2")
    baseline = trial(tmp_path, "without", prompt="Just ignore it.", name="-3")

    used_r, unused_r, baseline_r = await run_all(target, used, unused, baseline)

    first = next(r for r in claude_env.requests if r.get("tools") and user_says(r, "use the skill"))
    assert BASELINE_SYSTEM_PROMPT in system_of(first) and MARK not in system_of(first)  # not the system prompt
    assert "Skill" in offered_tools(first)
    listing = json.dumps(first["messages"])
    assert "csv-summary: Summarises CSV files (DESCMARK)." in listing  # listed to the model ...
    assert "home-skill" not in listing and "deep-research" not in listing  # ... as the only skill
    assert [s.name for s in used_r.trajectory] == ["Skill", "Read", "Bash"] and all(s.ok for s in used_r.trajectory)
    assert "GUIDEMARK" in used_r.answer  # the skill's folder came along
    assert used_r.skill_used is True and used_r.skills_invoked == ["csv-summary"]
    assert (used.workspace / "result.txt").read_text() == "done\n"
    assert not Path(base["dir"]).exists() and not Path(base["dir"]).is_relative_to(used.workspace)  # staged outside, removed
    assert files_in(used.workspace) == ["result.txt"]
    assert unused_r.answer == "no skill needed" and unused_r.skill_used is False and unused_r.skills_invoked == []
    unused_req = next(r for r in claude_env.requests if r.get("tools") and user_says(r, "Just ignore it") and "plain-skill" in json.dumps(r))
    assert "PLAINMARK" in json.dumps(unused_req["messages"])  # front matter added: listed with its first line
    assert baseline_r.skill_used is False and baseline_r.skills_invoked == []
    baseline_req = [r for r in claude_env.requests if r.get("tools")][-1]
    assert "Skill" not in offered_tools(baseline_req) and "DESCMARK" not in json.dumps(baseline_req)
    assert not [r for r in claude_env.requests if HOMEMARK in json.dumps(r)]


async def test_every_skill_of_the_trial_is_installed_and_the_invoked_ones_are_named(claude_env, tmp_path):
    skills = [SkillFile(name=n, kind="skill", text=f"---\nname: {n}\ndescription: the {n} skill\n---\n{n.upper()}BODY\n") for n in ("alpha", "beta", "gamma")]
    claude_env.add(Rule(reply=script(tool_use("Skill", {"skill": "gamma"}), tool_use("Skill", {"skill": "alpha"}), final="both")))
    target = make_target(inject="skill")
    t = trial(tmp_path, "without")
    t.skills = skills

    [rec] = await run_all(target, t)

    listing = json.dumps(next(r for r in claude_env.requests if r.get("tools"))["messages"])
    assert all(f"{s.name}: the {s.name} skill" in listing for s in skills)
    assert rec.skills_invoked == ["gamma", "alpha"]
    assert rec.skill_used is False  # skill_used is about the item's own skill (csv-summary), not among them


async def test_model_errors_are_errored_trials_without_the_key(claude_env, tmp_path):
    claude_env.add(Rule(status=400, message=f"bad request, key {SECRET}"))  # (a 401 or 5xx is retried by Claude Code for a minute)
    target = make_target()
    with pytest.raises(TargetError) as info:
        await run_all(target, trial(tmp_path, "with"))
    err = info.value
    assert err.status == 400 and err.kind == "http" and not err.retryable
    assert str(err) == "Claude Code reported an error: API Error: 400 bad request, key ***"


async def test_timeout_stops_the_cli_and_every_process_it_started(claude_env, tmp_path):
    sleeper = "time.sleep(47.31)"  # (Claude Code refuses a plain `sleep`)
    command = f"python3 -c 'import time; {sleeper}'"
    claude_env.add(Rule(reply=script(tool_use("Bash", {"command": command, "description": "wait", "timeout": 120000}), final="late")))
    target = make_target(timeout=6)
    with pytest.raises(TargetError) as info:  # the tool call sleeps 47 s; the target's limit is 6 s
        await run_all(target, trial(tmp_path, "with", timeout=600))
    assert info.value.kind == "timeout" and "timed out after 6s" in str(info.value)
    await asyncio.sleep(0.5)
    leftovers = [p for p in Path("/proc").iterdir() if p.name.isdigit() and sleeper in _cmdline(p)]
    assert leftovers == []


def _cmdline(proc: Path) -> str:
    try:
        return (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


# ---------------------------------------------------------------- building (no CLI started)


def test_a_missing_cli_is_refused_before_the_run(monkeypatch, tmp_path):
    from agentsproof.core.errors import ProviderUnavailable

    monkeypatch.setenv("CLAUDE_CLI_PATH", str(tmp_path / "nope"))
    with pytest.raises(ProviderUnavailable, match="target 'agent' \\(claude-code\\).*CLAUDE_CLI_PATH"):
        make_target()


def test_describe_shows_the_spec_as_written(monkeypatch, tmp_path):
    fake = tmp_path / "claude"
    fake.write_text("#!/bin/sh\n")
    fake.chmod(0o755)
    monkeypatch.setenv("CLAUDE_CLI_PATH", str(fake))
    monkeypatch.setenv("AGENT_MODEL", "claude-secret-deployment")
    from agentsproof.targets.registry import build_target

    defs = parse_targets({"a": {"type": "claude-code", "model": "${AGENT_MODEL}", "tools": ["Read"], "inject": "skill"}}, "targets.yaml")
    monkeypatch.delenv("AGENTSPROOF_MODEL", raising=False)
    target = build_target(defs["a"], model=None)
    assert target.model == "claude-secret-deployment"
    assert target.describe() == {"target": "a", "target_type": "claude-code", "tools": ["Read"], "permission_mode": "acceptEdits",
                                 "inject": "skill", "model": "${AGENT_MODEL}", "model_source": "the target's model setting",
                                 "sandbox": False, "env": []}
    # --model first, then AGENTSPROOF_MODEL, then the target's own setting
    assert build_target(defs["a"], model=MODEL).model == MODEL
    monkeypatch.setenv("AGENTSPROOF_MODEL", "env-model")
    assert build_target(defs["a"], model=None).describe()["model_source"] == "AGENTSPROOF_MODEL"
    assert make_target().describe()["model"] == MODEL


async def test_turns_resume_the_same_claude_code_session(claude_env, tmp_path):
    def reply(req: dict[str, Any]) -> Any:
        if not req.get("tools"):
            return "OK"
        said = texts(req)
        n = said.count("FOLLOWUP") + 1
        last = req["messages"][-1]
        if isinstance(last.get("content"), list) and any(b.get("type") == "tool_result" for b in last["content"]):
            return f"did turn {n}"
        return tool_use("Bash", {"command": f"echo {n} > turn{n}.txt", "description": "write"})

    claude_env.add(Rule(reply=reply))
    target = make_target()
    t = trial(tmp_path, "with", prompt="First: write a file.")
    t.turns = ["FOLLOWUP: another one."]

    [rec] = await run_all(target, t)

    assert rec.answer == "did turn 2" and rec.replies == ["did turn 1", "did turn 2"]
    assert files_in(t.workspace) == ["turn1.txt", "turn2.txt"]
    assert [s.name for s in rec.trajectory] == ["Bash", "Bash"]
    last = [r for r in claude_env.requests if r.get("tools")][-1]
    assert "First: write a file." in texts(last) and "did turn 1" in json.dumps(last)  # the session went on
    assert [(e.role, e.text) for e in rec.log if e.role in ("user", "assistant")] == [("assistant", "did turn 1"), ("user", "FOLLOWUP: another one.")]
    assert rec.usage.prompt_tokens > 0 and rec.cost_usd is not None


async def test_under_bubblewrap_only_the_api_port_is_reachable(claude_env, tmp_path):
    outside = tmp_path / "outside.txt"
    write = tool_use("Bash", {"command": f"echo x > result.txt; echo y > {outside} || echo denied", "description": "write"})
    claude_env.add(Rule(reply=script(write, final=lambda req: "done: " + tool_results(req)[0]), system_contains=MARK))
    target = make_target(sandbox=True)
    t = trial(tmp_path, "with")

    [rec] = await run_all(target, t)

    assert (t.workspace / "result.txt").read_text() == "x\n"  # the workspace is writable, the API reachable ...
    assert not outside.exists()  # ... and a write elsewhere never reaches the host
    assert rec.answer.startswith("done")


def test_sandboxed_by_default_when_the_api_is_on_loopback(monkeypatch, tmp_path):
    """Like command targets and Codex: bubblewrap unless the API is remote (which the sandbox would cut off) or the entry says otherwise."""
    import shutil

    from agentsproof.targets.config import parse_targets
    from agentsproof.targets.registry import build_target

    fake = tmp_path / "claude"
    fake.write_text("#!/bin/sh\n")
    fake.chmod(0o755)
    monkeypatch.setenv("CLAUDE_CLI_PATH", str(fake))
    defs = parse_targets({"a": {"type": "claude-code"}, "off": {"type": "claude-code", "sandbox": False}}, "targets.yaml")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9/")
    if shutil.which("bwrap"):
        assert build_target(defs["a"], model=MODEL).describe()["sandbox"] is True
    assert build_target(defs["off"], model=MODEL).describe()["sandbox"] is False
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "https://api.anthropic.com")
    assert build_target(defs["a"], model=MODEL).describe()["sandbox"] is False
