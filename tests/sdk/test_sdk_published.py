"""The published SDK (PyPI agentsproof==1.0.6, in its own venv) run unchanged against our
server, and our SDK running the same script: the server stores the same thing from both."""

from __future__ import annotations

import pytest

from pubsdk import check_output, run_agent
from sdk_server import add_golden, get_run, running_server, wait_graded

from pg import BACKENDS, pg_cluster  # noqa: F401 - fixture

PROJECT = "pubsdk"


@pytest.fixture(scope="module", params=BACKENDS)
def server(request, tmp_path_factory):
    folder = tmp_path_factory.mktemp("pubsdk-server")
    db_url = None if request.param == "sqlite" else request.getfixturevalue("pg_cluster").new_database()
    with running_server(folder, db_url=db_url) as srv:
        srv.key = srv.create_key(PROJECT)
        srv.goldens = [
            add_golden(srv, srv.key, "core", name="reverse", input={"q": "reverse"}, goal="reverse the string",
                       expected_output={"answer": "esrever"}, success_criteria=["answer is reversed"]),
            add_golden(srv, srv.key, "core", name="fails", input={"fail": True}, goal="never works"),
        ]
        yield srv


@pytest.mark.parametrize("sdk", ["published", "ours"])
def test_agent_script_round_trips(server, sdk, tmp_path):
    env = {"AP_BASE_URL": server.base_url, "AP_KEY": server.key, "AP_PROJECT": PROJECT, "AP_SUITE": "core", "AGENTSPROOF_SPOOL_DIR": str(tmp_path)}
    out = check_output(run_agent(sdk, env))
    assert list(tmp_path.iterdir()) == []
    assert out["run"]["publicUrl"].startswith(server.root_url + "/r/")
    run = get_run(server, server.key, out["remote_run_id"])
    assert run["label"] == "wire script" and run["input"] == {"query": "reverse a list"}
    assert run["goal"] == "Return working code" and run["expected_output"] == {"answer": "xs[::-1]"}
    assert run["expected_behavior"] == "search then answer"
    assert run["success_criteria"] == ["uses slicing", "mentions reversed()"]
    assert run["trace_assertions"] == ["must_call:web_search", "max_steps:5"] and run["failure_modes"] == ["hallucinated_api"]
    assert run["metadata"] == {"team": "sdk", "n": 1} and run["output"] == {"answer": "xs[::-1]"}
    assert [(s["step_index"], s["type"], s["name"], s["token_count"]) for s in run["steps"]] == [
        (0, "tool_call", "web_search", 12), (1, "llm_call", "gpt-x", 42)]
    assert run["steps"][1]["cost_usd"] == 0.001 and run["steps"][1]["latency_ms"] == 12.5
    graded = wait_graded(server, server.key, out["remote_run_id"])
    assert graded["grade"]["status"] == "done", graded["grade"]

    arun = get_run(server, server.key, out["async_id"])
    assert arun["output"] == {"answer": "async answer"} and arun["steps"][0]["token_count"] == 7

    suite = out["suite"]
    assert (suite["passedCases"], suite["failedCases"]) == (1, 1)
    assert suite["publicUrl"].startswith(server.root_url + "/p/")
    assert (suite["passed_cases"], suite["failed_cases"]) == (1, 1)  # the published SDK's own TypedDict names
