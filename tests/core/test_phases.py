"""core/phases: off unless AGENTSPROOF_PHASES_FILE names a file; a trial's phases add up,
also when timed in a thread of ``core.threads.to_thread``, and two trials' lines stay apart."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from agentsproof.core import phases
from agentsproof.core.threads import to_thread


def test_off_it_records_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(phases.ENV, raising=False)
    started = phases.begin(item="i")
    with phases.phase("seed"):
        pass
    phases.end(started)
    assert started is None and list(tmp_path.iterdir()) == []


async def test_each_trial_gets_its_line_with_its_threads_phases(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "phases.jsonl"
    monkeypatch.setenv(phases.ENV, str(out))

    def in_thread() -> None:
        with phases.phase("seed"):
            pass

    async def trial(index: int) -> None:
        started = phases.begin(item="i", index=index)
        await to_thread(in_thread)
        for _ in range(2):  # one phase entered per turn: summed
            with phases.phase("agent"):
                await asyncio.sleep(0)
        phases.end(started)

    await asyncio.gather(trial(0), trial(1))
    lines = sorted((json.loads(line) for line in out.read_text().splitlines()), key=lambda r: r["index"])
    assert [r["index"] for r in lines] == [0, 1]
    for r in lines:
        assert set(r["phases"]) == {"seed", "agent"} and r["total"] >= r["phases"]["agent"]
    assert phases._current.get() is None
