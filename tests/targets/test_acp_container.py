"""An ACP agent inside a trial's container, on the real engine: the pinned codex-acp (its
native binary mounted read-only from the host install, no network at trial time) spoken to
over ACP through ``docker exec -i``, against the scripted Responses server on loopback
reached through the relay of a ``--network none`` container. Its shell tool runs in the
container, the staged skill loads there from the copied-in harness, and the file it writes
comes back to the report."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from agent_clis import codex_server, require
from conftest import Rule, ScriptedServer, read_json, run_cli
from docker_engine import own_containers
from openai_server import response_outputs, response_tools, tool_call, tool_reply

MODEL = "acp-container-model"
SECRET = "sk-acp-container-secret"
HOMEMARK = "HOMEMARK"
DESC = "DESCMARK writes the boxed file"
SKILL_FILE = re.compile(r"(/[^\s\"'`\\]*/skills/[^/\s]+/SKILL\.md)")
LIBS = ("libssl.so.3", "libcrypto.so.3")
"""What codex-acp's binary links besides the base image's libraries (an eval's image would install libssl3)."""


def _image_folder(root: Path, base: str) -> Path:
    """A Dockerfile over the base image with codex-acp's TLS libraries (copied from this
    Debian host: no network at build time)."""
    folder = root / "image"
    folder.mkdir()
    for lib in LIBS:
        host = Path("/usr/lib/x86_64-linux-gnu") / lib
        if not host.is_file():
            pytest.skip(f"{host} is not on this machine (codex-acp's binary links it)")
        shutil.copyfile(host, folder / lib)
    (folder / "Dockerfile").write_text(f"FROM {base}\nCOPY {' '.join(LIBS)} /usr/lib/x86_64-linux-gnu/\n")
    return folder


def _model(req: dict[str, Any]) -> Any:
    """With the skill listed: read its SKILL.md, then write a file only a container has the marker for."""
    if "exec_command" not in response_tools(req):
        return "OK"
    text = json.dumps(req)
    if DESC not in text:
        return "nothing to do"
    done = len(response_outputs(req))
    if done == 0:
        found = SKILL_FILE.search(text.replace("\\\\", "\\"))
        return tool_reply(tool_call("exec_command", {"cmd": f"cat {found.group(1) if found else 'SKILL.md'}", "yield_time_ms": 60000}))
    if done == 1:
        return tool_reply(tool_call("exec_command", {"cmd": "test -f /.dockerenv && echo boxed > result.txt; cat /etc/debian_version", "yield_time_ms": 60000}))
    return "wrote result.txt"


def _eval(tmp_path: Path, base: str, timeout: float) -> Path:
    root = tmp_path / "ev"
    root.mkdir()
    image = _image_folder(root, base)
    (root / "SKILL.md").write_text(f"---\nname: csv-boxed\ndescription: {DESC}.\n---\nSKILLMARK: write result.txt.\n")
    (root / "targets.yaml").write_text(yaml.safe_dump({"cx": {"type": "codex-acp", "model": MODEL, "timeout": timeout}}))
    cfg = {
        "skill": "SKILL.md",
        "execution": {"mode": "agent", "target": "cx"},
        "environment": {"dockerfile": str((image / "Dockerfile").relative_to(root))},
        "defaults": {"trials": 1, "timeout": timeout},
        "task": {"name": "box", "instruction": "Do the task.", "graders": [{"type": "files", "mustContain": {"result.txt": ["boxed"]}}]},
    }
    (root / "eval.yaml").write_text(yaml.safe_dump(cfg))
    return root / "eval.yaml"


@pytest.fixture
def responses(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[ScriptedServer]:
    """codex-acp aimed at a fresh scripted Responses server, with a HOME full of the user's own skills that must never load."""
    require("codex-acp", monkeypatch)
    yield from codex_server(monkeypatch, tmp_path, SECRET, HOMEMARK)


def test_the_timeout_in_a_container_errors_the_trial_and_leaves_nothing(tmp_path: Path, docker_base_image: str, responses: ScriptedServer) -> None:
    responses.add(Rule(reply="too late", delay=25))
    out = tmp_path / "runs"
    code, stdout, stderr = run_cli(["eval", _eval(tmp_path, docker_base_image, 8), "--output", out])
    item = read_json(next(out.rglob("*.json")))["items"][0]
    for trial in [*item["with_arm"]["trials"], *item["without_arm"]["trials"]]:
        assert trial["status"] == "errored" and "codex-acp timed out after 8" in trial["error"], trial
    assert own_containers() == []


def test_codex_acp_runs_inside_the_container_and_its_file_comes_back(tmp_path: Path, docker_base_image: str, responses: ScriptedServer) -> None:
    srv = responses
    srv.add(Rule(reply=_model))
    out = tmp_path / "runs"
    code, stdout, stderr = run_cli(["eval", _eval(tmp_path, docker_base_image, 150), "--output", out])
    report = next(out.rglob("*.json"))
    item = read_json(report)["items"][0]
    (trial,) = item["with_arm"]["trials"]
    assert trial["status"] == "scored" and trial["score"] == 1.0, (trial, stderr)
    assert [(f["path"], f["status"]) for f in trial["files"]] == [("result.txt", "created")], trial["files"]
    assert any("cat /etc/debian_version" in json.dumps(s) for s in trial["trajectory"]), trial["trajectory"]
    outputs = json.dumps([response_outputs(r) for r in srv.responses_requests])
    assert "SKILLMARK" in outputs and "12." in outputs, outputs  # the skill read, and the image's Debian, seen by the model
    assert trial["skill_used"] is True and trial["skills_invoked"] == ["ev"], trial
    (base,) = item["without_arm"]["trials"]
    assert base["status"] == "scored" and base["score"] == 0.0, base
    assert code in (0, 1), stderr + stdout
    assert SECRET not in report.read_text() and SECRET not in stderr + stdout
    assert not [r for r in srv.responses_requests if HOMEMARK in json.dumps(r)]  # the real home's skills never loaded
    assert own_containers() == []


def _filler(req: dict[str, Any]) -> Any:
    """The agent's one shell call writes past the container's disk cap, then waits."""
    if "exec_command" not in response_tools(req):
        return "OK"
    if not response_outputs(req):
        return tool_reply(tool_call("exec_command", {"cmd": "head -c 40000000 /dev/zero > big.bin; sleep 60", "yield_time_ms": 90000}))
    return "done"


def test_a_disk_filler_in_a_container_errors_the_trial_naming_the_cap(tmp_path: Path, docker_base_image: str, responses: ScriptedServer) -> None:
    """The ACP session is one long ``docker exec -i``: the container is watched against its caps
    all the same, stopped past one, and the trial errors naming the cap (never failed)."""
    responses.add(Rule(reply=_filler))
    path = _eval(tmp_path, docker_base_image, 120)
    cfg = yaml.safe_load(path.read_text())
    cfg["environment"]["disk_mb"] = 10
    path.write_text(yaml.safe_dump(cfg))
    out = tmp_path / "runs"
    code, stdout, stderr = run_cli(["eval", path, "--output", out])
    item = read_json(next(out.rglob("*.json")))["items"][0]
    for trial in [*item["with_arm"]["trials"], *item["without_arm"]["trials"]]:
        assert trial["status"] == "errored" and "disk_mb" in trial["error"] and "limit" in trial["error"], trial
    assert own_containers() == []
