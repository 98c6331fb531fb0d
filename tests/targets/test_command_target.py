"""The command target with real processes: small Python agents written by each test.

The agents read the prompt (argv or stdin), follow the installed skill when there is one,
write a JSONL trace and print an answer. Process-group tests check that no process of a
trial outlives it (timeout, normal exit with a background child, cancellation).
"""

from __future__ import annotations

import ast
import asyncio
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest

from conftest import ScriptedServer
from agentsproof.core.errors import InputError
from agentsproof.model.items import EvalItem
from agentsproof.isolation import sandbox as sandbox_mod
from agentsproof.isolation import workspace as ws_mod
from agentsproof.targets.base import TargetError, TrialInput, TrialRecord
from agentsproof.model.items import SkillFile
from agentsproof.targets.command.target import CommandTarget
from agentsproof.targets.command.target import CommandTargetSpec
from agentsproof.targets.base import TargetDef

PRELUDE = '''\
import json, os, pathlib, socket, subprocess, sys, time
ARGS = sys.argv[1:]
PROMPT = ARGS[0] if ARGS else sys.stdin.read()
def trace(*steps):
    with open(os.environ["AGENTSPROOF_TRACE_FILE"], "a") as fh:
        for s in steps:
            fh.write((s if isinstance(s, str) else json.dumps(s)) + "\\n")
'''

FOLLOWER = PRELUDE + '''\
skill = os.environ.get("AGENTSPROOF_SKILL_FILE")
if skill:
    text = open(skill).read()
    trace({"tool": "view", "arguments": {"path": skill}, "result": text, "duration_ms": 12})
    if "WRITE-NOTES" in text:
        pathlib.Path("notes.txt").write_text("notes from the skill")
        trace({"name": "create", "input": "notes.txt", "ok": True})
    folder = pathlib.Path(skill).parent
    listing = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file() or p.is_symlink())
else:
    trace({"tool": "bash", "args": "ls", "output": "nothing"})
    listing = []
print(json.dumps({"prompt": PROMPT, "arm": os.environ["AGENTSPROOF_ARM"], "cwd": os.getcwd(),
                  "workspace": os.environ["AGENTSPROOF_WORKSPACE"], "skill": skill, "listing": listing,
                  "trace": os.environ["AGENTSPROOF_TRACE_FILE"], "skill_env": "AGENTSPROOF_SKILL_FILE" in os.environ}))
'''


def _item(**kw: Any) -> EvalItem:
    base = dict(id="skills/demo", name="demo", kind="skill", source_path="SKILL.md", system_prompt="S",
                task_name="t", prompt="do it", graders=[], trials=1, timeout=30.0, threshold=0.5)
    base.update(kw)
    return EvalItem(**base)


def _agent(tmp_path: Path, body: str, name: str = "agent.py") -> str:
    path = tmp_path / name
    path.write_text(body)
    return str(path)


def _target(command: list[str], **spec: Any) -> CommandTarget:
    s = CommandTargetSpec.model_validate({"type": "command", "command": command, **spec})
    return CommandTarget("agent", s, s)


@pytest.fixture
def spaces(tmp_path: Path) -> ws_mod.Workspaces:
    return ws_mod.Workspaces(keep_in=tmp_path / "ws")


@pytest.fixture
def skill(tmp_path: Path) -> SkillFile:
    folder = tmp_path / "skills" / "demo"
    (folder / "scripts").mkdir(parents=True)
    (folder / "SKILL.md").write_text("---\nname: demo\n---\nWRITE-NOTES into notes.txt\n")
    (folder / "scripts" / "run.sh").write_text("echo hi\n")
    (folder / ".hidden").write_text("dot-file")
    secret = tmp_path / "private.txt"
    secret.write_text("not for the agent")
    (folder / "link.txt").symlink_to(secret)
    from agentsproof.formats.eval_yaml.items import skill_file

    return skill_file("demo", "skill", (folder / "SKILL.md").read_text(), folder / "SKILL.md")


def _trial(spaces: ws_mod.Workspaces, arm: str = "with", skill: SkillFile | None = None, prompt: str = "do it", timeout: float = 30.0) -> TrialInput:
    folder = spaces.create("skills/demo", arm, 0)
    return TrialInput(item=_item(skill=skill), arm=arm, index=0, system="S", prompt=prompt, timeout=timeout,
                      workspace=folder, skill=skill if arm == "with" else None)


def _run(target: CommandTarget, trial: TrialInput, *, prepare: bool = True) -> TrialRecord:
    """As the runner does: prepare (install the skill), then run."""

    async def go() -> TrialRecord:
        if prepare:
            await target.prepare(trial)
        return await target.run(trial)

    return asyncio.run(go())


def _alive(pid: int) -> bool:
    """Running (a zombie no longer counts: this machine's init does not reap)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            state = fh.read().rsplit(b")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in (b"Z", b"X")


def _wait_gone(pid: int, seconds: float = 3.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not _alive(pid):
            return True
        time.sleep(0.05)
    return not _alive(pid)


# ------------------------------------------------------------------ arms, prompt, answer


def test_with_arm_installs_skill_and_the_agent_follows_it(tmp_path: Path, spaces: ws_mod.Workspaces, skill: SkillFile) -> None:
    target = _target([sys.executable, _agent(tmp_path, FOLLOWER), "{prompt}"])
    trial = _trial(spaces, "with", skill)
    asyncio.run(target.prepare(trial))
    before = ws_mod.snapshot(trial.workspace)  # the runner snapshots after prepare
    rec = _run(target, trial, prepare=False)
    out = json.loads(rec.answer)
    ws = str(trial.workspace.resolve())
    assert out["prompt"] == "do it" and out["arm"] == "with" and out["cwd"] == ws == out["workspace"]
    assert out["skill"] == ws + "/.agents/skills/demo/SKILL.md"
    assert out["listing"] == ["SKILL.md", "scripts/run.sh"]  # no dot-file, no symlink out
    assert not out["trace"].startswith(ws)  # the harness's trace is outside the workspace
    # only what the agent made shows, not the installed skill
    assert [(f.path, f.status) for f in ws_mod.changes(trial.workspace, before)] == [("notes.txt", "created")]
    assert (trial.workspace / ".agents" / "skills" / "demo" / "SKILL.md").read_text() == skill.text
    assert [s.name for s in rec.trajectory] == ["view", "create"]
    assert rec.skill_used is True
    assert rec.trajectory[0].latency_s == pytest.approx(0.012)


def test_baseline_arm_gets_no_skill(tmp_path: Path, spaces: ws_mod.Workspaces, skill: SkillFile, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTSPROOF_SKILL_FILE", str(skill.source_path))  # never leaks in from outside
    target = _target([sys.executable, _agent(tmp_path, FOLLOWER), "{prompt}"])
    trial = _trial(spaces, "without", skill)
    rec = _run(target, trial)
    out = json.loads(rec.answer)
    assert out["arm"] == "without" and out["skill"] is None and out["skill_env"] is False
    assert not (trial.workspace / "notes.txt").exists() and not (trial.workspace / ".agents").exists()
    assert [s.name for s in rec.trajectory] == ["bash"]
    assert rec.skill_used is False  # a trace exists and nothing read the skill


def test_run_without_prepare_still_installs_and_skill_path_is_used(tmp_path: Path, spaces: ws_mod.Workspaces, skill: SkillFile) -> None:
    body = PRELUDE + 'open(os.environ["AGENTSPROOF_SKILL_FILE"], "a").write("edited")\nprint(os.environ["AGENTSPROOF_SKILL_FILE"])\n'
    target = _target([sys.executable, _agent(tmp_path, body)], skill_path="skills/{name}.md")
    trial = _trial(spaces, "with", skill)
    rec = _run(target, trial, prepare=False)
    assert rec.answer == str(trial.workspace.resolve() / "skills" / "demo.md")
    assert (trial.workspace / "skills" / "demo.md").read_text() == skill.text + "edited"
    assert (trial.workspace / "skills" / "scripts" / "run.sh").is_file()


def test_a_seeded_file_at_skill_path_is_an_errored_trial(tmp_path: Path, spaces: ws_mod.Workspaces, skill: SkillFile) -> None:
    trial = _trial(spaces, "with", skill)
    (trial.workspace / "SKILL.md").write_text("the seed's own")
    target = _target([sys.executable, _agent(tmp_path, FOLLOWER)], skill_path="SKILL.md")
    with pytest.raises(TargetError, match="the workspace already has 'SKILL.md'"):
        asyncio.run(target.prepare(trial))
    assert (trial.workspace / "SKILL.md").read_text() == "the seed's own"


def test_skill_is_never_installed_through_a_symlink(tmp_path: Path, spaces: ws_mod.Workspaces, skill: SkillFile) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    trial = _trial(spaces, "with", skill)
    (trial.workspace / ".agents").symlink_to(elsewhere)
    with pytest.raises(TargetError, match="cannot install the skill: '.agents' in the workspace is not a folder"):
        asyncio.run(_target([sys.executable, _agent(tmp_path, FOLLOWER)]).prepare(trial))
    assert list(elsewhere.iterdir()) == []


def test_prompt_on_stdin_when_argv_has_no_placeholder(tmp_path: Path, spaces: ws_mod.Workspaces) -> None:
    body = 'import sys\nprint("argv=%s stdin=%s" % (sys.argv[1:], sys.stdin.read()))\n'
    script = _agent(tmp_path, body)
    rec = _run(_target([sys.executable, script]), _trial(spaces, "without", prompt="hello there"))
    assert rec.answer == "argv=[] stdin=hello there"
    rec = _run(_target([sys.executable, script, "{prompt}"], stdin=True), _trial(spaces, "without", prompt="p2"))
    assert rec.answer == "argv=['p2'] stdin=p2"
    rec = _run(_target([sys.executable, script, "{prompt}"]), _trial(spaces, "without", prompt="p3"))
    assert rec.answer == "argv=['p3'] stdin="


def test_placeholders_are_replaced_once(tmp_path: Path, spaces: ws_mod.Workspaces, skill: SkillFile) -> None:
    script = _agent(tmp_path, "import sys\nprint('\\n'.join(sys.argv[1:]))\n")
    target = _target([sys.executable, script, "--p={prompt}", "{workspace}", "{skill_file}", "{model}"])
    target.model = "m-1"
    trial = _trial(spaces, "with", skill, prompt="keep {workspace} and {skill_file} literal")
    lines = _run(target, trial).answer.splitlines()
    ws = str(trial.workspace.resolve())
    assert lines == ["--p=keep {workspace} and {skill_file} literal", ws, ws + "/.agents/skills/demo/SKILL.md", "m-1"]


def test_answer_file(tmp_path: Path, spaces: ws_mod.Workspaces) -> None:
    body = PRELUDE + 'pathlib.Path("out").mkdir()\npathlib.Path("out/answer.md").write_text("  from the file\\n")\nprint("stdout")\n'
    rec = _run(_target([sys.executable, _agent(tmp_path, body)], answer_file="out/answer.md"), _trial(spaces, "without"))
    assert rec.answer == "from the file"
    silent = _agent(tmp_path, "print('no file')\n", "silent.py")
    with pytest.raises(TargetError, match="no answer file 'out/answer.md'"):
        _run(_target([sys.executable, silent], answer_file="out/answer.md"), _trial(spaces, "without"))


def test_answer_file_symlink_out_of_the_workspace_is_refused(tmp_path: Path, spaces: ws_mod.Workspaces) -> None:
    (tmp_path / "elsewhere.txt").write_text("outside")
    body = f'import os\nos.symlink({str(tmp_path / "elsewhere.txt")!r}, "answer.txt")\n'
    with pytest.raises(TargetError, match="no answer file"):
        _run(_target([sys.executable, _agent(tmp_path, body)], answer_file="answer.txt"), _trial(spaces, "without"))


def test_empty_answer_is_an_answer(tmp_path: Path, spaces: ws_mod.Workspaces) -> None:
    rec = _run(_target([sys.executable, _agent(tmp_path, "print('   ')\n")]), _trial(spaces, "without"))
    assert rec.answer == "" and rec.skill_used is False  # the baseline has no skill to use
    skill = SkillFile(name="demo", kind="skill", text="S")
    rec = _run(_target([sys.executable, _agent(tmp_path, "print('   ')\n")]), _trial(spaces, "with", skill))
    assert rec.skill_used is None  # with the skill but no trace: cannot tell


def test_nonzero_exit_names_code_and_stderr_tail_without_secrets(tmp_path: Path, spaces: ws_mod.Workspaces, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_TOKEN", "tok-very-secret-42")
    body = ('import os, sys\nfor i in range(100): print("noise", i, file=sys.stderr)\n'
            'print("fatal: bad key", os.environ["API_KEY"], file=sys.stderr)\nsys.exit(3)\n')
    shown = CommandTargetSpec.model_validate({"type": "command", "command": [sys.executable, _agent(tmp_path, body)],
                                              "env": {"API_KEY": "${MY_TOKEN}"}})
    defn = TargetDef(name="agent", spec=shown, source="targets.yaml")
    target = CommandTarget("agent", defn.expanded(), shown)
    with pytest.raises(TargetError) as err:
        _run(target, _trial(spaces, "without"))
    msg = str(err.value)
    assert "exited with code 3" in msg and msg.endswith("fatal: bad key ***") and "noise 99" in msg
    assert "tok-very-secret-42" not in msg and "\n" not in msg
    assert "tok-very-secret-42" not in json.dumps(target.describe())
    assert target.describe()["env"] == ["API_KEY"]


def test_missing_program_is_an_errored_trial(spaces: ws_mod.Workspaces, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENT_DIR", "/nonexistent/secret-dir")
    shown = CommandTargetSpec.model_validate({"type": "command", "command": ["${AGENT_DIR}/agent"], "sandbox": False})
    target = CommandTarget("agent", TargetDef("agent", shown, "targets.yaml").expanded(), shown)
    with pytest.raises(TargetError, match=r"cannot run '\*\*\*/agent': No such file"):
        _run(target, _trial(spaces, "without"))


# ------------------------------------------------------------------ process groups

SPAWNER = PRELUDE + '''\
child = subprocess.Popen(["sleep", "1000"])
pathlib.Path(os.environ["PID_FILE"]).write_text(f"{os.getpid()} {child.pid}")
if os.environ.get("THEN") == "exit":
    print("done")
    sys.exit(0)
time.sleep(1000)
'''


def _pids(pid_file: Path) -> list[int]:
    return [int(p) for p in pid_file.read_text().split()]


@pytest.fixture
def pid_file(tmp_path: Path) -> Any:
    """Where a spawning agent writes its pids; any still running afterwards are killed,
    so a failing test leaves nothing behind."""
    path = tmp_path / "pids"
    yield path
    if path.exists():
        for pid in _pids(path):
            if _alive(pid):
                os.kill(pid, 9)


def test_timeout_kills_the_whole_group(tmp_path: Path, spaces: ws_mod.Workspaces, pid_file: Path) -> None:
    target = _target([sys.executable, _agent(tmp_path, SPAWNER)], timeout=1, sandbox=False, env={"PID_FILE": str(pid_file)})
    assert target.timeout == 1  # the runner gives trials this limit instead of the eval's
    with pytest.raises(TargetError, match="agent timed out after 1s") as err:  # its agent sleeps 1000 s
        _run(target, _trial(spaces, "without", timeout=60))
    assert err.value.kind == "timeout"
    for pid in _pids(pid_file):
        assert _wait_gone(pid, 0.5), f"process {pid} outlived its trial"


def test_background_child_is_stopped_after_a_normal_exit(tmp_path: Path, spaces: ws_mod.Workspaces, pid_file: Path) -> None:
    target = _target([sys.executable, _agent(tmp_path, SPAWNER)], sandbox=False, env={"PID_FILE": str(pid_file), "THEN": "exit"})
    # the child's `sleep 1000` holds stdout open: waiting for it would take 1000 s, and the
    # note says the child was found running after the agent exited, and stopped
    rec = _run(target, _trial(spaces, "without"))
    assert rec.answer == "done"
    assert any("left processes running" in e.text for e in rec.log)
    for pid in _pids(pid_file):
        assert _wait_gone(pid, 0.5), f"process {pid} outlived its trial"


def test_cancellation_kills_the_group(tmp_path: Path, spaces: ws_mod.Workspaces, pid_file: Path) -> None:
    target = _target([sys.executable, _agent(tmp_path, SPAWNER)], sandbox=False, env={"PID_FILE": str(pid_file)})
    trial = _trial(spaces, "without")

    async def go() -> None:
        task = asyncio.ensure_future(target.run(trial))
        for _ in range(200):
            if pid_file.exists() and len(pid_file.read_text().split()) == 2:
                break
            await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(go())
    pids = _pids(pid_file)
    assert pids and all(_wait_gone(pid, 0.5) for pid in pids)


# ------------------------------------------------------------------ traces


def test_trace_parsing_is_tolerant_and_bounded(tmp_path: Path, spaces: ws_mod.Workspaces) -> None:
    body = PRELUDE + '''\
trace({"tool": "bash", "args": {"cmd": "ls -la"}, "output": "x" * 1000, "latency_s": 0.5},
      {"name": "view", "input": "README.md", "result": {"lines": 3}, "error": "denied"},
      {"tool": "grep", "arguments": "foo", "ok": True, "duration_ms": 250},
      "not json at all", "[1, 2]", {"arguments": "no name"}, "",
      {"tool": "edit", "error": None, "latency_s": "slow"})
print("ok")
'''
    rec = _run(_target([sys.executable, _agent(tmp_path, body)], trace_file="logs/trace.jsonl"), _trial(spaces, "without"))
    steps = rec.trajectory
    assert [s.name for s in steps] == ["bash", "view", "grep", "edit"]
    assert json.loads(steps[0].arguments) == {"cmd": "ls -la"} and steps[0].latency_s == 0.5
    assert len(steps[0].result) == 300 and steps[0].ok is None
    assert steps[1].arguments == "README.md" and steps[1].result == '{"lines": 3}' and steps[1].ok is False
    assert steps[2].ok is True and steps[2].latency_s == pytest.approx(0.25)
    assert steps[3].ok is True and steps[3].latency_s is None
    assert any(e.text == "trace: skipped 3 malformed lines" for e in rec.log)
    assert rec.skill_used is False


def test_trace_file_in_the_workspace_and_step_cap(tmp_path: Path, spaces: ws_mod.Workspaces, monkeypatch: pytest.MonkeyPatch) -> None:
    from agentsproof.targets.command import trace as trace_mod

    monkeypatch.setattr(trace_mod, "MAX_TRACE_STEPS", 5)
    body = PRELUDE + 'print(os.environ["AGENTSPROOF_TRACE_FILE"])\ntrace(*[{"tool": f"t{i}"} for i in range(8)])\n'
    trial = _trial(spaces, "without")
    rec = _run(_target([sys.executable, _agent(tmp_path, body)], trace_file="logs/trace.jsonl"), trial)
    assert rec.answer == str(trial.workspace.resolve() / "logs" / "trace.jsonl")
    assert [s.name for s in rec.trajectory] == ["t0", "t1", "t2", "t3", "t4"]
    assert any("dropped 3" in e.text for e in rec.log)


@pytest.mark.parametrize(
    ("lines", "expected"),
    [
        ('trace({"type": "skill", "name": "demo"})', True),
        ('trace({"type": "skill", "name": "other-skill"})', False),
        ('trace({"type": "skill", "name": "x", "path": os.environ["AGENTSPROOF_SKILL_FILE"]})', True),
        ('trace({"skill_used": True})', True),
        ('trace({"skill": "demo"})', True),  # the documented activation line is a use too
        ('trace({"skill": "other-skill"})', False),
        ('trace({"tool": "bash", "args": "cat .agents/skills/demo/SKILL.md"})', True),
        ('trace({"tool": "bash", "args": "cat README.md"})', False),
        ('pass', None),
    ],
)
def test_skill_used(tmp_path: Path, spaces: ws_mod.Workspaces, skill: SkillFile, lines: str, expected: bool | None) -> None:
    body = PRELUDE + lines + '\nprint("ok")\n'
    rec = _run(_target([sys.executable, _agent(tmp_path, body)]), _trial(spaces, "with", skill))
    assert rec.skill_used is expected


def test_the_documented_skill_line_is_a_use_not_a_malformed_line(tmp_path: Path, spaces: ws_mod.Workspaces, skill: SkillFile) -> None:
    body = PRELUDE + 'trace({"skill": "other-skill"}, {"skill": "demo"}, {"tool": "bash", "args": "ls"})\nprint("ok")\n'
    rec = _run(_target([sys.executable, _agent(tmp_path, body)]), _trial(spaces, "with", skill))
    assert rec.skill_used is True and rec.skills_invoked == ["demo"]  # only installed skills are named
    assert [s.name for s in rec.trajectory] == ["bash"]
    assert not [e.text for e in rec.log if "malformed" in e.text]


def test_stderr_lines_go_to_the_log(tmp_path: Path, spaces: ws_mod.Workspaces) -> None:
    body = 'import sys\nfor i in range(100): print("line", i, file=sys.stderr)\nprint("ok")\n'
    rec = _run(_target([sys.executable, _agent(tmp_path, body)]), _trial(spaces, "without"))
    texts = [e.text for e in rec.log if e.role == "info"]
    assert texts[-1] == "stderr: line 99" and len(texts) == 40


# ------------------------------------------------------------------ sandbox


def _bwrap_works() -> bool:
    try:
        sandbox_mod.find_bwrap("targets.yaml", "probe")
        return True
    except InputError:
        return False


needs_bwrap = pytest.mark.skipif(not _bwrap_works(), reason="bubblewrap cannot start here")


@pytest.fixture
def outside() -> Any:
    """A folder outside /tmp (the sandbox's /tmp is private): agent scripts and escape targets."""
    folder = Path(tempfile.mkdtemp(dir="/var/tmp" if os.path.isdir("/var/tmp") else None, prefix="ap-outside-"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)

PROBE = PRELUDE + '''\
def attempt(fn):
    try:
        fn()
        return "ok"
    except Exception as exc:
        return type(exc).__name__
env = os.environ
res = {
    "inside": attempt(lambda: pathlib.Path("made.txt").write_text("in")),
    "outside": attempt(lambda: pathlib.Path(env["OUTSIDE"], "escape.txt").write_text("out")),
    "host_tmp": os.path.exists(env["HOST_TMP_FILE"]),
    "sibling": os.path.exists(env["SIBLING"]),
    "tmp_write": attempt(lambda: pathlib.Path("/tmp/private.txt").write_text("t")),
}
def get(url):
    import urllib.request
    req = urllib.request.Request(url, data=json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}]}).encode(),
                                 headers={"Content-Type": "application/json"})
    return json.load(urllib.request.urlopen(req, timeout=5))["choices"][0]["message"]["content"]
res["listed"] = attempt(lambda: get(env["LISTED"]))
res["listed_reply"] = get(env["LISTED"]) if res["listed"] == "ok" else None
res["unlisted"] = attempt(lambda: get(env["UNLISTED"]))
res["internet"] = attempt(lambda: socket.create_connection(("1.1.1.1", 53), timeout=3).close())
subprocess.Popen(["setsid", "sleep", "987654"])
print(json.dumps(res))
'''


@needs_bwrap
def test_sandbox_confines_files_network_and_processes(outside: Path, scripted_server: ScriptedServer) -> None:
    spaces = ws_mod.Workspaces(keep_in=outside / "ws")  # outside /tmp: hidden by the sandbox itself
    host_tmp = Path(tempfile.mkstemp(prefix="ap-host-")[1])
    other = ScriptedServer().start()
    earlier = set(_sleepers("987654"))
    try:
        sibling = spaces.create("skills/demo", "without", 0) / "secret.txt"
        sibling.write_text("another trial's file")
        env = {"OUTSIDE": str(outside), "HOST_TMP_FILE": str(host_tmp), "SIBLING": str(sibling),
               "LISTED": scripted_server.base_url + "/chat/completions", "UNLISTED": other.base_url + "/chat/completions"}
        target = _target([sys.executable, _agent(outside, PROBE)], sandbox=True, env=env, loopback_ports=[scripted_server.port])
        trial = _trial(spaces, "with")
        res = json.loads(_run(target, trial).answer)
    finally:
        other.stop()
        host_tmp.unlink()
    assert res["inside"] == "ok" and (trial.workspace / "made.txt").read_text() == "in"
    assert res["outside"] == "OSError" and not (outside / "escape.txt").exists()
    assert res["host_tmp"] is False and res["sibling"] is False and res["tmp_write"] == "ok"
    assert res["listed"] == "ok" and res["listed_reply"] == "OK" and len(scripted_server.requests) == 2
    assert res["unlisted"] == "URLError" and other.requests == []
    assert res["internet"] == "OSError"
    # a process that left the group (setsid) still dies with the sandbox's PID namespace
    deadline = time.monotonic() + 3
    while time.monotonic() < deadline and set(_sleepers("987654")) - earlier:
        time.sleep(0.05)
    escaped = set(_sleepers("987654")) - earlier
    for pid in escaped:  # never leave one behind, even when the check fails
        os.kill(pid, 9)
    assert not escaped


def _sleepers(arg: str) -> list[int]:
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                cmd = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if cmd[:2] == [b"sleep", arg.encode()] and _alive(int(entry)):
                out.append(int(entry))
    return out


@needs_bwrap
def test_sandbox_timeout_and_exit_code(outside: Path, spaces: ws_mod.Workspaces) -> None:
    slow = _target([sys.executable, _agent(outside, "import time\ntime.sleep(1000)\n")], sandbox=True, timeout=1)
    with pytest.raises(TargetError, match="timed out after 1s"):
        _run(slow, _trial(spaces, "without"))
    failing = _target([sys.executable, _agent(outside, "import sys\nsys.exit('bad thing')\n", "f.py")], sandbox=True)
    with pytest.raises(TargetError, match="exited with code 1: bad thing"):
        _run(failing, _trial(spaces, "without"))


def test_sandbox_without_bwrap_is_an_input_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.setattr(sandbox_mod, "FALLBACK_BWRAP", str(tmp_path / "no-bwrap"))
    with pytest.raises(InputError) as err:
        _target(["agent"], sandbox=True)
    assert str(err.value).startswith("targets.yaml: agent.sandbox: needs bubblewrap") and "apt-get install bubblewrap" in str(err.value)


def test_sandbox_with_a_bwrap_that_cannot_start_is_an_input_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = tmp_path / "bin" / "bwrap"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", str(fake.parent))
    monkeypatch.setattr(sandbox_mod, "_probed", {})
    s = CommandTargetSpec.model_validate({"type": "command", "command": ["agent"], "sandbox": True})
    with pytest.raises(InputError, match="cannot start a sandbox here: bwrap: No permissions to create new namespace") as err:
        CommandTarget("agent", s, s, source="my/targets.yaml")
    assert err.value.source == "my/targets.yaml" and err.value.field == "agent.sandbox"


def test_sandbox_keeps_named_paths_under_tmp_visible_but_never_the_workspaces(tmp_path: Path) -> None:
    """A checkout or venv under /tmp (CI clones often are) stays runnable inside the sandbox:
    the absolute paths the command names, and a venv's folder, are mounted read-only; /tmp
    itself and anything holding the workspaces never are."""
    venv = Path("/tmp") / f"apx-venv-{os.getpid()}"
    (venv / "bin").mkdir(parents=True, exist_ok=True)
    try:
        (venv / "pyvenv.cfg").write_text("home = /usr/bin\n")
        (venv / "bin" / "python").write_text("")
        root = Path("/tmp") / f"apx-ws-{os.getpid()}"
        paths = sandbox_mod.runtime_paths([str(venv / "bin" / "python"), "/tmp", str(root.parent)], root)
        assert str(venv) in paths and str(venv / "bin" / "python") not in paths  # the venv covers its interpreter
        assert "/tmp" not in paths and not any(root.is_relative_to(Path(p)) for p in paths)
        assert all(Path(p).is_relative_to("/tmp") or Path(p).is_relative_to("/run") for p in paths)
    finally:
        shutil.rmtree(venv, ignore_errors=True)


def test_items_whose_ids_read_alike_get_their_own_workspaces(tmp_path: Path) -> None:
    spaces = ws_mod.Workspaces(tmp_path / "kept")
    a = spaces.create("suite/case-1", "with", 0)
    b = spaces.create("suite-case-1", "with", 0)
    assert a != b and a.is_dir() and b.is_dir()
    assert a.parent.name.startswith("suite-case-1-") and a.name == "with-1"


def test_sandbox_keeps_an_npm_installed_cli_under_tmp_whole() -> None:
    """``node_modules/.bin/codex`` is a link into its package, which loads other files of the
    install (native binaries in sibling packages): the whole node_modules folder is mounted."""
    base = Path("/tmp") / f"apx-npm-{os.getpid()}"
    pkg = base / "node_modules" / "@openai" / "codex" / "bin"
    pkg.mkdir(parents=True, exist_ok=True)
    try:
        (pkg / "codex.js").write_text("")
        (base / "node_modules" / ".bin").mkdir(exist_ok=True)
        (base / "node_modules" / ".bin" / "codex").symlink_to("../@openai/codex/bin/codex.js")
        root = Path("/tmp") / f"apx-ws-{os.getpid()}"
        paths = sandbox_mod.runtime_paths([str(base / "node_modules" / ".bin" / "codex")], root)
        assert str(base / "node_modules") in paths and str(base) not in paths
    finally:
        shutil.rmtree(base, ignore_errors=True)


@needs_bwrap
def test_sandbox_runs_a_command_named_through_dotdot_under_tmp(tmp_path: Path, spaces: ws_mod.Workspaces) -> None:
    """``{here}/../agent.py`` (evals/agent-plugin does this) with the files under /tmp: the
    sandbox mounts the normalised path, and the command line's ``..`` must still resolve."""
    assert str(tmp_path).startswith("/tmp/")
    (tmp_path / "targets").mkdir()
    (tmp_path / "targets" / "other.txt").write_text("not for the agent")
    _agent(tmp_path, "import os, pathlib\nhere = os.path.dirname(__file__)\n"
                     "pathlib.Path('out.txt').write_text(repr([sorted(os.listdir(here)), os.listdir(os.path.join(here, 'targets'))]))\n")
    named = str(tmp_path / "targets" / ".." / "agent.py")
    trial = _trial(spaces, "without")
    _run(_target([sys.executable, named], sandbox=True), trial)
    listed, passed_through = ast.literal_eval((trial.workspace / "out.txt").read_text())
    assert "agent.py" in listed and "targets" in listed
    assert passed_through == []  # the folder the path passes through is there, empty: nothing of it is shown
