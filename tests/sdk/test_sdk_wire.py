"""Wire exactness: the same agent script, run by our SDK and by the published SDK 1.0.6,
sends the same requests (paths, query, header, body keys in order, values)."""

from __future__ import annotations

import re
from typing import Any

import pytest

from pubsdk import check_output, run_agent
from sdk_recorder import RecordingServer

from agentsproof.server import protocol as P

KEY = "ap-wire-test-key"
CASES = [
    {"id": "g1", "name": "first", "input": {"q": "one"}, "goal": "answer one", "expected_output": "1"},
    {"id": "g2", "name": "second", "input": {"fail": True}, "goal": "fails"},
]
VOLATILE = {"clientRunId", "created_at", "latency_ms"}


def _normalise(req: Any) -> tuple:
    path = re.sub(r"/runs/run-\d+", "/runs/RUN", req.path)
    body = req.body
    if isinstance(body, dict):
        body = [(k, "<volatile>" if k in VOLATILE else v) for k, v in body.items()]
        if req.body.get("runId"):
            body = [(k, "RUN" if k == "runId" else v) for k, v in body]
    return req.method, path, sorted((k, tuple(v)) for k, v in req.query.items()), req.headers.get("x-api-key"), \
        req.headers.get("content-type"), repr(body)


def _record(sdk: str, spool) -> tuple[list[Any], dict]:
    srv = RecordingServer(cases=[dict(c) for c in CASES]).start()
    try:
        env = {"AP_BASE_URL": srv.base_url, "AP_KEY": KEY, "AP_PROJECT": "wire", "AP_SUITE": "core", "AGENTSPROOF_SPOOL_DIR": str(spool)}
        out = check_output(run_agent(sdk, env))
        return list(srv.requests), out
    finally:
        srv.stop()


@pytest.fixture(scope="module")
def both(tmp_path_factory) -> dict[str, tuple[list[Any], dict]]:
    spool = tmp_path_factory.mktemp("spool")
    got = {sdk: _record(sdk, spool) for sdk in ("published", "ours")}
    assert list(spool.iterdir()) == []  # everything was delivered: nothing spooled
    return got


def test_same_requests_as_the_published_sdk(both):
    published, ours = ([_normalise(r) for r in both[s][0]] for s in ("published", "ours"))
    assert len(published) == 14  # 2 runs (create, steps, complete), suite: cases, 1 run, 2 case results, complete
    assert ours == published


def test_same_results_as_the_published_sdk(both):
    pub, our = both["published"][1], both["ours"][1]
    assert our["run"]["publicUrl"] == pub["run"]["publicUrl"] == "http://127.0.0.1/r/run-1"
    assert our["remote_run_id"] == pub["remote_run_id"] == "run-1"
    assert our["suite"] == pub["suite"]


def test_every_body_fits_the_protocol_models(both):
    models = [
        (r"/api/runs", P.RunCreate),
        (r"/api/runs/[^/]+/steps", P.StepIn),
        (r"/api/runs/[^/]+/complete", P.RunComplete),
        (r"/api/proof-runs/[^/]+/case-results", P.CaseResultIn),
    ]
    seen = set()
    for req in both["ours"][0]:
        assert req.headers["x-api-key"] == KEY
        for pattern, model in models:
            if req.method == "POST" and re.fullmatch(pattern, req.path):
                assert set(req.body) <= set(model.model_fields), f"{req.path}: unknown keys {set(req.body) - set(model.model_fields)}"
                model.model_validate(req.body)
                seen.add(model)
    assert len(seen) == len(models)


def test_run_body_is_camel_case_with_every_field(both):
    create = next(r for r in both["ours"][0] if r.path == "/api/runs")
    assert list(create.body) == ["label", "input", "projectSlug", "clientRunId", "goldenId", "goal", "expectedOutput",
                                 "expectedBehavior", "successCriteria", "traceAssertions", "failureModes", "metadata"]
    assert create.body["traceAssertions"] == ["must_call:web_search", "max_steps:5"]
    assert create.body["metadata"] == {"team": "sdk", "n": 1}


def test_steps_are_snake_case_and_usage_is_sniffed(both):
    steps = [r.body for r in both["ours"][0] if r.path.endswith("/steps")]
    assert list(steps[0]) == ["type", "name", "input", "output", "latency_ms", "token_count", "step_index", "created_at"]
    assert steps[0]["token_count"] == 12  # OpenAI shape: prompt 5 + completion 7
    assert [s["step_index"] for s in steps[:2]] == [0, 1]
    anthropic = next(s for s in steps if s["name"] == "claude")
    assert anthropic["token_count"] == 7 and anthropic["output"]["content"] == "async answer"
