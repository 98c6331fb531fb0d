"""The server around its database and its proof runs: a PostgreSQL outage answers 503 with
Retry-After and one log line (then normal service), the proof-suite score is the one
number the SDK and the /p/ page show, unused proof runs expire, --allowed-host."""

from __future__ import annotations

import re
import time

import httpx
import pytest
from pg import PgCluster, require_pg
from server_helpers import api, new_run
from serverkit import judge_rule, running_server


def test_database_outage_is_503_with_retry_after_and_one_log_line(tmp_path):
    cluster = PgCluster(require_pg()).start()
    try:
        with running_server(tmp_path, db_url=cluster.new_database()) as srv:
            key = srv.create_key("alpha")
            with api(srv, key) as c:
                run_id = new_run(c, "alpha")
                cluster.pause()
                for _ in range(30):
                    for r in (c.post(f"runs/{run_id}/steps", json={"type": "llm_call"}), c.get(f"runs/{run_id}"),
                              httpx.get(f"{srv.root_url}/projects/alpha/runs", timeout=30)):
                        assert r.status_code == 503, r.text
                        assert r.headers["retry-after"].isdigit()
                time.sleep(2)  # the grading worker polls meanwhile: it must not log per poll either
                log = srv.log_tail(200_000)
                assert log.count("unavailable") == 1, log[-3000:]
                assert "Traceback" not in log
                cluster.resume()
                deadline = time.monotonic() + 30
                while True:
                    r = c.post(f"runs/{run_id}/steps", json={"type": "llm_call"})
                    if r.status_code == 200 or time.monotonic() > deadline:
                        break
                    time.sleep(0.5)
                assert r.status_code == 200, r.text
                assert c.get(f"runs/{run_id}").json()["steps"][0]["type"] == "llm_call"
                assert "is back" in srv.log_tail(200_000)
    finally:
        cluster.stop()


def test_proof_suite_score_is_one_number_everywhere(tmp_path):
    from agentsproof.sdk import AgentsProof

    with running_server(tmp_path) as srv:
        srv.judge.add(judge_rule(scores={a: 5 for a in ("goal_completion", "output_quality", "tool_accuracy", "step_efficiency", "safety")}))
        key = srv.create_key("alpha")
        with api(srv, key) as c:
            for i in range(3):
                assert c.post("goldens", json={"name": f"g{i}", "input": f"q{i}", "suite": "core", "approved": True}).status_code == 200
        ap = AgentsProof(api_key=key, base_url=srv.base_url, spool_dir=tmp_path / "spool")

        def handler(inp, ctx):
            run = ctx.start_run()
            run.log_step(type="llm_call", name="m", input=inp, output="a")
            return "answer"

        res = ap.run_proof_suite(project_slug="alpha", suite_slug="core", handler=handler)
        assert res["overallScore"] == pytest.approx(0.5), res  # graded, not "passed = 1.0"
        page = httpx.get(res["publicUrl"], timeout=30).text
        shown = re.search(r'id="overall">([0-9.]+)<', page).group(1)
        assert float(shown) == pytest.approx(res["overallScore"], abs=0.005)


def test_unused_proof_run_expires(tmp_path):
    with running_server(tmp_path, env={"AGENTSPROOF_PROOF_RUN_TTL": "1"}) as srv:
        key = srv.create_key("alpha")
        with api(srv, key) as c:
            g = c.post("goldens", json={"name": "g", "input": "q", "suite": "core", "approved": True}).json()
            pr = c.get("proof-suites/core/cases", params={"projectSlug": "alpha"}).json()["proofRunId"]
            deadline = time.monotonic() + 20
            while "expired" not in httpx.get(f"{srv.root_url}/projects/alpha/proof-runs", timeout=10).text:
                assert time.monotonic() < deadline, "the proof run never expired"
                time.sleep(0.3)
            r = c.post(f"proof-runs/{pr}/case-results", json={"goldenId": g["id"], "passed": True})
            assert r.status_code == 409 and "expired" in r.text
            assert c.post(f"proof-runs/{pr}/complete").status_code == 409


def test_allowed_host_option(tmp_path):
    with running_server(tmp_path, extra_args=("--allowed-host", "agents.example, other.example", "--allowed-host", "127.0.0.1", "--public-url", "https://agents.example/")) as srv:
        assert httpx.get(srv.root_url + "/", headers={"Host": "agents.example"}, timeout=10).status_code == 200
        assert httpx.get(srv.root_url + "/", headers={"Host": "other.example:8443"}, timeout=10).status_code == 200
        assert httpx.get(srv.root_url + "/", headers={"Host": "evil.example"}, timeout=10).status_code == 400
        assert httpx.get(srv.root_url + "/api/health", headers={"Host": f"localhost:{srv.port}"}, timeout=10).status_code == 400  # not listed
        key = srv.create_key("alpha")
        r = httpx.post(srv.base_url + "/runs", json={"projectSlug": "alpha"}, headers={"x-api-key": key, "Host": "agents.example"}, timeout=10)
        run_id = r.json()["runId"]
        url = httpx.post(f"{srv.base_url}/runs/{run_id}/complete", json={}, headers={"x-api-key": key, "Host": "other.example"}, timeout=10).json()["publicUrl"]
        assert url.startswith("https://agents.example/r/")
