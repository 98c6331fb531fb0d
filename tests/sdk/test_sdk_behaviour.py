"""Our SDK against a recording loopback server: never blocks, never raises, keeps order,
serialises anything, traces sync/async/decorated calls."""

from __future__ import annotations

import asyncio
import dataclasses
import datetime as dt
import json
import logging
import threading

import pytest
from pydantic import BaseModel

from sdk_recorder import RecordingServer

from agentsproof import AgentsProof

KEY = "ap-behaviour-secret"


@pytest.fixture
def rec():
    srv = RecordingServer().start()
    yield srv
    srv.stop()


@pytest.fixture
def ap(rec, tmp_path):
    return AgentsProof(api_key=KEY, base_url=rec.base_url, spool_dir=tmp_path / "spool")


def steps(rec):
    return [r.body for r in rec.of("POST", r"/api/runs/[^/]+/steps")]


def test_tracing_never_waits_for_the_server(rec, ap):
    rec.gate = threading.Event()  # the server holds every reply until the agent is done tracing
    run = ap.start_run(project_slug="p", input="q")
    for i in range(12):
        run.trace("tool_call", f"t{i}", lambda: i)
    assert rec.answered == 0  # 13 requests queued, none waited for (a reply would take the gate's minute)
    rec.gate.set()
    res = run.complete("done")
    assert res["publicUrl"].endswith("/r/run-1")
    assert [s["step_index"] for s in steps(rec)] == list(range(12))  # in order, all before complete
    assert rec.requests[-1].path == "/api/runs/run-1/complete"


def test_a_full_queue_drops_nothing(rec, tmp_path):
    rec.delay = 0.05
    ap = AgentsProof(api_key=KEY, base_url=rec.base_url, queue_size=2, spool_dir=tmp_path)
    run = ap.start_run(project_slug="p", input="q")
    for i in range(10):
        run.log_step({"type": "tool_call", "name": f"s{i}"})
    assert ap._worker.submit(lambda: None) is False  # full: refused, not blocked
    run.complete(None)
    assert sorted({s["step_index"] for s in steps(rec)}) == list(range(10))  # the rest sent by complete


class Model(BaseModel):
    name: str
    when: dt.datetime


@dataclasses.dataclass
class Hit:
    url: str
    tags: set


class Opaque:
    __slots__ = ()

    def __repr__(self) -> str:
        return "<Opaque>"


def test_objects_that_are_not_json_are_serialised(rec, ap):
    from openai.types.chat import ChatCompletion

    completion = ChatCompletion.model_validate({
        "id": "c1", "object": "chat.completion", "created": 1, "model": "gpt-4o-2024-08-06",
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "hi"}}],
        "usage": {"prompt_tokens": 1000, "completion_tokens": 500, "total_tokens": 1500},
    })
    when = dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.timezone.utc)
    ap2 = AgentsProof(api_key=KEY, base_url=rec.base_url, prices={"gpt-4o": (2.5, 10.0)})
    run = ap2.start_run(project_slug="p", input=Model(name="in", when=when), metadata={"b": b"\xff\x00", "s": {3, 1}})
    run.trace("llm_call", "gpt-4o", lambda: completion, input=[Hit("u", {"b", "a"})])
    cyclic: list = []
    cyclic.append(cyclic)
    run.log_step({"type": "tool_result", "name": "misc", "output": {"d": when.date(), "o": Opaque(), "c": cyclic, "f": float("nan")}})
    run.complete(Model(name="out", when=when))
    create = rec.of("POST", "/api/runs")[0].body
    assert create["input"] == {"name": "in", "when": "2026-01-02T03:04:05Z"}
    assert create["metadata"] == {"b": {"base64": "/wA="}, "s": [1, 3]}
    llm, misc = steps(rec)
    assert llm["input"] == [{"url": "u", "tags": ["a", "b"]}]
    assert llm["output"]["choices"][0]["message"]["content"] == "hi"
    assert llm["token_count"] == 1500
    assert llm["cost_usd"] == pytest.approx((1000 * 2.5 + 500 * 10.0) / 1e6)  # dated model → "gpt-4o" price
    assert misc["output"]["d"] == "2026-01-02" and misc["output"]["o"] == "<Opaque>" and misc["output"]["f"] == "nan"
    assert misc["output"]["c"] == ["<cycle: list>"]
    assert rec.of("POST", r"/api/runs/run-1/complete")[0].body == {"output": {"name": "out", "when": "2026-01-02T03:04:05Z"}}


def test_usage_priority_extract_then_sniffing(rec, ap):
    run = ap.start_run(project_slug="p", input="q")
    anthropic = {"usage": {"input_tokens": 10, "output_tokens": 5}}
    run.trace("llm_call", "claude", lambda: anthropic)
    run.trace("llm_call", "own", lambda: {"n": 9}, extract=lambda out: {"token_count": out["n"], "cost_usd": 0.5})
    run.trace("llm_call", "broken", lambda: anthropic, extract=lambda out: 1 / 0)  # falls back to sniffing
    run.trace("llm_call", "openrouter", lambda: {"usage": {"total_tokens": 8, "cost": 0.002}})
    run.trace("llm_call", "none", lambda: "plain text")
    run.complete(None)
    got = {s["name"]: (s.get("token_count"), s.get("cost_usd")) for s in steps(rec)}
    assert got == {"claude": (15, None), "own": (9, 0.5), "broken": (15, None), "openrouter": (8, 0.002), "none": (None, None)}
    assert "token_count" not in steps(rec)[-1]  # omitted, not null, when unknown


def test_errors_are_logged_as_steps_and_reraised(rec, ap):
    run = ap.start_run(project_slug="p", input="q")
    with pytest.raises(ZeroDivisionError):
        run.trace("tool_call", "div", lambda: 1 / 0, input=1)
    run.complete(None)
    (step,) = steps(rec)
    assert step["output"] == {"error": "division by zero", "error_type": "ZeroDivisionError"}
    assert step["latency_ms"] >= 0


async def test_async_tracing_awaits_lambdas_returning_coroutines(rec, ap):
    run = ap.start_run(project_slug="p", input="q")

    async def call(x):
        await asyncio.sleep(0.01)
        return {"x": x}

    got = await run.atrace("llm_call", "lam", lambda: call(1))  # the reference's own example shape
    got2 = await run.atrace("tool_call", "sync", lambda: {"x": 2})

    @run.atrace("tool_call", "deco")
    async def decorated(a, b=0):
        return a + b

    assert (got, got2, await decorated(2, b=3)) == ({"x": 1}, {"x": 2}, 5)
    res = await run.acomplete("ok")
    assert res["publicUrl"]
    s = steps(rec)
    assert [(x["name"], x["output"]) for x in s] == [("lam", {"x": 1}), ("sync", {"x": 2}), ("deco", 5)]
    assert s[0]["latency_ms"] >= 10
    assert s[2]["input"] == {"args": [2], "kwargs": {"b": 3}}


def test_sync_decorator(rec, ap):
    run = ap.start_run(project_slug="p", input="q")

    @run.trace("tool_call", "search")
    def search(q):
        return [q]

    assert search("x") == ["x"]
    run.complete(None)
    assert steps(rec)[0]["input"] == "x" and steps(rec)[0]["output"] == ["x"]


def test_complete_twice_returns_the_same_and_sends_once(rec, ap):
    run = ap.start_run(project_slug="p", input="q")
    assert run.complete(1) == run.complete(2)
    assert len(rec.of("POST", r"/api/runs/[^/]+/complete")) == 1


def test_wrong_key_never_raises_and_never_logs_the_key(rec, tmp_path, caplog):
    rec.fail[("POST", r"/api/runs")] = 401
    ap = AgentsProof(api_key=KEY, base_url=rec.base_url, spool_dir=tmp_path)
    with caplog.at_level(logging.DEBUG, logger="agentsproof.sdk"):
        run = ap.start_run(project_slug="p", input="q")
        for _ in range(5):
            run.log_step({"type": "tool_call", "name": "s"})
        res = run.complete("out")
    assert res["publicUrl"] is None and "401" in res["error"]
    assert len(rec.of("POST", "/api/runs")) <= 2  # a refused key is not retried for every step
    assert "401" in caplog.text and KEY not in caplog.text
    spooled = list(tmp_path.glob("*.json"))
    assert len(spooled) == 1 and KEY not in spooled[0].read_text()  # kept for `agentsproof sync` with the right key
    assert KEY not in repr(ap)


def test_a_run_the_server_refuses_is_spooled_never_dropped(rec, tmp_path):
    rec.fail[("POST", r"/api/runs")] = 404  # e.g. an unknown golden_id
    ap = AgentsProof(api_key=KEY, base_url=rec.base_url, spool_dir=tmp_path)
    run = ap.start_run(project_slug="p", golden_id="nope", client_run_id="refused-run")
    run.log_step({"type": "tool_call", "name": "s"})
    res = run.complete("out")
    assert res["publicUrl"] is None and "404" in res["error"]
    assert len(rec.of("POST", r"/api/runs")) == 1  # refused for good: not sent again as is
    assert rec.of("POST", r"/api/runs/.*") == [] and res["spooled"] == str(tmp_path / "refused-run.json")
    record = json.loads((tmp_path / "refused-run.json").read_text())
    assert record["completed"] is True and record["output"] == "out" and [s["name"] for s in record["steps"]] == ["s"]


def test_a_step_the_server_refuses_is_spooled_and_the_run_still_completes(rec, tmp_path):
    rec.fail[("POST", r"/api/runs/run-1/steps")] = 422
    ap = AgentsProof(api_key=KEY, base_url=rec.base_url, spool_dir=tmp_path)
    run = ap.start_run(project_slug="p", client_run_id="step-refused")
    run.log_step({"type": "tool_call", "name": "s", "output": "kept"})
    res = run.complete("out")
    assert res["publicUrl"] and res["spooled"] == str(tmp_path / "step-refused.json")
    record = json.loads((tmp_path / "step-refused.json").read_text())
    assert record["remoteRunId"] == "run-1" and record["completed"] is False
    assert [s["output"] for s in record["steps"]] == ["kept"] and "422" in record["reason"]


def test_base_url_from_env_then_default(monkeypatch, rec, tmp_path):
    monkeypatch.setenv("AGENTSPROOF_SPOOL_DIR", str(tmp_path))
    monkeypatch.setenv("AGENTSPROOF_BASE_URL", rec.base_url + "/")
    monkeypatch.setenv("AGENTSPROOF_API_KEY", KEY)
    ap = AgentsProof()
    assert ap.base_url == rec.base_url
    ap.start_run(project_slug="p", input=1).complete(None)
    assert rec.requests[0].headers["x-api-key"] == KEY
    monkeypatch.delenv("AGENTSPROOF_BASE_URL")
    assert AgentsProof(api_key="k").base_url == "http://127.0.0.1:8787/api"
    assert AgentsProof(api_key="k", base_url="http://h/api").base_url == "http://h/api"


def test_proof_suite_flow_with_an_async_handler(rec, ap):
    rec.cases = [{"id": "g1", "name": "one", "input": "a", "goal": "G", "expectedOutput": "A"},
                 {"id": "g2", "name": "two", "input": "b"}]

    async def handler(input, ctx):
        assert ctx.golden_case["id"] in ("g1", "g2")
        run = ctx.start_run(label="custom")
        await run.atrace("tool_call", "t", lambda: input)
        if input == "b":
            raise RuntimeError("bad b")
        return {"answer": input}  # not completed by the handler: the SDK completes it

    res = asyncio.run(ap.arun_proof_suite(project_slug="p", suite_slug="core suite", handler=handler))
    assert res["publicUrl"] == "http://127.0.0.1/p/proof-1"
    assert rec.of("GET", r"/api/proof-suites/core%20suite/cases")[0].query == {"projectSlug": ["p"]}
    creates = [r.body for r in rec.of("POST", "/api/runs")]
    assert creates[0]["label"] == "custom" and creates[0]["goal"] == "G" and creates[0]["expectedOutput"] == "A"
    assert creates[0]["metadata"] == {"goldenId": "g1", "proofRunId": "proof-1"}
    results = [r.body for r in rec.of("POST", r"/api/proof-runs/proof-1/case-results")]
    assert results == [
        {"goldenId": "g1", "runId": "run-1", "score": None, "passed": True, "failureSummary": None},
        {"goldenId": "g2", "runId": "run-2", "score": None, "passed": False, "failureSummary": "bad b"},
    ]
    completes = [r.body for r in rec.of("POST", r"/api/runs/[^/]+/complete")]
    assert completes == [{"output": {"answer": "a"}}, {"output": {"error": "bad b"}}]


def test_proof_suite_that_cannot_load_raises(rec, ap):
    from agentsproof import ProofSuiteError

    rec.fail[("GET", r"/api/proof-suites/.*")] = 404
    with pytest.raises(ProofSuiteError, match="404"):
        ap.run_proof_suite(project_slug="p", suite_slug="missing", handler=lambda i, c: None)
