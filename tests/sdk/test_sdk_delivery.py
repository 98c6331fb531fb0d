"""The Python SDK against a real server that goes away and comes back: complete() retries
with back-off within its budget (runs are delivered, not spooled, once the server is back),
a run spooled earlier is re-sent by the next client for that server, in the background, and
every create of a run carries the same clientRunId, retries included."""

from __future__ import annotations

import json
import time

from sdk_recorder import RecordingServer
from sdk_server import api, get_run, running_server

from agentsproof import AgentsProof

PROJECT = "delivery"


def _wait(cond, timeout: float = 60.0, what: str = "condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = cond()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def test_after_a_restart_most_runs_are_delivered_directly(tmp_path_factory, tmp_path):
    spool = tmp_path / "spool"
    with running_server(tmp_path_factory.mktemp("restart")) as srv:
        key = srv.create_key(PROJECT)
        ap = AgentsProof(api_key=key, base_url=srv.base_url, spool_dir=spool, complete_timeout=30)
        runs = [ap.start_run(project_slug=PROJECT, input=i, client_run_id=f"restart-{i}") for i in range(10)]
        for run in runs:
            run.log_step({"type": "tool_call", "name": "before"})
        assert ap.flush(30) == 0
        srv.stop()  # the server goes away mid-run
        for run in runs:
            run.log_step({"type": "tool_call", "name": "during"})
        ap.flush(30)  # these sends fail: the client saw the server down
        srv.start()  # back, same database
        results = [run.complete({"done": True}) for run in runs]
        delivered = [r for r in results if r.get("publicUrl")]
        assert len(delivered) >= 8, results
        for run, res in zip(runs, results, strict=True):
            if res.get("publicUrl"):
                stored = get_run(srv, key, run.remote_run_id)
                assert [s["name"] for s in stored["steps"]] == ["before", "during"] and stored["status"] == "completed"
        assert len(list(spool.glob("*.json"))) == 10 - len(delivered)


def test_a_spooled_run_is_re_sent_by_the_next_client(tmp_path_factory, tmp_path):
    spool = tmp_path / "spool"
    with running_server(tmp_path_factory.mktemp("resend")) as srv:
        key = srv.create_key(PROJECT)
        srv.stop()
        ap = AgentsProof(api_key=key, base_url=srv.base_url, spool_dir=spool, complete_timeout=2)
        run = ap.start_run(project_slug=PROJECT, input="offline", client_run_id="resend-1")
        run.log_step({"type": "tool_call", "name": "s1"})
        res = run.complete("offline answer")
        assert res["publicUrl"] is None and (spool / "resend-1.json").exists()
        other = spool / "elsewhere.json"  # a run meant for another server is left alone
        record = json.loads((spool / "resend-1.json").read_text())
        other.write_text(json.dumps({**record, "baseUrl": "http://127.0.0.1:9/api", "run": {**record["run"], "clientRunId": "elsewhere"}}))
        srv.start()
        ap2 = AgentsProof(api_key=key, base_url=srv.base_url, spool_dir=spool)  # returns at once; the upload runs in the background
        _wait(lambda: not (spool / "resend-1.json").exists(), what="the spooled run to be re-sent")
        ap2._resender.join(30)
        status, mine = api(srv, key, "POST", "/runs", {"projectSlug": PROJECT, "clientRunId": "resend-1"})  # the same clientRunId: the same run
        assert status == 200, mine
        stored = get_run(srv, key, mine["runId"])
        assert stored["status"] == "completed" and stored["output"] == "offline answer" and [s["name"] for s in stored["steps"]] == ["s1"]
        assert other.exists()


def test_every_create_carries_the_same_client_run_id(tmp_path):
    rec = RecordingServer().start()
    try:
        rec.fail[("POST", "/api/runs")] = 503  # the server errs: complete() tries again
        ap = AgentsProof(api_key="k", base_url=rec.base_url, spool_dir=tmp_path, complete_timeout=2)
        run = ap.start_run(project_slug="p", input=1)
        res = run.complete("x")
        creates = rec.of("POST", "/api/runs")
        assert len(creates) >= 2 and res["spooled"]
        assert {c.body["clientRunId"] for c in creates} == {run.run_id}
        assert json.loads((tmp_path / f"{run.run_id}.json").read_text())["run"]["clientRunId"] == run.run_id
    finally:
        rec.stop()
