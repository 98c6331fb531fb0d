"""The OpenAPI document: it lists the published SDKs' routes with their wire models, and
schemathesis, fuzzing the running server from it, never gets a 500 (bounded run)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import httpx
from pg import db_url, pg_cluster  # noqa: F401 - fixtures

from serverkit import running_server

SDK_ROUTES = {
    ("post", "/api/runs"): "RunCreate",
    ("post", "/api/runs/{run_id}/steps"): "StepIn",
    ("post", "/api/runs/{run_id}/complete"): "RunComplete",
    ("get", "/api/proof-suites/{suite_slug}/cases"): None,
    ("post", "/api/proof-runs/{proof_run_id}/case-results"): "CaseResultIn",
    ("post", "/api/proof-runs/{proof_run_id}/complete"): None,
}


def test_openapi_lists_the_sdk_routes_and_fuzzing_finds_no_500(tmp_path, db_url):  # noqa: F811
    with running_server(tmp_path, db_url=db_url) as srv:
        key = srv.create_key("fuzz")
        doc = httpx.get(srv.base_url + "/openapi.json").json()
        for (method, path), model in SDK_ROUTES.items():
            op = doc["paths"][path][method]
            if model:
                ref = next(iter(op["requestBody"]["content"].values()))["schema"]
                ref = ref.get("$ref") or next(x["$ref"] for x in ref.get("anyOf", []) if "$ref" in x)
                assert ref.endswith("/" + model), (path, ref)
        assert {"runId"} <= set(doc["components"]["schemas"]["RunCreated"]["properties"])
        assert {"passedCases", "failedCases", "overallScore", "publicUrl"} <= set(doc["components"]["schemas"]["ProofRunCompleted"]["properties"])
        st = Path(sys.executable).with_name("schemathesis")
        cmd = [str(st), "run", srv.base_url + "/openapi.json", "--checks", "not_a_server_error", "--phases", "fuzzing",
               "-n", "12", "--seed", "7", "--generation-database", "none", "--request-timeout", "10"]
        for headers in (["-H", f"x-api-key: {key}"], []):
            res = subprocess.run(cmd + headers, capture_output=True, text=True, timeout=300, cwd=tmp_path)
            assert res.returncode == 0, res.stdout[-4000:] + res.stderr[-2000:]
            assert "passed" in res.stdout
        assert "Traceback" not in srv.log_tail(200000)
