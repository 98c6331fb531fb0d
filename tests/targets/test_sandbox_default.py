"""Command targets are sandboxed by default (real bubblewrap), the filled {prompt} never
opens a path to the agent, `sandbox: false` is said once, and an unconfined agent that
swaps its workspace for a symlink gets an errored trial with nothing of the target graded
or previewed."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import socket
import stat
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import make_plugin, read_json, run_cli, simple_eval

from agentsproof.core.errors import InputError
from agentsproof.model.items import EvalItem
from agentsproof.isolation import sandbox as sandbox_mod
from agentsproof.isolation import workspace as ws_mod
from agentsproof.targets.base import TrialInput
from agentsproof.targets.command.target import CommandTarget, CommandTargetSpec


def _item() -> EvalItem:
    return EvalItem(id="skills/demo", name="demo", kind="skill", source_path="SKILL.md", system_prompt="S",
                    task_name="t", prompt="do it", graders=[], trials=1, timeout=30.0, threshold=0.5)


def _target(command: list[str], **spec: Any) -> CommandTarget:
    s = CommandTargetSpec.model_validate({"type": "command", "command": command, **spec})
    return CommandTarget("agent", s, s)


def _run(target: CommandTarget, spaces: ws_mod.Workspaces, prompt: str, index: int = 0) -> str:
    folder = spaces.create("skills/demo", "without", index)
    trial = TrialInput(item=_item(), arm="without", index=index, system="S", prompt=prompt, timeout=30.0, workspace=folder)
    return asyncio.run(target.run(trial)).answer


@pytest.fixture
def outside() -> Any:
    """A folder outside /tmp (the sandbox's /tmp is private)."""
    folder = Path(tempfile.mkdtemp(dir="/var/tmp", prefix="ap-default-"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


LOOKER = '''\
import json, os, socket, sys
path = sys.argv[1]
res = {"exists": os.path.exists(path)}
try:
    s = socket.socket(socket.AF_UNIX); s.connect(path); res["connect"] = "ok"
except OSError as exc:
    res["connect"] = type(exc).__name__
try:
    open(os.environ["OUTSIDE"] + "/escape.txt", "w").write("x"); res["write"] = "ok"
except OSError as exc:
    res["write"] = type(exc).__name__
print(json.dumps(res))
'''


def test_a_command_target_is_sandboxed_by_default_and_the_prompt_opens_no_path(outside: Path) -> None:
    """No `sandbox:` in the spec: bubblewrap. The instruction is the absolute path of a host
    socket under /tmp: inside the sandbox it does not exist, so it cannot be reached."""
    assert CommandTargetSpec.model_validate({"type": "command", "command": ["x"]}).sandbox is True
    sock_dir = Path(tempfile.mkdtemp(prefix="ap-sock-"))
    sock_path = sock_dir / "host.sock"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(sock_path))
    server.listen(1)
    spaces = ws_mod.Workspaces()
    agent = outside / "look.py"
    agent.write_text(LOOKER)
    try:
        target = _target([sys.executable, str(agent), "{prompt}"], env={"OUTSIDE": str(outside)})
        assert target.bwrap is not None and target.describe()["sandbox"] is True
        res = json.loads(_run(target, spaces, str(sock_path)))
        assert res == {"exists": False, "connect": "FileNotFoundError", "write": "OSError"}
        assert not (outside / "escape.txt").exists()
        # the same path named by the targets file itself is bound back (read-only)
        named = _target([sys.executable, str(agent), str(sock_path)], env={"OUTSIDE": str(outside)})
        assert json.loads(_run(named, spaces, "hi", 1))["exists"] is True
    finally:
        server.close()
        shutil.rmtree(sock_dir, ignore_errors=True)
        spaces.close()


def test_sandbox_false_runs_unconfined_and_says_so_once(outside: Path, capsys: pytest.CaptureFixture[str]) -> None:
    agent = outside / "look.py"
    agent.write_text(LOOKER)
    target = _target([sys.executable, str(agent), "{prompt}"], env={"OUTSIDE": str(outside)}, sandbox=False)
    spaces = ws_mod.Workspaces()
    try:
        for i in range(2):
            assert json.loads(_run(target, spaces, "/nonexistent", i))["write"] == "ok"
    finally:
        spaces.close()
    err = capsys.readouterr().err
    assert err.count("runs unconfined ('sandbox: false')") == 1 and "'agent'" in err


def test_no_bwrap_says_how_to_install_it_or_opt_out(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.setattr(sandbox_mod, "FALLBACK_BWRAP", str(tmp_path / "no-bwrap"))
    with pytest.raises(InputError) as err:
        _target(["agent"])  # no `sandbox:` at all: the default needs bubblewrap
    line = str(err.value)
    assert "\n" not in line and "apt-get install bubblewrap" in line and "sandbox: false" in line


SWAPPER = '''\
import os, shutil, sys
ws = os.environ["AGENTSPROOF_WORKSPACE"]
os.chdir("/")
shutil.rmtree(ws)
os.symlink(os.environ["VICTIM"], ws)
print("swapped")
'''


def test_an_agent_that_swaps_its_workspace_for_a_symlink_gets_an_errored_trial(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "report.md").write_text("HOST-SECRET-CONTENT")
    (victim / "report.md").chmod(0o444)
    victim.chmod(0o755)
    d = make_plugin(tmp_path, skills={"demo": {"prompt": "Write report.md.\n", "eval": simple_eval(
        [{"type": "files", "exists": ["report.md"], "mustContain": {"report.md": ["HOST-SECRET"]}},
         {"type": "script", "run": "touch graded-here"}],
        execution={"mode": "agent", "target": "swap"})}}) / "skills" / "demo"
    (d / "swap.py").write_text(SWAPPER)
    (d / "targets.yaml").write_text(yaml.safe_dump({"swap": {
        "type": "command", "command": [sys.executable, "{here}/swap.py"], "sandbox": False, "env": {"VICTIM": str(victim)}}}))
    out = tmp_path / "runs"
    code, _stdout, stderr = run_cli(["eval", d, "--output", out, "--keep-workspaces"])
    assert "Traceback" not in stderr and code == 30, stderr
    report_path = next(out.rglob("*.json"))
    item = read_json(report_path)["items"][0]
    trials = item["with_arm"]["trials"] + item["without_arm"]["trials"]
    assert trials and all(t["status"] == "errored" and "replaced by a symlink" in t["error"] for t in trials)
    assert "HOST-SECRET-CONTENT" not in report_path.read_text()
    assert sorted(os.listdir(victim)) == ["report.md"]  # the script grader never ran there
    assert stat.S_IMODE(os.stat(victim / "report.md").st_mode) == 0o444 and stat.S_IMODE(os.stat(victim).st_mode) == 0o755


WRITER = '''\
import json, os, pathlib
pathlib.Path("made.txt").write_text(os.environ["AGENTSPROOF_ARM"])
runs = pathlib.Path(os.environ["AGENTSPROOF_WORKSPACE"]).parents[2]
pathlib.Path("seen.json").write_text(json.dumps(sorted(os.listdir(runs))))
print("wrote made.txt")
'''


def test_two_runs_on_one_output_keep_each_others_workspaces(tmp_path: Path, outside: Path) -> None:
    """End to end, with the default sandbox: the agent script lives under /tmp (bound back
    because the targets file names it) and writes in its workspace; the second run's kept
    workspaces go in a folder of their own, and its agent cannot see the first run's."""
    d = make_plugin(tmp_path, skills={"demo": {"prompt": "Write made.txt.\n", "eval": simple_eval(
        [{"type": "files", "exists": ["made.txt"]}], execution={"mode": "agent", "target": "writer"})}}) / "skills" / "demo"
    (d / "w.py").write_text(WRITER)
    (d / "targets.yaml").write_text(yaml.safe_dump({"writer": {"type": "command", "command": [sys.executable, "{here}/w.py"]}}))
    out = outside / "runs"  # outside /tmp, which the sandbox hides anyway
    kept = []
    for _ in range(2):
        code, _stdout, stderr = run_cli(["eval", d, "--output", out, "--keep-workspaces"])
        assert code == 0 and "unconfined" not in stderr, stderr
        item = read_json(next(out.rglob("*.json")))["items"][0]
        kept.append([t["workspace"] for arm in ("with_arm", "without_arm") for t in item[arm]["trials"]])
    assert len(set(kept[0] + kept[1])) == len(kept[0]) + len(kept[1])
    for folder in kept[0] + kept[1]:
        assert (Path(folder) / "made.txt").is_file(), folder
    assert Path(kept[0][0]).parents[1] != Path(kept[1][0]).parents[1]
    assert Path(kept[0][0]).parents[2] == Path(kept[1][0]).parents[2]
    assert len(os.listdir(Path(kept[0][0]).parents[2])) == 2
    for folder in kept[1]:  # inside the sandbox only its own run's folder is there
        assert json.loads((Path(folder) / "seen.json").read_text()) == [Path(folder).parents[1].name]
