"""The trial slot, passed explicitly with every call made for a trial (ChatRequest.slot):
the response cache keys by it, so N trials of one prompt, and the judge calls each trial
makes, stay N samples even when their texts are identical; a re-run serves each back."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import Rule, make_plugin, read_json, run_cli, simple_eval
from openai_server import is_judge

GRADERS = [{"type": "llm_rubric", "rubric": "Score 1 if the reply says 'hello'."}]


@pytest.fixture
def cache_on(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    monkeypatch.delenv("AGENTSPROOF_NO_CACHE", raising=False)
    d = tmp_path / "cache"
    monkeypatch.setenv("AGENTSPROOF_CACHE_DIR", str(d))
    return d


def test_identical_trials_and_their_judge_calls_each_have_their_own_slot(byok_env, cache_on, tmp_path):
    byok_env.add(Rule(reply="hello", judge=False))  # every trial gets the same reply, so every judge call reads the same
    plugin = make_plugin(tmp_path, skills={"greeter": {"prompt": "Greet with hello.\n", "eval": simple_eval(GRADERS, trials=3)}})
    path = plugin / "skills" / "greeter" / "eval.yaml"
    out = tmp_path / "runs"
    code, _, err = run_cli(["eval", path, "--model", "m", "--parallel", "1", "--output", out])
    assert code == 0, err
    trials = [r for r in byok_env.requests if not is_judge(r)]
    judges = [r for r in byok_env.requests if is_judge(r)]
    assert len(trials) == 6 and len(judges) == 6, "a call without its trial's slot would be served another trial's reply"
    code, _, err = run_cli(["eval", path, "--model", "m", "--parallel", "1", "--output", out])
    assert code == 0, err
    assert len(byok_env.requests) == 12, "the re-run is served from the cache, slot by slot"
    report = read_json(out / "demo-plugin" / "greeter-eval.json")
    assert report["settings"]["cache"]["cached_trials"] == 6
