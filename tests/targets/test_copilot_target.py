"""The copilot target end to end: the real github-copilot-sdk driving the real Copilot CLI in
BYOK mode against the scripted OpenAI-compatible server on loopback, whose replies call the
CLI's own tools (``create``, ``bash``, ``view``, ``skill``) in the trial's workspace. HOME is
an empty temporary folder and no GitHub token is set.

The CLI binary comes from COPILOT_CLI_PATH (``make test`` installs it), the repo's
``.venv/copilot-cli`` or ``copilot`` on PATH; without one the end-to-end tests are skipped.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import time
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

from conftest import Rule, ScriptedServer
from copilot_cli import cli_cache, copilot_byok  # noqa: F401 - cli_cache is a fixture the module uses
from openai_server import offered_tools, tool_call, tool_reply, tool_results

from agentsproof.model.items import EvalItem
from agentsproof.targets.base import TargetError, TrialInput, TrialRecord
from agentsproof.model.items import BASELINE_SYSTEM_PROMPT, SkillFile
from agentsproof.targets.config import parse_targets

MODEL = "test-model"
SECRET = "sk-copilot-target-secret"
MARK = "SKILLMARK"
SKILL_TEXT = f"---\nname: csv-summary\ndescription: Summarises CSV files (DESCMARK).\n---\n{MARK}: write result.txt, then read references/guide.md.\n"
CONTENT = "written by the with-arm\n"


@pytest.fixture
def copilot_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, cli_cache: Path) -> Iterator[ScriptedServer]:
    """Copilot (BYOK through the CLI) aimed at a fresh scripted server; empty HOME, no tokens."""
    yield from copilot_byok(monkeypatch, tmp_path, cli_cache, SECRET)


def make_target(**spec: Any):
    from agentsproof.targets.registry import build_target

    defs = parse_targets({"agent": {"type": "copilot", **spec}}, "targets.yaml")
    return build_target(defs["agent"], model=MODEL)


def trial(tmp_path: Path, arm: str, *, prompt: str = "Do the task.", skill: SkillFile | None = None, timeout: float = 60.0, name: str = "") -> TrialInput:
    workspace = tmp_path / f"ws-{arm}{name}"
    workspace.mkdir()
    kind = skill.kind if skill else "skill"
    item = EvalItem(
        id="it1", name="csv-summary", kind=kind, source_path="SKILL.md", system_prompt=SKILL_TEXT, task_name="t1",
        prompt=prompt, graders=[], trials=1, timeout=timeout, threshold=0.5,
    )
    system = (skill.text if skill else SKILL_TEXT) if arm == "with" else BASELINE_SYSTEM_PROMPT
    if arm == "with" and skill is None:
        skill = SkillFile(name="csv-summary", kind="skill", text=SKILL_TEXT)
    return TrialInput(item=item, arm=arm, index=0, system=system, prompt=prompt, timeout=timeout, workspace=workspace,
                      skill=skill if arm == "with" else None)


async def run_all(target, *trials: TrialInput) -> list[TrialRecord]:
    try:
        return [await target.run(t) for t in trials]
    finally:
        await target.aclose()


def script(*steps: dict[str, Any] | Callable[[dict[str, Any]], dict[str, Any]], final: str | Callable[[dict[str, Any]], str]) -> Callable[[dict[str, Any]], Any]:
    """A reply that makes tool call ``steps[n]`` once ``n`` tool results came back, then ``final``."""

    def reply(req: dict[str, Any]) -> Any:
        n = len(tool_results(req))
        if n < len(steps):
            step = steps[n]
            return tool_reply(step(req) if callable(step) else step)
        return final(req) if callable(final) else final

    return reply


def system_of(req: dict[str, Any]) -> str:
    return "\n".join(m["content"] for m in req["messages"] if m["role"] == "system")


def texts(req: dict[str, Any]) -> str:
    return "\n".join(str(m.get("content") or "") for m in req["messages"])


def files_in(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())


def descendants(pid: int) -> list[tuple[int, str]]:
    """(pid, command line) of every process below ``pid``."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(ppid, []).append(int(entry.name))
    out, todo = [], list(children.get(pid, []))
    while todo:
        p = todo.pop()
        try:
            cmd = (Path("/proc") / str(p) / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        out.append((p, cmd))
        todo.extend(children.get(p, []))
    return out


# ---------------------------------------------------------------- trials with the real CLI


async def test_with_arm_writes_in_its_workspace_and_the_baseline_does_not(copilot_env, tmp_path):
    srv = copilot_env
    srv.add(
        Rule(reply=script(tool_call("create", {"path": "result.txt", "file_text": CONTENT}), final="wrote result.txt"),
             system_contains=MARK, usage=(30, 7)),
        Rule(reply="nothing to do", system_contains=BASELINE_SYSTEM_PROMPT),
    )
    target = make_target()
    with_t, without_t = trial(tmp_path, "with"), trial(tmp_path, "without")

    with_r, without_r = await run_all(target, with_t, without_t)

    # the scripted call ran in the trial's own folder (a relative path: the working directory)
    assert (with_t.workspace / "result.txt").read_text() == CONTENT
    assert with_r.answer == "wrote result.txt"
    [step] = with_r.trajectory
    assert step.name == "create" and step.ok is True and '"path": "result.txt"' in step.arguments
    assert "result.txt" in step.result and step.latency_s is not None and step.latency_s >= 0
    assert with_r.usage.prompt_tokens == 60 and with_r.usage.completion_tokens == 14  # two model calls
    assert with_r.skill_used is True and with_r.latency_s > 0
    # the baseline: same tools, the generic system message, nothing written
    assert without_r.answer == "nothing to do" and without_r.trajectory == [] and without_r.skill_used is False
    assert files_in(without_t.workspace) == []
    first_with, first_without = srv.requests[0], srv.requests[-1]
    assert system_of(first_with).strip() == SKILL_TEXT.strip()  # replace mode: the skill is the whole system message
    assert system_of(first_without).strip() == BASELINE_SYSTEM_PROMPT
    for req in (first_with, first_without):
        assert set(offered_tools(req)) == {"bash", "view", "create"}  # the allowlist, nothing else
        assert {"path", "file_text"} <= set(offered_tools(req)["create"]["properties"])
        assert req["model"] == MODEL
    # sessions are deleted after use: trials do not fill the user's Copilot history
    state = Path(os.environ["HOME"]) / ".copilot" / "session-state"
    assert not [p for p in state.glob("*") if not p.name.startswith(".")]


async def test_writes_and_reads_outside_the_workspace_are_denied(copilot_env, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("top secret\n")
    t = trial(tmp_path, "with")
    (t.workspace / "link").symlink_to(outside)
    attempts = [
        tool_call("create", {"path": str(outside / "evil.txt"), "file_text": "x"}),
        tool_call("create", {"path": "link/evil2.txt", "file_text": "x"}),
        tool_call("bash", {"command": f"echo x > {outside}/evil3.txt", "description": "write"}),
        tool_call("bash", {"command": "cat ../outside/secret.txt", "description": "read"}),
        tool_call("view", {"path": str(outside / "secret.txt")}),
        tool_call("bash", {"command": "echo fine > inside.txt", "description": "write"}),
    ]
    copilot_env.add(Rule(reply=script(*attempts, final="done"), system_contains=MARK))
    target = make_target()

    [rec] = await run_all(target, t)

    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]
    assert (t.workspace / "inside.txt").read_text() == "fine\n"  # work inside is approved
    assert [s.name for s in rec.trajectory] == ["create", "create", "bash", "bash", "view", "bash"]
    assert [s.ok for s in rec.trajectory] == [False] * 5 + [True]
    assert all("top secret" not in s.result for s in rec.trajectory)
    denials = [e.text for e in rec.log if e.text.startswith("permission denied")]
    assert len(denials) == 5, denials
    assert "evil.txt is outside the workspace" in denials[0] and "link/evil2.txt" in denials[1]
    assert "writes" in denials[2] and "../outside/secret.txt" in denials[3] and "read" in denials[4]
    assert rec.answer == "done"


async def test_inject_skill_loads_it_as_a_copilot_skill(copilot_env, tmp_path):
    source = tmp_path / "src" / "csv-summary"
    (source / "references").mkdir(parents=True)
    (source / "SKILL.md").write_text(SKILL_TEXT)
    (source / "references" / "guide.md").write_text("GUIDEMARK: sum the columns\n")
    from agentsproof.formats.eval_yaml.items import skill_file

    skill = skill_file("csv-summary", "skill", SKILL_TEXT, source / "SKILL.md")

    def read_guide(req: dict[str, Any]) -> dict[str, Any]:
        base = re.search(r"Base directory for this skill: (\S+)", texts(req)).group(1)
        return tool_call("view", {"path": f"{base}/references/guide.md"})

    use = script(tool_call("skill", {"skill": "csv-summary"}), read_guide, final=lambda req: "used: " + tool_results(req)[-1])
    # (the skill's text arrives as a later user message: choose by the whole conversation)
    copilot_env.add(Rule(reply=lambda req: use(req) if "use the skill" in str(req["messages"]) else "no skill needed"))
    target = make_target(inject="skill")
    used = trial(tmp_path, "with", prompt="Please use the skill.", skill=skill)
    plain = SkillFile(name="plain-skill", kind="skill", text="PLAINMARK: a SKILL.md without front matter.\n")
    unused = trial(tmp_path, "with", prompt="Just ignore it.", skill=plain, name="-2")
    baseline = trial(tmp_path, "without", prompt="Just ignore it.")
    for folder in (Path(os.environ["HOME"]) / ".copilot" / "skills" / "home-skill", used.workspace / ".github" / "skills" / "repo-skill"):
        folder.mkdir(parents=True)
        (folder / "SKILL.md").write_text(f"---\nname: {folder.name}\ndescription: not part of the trial\n---\nbody\n")

    used_r, unused_r, baseline_r = await run_all(target, used, unused, baseline)

    first = copilot_env.requests[0]
    assert system_of(first).strip() == BASELINE_SYSTEM_PROMPT  # the skill is not the system message
    [skill_tool] = [t["function"] for t in first["tools"] if t["function"]["name"] == "skill"]
    assert "DESCMARK" in skill_tool["description"]  # offered as a Copilot skill ...
    assert re.findall(r"<name>(.*?)</name>", skill_tool["description"]) == ["csv-summary"]  # ... the only one
    assert [s.name for s in used_r.trajectory] == ["skill", "view"] and all(s.ok for s in used_r.trajectory)
    assert "GUIDEMARK" in used_r.answer  # the skill's folder came along and could be read
    assert used_r.skill_used is True
    staged = re.search(r"Base directory for this skill: (\S+)", texts(copilot_env.requests[1])).group(1)
    assert not Path(staged).exists() and not Path(staged).is_relative_to(used.workspace)  # outside, cleaned up
    assert files_in(used.workspace) == [".github/skills/repo-skill/SKILL.md"]  # nothing staged in the workspace
    assert unused_r.answer == "no skill needed" and unused_r.skill_used is False
    unused_req = copilot_env.requests[-2]
    assert "plain-skill" in str(unused_req["tools"]) and "PLAINMARK" in str(unused_req["tools"])  # front matter added
    assert baseline_r.skill_used is False
    baseline_req = copilot_env.requests[-1]
    assert "skill" not in offered_tools(baseline_req) and "DESCMARK" not in str(baseline_req)


async def test_an_agent_item_becomes_the_selected_custom_agent(copilot_env, tmp_path):
    agent_text = "---\nname: reviewer\ndescription: Reviews code\n---\nAGENTMARK: review every file.\n"
    agent = SkillFile(name="reviewer", kind="agent", text=agent_text)
    copilot_env.add(Rule(reply="reviewed", system_contains="AGENTMARK"), Rule(reply="plain"))
    target = make_target(inject="skill")

    with_r, without_r = await run_all(target, trial(tmp_path, "with", skill=agent), trial(tmp_path, "without"))

    assert with_r.answer == "reviewed" and with_r.skill_used is True
    system = system_of(copilot_env.requests[0])
    assert system.startswith(BASELINE_SYSTEM_PROMPT) and "<agent_instructions>" in system and "name: reviewer" not in system
    assert without_r.answer == "plain" and without_r.skill_used is False
    assert "AGENTMARK" not in str(copilot_env.requests[-1])


async def test_timeout_aborts_the_session_and_no_process_outlives_the_target(copilot_env, tmp_path):
    sleeper = "sleep 47.31"
    copilot_env.add(Rule(reply=script(tool_call("bash", {"command": sleeper, "description": "wait", "initial_wait": 120}), final="late")))
    target = make_target(timeout=4)
    t = trial(tmp_path, "with", timeout=600)

    with pytest.raises(TargetError) as info:  # the tool call sleeps 47 s; the target's limit is 4 s
        await target.run(t)
    try:
        assert info.value.kind == "timeout" and "timed out after 4s" in str(info.value)
        await asyncio.sleep(0.5)
        mine = descendants(os.getpid())
        assert any("copilot" in cmd for _, cmd in mine)  # the shared CLI is still up for other trials
        assert not [cmd for _, cmd in mine if sleeper in cmd]  # the session's shell command was stopped
    finally:
        await target.aclose()
    await asyncio.sleep(0.5)
    assert descendants(os.getpid()) == []


async def test_model_errors_are_errored_trials_without_the_key(copilot_env, tmp_path):
    copilot_env.add(Rule(status=401, user_contains="second"), Rule(status=400, message=f"bad request, key {SECRET}", user_contains="first"))
    from agentsproof.targets.registry import build_target

    target = build_target(parse_targets({"agent": {"type": "copilot", "model": "other-model"}}, "targets.yaml")["agent"], model=None)
    errors = []
    try:
        for name in ("first", "second"):
            with pytest.raises(TargetError) as info:
                await target.run(trial(tmp_path, "with", prompt=f"the {name} trial", name=name))
            errors.append(info.value)
    finally:
        await target.aclose()

    bad, auth = errors
    assert bad.kind == "http" and bad.status == 400 and "bad request, key ***" in str(bad) and SECRET not in str(bad)
    assert auth.kind == "auth" and "AGENTSPROOF_COPILOT_PROVIDER_KEY" in str(auth) and SECRET not in str(auth)
    assert copilot_env.requests[0]["model"] == "other-model"  # no --model, no AGENTSPROOF_MODEL: the target's own


# ---------------------------------------------------------------- building, describing (no CLI started)


@pytest.fixture
def cli_file(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    pytest.importorskip("copilot")
    fake = tmp_path / "bin" / "copilot"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\n")
    fake.chmod(0o755)
    monkeypatch.setenv("COPILOT_CLI_PATH", str(fake))
    monkeypatch.setenv("AGENTSPROOF_COPILOT_PROVIDER_URL", "http://127.0.0.1:9/v1")
    return fake


def test_describe_shows_the_spec_as_written(cli_file, monkeypatch):
    from agentsproof.targets.copilot.target import CopilotTarget
    from agentsproof.targets.registry import build_target

    monkeypatch.setenv("AGENT_MODEL", "gpt-secret-deployment")
    monkeypatch.delenv("AGENTSPROOF_MODEL", raising=False)
    defs = parse_targets({"a": {"type": "copilot", "model": "${AGENT_MODEL}", "tools": ["view"], "inject": "skill"}}, "targets.yaml")
    target = build_target(defs["a"], model=None)
    assert isinstance(target, CopilotTarget) and target.model == "gpt-secret-deployment"
    assert target.describe() == {"target": "a", "target_type": "copilot", "tools": ["view"], "inject": "skill", "model": "${AGENT_MODEL}",
                                 "model_source": "the target's model setting"}
    assert make_target().describe() == {"target": "agent", "target_type": "copilot", "tools": ["bash", "view", "create"], "inject": "system",
                                        "model": MODEL, "model_source": "--model"}


def test_model_precedence_flag_then_env_then_the_targets_own(cli_file, monkeypatch):
    from agentsproof.targets.registry import build_target

    defs = parse_targets({"a": {"type": "copilot", "model": "own-model"}}, "targets.yaml")
    monkeypatch.setenv("AGENTSPROOF_MODEL", "env-model")
    assert build_target(defs["a"], model="flag-model").describe()["model"] == "flag-model"
    assert (build_target(defs["a"], model=None).model, build_target(defs["a"], model=None).model_source) == ("env-model", "AGENTSPROOF_MODEL")
    monkeypatch.delenv("AGENTSPROOF_MODEL")
    assert build_target(defs["a"], model=None).model_source == "the target's model setting"
    plain = build_target(parse_targets({"b": {"type": "copilot"}}, "targets.yaml")["b"], model=None)
    assert plain.model is None and plain.describe()["model_source"] == "the agent's own default"


def test_a_missing_cli_is_refused_before_the_run(cli_file, monkeypatch, tmp_path):
    from agentsproof.core.errors import ProviderUnavailable

    monkeypatch.setenv("COPILOT_CLI_PATH", str(tmp_path / "nope"))
    with pytest.raises(ProviderUnavailable, match="target 'agent' \\(copilot\\).*COPILOT_CLI_PATH"):
        make_target()


# ---------------------------------------------------------------- the permission guard (pure logic)


def _request(kind: str, **fields: Any):
    from copilot.generated import session_events as ev

    base = {
        "write": ("PermissionRequestWrite", {"canOfferSessionApproval": True, "diff": "", "intention": "Create file"}),
        "read": ("PermissionRequestRead", {"intention": "Read"}),
        "shell": ("PermissionRequestShell", {"canOfferSessionApproval": False, "commands": [], "hasWriteFileRedirection": False,
                                             "intention": "run", "possiblePaths": [], "possibleUrls": []}),
        "memory": ("PermissionRequestMemory", {"fact": "remember me"}),
        "url": ("PermissionRequestUrl", {"intention": "fetch"}),
    }[kind]
    return getattr(ev, base[0]).from_dict({**base[1], **fields, "kind": kind})


@pytest.fixture
def guard(tmp_path: Path):
    pytest.importorskip("copilot")
    from agentsproof.targets.copilot.guard import PermissionGuard

    ws = tmp_path / "ws"
    (ws / "sub").mkdir(parents=True)
    skills = tmp_path / "skills"
    skills.mkdir()
    (tmp_path / "outside").mkdir()
    (ws / "escape").symlink_to(tmp_path / "outside")
    return PermissionGuard(ws.resolve(), [skills.resolve()], [], time.perf_counter())


@pytest.mark.parametrize(
    "kind, fields, allowed",
    [
        ("write", {"fileName": "{ws}/a.txt"}, True),
        ("write", {"fileName": "sub/b.txt"}, True),
        ("write", {"fileName": "{tmp}/outside/a.txt"}, False),
        ("write", {"fileName": "{ws}/sub/../../outside/a.txt"}, False),
        ("write", {"fileName": "{ws}/escape/a.txt"}, False),  # a symlink out of the workspace
        ("write", {"fileName": "{skills}/SKILL.md"}, False),  # the skill folder is read-only
        ("write", {"fileName": "{ws}/a.txt", "fileEdits": [{"after": {"path": "{tmp}/outside/b", "content": ""}}]}, False),
        ("read", {"path": "{ws}/sub"}, True),
        ("read", {"path": "{skills}/csv/SKILL.md"}, True),
        ("read", {"path": "{tmp}/outside"}, False),
        ("read", {"path": "~/.ssh/id_rsa"}, False),
        ("shell", {"fullCommandText": "ls -la sub && wc -l *.csv > counts.txt 2>&1"}, True),
        ("shell", {"fullCommandText": "/usr/bin/python3 {skills}/csv/scripts/run.py > out.txt"}, True),
        ("shell", {"fullCommandText": "cat <<'EOF' > run.sh\n#!/usr/bin/env bash\nit's ok\nEOF"}, True),
        ("shell", {"fullCommandText": "echo hi > /dev/null; curl -s https://example.com/a/b"}, True),
        ("shell", {"fullCommandText": "echo x >> {skills}/csv/SKILL.md"}, False),
        ("shell", {"fullCommandText": "cp a.txt {tmp}/outside/"}, False),
        ("shell", {"fullCommandText": "cd .. && rm -rf ws"}, False),
        ("shell", {"fullCommandText": "python3 -c \"open('/etc/x','w')\""}, False),
        ("shell", {"fullCommandText": "ls ~"}, False),
        ("shell", {"fullCommandText": "cat escape/secret"}, False),  # through the symlink
        ("shell", {"fullCommandText": "sed 's/a/b/' sub/../in.txt | sort"}, True),
        ("shell", {"fullCommandText": "ls", "possiblePaths": ["{tmp}/outside"]}, False),  # paths the CLI names count too
        ("memory", {}, False),
        ("url", {"url": "https://example.com"}, True),
    ],
)
def test_permission_guard(guard, tmp_path, kind, fields, allowed):
    from copilot.generated.rpc import PermissionDecisionApproveOnce, PermissionDecisionReject

    def fill(value: Any) -> Any:
        if isinstance(value, str):
            return value.format(ws=guard.workspace, tmp=tmp_path.resolve(), skills=guard.read_roots[1])
        if isinstance(value, list):
            return [fill(v) for v in value]
        if isinstance(value, dict):
            return {k: fill(v) for k, v in value.items()}
        return value

    decision = guard.decide(_request(kind, **fill(fields)), {"session_id": "s"})
    assert isinstance(decision, PermissionDecisionApproveOnce if allowed else PermissionDecisionReject), guard.denied
    assert len(guard.log) == (0 if allowed else 1)
    if not allowed:
        assert guard.log[0].text.startswith("permission denied: ") and "working directory" in decision.feedback


def test_the_built_in_copilot_target_through_the_cli(copilot_env, tmp_path, monkeypatch):
    """`agentsproof eval` on an agent eval naming the built-in `copilot` target: the real CLI
    runs the file-writing tool the scripted model asks for (picked from the tools the CLI
    offers), the file lands in the with-arm's workspace and the files grader passes; the
    baseline writes nothing. No targets.yaml, no provider for the harness itself."""
    from conftest import make_plugin, read_json, run_cli, simple_eval

    def write_with_the_offered_tool(req: dict[str, Any]) -> dict[str, Any]:
        tools = offered_tools(req)
        writer = next(name for name, schema in tools.items() if {"path", "file_text"} <= set(schema.get("properties", {})))
        return tool_call(writer, {"path": "result.txt", "file_text": CONTENT})

    copilot_env.add(
        Rule(reply=script(write_with_the_offered_tool, final="Wrote result.txt."), system_contains=MARK),
        Rule(reply="I would write a file, but I was not asked to."),
    )
    ev = simple_eval([{"type": "files", "exists": ["result.txt"], "mustContain": {"result.txt": ["with-arm"]}}],
                     execution={"mode": "agent", "target": "copilot"}, timeout=90)
    d = make_plugin(tmp_path / "p", skills={"csv-summary": {"prompt": SKILL_TEXT, "eval": ev}}) / "skills" / "csv-summary"
    for name in ("AGENTSPROOF_PROVIDER_TYPE", "AGENTSPROOF_PROVIDER_URL", "AGENTSPROOF_PROVIDER_KEY"):
        monkeypatch.delenv(name, raising=False)
    out = tmp_path / "runs"
    code, stdout, stderr = run_cli(["eval", d, "--output", out, "--model", MODEL, "--keep-workspaces"])
    assert code == 0, stderr
    item = read_json(next(out.rglob("*.json")))["items"][0]
    w, b = item["with_arm"]["trials"][0], item["without_arm"]["trials"][0]
    assert item["target"] == "copilot" and item["grade"] == "A", json.dumps([w, b])[:2000]
    assert (Path(w["workspace"]) / "result.txt").read_text() == CONTENT
    assert [f["path"] for f in w["files"]] == ["result.txt"] and w["skill_used"] is True
    files = w["graders"][0]
    assert files["type"] == "files" and files["score"] == 1.0 and "found result.txt" in files["checks"][0]["evidence"]
    assert w["trajectory"] and w["trajectory"][0]["name"] in offered_tools(copilot_env.trial_requests()[0])
    assert not (Path(b["workspace"]) / "result.txt").exists() and b["files"] == [] and b["skill_used"] is False
    assert SECRET not in stdout + stderr + next(out.rglob("*.html")).read_text()


async def test_nothing_of_the_users_copilot_home_reaches_a_trial(copilot_env, tmp_path, monkeypatch):
    from agent_clis import plant_home_skills

    home = Path(os.environ["HOME"])
    plant_home_skills(home, "HOMEMARK")
    user_copilot = tmp_path / "user-copilot-home"
    plant_home_skills(user_copilot, "HOMEMARK")  # (skills/ below it too)
    (user_copilot / "skills").mkdir(exist_ok=True)
    (user_copilot / "skills" / "env-skill").mkdir()
    (user_copilot / "skills" / "env-skill" / "SKILL.md").write_text("---\nname: env-skill\ndescription: HOMEMARK\n---\nHOMEMARK\n")
    monkeypatch.setenv("COPILOT_HOME", str(user_copilot))
    copilot_env.add(Rule(reply="done"))
    target = make_target(inject="skill")

    with_r, without_r = await run_all(target, trial(tmp_path, "with", prompt="Please use the skill."), trial(tmp_path, "without"))

    assert with_r.answer == without_r.answer == "done"
    bodies = [json.dumps(r) for r in copilot_env.requests]
    assert "csv-summary" in bodies[0]  # the staged skill is offered ...
    assert not [b for b in bodies if "HOMEMARK" in b or "home-skill" in b or "env-skill" in b]  # ... and nothing of the user's
    assert not (user_copilot / "session-state").exists() and not (home / ".copilot" / "session-state").exists()


async def test_turns_go_on_in_the_same_copilot_session(copilot_env, tmp_path):
    def reply(req: dict[str, Any]) -> str:
        users = [m for m in req["messages"] if m["role"] == "user"]
        return "which format?" if len(users) == 1 else f"a table, after {len(users)} user messages"

    copilot_env.add(Rule(reply=reply))
    target = make_target()
    t = trial(tmp_path, "with", prompt="Summarise it.")
    t.turns = ["As a table."]

    [rec] = await run_all(target, t)

    assert rec.answer == "a table, after 2 user messages" and rec.replies == ["which format?", rec.answer]
    last = copilot_env.requests[-1]
    assert "which format?" in texts(last) and "Summarise it." in texts(last)  # one conversation
    assert [(e.role, e.text) for e in rec.log if e.role in ("user", "assistant")] == [("assistant", "which format?"), ("user", "As a table.")]


def test_agentsproof_model_reaches_the_real_copilot_cli_and_the_header_says_so(copilot_env, tmp_path, monkeypatch):
    """No --model: AGENTSPROOF_MODEL is what the Copilot CLI asks the server for (not its own
    default), and the terminal, HTML and Markdown headers name the target, model and source."""
    from conftest import make_plugin, read_json, run_cli, simple_eval

    copilot_env.add(Rule(reply="All done."))
    ev = simple_eval([{"type": "deterministic", "checks": {"mustContain": ["done"]}}],
                     execution={"mode": "agent", "target": "copilot"}, timeout=90)
    d = make_plugin(tmp_path / "p", skills={"csv-summary": {"prompt": SKILL_TEXT, "eval": ev}}) / "skills" / "csv-summary"
    for name in ("AGENTSPROOF_PROVIDER_TYPE", "AGENTSPROOF_PROVIDER_URL", "AGENTSPROOF_PROVIDER_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AGENTSPROOF_MODEL", "env-chosen-model")
    out = tmp_path / "runs"
    code, stdout, stderr = run_cli(["eval", d, "--output", out, "--trials", "1"])
    assert code == 0, stderr
    asked = {r.get("model") for r in copilot_env.requests}
    assert asked == {"env-chosen-model"}, asked
    header = stdout.splitlines()[0]
    assert "target copilot" in header and "model env-chosen-model (from AGENTSPROOF_MODEL)" in header, header
    assert "provider none (no chat call)" in header and "judge none (no LLM grader)" in header
    html = next(out.rglob("*.html")).read_text()
    md = next(out.rglob("*.md")).read_text()
    assert "env-chosen-model (from AGENTSPROOF_MODEL)" in html and "Target `copilot`" in md
    assert read_json(next(out.rglob("*-eval.json")))["settings"]["targets"]["copilot"]["model_source"] == "AGENTSPROOF_MODEL"
