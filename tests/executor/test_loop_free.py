"""Nothing of a trial's file work holds the event loop: the workspace's seed copy, its
snapshots, the produced files' diff and flight record, its deletion, the files grader and a
Python-``re`` search all run in threads (``core.threads.to_thread``). A real eval of a command
agent through the CLI, with each of those steps watched for the thread it runs on (how
long the loop is held is measured in bench/loop_debug.py, not here). The phase timer
(``AGENTSPROOF_PHASES_FILE``, core/phases) records each step for bench/agent_overhead.py."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any, Callable

import pytest
import yaml

from conftest import make_plugin, read_json, run_cli

AGENT = "import pathlib; pathlib.Path('report.txt').write_text('done'); print('OK wrote it')"


def agent_eval(tmp_path: Path) -> tuple[Path, Path]:
    ev = {
        "version": "2",
        "execution": {"mode": "agent", "target": "mini"},
        "workspace": "seed/",
        "defaults": {"trials": 2, "timeout": 60, "threshold": 0.5},
        "task": {
            "name": "write",
            "instruction": "Write report.txt.",
            "graders": [
                {"type": "files", "exists": ["report.txt"], "regexMatch": {"report.txt": [r"(d)one|\1"]}},
                {"type": "deterministic", "checks": {"regexMatch": [r"(O)K|\1"]}},  # back-references: the Python-re helper
            ],
        },
    }
    d = make_plugin(tmp_path, skills={"writer": {"prompt": "Write report.txt.\n", "eval": ev}}) / "skills" / "writer"
    (d / "seed").mkdir()
    (d / "seed" / "data.csv").write_text("a,b\n1,2\n")
    (d / "targets.yaml").write_text(yaml.safe_dump({"mini": {"type": "command", "command": [sys.executable, "-c", AGENT, "{prompt}"], "sandbox": False}}))
    return d / "eval.yaml", tmp_path / "runs"


def _loop_running() -> bool:
    """Whether this thread is running an event loop (a step called from a coroutine; not a thread of ``to_thread``)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def watch(monkeypatch: pytest.MonkeyPatch, owner: Any, name: str, seen: list[tuple[str, bool]]) -> None:
    real: Callable[..., Any] = getattr(owner, name)

    def watched(*args: Any, **kwargs: Any) -> Any:
        seen.append((name, _loop_running()))
        return real(*args, **kwargs)

    monkeypatch.setattr(owner, name, watched)


def test_a_trials_file_work_runs_off_the_event_loop(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from agentsproof.grading import files, regex
    from agentsproof.isolation import workspace

    seen: list[tuple[str, bool]] = []
    for owner, name in ((workspace.Workspaces, "create"), (workspace.Workspaces, "finish"), (workspace, "snapshot"), (workspace, "changes"),
                        (files, "grade_files"), (regex._worker, "search")):  # fmt: skip
        watch(monkeypatch, owner, name, seen)
    path, out = agent_eval(tmp_path)
    code, _, err = run_cli(["eval", path, "--output", out])
    assert code == 0, err
    [item] = read_json(next(out.rglob("*.json")))["items"]
    assert all(t["score"] == 1.0 for t in item["with_arm"]["trials"] + item["without_arm"]["trials"]), item
    names = {n for n, _ in seen}
    assert names == {"create", "finish", "snapshot", "changes", "grade_files", "search"}, names
    on_loop = [n for n, held in seen if held]
    assert on_loop == [], f"ran on the event loop's thread: {on_loop}"


def test_the_phase_timer_records_every_step_of_each_trial(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    timings = tmp_path / "phases.jsonl"
    monkeypatch.setenv("AGENTSPROOF_PHASES_FILE", str(timings))
    path, out = agent_eval(tmp_path)
    code, _, err = run_cli(["eval", path, "--output", out])
    assert code == 0, err
    lines = [json.loads(line) for line in timings.read_text().splitlines()]
    assert sorted((r["arm"], r["index"]) for r in lines) == [("with", 0), ("with", 1), ("without", 0), ("without", 1)]
    for r in lines:
        assert r["target"] == "mini" and set(r["phases"]) == {"seed", "prepare", "snapshot", "target", "graders", "journal", "finish"}, r
        assert r["total"] >= sum(r["phases"].values()) - 1e-6 and all(v >= 0 for v in r["phases"].values())
