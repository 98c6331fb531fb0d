"""The response cache, counted at the scripted server: an unchanged re-run makes no call,
a skill-only edit re-runs only the with-skill arm, errors are never stored, no secret is
written, and concurrent runs share one cache safely."""

from __future__ import annotations

import itertools
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import SECRET_KEY, Rule, make_plugin, read_json, run_cli, simple_eval
from openai_server import is_judge

BASELINE = "You are a helpful assistant."
GRADERS = [
    {"type": "deterministic", "checks": ["hello"]},
    {"type": "llm_rubric", "rubric": "Score 1 if the reply says 'hello'."},
]


@pytest.fixture
def cache_on(monkeypatch, tmp_path) -> Path:
    monkeypatch.delenv("AGENTSPROOF_NO_CACHE", raising=False)
    d = tmp_path / "cache"
    monkeypatch.setenv("AGENTSPROOF_CACHE_DIR", str(d))
    return d


def _eval(tmp_path: Path, trials: int = 3) -> Path:
    plugin = make_plugin(tmp_path, skills={"greeter": {"prompt": "Greet with hello.\n", "eval": simple_eval(GRADERS, trials=trials)}})
    return plugin / "skills" / "greeter" / "eval.yaml"


def _system(req) -> str:
    return next((m.get("content") or "" for m in req["messages"] if m.get("role") == "system"), "")


def _report(out: Path) -> dict:
    return read_json(out / "demo-plugin" / "greeter-eval.json")


def test_unchanged_rerun_makes_no_call_and_says_so(byok_env, cache_on, tmp_path):
    counter = itertools.count()
    byok_env.add(Rule(reply=lambda req: f"hello number {next(counter)}", judge=False))
    path = _eval(tmp_path)
    out = tmp_path / "runs"
    code, _, err = run_cli(["eval", path, "--model", "m", "--output", out])
    assert code == 0, err
    first = _report(out)
    calls = len(byok_env.requests)
    assert calls == 12  # 6 trials + 6 judge calls
    code, _, err = run_cli(["eval", path, "--model", "m", "--output", out])
    assert code == 0, err
    assert len(byok_env.requests) == calls, "an unchanged re-run makes 0 LLM calls"
    second = _report(out)
    assert second["settings"]["cache"]["cached_trials"] == 6
    trials = second["items"][0]["with_arm"]["trials"]
    assert all(t["cached"] for t in trials)
    # N trials stay N independent samples: three different replies, each served back to its own trial
    replies = [t["response"] for t in first["items"][0]["with_arm"]["trials"]]
    assert len(set(replies)) == 3 and [t["response"] for t in trials] == replies
    # --no-cache makes every call again
    code, _, err = run_cli(["eval", path, "--model", "m", "--output", out, "--no-cache"])
    assert code == 0 and len(byok_env.requests) == 2 * calls


def test_skill_only_edit_reruns_only_the_with_arm(byok_env, cache_on, tmp_path):
    # the answer follows the system prompt, so an edited skill gives new answers to judge
    byok_env.add(Rule(reply=lambda req: "hello: " + _system(req)[:40], judge=False))
    path = _eval(tmp_path)
    out = tmp_path / "runs"
    assert run_cli(["eval", path, "--model", "m", "--output", out])[0] == 0
    before = len(byok_env.requests)
    (path.parent / "SKILL.md").write_text("Greet with hello, warmly.\n")
    code, _, err = run_cli(["eval", path, "--model", "m", "--output", out])
    assert code == 0, err
    new = byok_env.requests[before:]
    trials = [r for r in new if not is_judge(r)]
    judges = [r for r in new if is_judge(r)]
    assert len(trials) == 3 and all("warmly" in _system(r) for r in trials), "baseline arm: 0 calls"
    assert len(judges) == 3, "only the with-arm's answers are judged again"
    assert not [r for r in new if _system(r) == BASELINE]
    rep = _report(out)
    assert all(t["cached"] for t in rep["items"][0]["without_arm"]["trials"])
    assert not any(t["cached"] for t in rep["items"][0]["with_arm"]["trials"])


def test_errored_calls_are_never_cached_and_no_secret_is_stored(byok_env, cache_on, tmp_path, monkeypatch):
    monkeypatch.setenv("AGENTSPROOF_MAX_RETRIES", "0")
    byok_env.add(Rule(status=500, judge=False, times=6), Rule(reply="hello", judge=False))
    path = _eval(tmp_path)
    out = tmp_path / "runs"
    run_cli(["eval", path, "--model", "m", "--output", out, "--abort-after", "0"])
    assert _report(out)["items"][0]["with_arm"]["errored"] == 3
    before = len([r for r in byok_env.requests if not is_judge(r)])
    code, _, err = run_cli(["eval", path, "--model", "m", "--output", out])
    assert code == 0, err
    assert len([r for r in byok_env.requests if not is_judge(r)]) - before == 6, "errored trials were not served from the cache"
    blob = b"".join(p.read_bytes() for p in cache_on.iterdir() if p.is_file())
    assert SECRET_KEY.encode() not in blob and b"Authorization" not in blob


def test_two_concurrent_runs_share_one_cache(byok_env, cache_on, tmp_path):
    byok_env.add(Rule(reply="hello", judge=False, delay=0.01))
    paths = []
    for n in range(2):
        plugin = make_plugin(tmp_path / f"p{n}", skills={f"s{k}": {"eval": simple_eval(GRADERS, trials=4)} for k in range(3)})
        paths.append(plugin)
    env = {**os.environ, "AGENTSPROOF_PROVIDER_TYPE": "openai", "AGENTSPROOF_PROVIDER_URL": byok_env.base_url, "AGENTSPROOF_PROVIDER_KEY": SECRET_KEY}
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "agentsproof", "eval-all", str(p), "--model", "m", "--parallel", "4", "--output", str(tmp_path / f"out{n}")],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL,
        )
        for n, p in enumerate(paths)
    ]
    for proc in procs:
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
    db = sqlite3.connect(cache_on / "responses.sqlite")
    assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    # the two plugins ask the same questions: each slot was stored once, whoever came first
    assert db.execute("SELECT COUNT(*) FROM responses").fetchone()[0] <= 2 * 24
    code, out, _ = run_cli(["cache", "info"])
    assert code == 0 and "entries:" in out
    code, out, _ = run_cli(["cache", "clear"])
    assert code == 0 and "cleared" in out
    assert db.execute("SELECT COUNT(*) FROM responses").fetchone()[0] == 0


def test_cache_is_bounded_and_evicts_least_recently_used(tmp_path):
    from agentsproof.llm.cache import ResponseCache

    cache = ResponseCache(tmp_path, max_bytes=20_000)
    for i in range(50):
        cache.put(f"k{i}", {"text": "x" * 1000, "i": i})
    assert cache.info()["bytes"] > 40_000
    cache.get("k0")  # the oldest entry, used just now: it survives
    assert cache.evict() > 0
    assert cache.info()["bytes"] <= 20_000
    assert cache.get("k0") is not None and cache.get("k1") is None and cache.get("k49") is not None
    for i in range(50, 200):  # eviction also runs by itself as entries are stored
        cache.put(f"k{i}", {"text": "x" * 1000, "i": i})
    assert cache.info()["bytes"] <= 20_000 + 64 * 1_100


def test_malformed_cache_size_is_one_line(byok_env, cache_on, tmp_path, monkeypatch):
    monkeypatch.setenv("AGENTSPROOF_CACHE_MAX_MB", "lots")
    code, _, err = run_cli(["eval", _eval(tmp_path), "--model", "m", "--output", tmp_path / "runs"])
    assert code == 30 and err.strip() == "error: environment: AGENTSPROOF_CACHE_MAX_MB: 'lots' is not a number"
    assert not byok_env.requests
