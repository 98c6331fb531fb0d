"""Agent trials end to end through the CLI: the example plugin's skill run by a real
command-line agent (evals/agent-plugin/mini_agent.py) that talks to the scripted
OpenAI-compatible server on loopback, in a fresh workspace per trial, graded by the
files, tool_calls and script graders; and the input errors of agent evals."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from conftest import SECRET_KEY, Rule, ScriptedServer, assert_refused, make_plugin, read_json, run_cli, simple_eval, write_tc_eval
from openai_server import tool_call, tool_reply, tool_results

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "evals" / "agent-plugin"
SUMMARY = "# Summary of data.csv\n\nTotal revenue: 3500\n\n- north: 1200\n- south: 800\n- east: 1500\n"


def skilled_agent(req: dict[str, Any]) -> str | dict[str, Any]:
    """The with-arm: read the CSV, write summary.md, then answer."""
    done = tool_results(req)
    if not done:
        return tool_reply(tool_call("read_file", {"path": "data.csv"}))
    if len(done) == 1:
        return tool_reply(tool_call("write_file", {"path": "summary.md", "content": SUMMARY}))
    return "The summary is in summary.md."


@pytest.fixture
def agent_env(monkeypatch: pytest.MonkeyPatch, scripted_server: ScriptedServer) -> ScriptedServer:
    """The mini agent aimed at the scripted server; no provider for the harness itself."""
    for name in ("AGENTSPROOF_PROVIDER_TYPE", "AGENTSPROOF_PROVIDER_URL", "AGENTSPROOF_PROVIDER_KEY", "AGENTSPROOF_MODEL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OPENAI_BASE_URL", scripted_server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", SECRET_KEY)
    scripted_server.add(
        Rule(reply=skilled_agent, system_contains="# CSV report"),
        Rule(reply="Revenue: north 1200, south 800, east 1500."),
    )
    return scripted_server


def copy_example(tmp_path: Path) -> Path:
    dest = tmp_path / "agent-plugin"
    shutil.copytree(EXAMPLE, dest)
    return dest


def test_the_example_skill_makes_the_agent_write_the_file_the_baseline_does_not(tmp_path: Path, agent_env: ScriptedServer) -> None:
    plugin = copy_example(tmp_path)
    out = tmp_path / "runs"
    code, stdout, stderr = run_cli(["eval", plugin / "skills" / "csv-report" / "eval.yaml", "--output", out, "--trials", "2"])
    assert code == 0, stderr
    report = read_json(next(out.rglob("*.json")))
    item = report["items"][0]
    assert item["target"] == "mini-agent" and item["grade"] == "A", item
    for t in item["with_arm"]["trials"]:
        assert t["status"] == "scored" and t["score"] == 1.0, t
        assert [s["name"] for s in t["trajectory"]] == ["read_file", "write_file"]
        assert [(f["path"], f["status"]) for f in t["files"]] == [("summary.md", "created")], t["files"]
        assert "Total revenue: 3500" in t["files"][0]["preview"]
        assert t["skill_used"] is True
        script = next(g for g in t["graders"] if g["type"] == "script")
        assert [c["target"] for c in script["checks"]] == ["starts with a '# Summary' title", "names every region"]
        files = next(g for g in t["graders"] if g["type"] == "files")
        assert all(c["passed"] for c in files["checks"]) and any("summary.md" in c["evidence"] for c in files["checks"])
    for t in item["without_arm"]["trials"]:
        assert t["status"] == "scored" and t["files"] == [] and t["trajectory"] == []
        assert t["skill_used"] is False and t["score"] < 0.5
    assert item["with_arm"]["tool_counts"] == {"read_file": 2, "write_file": 2}
    assert item["with_arm"]["skill_used_rate"] == 1.0 and item["without_arm"]["skill_used_rate"] == 0.0
    assert report["provider"] == "none", "nothing in this eval needs a model of the harness's own"
    # the skill was installed only in the with-arm's workspaces, and its file is not an agent "file"
    bodies = [json.dumps(r) for r in agent_env.requests]
    assert sum("# CSV report" in b for b in bodies) == 6  # 3 turns x 2 with-arm trials
    html = next(out.rglob("*.html")).read_text()
    assert "Trajectory" in html and "summary.md" in html and "write_file" in html and "Skill used" in html
    assert SECRET_KEY not in html + json.dumps(report) + stdout + stderr
    # workspaces are gone after grading
    assert not list(out.rglob("*.workspaces"))


def test_keep_workspaces_keeps_every_trial_folder_beside_the_report(tmp_path: Path, agent_env: ScriptedServer) -> None:
    plugin = copy_example(tmp_path)
    out = tmp_path / "runs"
    code, _, stderr = run_cli(["eval", plugin / "skills" / "csv-report", "--output", out, "--trials", "1", "--keep-workspaces"])
    assert code == 0, stderr
    report = read_json(next(out.rglob("*.json")))
    w = report["items"][0]["with_arm"]["trials"][0]
    b = report["items"][0]["without_arm"]["trials"][0]
    assert Path(w["workspace"]).is_dir() and Path(b["workspace"]).is_dir() and w["workspace"] != b["workspace"]
    assert (Path(w["workspace"]) / "summary.md").read_text() == SUMMARY
    assert not (Path(b["workspace"]) / "summary.md").exists()
    assert (Path(b["workspace"]) / "data.csv").is_file(), "the seed folder is copied into every workspace"
    # the eval's own files (eval.yaml, the checker script, the seed folder) are not installed with the skill
    installed = sorted(p.relative_to(w["workspace"]).as_posix() for p in Path(w["workspace"]).rglob("*") if p.is_file())
    assert installed == [".agents/skills/csv-report/SKILL.md", "data.csv", "summary.md"], installed
    assert Path(w["workspace"]).is_relative_to(out.resolve())


def test_target_on_the_command_line_turns_a_chat_eval_into_an_agent_eval(tmp_path: Path, agent_env: ScriptedServer) -> None:
    root = make_plugin(tmp_path, skills={"csv-report": {
        "prompt": (EXAMPLE / "skills" / "csv-report" / "SKILL.md").read_text(),
        "eval": simple_eval([{"type": "tool_calls", "must_call": ["write_file"]}], instruction="Summarise data.csv for the team."),
    }})
    targets = tmp_path / "my-targets.yaml"
    targets.write_text(yaml.safe_dump({"agent": {"type": "command", "command": ["python3", str(EXAMPLE / "mini_agent.py"), "{prompt}"], "sandbox": False}}))
    code, _, stderr = run_cli(["eval", root / "skills" / "csv-report", "--output", tmp_path / "runs", "--target", "agent", "--targets", targets])
    assert code == 0, stderr
    item = read_json(next((tmp_path / "runs").rglob("*.json")))["items"][0]
    assert item["target"] == "agent" and item["with_arm"]["mean_score"] == 1.0 and item["without_arm"]["mean_score"] == 0.0


def test_tc_eval_with_a_target_puts_the_case_files_in_the_workspace(tmp_path: Path, agent_env: ScriptedServer, monkeypatch: pytest.MonkeyPatch) -> None:
    # the assertions are judged on the scripted server: without a provider the judge was the
    # embedded model (20-60 s of CPU for a test about the workspace; its own tests run it)
    monkeypatch.setenv("AGENTSPROOF_PROVIDER_TYPE", "openai")
    monkeypatch.setenv("AGENTSPROOF_PROVIDER_URL", agent_env.base_url)
    monkeypatch.setenv("AGENTSPROOF_PROVIDER_KEY", SECRET_KEY)
    monkeypatch.setenv("AGENTSPROOF_MODEL", "judge-model")
    agent_env.add(Rule(reply='{"evidence": "summary.md", "passed": "true"}', judge=True))
    (tmp_path / "data.csv").write_text("region,revenue\nnorth,1200\nsouth,800\neast,1500\n")
    path = write_tc_eval(tmp_path, [{"id": 1, "prompt": "Summarise data.csv for the team.", "files": ["data.csv"], "assertions": ["Summarises the data"]}],
                         skill_text=(EXAMPLE / "skills" / "csv-report" / "SKILL.md").read_text())
    (tmp_path / "targets.yaml").write_text(yaml.safe_dump({"mini": {"type": "command", "command": ["python3", str(EXAMPLE / "mini_agent.py")], "sandbox": False,
                                                                  "trace_file": "t.jsonl"}}))
    code, _, stderr = run_cli(["tc-eval", path, "--target", "mini", "--output", tmp_path / "runs", "--keep-workspaces"])
    # what matters here is the workspace, not the score
    assert code in (0, 1), stderr
    item = read_json(next((tmp_path / "runs").rglob("*.json")))["items"][0]
    w = item["with_arm"]["trials"][0]
    assert (Path(w["workspace"]) / "data.csv").is_file() and (Path(w["workspace"]) / "summary.md").is_file()
    assert "Attached files" not in item["instruction"] and "data.csv" in item["instruction"]


def _refused(args: list[Any]) -> str:
    return assert_refused(args, [])


def _agent_plugin(tmp_path: Path, graders: list[dict[str, Any]] | None = None, **extra: Any) -> Path:
    ev = simple_eval(graders or [{"type": "files", "exists": ["out.txt"]}], **extra)
    return make_plugin(tmp_path, skills={"s": {"eval": ev}}) / "skills" / "s"


def test_unknown_target_is_one_line_naming_the_eval_field(tmp_path: Path) -> None:
    d = _agent_plugin(tmp_path, execution={"mode": "agent", "target": "nope"})
    line = _refused(["eval", d, "--output", tmp_path / "runs"])
    from agentsproof.targets.registry import builtin_names

    assert "eval.yaml: execution.target: unknown target 'nope'" in line and f"built-in: {', '.join(sorted(builtin_names()))}" in line
    line = _refused(["eval", d, "--output", tmp_path / "runs", "--target", "other"])
    assert line.startswith("error: command line: --target: unknown target 'other'")


def test_agent_graders_in_a_chat_eval_are_refused(tmp_path: Path) -> None:
    d = _agent_plugin(tmp_path)
    line = _refused(["eval", d, "--output", tmp_path / "runs"])
    assert "task.graders[0].type" in line and "agent trial" in line


@pytest.mark.parametrize(
    "targets, field",
    [
        ({"a": {"type": "command"}}, "a.command"),
        ({"a": {"type": "command", "command": ["x"], "bogus": 1}}, "a.bogus"),
        ({"a": {"type": "shell", "command": ["x"]}}, "a.type"),
        ({"a": {"type": "command", "command": ["x"], "skill_path": "../../etc/SKILL.md"}}, "a.skill_path"),
        ({"a": {"type": "http", "url": "ftp://x"}}, "a.url"),
        ({"a": {"type": "http", "url": "http://127.0.0.1:1/x", "token_env": "sk-abc def"}}, "a.token_env"),
        ({"a": {"type": "copilot", "inject": "both"}}, "a.inject"),
        ({"a": {"type": "command", "command": ["${AGENTSPROOF_TEST_UNSET_VAR}"]}}, "a.command[0]"),
    ],
)
def test_bad_targets_files_are_one_line_naming_the_field(tmp_path: Path, targets: dict[str, Any], field: str) -> None:
    d = _agent_plugin(tmp_path, execution={"mode": "agent", "target": "a"})
    (d / "targets.yaml").write_text(yaml.safe_dump(targets))
    line = _refused(["eval", d, "--output", tmp_path / "runs"])
    assert "targets.yaml" in line and f": {field}:" in line, line


def test_workspace_escapes_are_refused(tmp_path: Path) -> None:
    outside = tmp_path / "secret"
    outside.mkdir()
    (outside / "key.txt").write_text("hunter2")
    d = _agent_plugin(tmp_path, execution={"mode": "agent", "target": "copilot"}, workspace="ws")
    (d / "ws").mkdir()
    (d / "ws" / "link").symlink_to(outside / "key.txt")
    line = _refused(["eval", d, "--output", tmp_path / "runs"])
    assert "workspace" in line and "symlink" in line and "hunter2" not in line
    ev = yaml.safe_load((d / "eval.yaml").read_text())
    ev["workspace"] = "../../.."
    (d / "eval.yaml").write_text(yaml.safe_dump(ev))
    assert "outside the eval's folder" in _refused(["eval", d, "--output", tmp_path / "runs"])
    ev["workspace"] = "missing"
    (d / "eval.yaml").write_text(yaml.safe_dump(ev))
    assert "workspace: folder" in _refused(["eval", d, "--output", tmp_path / "runs"])
    ev["workspace"] = "ws"
    ev["task"]["graders"] = [{"type": "files", "exists": ["../outside.txt"]}]
    (d / "ws" / "link").unlink()
    (d / "eval.yaml").write_text(yaml.safe_dump(ev))
    line = _refused(["eval", d, "--output", tmp_path / "runs"])
    assert "task.graders[0].exists[0]" in line and "leaves the workspace" in line


def test_execution_block_is_strict(tmp_path: Path) -> None:
    for execution, words in (
        ({"mode": "agent"}, "execution.target"),
        ({"mode": "robot", "target": "x"}, "execution.mode"),
        ({"mode": "chat", "target": "copilot"}, "execution.mode"),
        ({"mode": "agent", "target": "copilot", "extra": 1}, "execution.extra"),
    ):
        d = _agent_plugin(tmp_path / str(abs(hash(str(execution)))), execution=execution)
        assert words in _refused(["eval", d, "--output", tmp_path / "runs"])


def test_an_agent_run_resumes_without_redoing_finished_trials(tmp_path: Path, agent_env: ScriptedServer) -> None:
    plugin = copy_example(tmp_path)
    out = tmp_path / "runs"
    args = ["eval", plugin / "skills" / "csv-report", "--output", out, "--trials", "1"]
    assert run_cli(args)[0] == 0
    calls = len(agent_env.requests)
    code, _, stderr = run_cli([*args, "--resume"])
    assert code == 0, stderr
    assert len(agent_env.requests) == calls, "every trial came from the journal"
    # a changed workspace seed is a different configuration
    (plugin / "skills" / "csv-report" / "fixtures" / "data.csv").write_text("region,revenue\nwest,1\n")
    line = _refused([*args, "--resume"])
    assert "the workspace files" in line


def test_an_http_agent_through_the_cli_retries_and_errors_but_never_fails(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                          scripted_server: ScriptedServer) -> None:
    """An OpenAI-compatible endpoint used as an HTTP agent: the skill travels as the system
    message, the answer is read at choices.0.message.content; a 429 is retried, a non-JSON
    reply is an errored trial with its reason (not a failed one)."""
    monkeypatch.setenv("AGENT_TOKEN", SECRET_KEY)
    scripted_server.add(
        Rule(status=429, retry_after=0, times=1),
        Rule(raw_body="<html>gateway</html>", user_contains="BROKEN"),
        Rule(reply="HELLO THERE", system_contains="UPPERCASE"),
        Rule(reply="hello there"),
    )
    d = make_plugin(tmp_path, skills={"shout": {"prompt": "Always answer in UPPERCASE.\n", "eval": simple_eval(
        [{"type": "deterministic", "checks": {"mustContain": ["HELLO"], "caseSensitive": True}}], trials=2,
        execution={"mode": "agent", "target": "bot"})}}) / "skills" / "shout"
    (d / "targets.yaml").write_text(yaml.safe_dump({"bot": {
        "type": "http", "url": scripted_server.base_url + "/chat/completions",
        "extra": {"model": "m", "messages": [{"role": "system", "content": ""}, {"role": "user", "content": ""}]},
        "request_field": "messages.1.content", "skill_field": "messages.0.content",
        "answer_field": "choices.0.message.content", "usage_field": "usage", "token_env": "AGENT_TOKEN"}}))
    out = tmp_path / "runs"
    code, stdout, stderr = run_cli(["eval", d, "--output", out])
    assert code == 0, stderr
    item = read_json(next(out.rglob("*.json")))["items"][0]
    assert item["grade"] == "A" and item["with_arm"]["scored"] == 2 and item["without_arm"]["scored"] == 2
    assert item["with_arm"]["total_usage"]["total_tokens"] > 0
    assert {s["authorization"] for s in scripted_server.seen} == {f"Bearer {SECRET_KEY}"}
    assert len(scripted_server.seen) == 5, "4 trials and one 429 retried"
    ev = yaml.safe_load((d / "eval.yaml").read_text())
    ev["task"]["instruction"] = "BROKEN on purpose"
    (d / "eval.yaml").write_text(yaml.safe_dump(ev))
    code, stdout, stderr = run_cli(["eval", d, "--output", tmp_path / "runs2"])
    assert code == 30, (stdout, stderr)  # an item with no scored trial: errored, never failed
    item = read_json(next((tmp_path / "runs2").rglob("*.json")))["items"][0]
    assert item["status"] == "errored" and item["with_arm"]["scored"] == 0
    assert all(t["status"] == "errored" and "JSON" in t["error"] for t in item["with_arm"]["trials"])
    assert SECRET_KEY not in stdout + stderr + json.dumps(item)


def test_the_targets_schema_accepts_the_examples_and_rejects_unknown_keys(tmp_path: Path) -> None:
    """`agentsproof schema targets-yaml` describes the file the loader accepts."""
    jsonschema = pytest.importorskip("jsonschema")
    code, stdout, stderr = run_cli(["schema", "targets-yaml"])
    assert code == 0, stderr
    schema = json.loads(stdout)
    example = yaml.safe_load((EXAMPLE / ".agentsproof" / "targets.yaml").read_text())
    jsonschema.validate(example, schema)
    jsonschema.validate({"c": {"type": "copilot", "inject": "skill"}, "h": {"type": "http", "url": "http://x/a", "skill_field": "s"}}, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"c": {"type": "copilot", "injekt": "skill"}}, schema)
