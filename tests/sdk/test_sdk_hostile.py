"""The Python SDK with strings that do not encode and a server that never answers: a
surrogate-escaped string is sent as valid text (or spooled, never dropped), and
``complete()`` returns within its one timeout, the run spooled."""

from __future__ import annotations

import json
import os
import socket
import sys
import threading
from pathlib import Path

import httpx
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "server"))
from sdk_recorder import HungServer  # noqa: E402
from serverkit import running_server  # noqa: E402

from agentsproof import AgentsProof  # noqa: E402
from agentsproof.sdk.jsonable import text  # noqa: E402

ESCAPED = os.fsdecode(b"caf\xc3\xa9-\xff")  # "café-\udcff": a file name read with surrogateescape


def test_text_makes_any_string_valid_unicode():
    assert text(ESCAPED) == "café-\ufffd"
    assert text("a\ud800b") == "a\ufffdb"
    assert text("\udcff") == "\ufffd"
    assert text("plain") == "plain"
    for s in (ESCAPED, "a\ud800b", "\udcff\udc80", "\ud83d"):
        text(s).encode("utf-8")  # never raises


def test_surrogate_escaped_strings_reach_the_server(tmp_path):
    with running_server(tmp_path / "srv") as srv:
        key = srv.create_key("alpha")
        ap = AgentsProof(api_key=key, base_url=srv.base_url, spool_dir=tmp_path / "spool")
        run = ap.start_run(project_slug="alpha", input=ESCAPED, label="\udcff label", metadata={"path": ESCAPED, "\udcfe": [ESCAPED]})
        run.log_step(type="tool_call", name="read \udcff", input={"file": ESCAPED}, output=b"\xff\xfe".decode("utf-8", "surrogateescape"),
                     latency_ms=float("nan"))
        res = run.complete({"answer": ESCAPED, "score": float("inf")})
        assert res.get("publicUrl"), res
        assert not list((tmp_path / "spool").glob("*.json")) if (tmp_path / "spool").exists() else True
        got = httpx.get(f"{srv.base_url}/runs/{res['runId']}", headers={"x-api-key": key}, timeout=30).json()
        assert got["input"] == "café-\ufffd" and got["label"] == "\ufffd label"
        fit = got["metadata"].pop("agentsproof_fit")
        assert got["metadata"] == {"path": "café-\ufffd", "\ufffd": ["café-\ufffd"]}
        assert sorted(fit) == [f"{k}: NUL or lone surrogates replaced by U+FFFD" for k in ("input", "label", "metadata")]
        assert got["steps"][0]["input"] == {"file": "café-\ufffd"} and got["steps"][0]["name"] == "read \ufffd"
        assert got["output"]["answer"] == "café-\ufffd" and got["status"] == "completed"


def test_surrogate_escaped_run_is_spooled_when_the_server_is_down(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{s.getsockname()[1]}/api"
    ap = AgentsProof(api_key="k", base_url=dead, spool_dir=tmp_path)
    run = ap.start_run(project_slug="alpha", input=ESCAPED, label="\udcff")
    run.log_step(type="llm_call", name="m", output=ESCAPED)
    res = run.complete(ESCAPED)
    assert res["spooled"], res
    rec = json.loads(Path(res["spooled"]).read_text(encoding="utf-8"))
    assert rec["run"]["input"] == "café-\ufffd" and rec["steps"][0]["output"]["output"] == "café-\ufffd" and rec["output"]["output"] == "café-\ufffd"
    assert rec["output"]["agentsproof_fit"] == ["output: NUL or lone surrogates replaced by U+FFFD"]


def test_complete_never_blocks_longer_than_its_timeout_on_a_hung_server(tmp_path):
    hung = HungServer()
    try:
        ap = AgentsProof(api_key="k", base_url=hung.url, timeout=2.0, spool_dir=tmp_path)
        run = ap.start_run(project_slug="alpha", input="q", client_run_id="hung-run")
        for i in range(5):
            run.log_step(type="llm_call", name=f"s{i}")
        done: list[dict] = []
        closer = threading.Thread(target=lambda: done.append(run.complete("out")), daemon=True)
        closer.start()
        closer.join(60)  # a hang guard, not a speed target (that is bench/timings.py: sdk-hung-server)
        assert done, "complete() never returned from a server that never answers"
        res = done[0]
        assert res["publicUrl"] is None and res["spooled"] == str(tmp_path / "hung-run.json"), res
        rec = json.loads((tmp_path / "hung-run.json").read_text())
        assert [s["name"] for s in rec["steps"]] == [f"s{i}" for i in range(5)] and rec["completed"] is True
    finally:
        hung.close()


def test_a_server_that_takes_the_connection_but_does_not_answer_is_slow_not_unreachable(tmp_path, caplog):
    """A step posted to a server that accepts and never answers warns that the server is slow;
    a port nobody listens on warns that it is unreachable."""
    from agentsproof.sdk.transport import TooSlow, Transport, Unreachable

    hung = HungServer()
    try:
        with pytest.raises(TooSlow, match="no answer within 1s"):
            Transport(hung.url, "k", timeout=1.0).request("GET", "/health")
        ap = AgentsProof(api_key="k", base_url=hung.url, timeout=1.0, spool_dir=tmp_path)
        run = ap.start_run(project_slug="alpha", input="q")
        run.log_step(type="llm_call", name="s")
        ap.flush(10)
        origin = hung.url.split("/api")[0]  # this test's server: other tests' background clients may log meanwhile
        warned = [r.getMessage() for r in caplog.records if r.name.startswith("agentsproof") and origin in r.getMessage()]
        assert any("is slow (no answer within 1s)" in w for w in warned) and not any("unreachable" in w for w in warned), warned
    finally:
        hung.close()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{s.getsockname()[1]}/api"
    with pytest.raises(Unreachable) as err:
        Transport(dead, "k", timeout=1.0).request("GET", "/health")
    assert not isinstance(err.value, TooSlow)
