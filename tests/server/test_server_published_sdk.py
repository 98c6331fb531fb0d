"""The published Python SDK (PyPI agentsproof==1.0.6), unchanged, against our server.

The wheel is downloaded with pip (it shares our package name, so it is never installed:
it is unpacked into a temp folder and put first on PYTHONPATH of a subprocess). Without
network the test skips locally and fails when CI is set."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import zipfile

import pytest
from pg import make_db_url, pg_cluster  # noqa: F401 - fixture
from server_helpers import api, wait_grade

from serverkit import running_server

VERSION = "1.0.6"


@pytest.fixture(scope="module")
def published_sdk(tmp_path_factory):
    folder = tmp_path_factory.mktemp("published-sdk")
    res = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:", "-d", str(folder), f"agentsproof=={VERSION}"],
                         capture_output=True, text=True, timeout=180)
    wheels = list(folder.glob("agentsproof-*.whl"))
    if res.returncode != 0 or not wheels:
        msg = f"cannot download agentsproof=={VERSION}: {res.stderr.strip()[-300:]}"
        if os.environ.get("CI"):
            pytest.fail(msg)
        pytest.skip(msg)
    with zipfile.ZipFile(wheels[0]) as z:
        z.extractall(folder / "site")
    return folder / "site"


AGENT = """
import asyncio, json, sys, time
sys.path.insert(0, {site!r})
import agentsproof
assert agentsproof.__file__.startswith({site!r}), agentsproof.__file__
from agentsproof import AgentsProof

ap = AgentsProof(api_key={key!r}, base_url={base!r})
run = ap.start_run(project_slug="shop", input={{"q": "weather?"}}, label="published-sync", goal="report the weather",
                   success_criteria=["mentions rain"], trace_assertions=["must_call:weather_api", "max_steps:4"],
                   failure_modes=["invents data"], metadata={{"env": "test"}})
run.trace("tool_call", "weather_api", lambda: {{"rain": True}}, input="Paris")
run.trace("llm_call", "model", lambda: {{"usage": {{"prompt_tokens": 7, "completion_tokens": 5}}, "text": "rain"}})
run.log_step({{"type": "memory_write", "name": "notes", "output": "saved"}})
time.sleep(0.5)
sync = run.complete("It will rain.")

async def main():
    r = ap.start_run(project_slug="shop", input="hi", label="published-async")
    await r.atrace("llm_call", "model", lambda: {{"usage": {{"input_tokens": 3, "output_tokens": 4}}}})
    await asyncio.sleep(0.3)
    done = await r.acomplete("hello")
    def handler(inp, ctx):
        rr = ctx.start_run()
        rr.log_step({{"type": "llm_call", "name": "model", "output": "4"}})
        time.sleep(0.2)
        rr.complete("4")
        if inp == "boom":
            raise ValueError("handler failed")
    suite = await ap.arun_proof_suite(project_slug="shop", suite_slug="core", handler=handler)
    return r.remote_run_id, done, suite

async_id, async_done, suite = asyncio.run(main())
print(json.dumps({{"sync_id": run.remote_run_id, "sync": sync, "async_id": async_id, "async": async_done, "suite": suite}}))
"""


def test_published_python_sdk_round_trip(tmp_path, published_sdk):
    with running_server(tmp_path) as srv:
        key = srv.create_key("shop")
        gl = tmp_path / "core.jsonl"
        gl.write_text("\n".join(json.dumps(g) for g in [
            {"id": "g-ok", "name": "adds", "input": "2+2", "goal": "answer 4", "expected_output": "4", "success_criteria": ["says 4"]},
            {"id": "g-boom", "name": "explodes", "input": "boom"},
            {"id": "g-draft", "name": "not approved", "input": "x"},
        ]) + "\n")
        assert srv.cli("golden", "import", str(gl), "--project", "shop", "--suite", "core").returncode == 0
        for gid in ("g-ok", "g-boom"):
            assert srv.cli("golden", "approve", gid).returncode == 0
        code = AGENT.format(site=str(published_sdk), key=key, base=srv.base_url)
        res = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=120, cwd=tmp_path)
        assert res.returncode == 0, res.stderr
        out = json.loads(res.stdout.strip().splitlines()[-1])
        assert out["sync"]["publicUrl"].startswith(srv.root_url + "/r/")
        suite = out["suite"]
        assert (suite["passedCases"], suite["failedCases"]) == (1, 1)
        assert suite["publicUrl"].startswith(srv.root_url + "/p/")
        with api(srv, key) as c:
            run = c.get(f"runs/{out['sync_id']}").json()
            assert [s["name"] for s in run["steps"]] == ["weather_api", "model", "notes"]
            assert run["steps"][1]["token_count"] == 12 and run["metadata"] == {"env": "test"}
            assert run["success_criteria"] == ["mentions rain"] and run["failure_modes"] == ["invents data"]
            grade = wait_grade(c, out["sync_id"])
            assert {r["assertion"]: r["passed"] for r in grade["assertion_results"]} == {"must_call:weather_api": True, "max_steps:4": True}
            assert [r["criterion"] for r in grade["criteria_results"]] == ["mentions rain"]
            arun = c.get(f"runs/{out['async_id']}").json()
            assert arun["steps"][0]["token_count"] == 7 and arun["output"] == "hello"
        import httpx

        # the proof-suite runs were linked to their goldens through metadata.goldenId
        linked = httpx.get(srv.root_url + "/projects/shop/runs", params={"golden": "g-ok"}).text
        assert "Proof case: adds" in linked and "1 run(s)" in linked
        page = httpx.get(suite["publicUrl"]).text
        assert "adds" in page and "explodes" in page and "handler failed" in page and "not approved" not in page


REPEAT = """
import json, sys
sys.path.insert(0, {site!r})
from agentsproof import AgentsProof

ap = AgentsProof(api_key={key!r}, base_url={base!r})
run = ap.start_run(project_slug="shop", input="q", label="created twice")
first = run.remote_run_id
kwargs = dict(project_slug="shop", input="q", label="created twice", golden_id=None, goal=None, expected_output=None, expected_behavior=None,
              success_criteria=None, trace_assertions=None, failure_modes=None, metadata={{}})
run._init_remote(**kwargs)  # the SDK's own create request, sent again with its clientRunId (a retry)
print(json.dumps({{"client_run_id": run.run_id, "first": first, "second": run.remote_run_id}}))
"""


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_published_sdk_create_repeated_with_its_client_run_id_is_one_run(backend, request, tmp_path, published_sdk):

    with running_server(tmp_path, db_url=make_db_url(request, backend, tmp_path)) as srv:
        key = srv.create_key("shop")
        code = REPEAT.format(site=str(published_sdk), key=key, base=srv.base_url)
        res = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=120, cwd=tmp_path)
        assert res.returncode == 0, res.stderr
        out = json.loads(res.stdout.strip().splitlines()[-1])
        assert out["first"] == out["second"]
        with api(srv, key) as c:
            assert c.get(f"runs/{out['first']}").json()["clientRunId"] == out["client_run_id"]
            again = c.post("runs", json={"projectSlug": "shop", "clientRunId": out["client_run_id"], "input": "q"})
            assert again.json()["runId"] == out["first"]
