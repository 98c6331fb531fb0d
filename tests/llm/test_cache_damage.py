"""A damaged response cache is a miss, never an errored trial: rows of the wrong shape
(written by hand, by another version, by a hostile neighbour) and a cache path that is a
file, counted at the scripted server through the CLI."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from conftest import Rule, make_plugin, read_json, run_cli, simple_eval


@pytest.fixture
def cache_on(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    monkeypatch.delenv("AGENTSPROOF_NO_CACHE", raising=False)
    d = tmp_path / "cache"
    monkeypatch.setenv("AGENTSPROOF_CACHE_DIR", str(d))
    return d


def _eval(tmp_path: Path) -> Path:
    plugin = make_plugin(tmp_path, skills={"greeter": {"prompt": "Greet with hello.\n", "eval": simple_eval(trials=2)}})
    return plugin / "skills" / "greeter" / "eval.yaml"


@pytest.mark.parametrize("damage", [
    {"cost_usd": [1, 2]}, {"tool_calls": "xyz"}, {"text": 5}, {"usage": {"prompt_tokens": "many"}},
    {"latency_s": "slow"}, {"tool_calls": ["not an object"]}, {"cost_usd": -1.0},
])
def test_a_cache_row_of_the_wrong_shape_is_a_miss(byok_env, cache_on: Path, tmp_path: Path, damage: dict) -> None:
    byok_env.add(Rule(reply="hello", judge=False))
    path, out = _eval(tmp_path), tmp_path / "runs"
    assert run_cli(["eval", path, "--model", "m", "--output", out])[0] == 0
    calls = len(byok_env.requests)
    with sqlite3.connect(cache_on / "responses.sqlite") as db:
        rows = db.execute("SELECT key, value FROM responses").fetchall()
        assert rows
        for key, value in rows:
            db.execute("UPDATE responses SET value = ? WHERE key = ?", (json.dumps({**json.loads(value), **damage}), key))
    code, _, err = run_cli(["eval", path, "--model", "m", "--output", out])
    assert code == 0 and "Traceback" not in err and "internal error" not in err, err
    assert len(byok_env.requests) == 2 * calls, "every damaged row was a miss: the calls were made again"
    trials = read_json(out / "demo-plugin" / "greeter-eval.json")["items"][0]["with_arm"]["trials"]
    assert all(t["status"] == "scored" and not t["cached"] for t in trials), trials


def test_a_cache_row_that_is_not_an_object_is_a_miss(byok_env, cache_on: Path, tmp_path: Path) -> None:
    byok_env.add(Rule(reply="hello", judge=False))
    path, out = _eval(tmp_path), tmp_path / "runs"
    assert run_cli(["eval", path, "--model", "m", "--output", out])[0] == 0
    with sqlite3.connect(cache_on / "responses.sqlite") as db:
        db.execute("UPDATE responses SET value = '[1, 2, 3]'")
    code, _, err = run_cli(["eval", path, "--model", "m", "--output", out])
    assert code == 0, err
    assert all(t["status"] == "scored" for t in read_json(out / "demo-plugin" / "greeter-eval.json")["items"][0]["with_arm"]["trials"])


def test_a_cache_path_that_is_a_file_is_a_miss_not_every_trial_errored(byok_env, cache_on: Path, tmp_path: Path) -> None:
    byok_env.add(Rule(reply="hello", judge=False))
    cache_on.write_text("not a folder")
    path, out = _eval(tmp_path), tmp_path / "runs"
    code, _, err = run_cli(["eval", path, "--model", "m", "--output", out])
    assert code == 0 and "Traceback" not in err, err
    report = read_json(out / "demo-plugin" / "greeter-eval.json")
    assert all(t["status"] == "scored" for arm in ("with_arm", "without_arm") for t in report["items"][0][arm]["trials"])
    assert cache_on.read_text() == "not a folder", "the file is left as it was"
