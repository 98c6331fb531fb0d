"""The codex target end to end: the real Codex CLI (pinned, installed by ``make test``) in
``exec --json`` mode against the scripted server's Responses API on loopback, streamed,
whose replies call Codex's own ``exec_command`` tool in the trial's workspace. By default
Codex runs under bubblewrap here (the provider is on loopback). HOME is a temporary folder
holding skills and instructions of "the user's own", which must never reach a trial.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from agent_clis import agent_trial, codex_server, run_all
from agent_clis import make_target as agent_cli_target
from conftest import Rule, ScriptedServer
from openai_server import response_outputs, response_tools, responses_as_chat, tool_call, tool_reply

from agentsproof.model.items import BASELINE_SYSTEM_PROMPT, SkillFile
from agentsproof.targets.base import TargetError, TrialInput

MODEL = "codex-test-model"
SECRET = "sk-codex-target-secret"
MARK = "SKILLMARK"
HOMEMARK = "HOMEMARK"
SKILL_TEXT = f"---\nname: csv-summary\ndescription: Summarises CSV files (DESCMARK).\n---\n{MARK}: write result.txt.\n"


@pytest.fixture
def codex_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[ScriptedServer]:
    yield from codex_server(monkeypatch, tmp_path, SECRET, HOMEMARK)


def make_target(**spec: Any):
    return agent_cli_target("codex", MODEL, **spec)


def trial(tmp_path: Path, arm: str, **kw: Any) -> TrialInput:
    return agent_trial(tmp_path, arm, SKILL_TEXT, **kw)


def shell(cmd: str) -> dict[str, Any]:
    return tool_reply(tool_call("exec_command", {"cmd": cmd}))


def script(*steps: dict[str, Any] | Callable[[dict[str, Any]], dict[str, Any]], final: str | Callable[[dict[str, Any]], str]):
    def reply(req: dict[str, Any]) -> Any:
        n = len(response_outputs(req))
        if n < len(steps):
            step = steps[n]
            return step(req) if callable(step) else step
        return final(req) if callable(final) else final

    return reply


def system_of(req: dict[str, Any]) -> str:
    return responses_as_chat(req)["messages"][0]["content"]


def user_says(req: dict[str, Any], text: str) -> bool:
    return any(text in str(m["content"]) for m in responses_as_chat(req)["messages"] if m["role"] == "user")


def files_in(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())


async def test_with_arm_writes_in_its_workspace_and_the_baseline_does_not(codex_env, tmp_path):
    srv = codex_env
    srv.add(Rule(reply=script(shell("printf 'written by the with-arm\\n' > result.txt"), final="wrote result.txt"), system_contains=MARK),
            Rule(reply="nothing to do", system_contains=BASELINE_SYSTEM_PROMPT))
    target = make_target()
    assert target.describe()["sandbox"] is True and target.describe()["sandbox_mode"] == "danger-full-access"  # loopback: bubblewrap
    with_t, without_t = trial(tmp_path, "with"), trial(tmp_path, "without", name="-b")

    with_r, without_r = await run_all(target, with_t, without_t)

    assert (with_t.workspace / "result.txt").read_text() == "written by the with-arm\n"
    assert with_r.answer == "wrote result.txt"
    [step] = with_r.trajectory
    assert step.name == "shell" and step.ok is True and "result.txt" in step.arguments
    assert with_r.usage.prompt_tokens > 0 and with_r.usage.completion_tokens > 0
    assert with_r.skill_used is True and with_r.skills_invoked == ["csv-summary"]
    assert without_r.answer == "nothing to do" and without_r.trajectory == [] and without_r.skill_used is False
    assert files_in(without_t.workspace) == []
    reqs = srv.responses_requests
    assert system_of(reqs[0]).startswith(SKILL_TEXT.strip()) and "Codex CLI" not in system_of(reqs[0])  # replaces the base instructions
    assert system_of(reqs[-1]).startswith(BASELINE_SYSTEM_PROMPT) and MARK not in json.dumps(reqs[-1])
    for req in reqs:
        assert req["model"] == MODEL and req["stream"] is True and "exec_command" in response_tools(req)
    assert {s["authorization"] for s in srv.seen} == {f"Bearer {SECRET}"}
    assert not [r for r in reqs if HOMEMARK in json.dumps(r)]


async def test_inject_skill_installs_it_where_codex_loads_it(codex_env, tmp_path):
    source = tmp_path / "src" / "csv-summary"
    (source / "references").mkdir(parents=True)
    (source / "SKILL.md").write_text(SKILL_TEXT)
    (source / "references" / "guide.md").write_text("GUIDEMARK: sum the columns\n")
    from agentsproof.formats.eval_yaml.items import skill_file

    skill = skill_file("csv-summary", "skill", SKILL_TEXT, source / "SKILL.md")
    roots: dict[str, str] = {}

    def read_skill(req: dict[str, Any]) -> dict[str, Any]:
        roots["r0"] = re.search(r"`r0` = `([^`]+)`", system_of(req)).group(1)
        return shell(f"cat {roots['r0']}/csv-summary/SKILL.md {roots['r0']}/csv-summary/references/guide.md")

    use = script(read_skill, shell("echo done > result.txt"), final=lambda req: "used: " + response_outputs(req)[0])
    codex_env.add(Rule(reply=lambda req: use(req) if user_says(req, "use the skill") else "no skill needed"))
    target = make_target(inject="skill")
    used = trial(tmp_path, "with", prompt="Please use the skill.", skill=skill)
    unused = trial(tmp_path, "with", prompt="Just ignore it.", skill=SkillFile(name="plain-skill", kind="skill", text="PLAINMARK: no front matter.\n"), name="-2")
    baseline = trial(tmp_path, "without", prompt="Just ignore it.", name="-3")

    used_r, unused_r, baseline_r = await run_all(target, used, unused, baseline)

    first = codex_env.responses_requests[0]
    assert system_of(first).startswith(BASELINE_SYSTEM_PROMPT) and MARK not in system_of(first)
    listed = re.findall(r"^- ([\w-]+): ", system_of(first), re.M)
    assert listed == ["csv-summary"]  # the only skill: no bundled ones, none of the user's
    assert "DESCMARK" in system_of(first)
    assert [s.name for s in used_r.trajectory] == ["shell", "shell"] and all(s.ok for s in used_r.trajectory)
    assert MARK in used_r.answer and "GUIDEMARK" in used_r.answer  # its folder came along
    assert used_r.skill_used is True and used_r.skills_invoked == ["csv-summary"]
    assert files_in(used.workspace) == ["result.txt"]
    assert not Path(roots["r0"]).exists() and not Path(roots["r0"]).is_relative_to(used.workspace)
    assert unused_r.answer == "no skill needed" and unused_r.skill_used is False and unused_r.skills_invoked == []
    assert any("plain-skill: PLAINMARK" in system_of(r) for r in codex_env.responses_requests)  # front matter added
    assert baseline_r.skill_used is False and baseline_r.skills_invoked == []
    assert "DESCMARK" not in json.dumps(codex_env.responses_requests[-1])
    assert not [r for r in codex_env.responses_requests if HOMEMARK in json.dumps(r)]


async def test_model_errors_are_errored_trials_without_the_key(codex_env, tmp_path):
    codex_env.add(Rule(status=400, message=f"bad request, key {SECRET}"))
    target = make_target()
    with pytest.raises(TargetError) as info:
        await run_all(target, trial(tmp_path, "with"))
    assert SECRET not in str(info.value) and "Codex" in str(info.value), str(info.value)


async def test_timeout_stops_codex_and_every_process_it_started(codex_env, tmp_path):
    sleeper = "sleep 47.31"
    codex_env.add(Rule(reply=script(tool_reply(tool_call("exec_command", {"cmd": sleeper, "yield_time_ms": 120000})), final="late")))
    target = make_target(timeout=6)
    with pytest.raises(TargetError) as info:  # the tool call sleeps 47 s; the target's limit is 6 s
        await run_all(target, trial(tmp_path, "with", timeout=600))
    assert info.value.kind == "timeout" and "timed out after 6s" in str(info.value)
    await asyncio.sleep(0.5)
    assert not [p for p in Path("/proc").iterdir() if p.name.isdigit() and sleeper in _cmdline(p)]


def _cmdline(proc: Path) -> str:
    try:
        return (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def test_a_missing_cli_is_refused_before_the_run(monkeypatch, tmp_path):
    from agentsproof.core.errors import ProviderUnavailable

    monkeypatch.setenv("CODEX_CLI_PATH", str(tmp_path / "nope"))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")  # an unset key is refused first (tests/cli/test_bad_input_round3.py)
    with pytest.raises(ProviderUnavailable, match="target 'agent' \\(codex\\).*CODEX_CLI_PATH"):
        make_target()


def test_config_and_describe(monkeypatch, tmp_path):
    fake = tmp_path / "codex"
    fake.write_text("#!/bin/sh\n")
    fake.chmod(0o755)
    monkeypatch.setenv("CODEX_CLI_PATH", str(fake))
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("MY_KEY", "sk-test")
    target = make_target(sandbox=False, approval_policy="on-failure")
    assert target.describe() == {"target": "agent", "target_type": "codex", "inject": "system", "model": MODEL, "model_source": "--model", "sandbox": False,
                                 "sandbox_mode": "workspace-write", "approval_policy": "on-failure", "env": []}
    config = target._config(Path("/x/instr \"q\".md"))
    assert 'model_instructions_file = "/x/instr \\"q\\".md"' in config and "model_providers" not in config
    remote = make_target(base_url="https://llm.example/v1", api_key_env="MY_KEY")
    config = remote._config(Path("/x/i.md"))
    assert '[model_providers.agentsproof]' in config and 'base_url = "https://llm.example/v1"' in config
    assert 'env_key = "MY_KEY"' in config and 'wire_api = "responses"' in config
    assert remote.describe()["sandbox"] is False  # a remote provider: Codex's own sandbox
    import tomllib

    assert tomllib.loads(config) == {
        "model_instructions_file": "/x/i.md", "approval_policy": "never", "sandbox_mode": "workspace-write",
        "check_for_update_on_startup": False, "model": MODEL, "model_provider": "agentsproof",
        "analytics": {"enabled": False}, "skills": {"bundled": {"enabled": False}},
        "model_providers": {"agentsproof": {"name": "agentsproof", "base_url": "https://llm.example/v1",
                                            "env_key": "MY_KEY", "wire_api": "responses"}},
    }
    odd = agent_cli_target("codex", 'm "q" \\ \x7fé')._config(Path("/x/\x01.md"))  # control characters escaped as TOML wants
    assert tomllib.loads(odd)["model"] == 'm "q" \\ \x7fé' and tomllib.loads(odd)["model_instructions_file"] == "/x/\x01.md"


async def test_turns_go_on_in_the_same_codex_thread(codex_env, tmp_path):
    def reply(req: dict[str, Any]) -> Any:
        chat = responses_as_chat(req)
        users = [m["content"] for m in chat["messages"] if m["role"] == "user" and "environment_context" not in m["content"]]
        last = chat["messages"][-1]
        if last["role"] == "tool":
            return f"did turn {len(users)}"
        return shell(f"echo {len(users)} > turn{len(users)}.txt")

    codex_env.add(Rule(reply=reply))
    target = make_target()
    t = trial(tmp_path, "with", prompt="First: write a file.")
    t.turns = ["Second: another one."]

    [rec] = await run_all(target, t)

    assert rec.answer == "did turn 2" and rec.replies == ["did turn 1", "did turn 2"]
    assert files_in(t.workspace) == ["turn1.txt", "turn2.txt"]
    assert [s.name for s in rec.trajectory] == ["shell", "shell"]
    last = codex_env.responses_requests[-1]
    assert "First: write a file." in json.dumps(last) and "did turn 1" in json.dumps(last)  # the thread went on
    conversation = [(e.role, e.text) for e in rec.log if e.role in ("user", "assistant")]
    assert conversation == [("assistant", "did turn 1"), ("user", "Second: another one.")]
