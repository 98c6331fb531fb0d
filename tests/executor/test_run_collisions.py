"""Runs don't collide: one run holds a lock on its report set (a second run on the same
reports is refused in one line naming the holder; the lock of a run that died is taken
over), and the trials it spilled to its journal are read back from the journal it wrote
even when that file is replaced meanwhile."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from conftest import make_plugin, run_cli, simple_eval

REPO = Path(__file__).resolve().parents[2]

SLOW_AGENT = r'''
import os, sys, time
flag = os.environ["STARTED_FLAG"]
open(flag, "a").close()
release = os.environ.get("RELEASE_FLAG")  # held until the test says so (a hang guard of 60 s)
deadline = time.monotonic() + 60
while release and not os.path.exists(release) and time.monotonic() < deadline:
    time.sleep(0.02)
print("hello")
'''


def _agent_eval(tmp_path: Path) -> Path:
    (tmp_path / "agent.py").write_text(SLOW_AGENT)
    root = make_plugin(tmp_path, skills={"greeter": {"eval": simple_eval(execution={"mode": "agent", "target": "slow"})}})
    folder = root / "skills" / "greeter"
    (folder / "targets.yaml").write_text(yaml.safe_dump({"slow": {
        "type": "command", "command": [sys.executable, str(tmp_path / "agent.py")], "sandbox": False,
    }}))
    return folder


def test_a_second_run_on_the_same_reports_is_refused_naming_the_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = _agent_eval(tmp_path)
    out = tmp_path / "runs"
    flag = tmp_path / "started"
    release = tmp_path / "release"
    env = {**os.environ, "PYTHONPATH": str(REPO), "STARTED_FLAG": str(flag), "RELEASE_FLAG": str(release)}
    first = subprocess.Popen([sys.executable, "-m", "agentsproof", "eval", str(folder), "--output", str(out), "--trials", "1"],
                             env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while not flag.exists():
            assert first.poll() is None, first.communicate()
            assert time.monotonic() < deadline, "the first run never started its agent"
            time.sleep(0.05)
        monkeypatch.setenv("STARTED_FLAG", str(tmp_path / "second"))
        code, _, stderr = run_cli(["eval", folder, "--output", out, "--trials", "1"])
        lines = [ln for ln in stderr.splitlines() if ln.strip()]
        assert code == 30 and len(lines) == 1, stderr
        assert "another run is writing these reports" in lines[0] and f"pid {first.pid}" in lines[0] and "started" in lines[0], lines
        assert not (tmp_path / "second").exists(), "the refused run ran no trial"
        release.touch()  # the first run's agent holds it busy until here
        _, err = first.communicate(timeout=120)
        assert first.returncode == 0, err
    finally:
        if first.poll() is None:
            first.kill()
            first.wait()
    report = json.loads(next(out.rglob("greeter-eval.json")).read_text())
    assert report["items"][0]["with_arm"]["trials"][0]["status"] == "scored"
    assert not list(out.rglob("*.lock")), "the lock goes with its run"


def test_the_lock_of_a_run_that_died_is_taken_over(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = _agent_eval(tmp_path)
    out = tmp_path / "runs"
    monkeypatch.setenv("STARTED_FLAG", str(tmp_path / "started"))
    # a run killed with SIGKILL leaves its lock file behind, held by no process
    dead = subprocess.run([sys.executable, "-c", "pass"])
    (out / "demo-plugin").mkdir(parents=True)
    (out / "demo-plugin" / "greeter-eval.lock").write_text(f"pid {dead.returncode + 999999} on somewhere, started 2020-01-01T00:00:00Z\n")
    code, _, stderr = run_cli(["eval", folder, "--output", out, "--trials", "1"])
    assert code == 0, stderr
    assert not (out / "demo-plugin" / "greeter-eval.lock").exists()


def test_a_run_that_fails_to_start_leaves_no_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = _agent_eval(tmp_path)
    (folder / "targets.yaml").write_text(yaml.safe_dump({"slow": {"type": "command", "command": ["${NOT_SET_ANYWHERE}"], "sandbox": False}}))
    monkeypatch.delenv("NOT_SET_ANYWHERE", raising=False)
    code, _, stderr = run_cli(["eval", folder, "--output", tmp_path / "runs"])
    assert code == 30 and "NOT_SET_ANYWHERE" in stderr
    assert not (tmp_path / "runs").exists()


def test_spilled_trials_are_read_from_the_journal_the_run_wrote_even_when_it_is_replaced(tmp_path: Path) -> None:
    from agentsproof.executor import journal as jr
    from agentsproof.executor.spill import JournalTrials, Spiller
    from agentsproof.model.results import ArmResult, TrialResult

    path = tmp_path / "r.journal.jsonl"
    book = jr.start(path, {"version": jr.JOURNAL_VERSION})
    spiller = Spiller(path, 0)
    trials = [TrialResult(index=i, arm="with", status="scored", score=1.0, passed=True, response=f"answer {i}") for i in range(3)]
    for t in trials:
        spiller.note("it", "with", t.index, book.append("it", "with", t.index, t))
    arm = ArmResult(arm="with", system_prompt_kind="skill", trials=trials)
    spiller.item_done("it", [arm, ArmResult(arm="without", system_prompt_kind="baseline", trials=[])])
    assert isinstance(arm.trials, JournalTrials)
    book.close()
    # a second run replaces the journal (a new file renamed over it)
    other = tmp_path / "other.jsonl"
    other.write_text('{"type": "header"}\n' + "garbage line\n" * 50)
    os.replace(other, path)
    assert [t.response for t in arm.trials] == ["answer 0", "answer 1", "answer 2"]


def test_a_journal_changed_in_place_under_a_run_is_one_line_not_an_internal_error(tmp_path: Path) -> None:
    from agentsproof.core.errors import OutputError
    from agentsproof.executor import journal as jr
    from agentsproof.executor.spill import JournalTrials
    from agentsproof.model.results import TrialResult

    path = tmp_path / "r.journal.jsonl"
    book = jr.start(path, {"version": jr.JOURNAL_VERSION})
    span = book.append("it", "with", 0, TrialResult(index=0, arm="with", status="scored", score=1.0, passed=True))
    book.close()
    spilled = JournalTrials(path, [span])
    with open(path, "r+b") as fh:
        fh.seek(span[0])
        fh.write(b"x" * span[1])
    with pytest.raises(OutputError, match="changed while the run read it"):
        list(spilled)
