"""The ACP built-ins end to end: the real agents from npm (``make acp-agents``: Gemini CLI,
Qwen Code, claude-code-acp, codex-acp) spoken to over ACP by the acp target, each on its
scripted model server on loopback (generateContent, chat completions, Messages,
Responses), under bubblewrap, in a
fresh home per trial. HOME holds skills of "the user's own", which must never reach a
model. Each agent runs a scripted shell call that writes a file, loads the staged skill
by its description, has its permission request answered by the policy (and recorded),
and is cut cleanly at its timeout."""

from __future__ import annotations

import asyncio
import json
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from agent_clis import agent_trial, make_target, plant_home_skills, require, run_all
from anthropic_server import AnthropicServer, tool_use
from anthropic_server import offered_tools as anthropic_tools
from anthropic_server import tool_results as anthropic_results
from conftest import Rule, ScriptedServer
from copilot_cli import cli_cache  # noqa: F401 - a fixture
from gemini_server import GeminiServer, function_reply, function_results, offered_functions
from openai_server import offered_tools, response_outputs, response_tools, tool_call, tool_reply, tool_results

from agentsproof.targets.base import TargetError

MODEL = "acp-test-model"
SECRET = "sk-acp-e2e-secret"
MARK = "SKILLMARK"
DESC = "DESCMARK summarises CSV files"
HOMEMARK = "HOMEMARK"
SKILL_TEXT = f"---\nname: csv-summary\ndescription: {DESC}.\n---\n{MARK}: write result.txt.\n"
SKILL_FILE = re.compile(r"(/[^\s\"'`\\]*/skills/csv-summary/SKILL\.md)")


@dataclass(frozen=True)
class Dialect:
    """How a scripted model drives one agent: its shell tool, its skill loading, its server."""

    kind: str
    cli: str
    server: str  # openai | anthropic | gemini
    shell: Callable[[str], Any]
    results: Callable[[dict[str, Any]], list[Any]]
    tools: Callable[[dict[str, Any]], dict[str, Any]]
    shell_tool: str
    load: Callable[[dict[str, Any]], Any]

    def requests(self, srv: Any) -> list[dict[str, Any]]:
        return [*srv.requests, *getattr(srv, "responses_requests", [])]


def _codex_load(req: dict[str, Any]) -> Any:
    found = SKILL_FILE.search(json.dumps(req).replace("\\\\", "\\"))
    return tool_reply(tool_call("exec_command", {"cmd": f"cat {found.group(1) if found else 'SKILL.md'}"}))


DIALECTS = {
    "gemini": Dialect(
        "gemini", "gemini", "gemini",
        shell=lambda cmd: function_reply("run_shell_command", {"command": cmd, "description": "run it"}),
        results=function_results, tools=offered_functions, shell_tool="run_shell_command",
        load=lambda req: function_reply("activate_skill", {"name": "csv-summary"}),
    ),
    "qwen-code": Dialect(
        "qwen-code", "qwen", "openai",
        shell=lambda cmd: tool_reply(tool_call("run_shell_command", {"command": cmd, "description": "run it"})),
        results=tool_results, tools=offered_tools, shell_tool="run_shell_command",
        load=lambda req: tool_reply(tool_call("skill", {"skill": "csv-summary"})),
    ),
    "claude-code-acp": Dialect(
        "claude-code-acp", "claude-code-acp", "anthropic",
        shell=lambda cmd: tool_use("mcp__acp__Bash", {"command": cmd, "description": "run it", "timeout": 120000}),
        results=anthropic_results, tools=anthropic_tools, shell_tool="mcp__acp__Bash",
        load=lambda req: tool_use("Skill", {"skill": "csv-summary"}),
    ),
    "codex-acp": Dialect(
        "codex-acp", "codex-acp", "openai",
        shell=lambda cmd: tool_reply(tool_call("exec_command", {"cmd": cmd, "yield_time_ms": 120000})),
        results=response_outputs, tools=response_tools, shell_tool="exec_command",
        load=_codex_load,
    ),
}
AGENTS = list(DIALECTS)


@pytest.fixture(params=AGENTS)
def agent(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[tuple[Dialect, Any]]:
    dialect = DIALECTS[request.param]
    require(dialect.cli, monkeypatch)
    home = tmp_path / "home"
    plant_home_skills(home, HOMEMARK)
    monkeypatch.setenv("HOME", str(home))
    for name in ("CODEX_HOME", "CLAUDE_CONFIG_DIR", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_MODEL", "OPENAI_MODEL", "QWEN_HOME", "GEMINI_MODEL", "GOOGLE_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    srv: Any = {"anthropic": AnthropicServer, "gemini": GeminiServer}.get(dialect.server, ScriptedServer)()
    srv.start()
    if dialect.server == "gemini":
        monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", srv.base_url)
        monkeypatch.setenv("GEMINI_API_KEY", SECRET)
    elif dialect.server == "anthropic":
        monkeypatch.setenv("ANTHROPIC_BASE_URL", srv.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    else:
        monkeypatch.setenv("OPENAI_BASE_URL", srv.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    try:
        yield dialect, srv
    finally:
        srv.stop()


def scripted(d: Dialect, steps: Callable[[dict[str, Any]], list[Any]], final: str = "wrote result.txt") -> Callable[[dict[str, Any]], Any]:
    """The model: the steps of ``steps(request)`` one per tool result, then ``final``;
    a side request of the agent (no shell tool offered) gets a plain answer."""

    def reply(req: dict[str, Any]) -> Any:
        if d.shell_tool not in d.tools(req):
            return "OK"
        todo = steps(req)
        n = len(d.results(req))
        return todo[n] if n < len(todo) else final

    return reply


def seen(d: Dialect, srv: Any, text: str) -> bool:
    return any(text in json.dumps(r) for r in d.requests(srv))


async def test_it_loads_the_skill_by_its_description_and_writes_the_file(agent, tmp_path):
    d, srv = agent
    write = "printf 'written by the with-arm\\n' > result.txt"
    srv.add(Rule(reply=scripted(d, lambda req: [d.load(req), d.shell(write)] if "DESCMARK" in json.dumps(req) else [], final="nothing to do")))
    target = make_target(d.kind, MODEL)
    with_t, without_t = agent_trial(tmp_path, "with", SKILL_TEXT), agent_trial(tmp_path, "without", SKILL_TEXT, name="-b")

    with_r, without_r = await run_all(target, with_t, without_t)

    assert (with_t.workspace / "result.txt").read_text() == "written by the with-arm\n"
    assert with_r.answer == "nothing to do"  # the reply after the last tool call
    assert with_r.skill_used is True and with_r.skills_invoked == ["csv-summary"], with_r.trajectory
    assert seen(d, srv, MARK)  # the skill's body reached the model once loaded
    names = [s.name for s in with_r.trajectory]
    assert "permission" in names or d.kind == "qwen-code" and names, names
    shell = [s for s in with_r.trajectory if "written by the with-arm" in s.arguments and s.name != "permission"]
    assert shell and shell[-1].ok is True, with_r.trajectory
    assert not list(without_t.workspace.iterdir()) and without_r.skill_used is False and without_r.skills_invoked == []
    assert not seen(d, srv, HOMEMARK)  # the user's own skills and instructions never load
    dumped = json.dumps([with_r.answer, [s.model_dump() for s in with_r.trajectory], [e.text for e in with_r.log]])
    assert SECRET not in dumped


async def test_a_denied_permission_is_answered_and_recorded(agent, tmp_path):
    d, srv = agent
    srv.add(Rule(reply=scripted(d, lambda req: [d.shell("printf x > denied.txt")], final="could not")))
    target = make_target(d.kind, MODEL, permissions={"deny": ["execute"]})
    t = agent_trial(tmp_path, "without", SKILL_TEXT)

    [rec] = await run_all(target, t)

    assert not (t.workspace / "denied.txt").exists()
    [decision] = [s for s in rec.trajectory if s.name == "permission"]
    assert decision.ok is False and decision.result.startswith("denied") and "denied.txt" in decision.arguments
    assert any("permission" in e.text and "denied" in e.text for e in rec.log)


async def test_the_timeout_cancels_and_ends_every_process(agent, tmp_path):
    d, srv = agent
    sleeper = "sleep 47.31"
    srv.add(Rule(reply=scripted(d, lambda req: [d.shell(f"{sleeper} # intentional-sleep: the timeout test")], final="late")))  # Qwen refuses a bare sleep
    target = make_target(d.kind, MODEL, timeout=8)

    with pytest.raises(TargetError) as info:  # the shell call sleeps 47 s; the target's limit is 8 s
        await run_all(target, agent_trial(tmp_path, "without", SKILL_TEXT, timeout=600))

    assert info.value.kind == "timeout" and "timed out after 8s" in str(info.value)
    await asyncio.sleep(0.5)
    assert not [p for p in Path("/proc").iterdir() if p.name.isdigit() and sleeper in _cmdline(p)]


def _cmdline(proc: Path) -> str:
    try:
        return (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


WRITER = "---\nname: writer\ndescription: Writes the report file.\n---\nWRITEMARK: always write report.txt with the word done.\n"
WRITER_FILE = re.compile(r"(/[^\s\"'`\\]*/skills/writer/SKILL\.md)")


def test_one_matrix_across_the_cli_agents_and_the_acp_agents(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli_cache: Path) -> None:
    """``--target copilot,claude-code,codex,gemini,qwen-code,claude-code-acp,codex-acp``: every item on
    each real agent, a grade per agent; the ACP agents load the staged skill by its
    description first (the CLI agents get it in the system prompt), nothing of HOME loads."""
    from anthropic_server import tool_results as messages_results
    from conftest import make_plugin, read_json, run_cli, simple_eval
    from copilot_cli import copilot_byok
    from openai_server import tool_results as chat_results

    for cli in ("claude", "codex", "gemini", "qwen", "claude-code-acp", "codex-acp"):
        require(cli, monkeypatch)
    servers = copilot_byok(monkeypatch, tmp_path, cli_cache, "sk-copilot-e2e")  # sets HOME to an empty folder
    openai = next(servers)
    write = "echo done > report.txt"
    try:
        plant_home_skills(Path(os.environ["HOME"]), HOMEMARK)

        def steps(text: str, load: Any, shell: Any) -> list[Any]:
            """An ACP agent's with-arm lists the staged skill: load it by its description, then write."""
            return [load, shell] if "Writes the report file." in text else []

        def openai_reply(req: dict[str, Any]) -> Any:
            text = json.dumps(req)
            if "input" in req and "WRITEMARK" in str(req.get("instructions")):  # Codex: the skill is its instructions
                todo, n = [tool_reply(tool_call("exec_command", {"cmd": write}))], len(response_outputs(req))
            elif "input" in req:  # codex-acp: the skill staged in CODEX_HOME/skills
                found = WRITER_FILE.search(text.replace("\\\\", "\\"))
                todo = steps(text, tool_reply(tool_call("exec_command", {"cmd": f"cat {found.group(1) if found else 'x'}"})),
                             tool_reply(tool_call("exec_command", {"cmd": write})))
                n = len(response_outputs(req))
            elif "run_shell_command" in offered_tools(req):  # Qwen Code
                todo = steps(text, tool_reply(tool_call("skill", {"skill": "writer"})), tool_reply(tool_call("run_shell_command", {"command": write})))
                n = len(chat_results(req))
            elif "bash" in offered_tools(req):  # Copilot
                todo, n = ([tool_reply(tool_call("bash", {"command": write, "description": "write"}))] if "WRITEMARK" in text else []), len(chat_results(req))
            else:
                return "OK"
            return todo[n] if n < len(todo) else "wrote it" if todo else "nothing to do"

        def anthropic_reply(req: dict[str, Any]) -> Any:
            text, tools = json.dumps(req), anthropic_tools(req)
            if "mcp__acp__Bash" in tools:  # claude-code-acp
                todo = steps(text, tool_use("Skill", {"skill": "writer"}), tool_use("mcp__acp__Bash", {"command": write, "description": "w", "timeout": 60000}))
            elif "Bash" in tools:  # claude-code
                todo = [tool_use("Bash", {"command": write, "description": "write"})] if "WRITEMARK" in text else []
            else:
                return "OK"
            n = len(messages_results(req))
            return todo[n] if n < len(todo) else "wrote it" if todo else "nothing to do"

        def gemini_reply(req: dict[str, Any]) -> Any:
            if "run_shell_command" not in offered_functions(req):
                return "OK"
            todo = steps(json.dumps(req), function_reply("activate_skill", {"name": "writer"}), function_reply("run_shell_command", {"command": write}))
            n = len(function_results(req))
            return todo[n] if n < len(todo) else "wrote it" if todo else "nothing to do"

        openai.add(Rule(reply=openai_reply))
        with AnthropicServer([Rule(reply=anthropic_reply)]) as anthropic, GeminiServer([Rule(reply=gemini_reply)]) as gemini:
            monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", gemini.base_url)
            monkeypatch.setenv("GEMINI_API_KEY", "gm-e2e")
            monkeypatch.setenv("ANTHROPIC_BASE_URL", anthropic.base_url)
            monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-e2e")
            monkeypatch.setenv("OPENAI_BASE_URL", openai.base_url)
            monkeypatch.setenv("OPENAI_API_KEY", "sk-e2e")
            ev = simple_eval([{"type": "files", "exists": ["report.txt"], "mustContain": {"report.txt": ["done"]}}, {"type": "skill_used"}],
                             trials=2, timeout=120, instruction="Do the job.")
            d = make_plugin(tmp_path, skills={"writer": {"prompt": WRITER, "eval": ev}}) / "skills" / "writer"
            out = tmp_path / "runs"
            agents = ["copilot", "claude-code", "codex", "gemini", "qwen-code", "claude-code-acp", "codex-acp"]
            code, stdout, stderr = run_cli(["eval", d, "--output", out, "--target", ",".join(agents), "--model", "test-model"])
            assert code == 0, stderr
            report = read_json(next(out.rglob("*.json")))
            assert [it["target"] for it in report["items"]] == agents
            for item in report["items"]:
                assert item["grade"] == "A", (item["target"], item)
                for t in item["with_arm"]["trials"]:
                    assert t["score"] == 1.0 and [(f["path"], f["status"]) for f in t["files"]] == [("report.txt", "created")], (item["target"], json.dumps([t["graders"], t.get("trajectory"), t.get("log")])[-2500:])
                    assert t["skill_used"] is True
                assert all(t["files"] == [] for t in item["without_arm"]["trials"])
            md = next(out.rglob("*.md")).read_text()
            assert "| item | copilot | claude-code | codex | gemini | qwen-code | claude-code-acp | codex-acp |" in md
            assert not [r for r in [*openai.requests, *openai.responses_requests, *anthropic.requests, *gemini.requests] if HOMEMARK in json.dumps(r)]
    finally:
        next(servers, None)


@pytest.mark.parametrize("kind", AGENTS)
def test_the_model_comes_in_the_usual_order_and_the_config_is_fresh(kind: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """--model, then AGENTSPROOF_MODEL, then the entry's model, else the agent's own; each
    trial's home holds only what agentsproof writes, and the agent's key is named, never shown."""
    from agentsproof.targets.agents.kit import Harness
    from agentsproof.targets.config import parse_targets
    from agentsproof.targets.registry import build_target

    require(DIALECTS[kind].cli, monkeypatch)
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.delenv("AGENTSPROOF_MODEL", raising=False)
    entry = parse_targets({"a": {"type": kind, "model": "own-model"}}, "targets.yaml")["a"]
    assert build_target(entry, model="flag-model").describe()["model"] == "flag-model"
    monkeypatch.setenv("AGENTSPROOF_MODEL", "env-model")
    assert build_target(entry).describe()["model_source"] == "AGENTSPROOF_MODEL"
    monkeypatch.delenv("AGENTSPROOF_MODEL")
    d = build_target(entry).describe()
    assert (d["model"], d["model_source"]) == ("own-model", "the target's model setting") and SECRET not in json.dumps(d)
    plain = build_target(parse_targets({"b": {"type": kind}}, "targets.yaml")["b"])
    assert plain.describe()["model_source"] == "the agent's own default" and plain.model is None
    harness = Harness.create("agentsproof-test-")
    try:
        target = build_target(entry)
        target._configure(agent_trial(tmp_path, "without", SKILL_TEXT), harness)
        written = sorted(p.relative_to(harness.root).as_posix() for p in harness.root.rglob("*") if p.is_file())
        assert written and all(w.startswith(("home/", "config/")) for w in written), written
        assert "own-model" in json.dumps([target._argv(), target._env(harness), [(harness.root / w).read_text() for w in written]])
    finally:
        harness.remove()
