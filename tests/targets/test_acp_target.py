"""The acp target on the protocol's edges: a scripted ACP agent (tests/acp_agent.py, a real
process on stdio, under bubblewrap like any agent) that streams updates, asks permissions,
reads, writes and runs commands through the client, misbehaves (a line that is not
JSON-RPC, a crash, an error answer) or hangs until cancelled."""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from agent_clis import agent_trial, run_all

from agentsproof.core.errors import InputError
from agentsproof.targets.base import TargetError

AGENT = Path(__file__).resolve().parents[1] / "acp_agent.py"
SKILL_TEXT = "---\nname: csv-summary\ndescription: Summarises CSV files.\n---\nSKILLMARK body\n"


def target(script: list[dict[str, Any]], log: Path | None = None, **spec: Any):
    from agentsproof.targets.config import parse_targets
    from agentsproof.targets.registry import build_target

    env = {"ACP_SCRIPT": json.dumps(script), **({"ACP_LOG": str(log)} if log else {})}
    entry = {"type": "acp", "command": sys.executable, "args": [str(AGENT)], "env": env, **spec}
    return build_target(parse_targets({"scripted": entry}, "targets.yaml")["scripted"])


def received(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text().splitlines()]


@pytest.mark.parametrize("sandbox", [True, False])
async def test_updates_permissions_and_usage_are_recorded(tmp_path, sandbox):
    script = [{"permission": "execute"}, {"permission": "fetch"}, {"tool": "Run ls", "kind": "execute", "input": {"command": "ls"}},
              {"say": "all done"}, {"usage": {"inputTokens": 12, "outputTokens": 5, "totalTokens": 17}}]
    t = agent_trial(tmp_path, "without", SKILL_TEXT)

    tgt = target(script, permissions={"deny": ["fetch"]}, sandbox=sandbox)
    assert tgt.describe()["sandbox"] is sandbox
    [rec] = await run_all(tgt, t)

    assert rec.answer == "all done"  # what came after the last tool call
    allowed, denied, tool = rec.trajectory
    assert (tool.name, tool.arguments, tool.result, tool.ok) == ("execute", '{"command": "ls"}', "tool output", True)
    assert (allowed.name, allowed.ok, allowed.result) == ("permission", True, "allowed (allow_once: Allow)")
    assert (denied.name, denied.ok, denied.result) == ("permission", False, "denied (reject_once: Reject)")
    assert (rec.usage.prompt_tokens, rec.usage.completion_tokens, rec.usage.total_tokens) == (12, 5, 17)
    assert rec.skill_used is False and rec.skills_invoked == []
    assert any(e.text == "agent: scripted-acp 1" for e in rec.log)
    assert not any("not reported" in e.text for e in rec.log)


async def test_usage_not_reported_is_said_and_never_a_zero_cost_and_aclose_removes_every_home(tmp_path, monkeypatch):
    from agentsproof.targets.agents.kit import Harness

    made: list[Path] = []
    create = Harness.create.__func__  # type: ignore[attr-defined]

    def noted(cls, prefix):
        harness = create(cls, prefix)
        made.append(harness.root)
        return harness

    monkeypatch.setattr(Harness, "create", classmethod(noted))
    tgt = target([{"say": "done"}])
    rec = await tgt.run(agent_trial(tmp_path, "without", SKILL_TEXT))
    assert rec.answer == "done" and rec.cost_usd is None and rec.usage.total_tokens == 0
    assert [e.text for e in rec.log if "not reported" in e.text] == ["tokens and cost: not reported by the ACP agent"]
    await tgt.aclose()
    assert len(made) == 1 and not made[0].exists()


async def test_files_are_served_only_inside_the_workspace(tmp_path):
    t = agent_trial(tmp_path, "without", SKILL_TEXT)
    ws = t.workspace
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("the user's secret")
    (ws / "link").symlink_to(outside)  # planted: a way out of the workspace
    (ws / "in.txt").write_text("inside text")
    script = [{"read": str(ws / "in.txt")}, {"write": str(ws / "sub" / "new.txt"), "content": "made"},
              {"write": str(outside / "x.txt"), "content": "escaped"}, {"write": str(ws / "link" / "y.txt"), "content": "escaped"},
              {"read": str(ws / "link" / "secret.txt")}, {"read": str(ws / ".." / ".." / ".." / "outside" / "secret.txt")}, {"say": "end"}]

    [rec] = await run_all(target(script), t)

    assert (ws / "sub" / "new.txt").read_text() == "made"
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]
    assert "inside text" in rec.answer and rec.answer.count("error: fs/") == 4  # what the agent was told
    assert "the user's secret" not in json.dumps([rec.answer, [s.model_dump() for s in rec.trajectory], [e.text for e in rec.log]])
    refusals = [s for s in rec.trajectory if s.name.startswith("fs/")]
    assert [(s.name, s.ok) for s in refusals] == [("fs/write_text_file", False)] * 2 + [("fs/read_text_file", False)] * 2
    assert all(s.result.startswith("refused: ") for s in refusals)


async def test_terminals_run_in_the_workspace_and_nowhere_else(tmp_path):
    t = agent_trial(tmp_path, "without", SKILL_TEXT)
    script = [{"terminal": "echo from-terminal > t.txt; cat t.txt"}, {"terminal": "echo bad > u.txt", "cwd": str(tmp_path)}, {"say": "end"}]

    [rec] = await run_all(target(script), t)

    assert (t.workspace / "t.txt").read_text() == "from-terminal\n" and not (tmp_path / "u.txt").exists()
    assert "terminal: from-terminal" in rec.answer
    [refused] = [s for s in rec.trajectory if s.name == "terminal/create"]
    assert refused.ok is False and "outside the workspace" in refused.result


@pytest.mark.parametrize(
    ("step", "kind", "reason"),
    [
        ({"raw": "this is not JSON"}, "malformed", "malformed JSON-RPC from the ACP agent: a line that is not JSON"),
        ({"raw": "[1, 2]"}, "malformed", "not a JSON-RPC 2.0 message"),
        ({"exit": 3}, "error", "exited with code 3 before the session ended: the scripted agent exits"),
        ({"fail": "the model is gone"}, "error", "answered session/prompt with error -32000: the model is gone"),
    ],
)
async def test_a_misbehaving_agent_makes_an_errored_trial(tmp_path, step, kind, reason):
    with pytest.raises(TargetError) as info:
        await run_all(target([{"say": "hm"}, step, {"say": "never"}]), agent_trial(tmp_path, "without", SKILL_TEXT))
    assert info.value.kind == kind and reason in str(info.value)


async def test_the_timeout_cancels_the_prompt_then_ends_the_agent(tmp_path):
    t = agent_trial(tmp_path, "without", SKILL_TEXT, timeout=600)
    log = t.workspace / ".acp.log"  # the workspace: the sandbox shows the agent nothing else of /tmp
    with pytest.raises(TargetError) as info:
        await run_all(target([{"sleep": 120}], log, timeout=3), t)
    assert info.value.kind == "timeout" and "timed out after 3s" in str(info.value)
    assert [m["method"] for m in received(log) if "method" in m][-1] == "session/cancel"


async def test_turns_are_prompts_of_one_session_and_the_skill_goes_where_the_entry_says(tmp_path):
    t = agent_trial(tmp_path, "with", SKILL_TEXT)
    log = t.workspace / ".acp.log"
    t.turns = ["and again"]
    [rec] = await run_all(target([{"tool": "Skill", "kind": "read", "input": {"skill": "csv-summary"}}, {"say": "ok"}], log,
                                 skills_dir=".scripted/skills"), t)
    prompts = [m for m in received(log) if m.get("method") == "session/prompt"]
    assert [p["params"]["prompt"][0]["text"] for p in prompts] == ["Do the task.", "and again"]
    assert len({p["params"]["sessionId"] for p in prompts}) == 1
    assert [m["params"]["cwd"] for m in received(log) if m.get("method") == "session/new"] == [str(Path(os.path.realpath(t.workspace)))]
    assert rec.replies == ["ok", "ok"] and rec.skill_used is True and rec.skills_invoked == ["csv-summary"]
    assert "offered" not in json.dumps([e.text for e in rec.log])  # one skill, not a choice


async def test_without_skills_dir_the_skill_is_in_the_first_prompt(tmp_path):
    t = agent_trial(tmp_path, "with", SKILL_TEXT)
    log = t.workspace / ".acp.log"
    [rec] = await run_all(target([{"say": "ok"}], log), t)
    [first] = [m["params"]["prompt"][0]["text"] for m in received(log) if m.get("method") == "session/prompt"]
    assert first.startswith(SKILL_TEXT) and first.endswith("Do the task.") and rec.skill_used is True


def test_the_entry_is_checked_and_described(tmp_path):
    with pytest.raises(InputError, match="inject"):
        target([], inject="skill")
    with pytest.raises(InputError, match="permissions"):
        target([], permissions={"allow": ["everything"]})
    with pytest.raises(InputError, match="skills_dir"):
        target([], skills_dir="../escape")
    d = target([], model="m1", model_arg="--model").describe()
    assert d["target_type"] == "acp" and d["args"] == [str(AGENT)] and d["model"] == "m1" and d["env"] == ["ACP_SCRIPT"]
    assert d["permissions"] == {"allow": [], "deny": [], "default": "allow"}


def test_the_docs_targets_yaml_examples_are_valid_entries():
    """docs/agents/acp.md: every yaml block is a targets.yaml that parses (goose's is five
    lines, and OpenCode's, tried by hand, as many as the docs say)."""
    import yaml

    from agentsproof.targets.config import parse_targets

    doc = (Path(__file__).resolve().parents[2] / "docs" / "agents" / "acp.md").read_text()
    blocks = re.findall(r"```yaml\n(.*?)```", doc, re.S)
    assert len(blocks) == 3
    for block in blocks:
        defs = parse_targets(yaml.safe_load(block), "targets.yaml")
        assert len(defs) == 1
    said = re.search(r"one file touched \(targets\.yaml\), (\d+) lines", doc)
    assert said and [len(b.strip().splitlines()) for b in blocks[1:]] == [5, int(said.group(1))]


async def test_several_skills_are_all_staged_and_need_a_skills_dir(tmp_path):
    from agentsproof.model.items import SkillFile

    t = agent_trial(tmp_path, "without", SKILL_TEXT)
    t.skills = [SkillFile(name="csv-summary", kind="skill", text=SKILL_TEXT), SkillFile(name="other", kind="skill", text="Other skill.\n")]
    script = [{"terminal": 'ls "$HOME/.scripted/skills"; head -3 "$HOME/.scripted/skills/other/SKILL.md"'}, {"say": "end"}]
    [rec] = await run_all(target(script, skills_dir=".scripted/skills"), t)
    assert "csv-summary\nother\n---\nname: other\ndescription: Other skill." in rec.answer  # front matter added
    assert rec.skills_offered and "offered 2 skills (csv-summary, other) as skills of the ACP agent ($HOME/.scripted/skills" in rec.skills_offered
    with pytest.raises(TargetError, match="without skills_dir"):
        await run_all(target([{"say": "x"}]), t)


async def test_an_agent_script_under_tmp_stays_visible_in_the_sandbox(tmp_path):
    """The sandbox masks /tmp; the entry's own arguments (here an agent script that lives under
    /tmp, as a checkout or a download may) are bound back read-only, as the command target's are."""
    import shutil

    script = tmp_path / "agents" / "acp_agent.py"
    script.parent.mkdir()
    shutil.copyfile(AGENT, script)
    assert str(script).startswith("/tmp/") or not str(tmp_path).startswith("/tmp/")
    from agentsproof.targets.config import parse_targets
    from agentsproof.targets.registry import build_target

    entry = {"type": "acp", "command": sys.executable, "args": [str(script)], "env": {"ACP_SCRIPT": json.dumps([{"say": "from tmp"}])}, "sandbox": True}
    tgt = build_target(parse_targets({"scripted": entry}, "targets.yaml")["scripted"])
    [rec] = await run_all(tgt, agent_trial(tmp_path, "without", SKILL_TEXT))
    assert rec.answer == "from tmp"


async def test_in_a_container_a_program_that_is_no_npm_install_is_the_images_own_as_written(tmp_path):
    """Nothing is mounted for a plain program, so the container runs the image's program of
    that name as the entry wrote it: never the host's symlink target."""
    from agentsproof.targets.acp.container import InContainer
    from agentsproof.targets.agents.kit import Harness

    class Box:
        workdir, name = "/app", "agentsproof-test-box"

        async def copy_in(self, host: Path, dest: str) -> None:
            return None

    link = tmp_path / "bin" / "my-acp-agent"
    link.parent.mkdir()
    link.symlink_to(sys.executable)
    tgt = target([{"say": "x"}], command=str(link))
    t = agent_trial(tmp_path, "without", SKILL_TEXT)
    t.environment = Box()  # a trial's container
    assert tgt.container_mounts() == []
    harness = Harness.create("agentsproof-test-")
    try:
        cmd, _ = await InContainer(t.environment, harness, tmp_path).command(tgt._launch(t), {})
    finally:
        harness.remove()
    assert str(link) in cmd and os.path.realpath(link) not in cmd, cmd
