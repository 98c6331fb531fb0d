"""Flat memory at scale: finished items' trials leave memory for the journal
(agentsproof.executor.spill), the runner keeps only a few trial tasks alive, and reports
are written piece by piece (agentsproof.report.stream) with the same bytes as before."""

from __future__ import annotations

import asyncio
import gc
import json
from pathlib import Path

import pytest

from agentsproof.formats.eval_yaml.models import load_eval
from agentsproof.executor.journal import journal_path
from agentsproof.formats.eval_yaml.items import item_from_eval
from agentsproof.executor.session import RunPlan, run_items
from agentsproof.model.options import RunFlags
from agentsproof.executor.spill import JournalTrials
from agentsproof.report.render import render_html, render_json, render_markdown
from agentsproof.report.stream import json_chunks
from agentsproof.model.results import RunResult, TrialResult
from conftest import Rule, make_plugin, read_json, run_cli, simple_eval

GRADERS = [{"type": "deterministic", "checks": {"mustContain": ["hello"], "regexMatch": ["^h"]}}]


def _plugin(tmp_path: Path, items: int, trials: int) -> Path:
    return make_plugin(tmp_path, skills={f"s{i}": {"eval": simple_eval(GRADERS, trials=trials)} for i in range(items)})


def _flaky(byok_env) -> None:
    # mixed results: passes, failures, errored trials (a 400 is not retried), odd text
    byok_env.add(Rule(status=400, message="bad request <b>&", times=3), Rule(reply="hello <world> & \u00e9", times=20), Rule(reply="nope"))


def test_spilled_reports_are_the_reports_of_the_run_in_memory(byok_env, tmp_path, monkeypatch):
    monkeypatch.setenv("AGENTSPROOF_SPILL_AFTER", "0")  # every finished item spilled at once
    _flaky(byok_env)
    out = tmp_path / "runs"
    code, _, err = run_cli(["eval-all", _plugin(tmp_path, 3, 6), "--model", "m", "--output", out, "--abort-after", "0"])
    assert code == 0, err
    folder = out / "demo-plugin"
    text = (folder / "eval-all-summary.json").read_text(encoding="utf-8")
    run = RunResult.model_validate_json(text)  # every trial back in memory
    assert sum(len(i.with_arm.trials) + len(i.without_arm.trials) for i in run.items) == 36
    assert {t.status for i in run.items for t in i.with_arm.trials + i.without_arm.trials} == {"scored", "errored"}
    # byte for byte what the in-memory renderers make of the same run
    assert text == render_json(run)
    assert (folder / "eval-all-summary.md").read_text(encoding="utf-8") == render_markdown(run)
    assert (folder / "demo-plugin-eval.html").read_text(encoding="utf-8") == render_html(run)
    # and every trial is the journal's
    journal = [json.loads(line) for line in journal_path(folder / "eval-all-summary.json").read_text().splitlines()[1:]]
    assert len(journal) == 36
    by_key = {(r["item"], r["arm"], r["index"]): r["trial"] for r in journal}
    for item in run.items:
        for t in item.with_arm.trials + item.without_arm.trials:
            assert by_key[(item.id, t.arm, t.index)] == t.model_dump(mode="json")


def test_streamed_json_equals_one_dump(byok_env, tmp_path):
    _flaky(byok_env)
    out = tmp_path / "runs"
    run_cli(["eval-all", _plugin(tmp_path, 2, 3), "--model", "m", "--output", out, "--abort-after", "0"])
    run = RunResult.model_validate(read_json(out / "demo-plugin" / "eval-all-summary.json"))
    assert "".join(json_chunks(run)) == render_json(run) == run.model_dump_json(indent=2)
    empty = run.model_copy(update={"items": []})
    assert "".join(json_chunks(empty)) == render_json(empty)


def _live_trials() -> int:
    return sum(1 for o in gc.get_objects() if type(o) is TrialResult)


def test_memory_holds_about_one_item_and_few_tasks(byok_env, tmp_path, monkeypatch):
    monkeypatch.setenv("AGENTSPROOF_PROVIDER_TYPE", "openai")
    monkeypatch.setenv("AGENTSPROOF_SPILL_AFTER", "40")
    byok_env.add(Rule(reply="hello"))
    plugin = _plugin(tmp_path, 6, 20)  # 240 trials
    items = [item_from_eval(load_eval(p), trials=None, threshold=None) for p in sorted(plugin.rglob("eval.yaml"))]
    live: list[int] = []
    tasks: list[int] = []

    def on_trial(item, trial) -> None:
        tasks.append(len(asyncio.all_tasks()))

    def on_item(run) -> None:
        gc.collect()
        live.append(_live_trials())

    journal = tmp_path / "out" / "r.journal.jsonl"
    run = run_items(
        "eval-all", "demo-plugin", items,
        RunPlan(run=RunFlags(model="m", parallel=4, abort_after=0, cache=False), on_trial=on_trial, on_item=on_item, journal=journal),
    )  # fmt: skip
    assert len(live) == 6 and max(live) <= 40 + 2 * 40 + 8 * 20, live  # held + the item being finished + read-back cache
    assert max(tasks) < 60, max(tasks)  # running + started ahead + one per item + a few of the loop's; not 240
    spilled = [isinstance(a.trials, JournalTrials) for i in run.items for a in (i.with_arm, i.without_arm)]
    assert spilled[:4] == [True] * 4 and not all(spilled)  # the oldest items spilled, the last ones kept
    first = run.items[0].with_arm
    assert len(first.trials) == 20 and [t.index for t in first.trials] == list(range(20))
    assert first.scored == 20 and all(t.response == "hello" for t in first.trials)


def test_a_journal_that_cannot_be_written_keeps_trials_in_memory(byok_env, tmp_path, monkeypatch):
    monkeypatch.setenv("AGENTSPROOF_PROVIDER_TYPE", "openai")
    monkeypatch.setenv("AGENTSPROOF_SPILL_AFTER", "0")
    byok_env.add(Rule(reply="hello"))
    plugin = _plugin(tmp_path, 2, 3)
    items = [item_from_eval(load_eval(p), trials=None, threshold=None) for p in sorted(plugin.rglob("eval.yaml"))]
    journal = tmp_path / "out" / "r.journal.jsonl"
    import agentsproof.executor.journal as jr

    def full_disk(self, *a, **k):  # the journal's own failure path: it closes and the run goes on
        self.close()
        return None

    monkeypatch.setattr(jr.Journal, "append", full_disk)
    run = run_items("eval-all", "demo-plugin", items, RunPlan(run=RunFlags(model="m", cache=False), journal=journal))
    assert all(isinstance(a.trials, list) and len(a.trials) == 3 for i in run.items for a in (i.with_arm, i.without_arm))


@pytest.mark.parametrize("name, value", [("AGENTSPROOF_SPILL_AFTER", "lots"), ("AGENTSPROOF_HTML_LAZY_AFTER", "-1")])
def test_malformed_size_settings_are_one_line_before_any_call(byok_env, tmp_path, monkeypatch, name, value):
    monkeypatch.setenv(name, value)
    code, _, err = run_cli(["eval-all", _plugin(tmp_path, 1, 1), "--model", "m", "--output", tmp_path / "runs"])
    assert code == 30 and err.strip().splitlines()[-1].startswith(f"error: environment: {name}:")
    assert byok_env.requests == []
