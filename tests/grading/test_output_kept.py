"""Nothing a command printed is lost: an agent or a script grader that prints, then leaves
a process of its own session (setsid) holding stdout, keeps what it printed and the
leftover is killed; a script grader that prints 300 MB before its score line is scored by
that line. Real processes, real pipes."""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path

import pytest

from agentsproof.core import procgroup
from agentsproof.grading.grade import TrialContext
from agentsproof.grading.script import ScriptGrader, grade_script
from agentsproof.model.items import EvalItem
from agentsproof.isolation import workspace as ws_mod
from agentsproof.targets.base import TrialInput
from agentsproof.targets.command.target import CommandTarget, CommandTargetSpec

PY = sys.executable


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read().rsplit(b")", 1)[1].split()[0] not in (b"Z", b"X")
    except OSError:
        return False


def _leaver(marker: str, first: str) -> str:
    """Prints ``first``, starts `setsid sleep` holding stdout (its pid in ./leftover.pid), exits."""
    return (
        "import subprocess, sys\n"
        f"sys.stdout.write({first!r} + '\\n'); sys.stdout.flush()\n"
        f"p = subprocess.Popen(['setsid', 'sleep', '{marker}'])\n"
        "open('leftover.pid', 'w').write(str(p.pid))\n"
    )


def _wait_pid_file(path: Path) -> int:
    deadline = time.monotonic() + 5
    while not (path.exists() and path.read_text().strip()):
        assert time.monotonic() < deadline, "no pid file"
        time.sleep(0.02)
    return int(path.read_text())


def _gone(pid: int) -> bool:
    deadline = time.monotonic() + 5
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    alive = _alive(pid)
    if alive:
        os.kill(pid, 9)  # never leave one behind, even when the check fails
    return not alive


def test_an_agent_that_leaves_a_setsid_child_holding_stdout_keeps_its_answer(tmp_path: Path) -> None:
    agent = tmp_path / "agent.py"
    agent.write_text(_leaver("876543", "THE ANSWER"))
    spec = CommandTargetSpec.model_validate({"type": "command", "command": [PY, str(agent)], "sandbox": False})
    target = CommandTarget("agent", spec, spec)
    spaces = ws_mod.Workspaces(keep_in=tmp_path / "kept")
    folder = spaces.create("it", "without", 0)
    item = EvalItem(id="it", name="it", kind="skill", source_path="S.md", system_prompt="S", task_name="t", prompt="p",
                    graders=[], trials=1, timeout=60.0, threshold=0.5)
    rec = asyncio.run(target.run(TrialInput(item=item, arm="without", index=0, system="S", prompt="p", timeout=60.0, workspace=folder)))
    pid = _wait_pid_file(folder / "leftover.pid")
    assert rec.answer == "THE ANSWER"
    assert _gone(pid), "the process holding stdout was left running"
    assert any("held its output; they were stopped" in e.text for e in rec.log)  # how soon: bench/timings.py group-setsid


@pytest.mark.asyncio
async def test_a_script_grader_that_prints_its_score_then_leaves_a_child_gets_that_score(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTSPROOF_UNCONFINED_PROGRAMS", "1")  # the host's process group (in the sandbox its PID namespace ends them)
    (tmp_path / "check.py").write_text(_leaver("876544", '{"score": 0.2}'))
    res = await grade_script(ScriptGrader(type="script", run=[PY, "check.py"]), TrialContext(answer="a", workspace=tmp_path))
    pid = _wait_pid_file(tmp_path / "leftover.pid")
    assert not res.errored and res.score == 0.2
    assert _gone(pid)


@pytest.mark.asyncio
async def test_a_script_grader_that_prints_300_mb_then_its_score_gets_its_score(tmp_path: Path) -> None:
    big = (
        "import sys\nblock = b'x' * (1 << 20)\n"
        "for i in range(300):\n    sys.stdout.buffer.write(block)\n"
        "sys.stdout.buffer.write(b'\\n{\"score\": 0.35, \"details\": \"last line\"}\\n')\n"
    )
    (tmp_path / "big.py").write_text(big)
    res = await grade_script(ScriptGrader(type="script", run=[PY, "big.py"], timeout=300), TrialContext(answer="a", workspace=tmp_path))
    assert not res.errored and res.score == 0.35 and res.reasoning == "last line"


@pytest.mark.asyncio
async def test_a_long_output_without_a_score_keeps_head_and_tail_as_evidence(tmp_path: Path) -> None:
    script = "import sys\nprint('HEAD')\nsys.stdout.write('y' * 3_000_000)\nprint()\nprint('the very end')\nsys.exit(1)\n"
    (tmp_path / "s.py").write_text(script)
    res = await grade_script(ScriptGrader(type="script", run=[PY, "s.py"]), TrialContext(answer="a", workspace=tmp_path))
    assert res.score == 0.0
    evidence = res.checks[0].evidence
    assert "the very end" in evidence and "were kept" in evidence and "3,000," in evidence


@pytest.mark.asyncio
async def test_run_group_keeps_head_and_tail_of_stdout(tmp_path: Path) -> None:
    cmd = [PY, "-c", "import sys; sys.stdout.write('A' * 1_500_000 + 'B' * 10 + 'TAIL')"]
    out = await procgroup.run_group(cmd, cwd=tmp_path, env=dict(os.environ), stdin_text=None, timeout=60, keep_tail=100)
    assert out.stdout_cut and len(out.stdout) == procgroup.MAX_OUTPUT_BYTES and out.stdout_bytes == 1_500_014
    assert out.stdout_tail.endswith(b"BBBBBBBBBBTAIL") and len(out.stdout_tail) == 100
