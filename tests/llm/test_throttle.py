"""AIMD concurrency: halves on 429 (once per generation), grows back on success, and
beats fixed concurrency against a server that rate-limits above a concurrency cap."""

from __future__ import annotations

import asyncio

from agentsproof.llm.throttle import AdaptiveLimiter
from conftest import SECRET_KEY, ScriptedServer, make_plugin, read_json, run_cli, simple_eval


async def test_limiter_halves_once_per_generation_and_grows_back():
    lim = AdaptiveLimiter(16)
    gens = [await lim.acquire() for _ in range(16)]
    assert lim.in_flight == 16
    for g in gens[:10]:  # ten 429s from the same burst halve the limit once
        lim.release(g, rate_limited=True)
    assert lim.limit == 8 and lim.decreases == 1
    g = await lim.acquire()
    lim.release(g, rate_limited=True)  # a call started after the decrease: halves again
    assert lim.limit == 4
    for g in gens[10:]:
        lim.release(g, rate_limited=False)
    for _ in range(200):
        g = await lim.acquire()
        lim.release(g, rate_limited=False)
    assert lim.limit == 16  # additive increase, capped at the maximum


async def test_limiter_blocks_above_the_limit_and_wakes_in_order():
    lim = AdaptiveLimiter(2)
    a, b = await lim.acquire(), await lim.acquire()
    waiter = asyncio.ensure_future(lim.acquire())
    await asyncio.sleep(0.01)
    assert not waiter.done()
    lim.release(a, rate_limited=False)
    await asyncio.sleep(0.01)
    assert waiter.done() and lim.in_flight == 2
    cancelled = asyncio.ensure_future(lim.acquire())
    await asyncio.sleep(0.01)
    cancelled.cancel()
    await asyncio.sleep(0.01)
    lim.release(b, rate_limited=False)
    lim.release(waiter.result(), rate_limited=False)
    assert lim.in_flight == 0


def _errored_trials(tmp_path, monkeypatch, throttle: str) -> tuple[int, dict]:
    with ScriptedServer(latency=0.03, concurrency_limit=3) as srv:
        monkeypatch.setenv("AGENTSPROOF_PROVIDER_TYPE", "openai")
        monkeypatch.setenv("AGENTSPROOF_PROVIDER_URL", srv.base_url)
        monkeypatch.setenv("AGENTSPROOF_PROVIDER_KEY", SECRET_KEY)
        monkeypatch.setenv("AGENTSPROOF_MAX_RETRIES", "2")
        monkeypatch.setenv("AGENTSPROOF_THROTTLE", throttle)
        plugin = make_plugin(tmp_path / throttle, skills={f"s{i}": {"eval": simple_eval(trials=6)} for i in range(3)})
        out = tmp_path / throttle / "runs"
        run_cli(["eval-all", plugin, "--model", "m", "--parallel", "16", "--output", out, "--abort-after", "0"])
        report = read_json(out / "demo-plugin" / "eval-all-summary.json")
        errored = sum(it["with_arm"]["errored"] + it["without_arm"]["errored"] for it in report["items"])
        return errored, report


def test_aimd_beats_fixed_concurrency_under_a_concurrency_cap(tmp_path, monkeypatch):
    fixed, _ = _errored_trials(tmp_path, monkeypatch, "off")
    adaptive, report = _errored_trials(tmp_path, monkeypatch, "on")
    assert fixed > 0, "the scenario must hurt fixed concurrency"
    assert adaptive < fixed, (adaptive, fixed)
    throttle = report["settings"]["throttle"]
    assert throttle["max"] == 16 and throttle["lowest"] <= 4 and throttle["decreases"] >= 2
