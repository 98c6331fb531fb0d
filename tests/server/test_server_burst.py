"""A burst like the published SDK's (one thread and one connection per step): every step
is stored and the server keeps answering — no pool of connections or threads runs dry."""

from __future__ import annotations

import json
import threading
import urllib.request

import pytest
from pg import BACKENDS, make_db_url, pg_cluster  # noqa: F401 - fixture
from serverkit import running_server

RUNS = 20
STEPS = 20  # 400 requests in flight at once: before the fix, 200 exhausted the pool


@pytest.mark.parametrize("backend", BACKENDS)
def test_burst_of_concurrent_steps_is_stored(backend, request, tmp_path):
    with running_server(tmp_path, db_url=make_db_url(request, backend, tmp_path)) as srv:
        key = srv.create_key("burst")

        def post(path: str, body: dict) -> dict:
            req = urllib.request.Request(
                srv.base_url + path, data=json.dumps(body).encode(), method="POST",
                headers={"x-api-key": key, "content-type": "application/json"},
            )
            with urllib.request.urlopen(req, timeout=120) as resp:
                return json.loads(resp.read())

        runs = [post("/runs", {"projectSlug": "burst", "input": "i"})["runId"] for _ in range(RUNS)]
        errors: list[str] = []

        def send(run_id: str, index: int) -> None:
            try:
                post(f"/runs/{run_id}/steps", {"type": "llm_call", "name": "m", "input": "a", "output": "b", "step_index": index})
            except Exception as exc:  # noqa: BLE001 - collected and asserted below
                errors.append(repr(exc)[:200])

        threads = [threading.Thread(target=send, args=(r, i)) for r in runs for i in range(STEPS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=180)
        assert not errors, errors[:3]
        with urllib.request.urlopen(srv.root_url + "/api/health", timeout=10) as resp:  # the timeout: a hang guard
            assert json.loads(resp.read())["ok"] is True
        for run_id in runs:
            req = urllib.request.Request(srv.base_url + f"/runs/{run_id}", headers={"x-api-key": key})
            with urllib.request.urlopen(req, timeout=30) as resp:
                assert len(json.loads(resp.read())["steps"]) == STEPS


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_client_run_id_creates_one_run(backend, request, tmp_path):
    """An SDK that retries POST /runs after a timeout (or a sync that uploads twice) gets
    the run it already created, concurrently too."""
    with running_server(tmp_path, db_url=make_db_url(request, backend, tmp_path)) as srv:
        key = srv.create_key("idem")

        def create(client_run_id: str | None) -> str:
            body = {"projectSlug": "idem", "input": "i", **({"clientRunId": client_run_id} if client_run_id else {})}
            req = urllib.request.Request(
                srv.base_url + "/runs", data=json.dumps(body).encode(), method="POST",
                headers={"x-api-key": key, "content-type": "application/json"},
            )
            with urllib.request.urlopen(req, timeout=60) as resp:
                return json.loads(resp.read())["runId"]

        first = create("client-1")
        assert create("client-1") == first
        ids: list[str] = []
        threads = [threading.Thread(target=lambda: ids.append(create("client-2"))) for _ in range(12)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len(set(ids)) == 1 and len(ids) == 12
        assert len({create(None), create(None)}) == 2  # without a client id, every POST is a new run
