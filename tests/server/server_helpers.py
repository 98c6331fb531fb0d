"""Small HTTP helpers for the server tests (real HTTP on loopback via httpx)."""

from __future__ import annotations

import time
from typing import Any

import httpx


def api(srv: Any, key: str | None) -> httpx.Client:
    headers = {"x-api-key": key} if key is not None else {}
    return httpx.Client(base_url=srv.base_url + "/", headers=headers, timeout=30)


def new_run(c: httpx.Client, project: str, **fields: Any) -> str:
    r = c.post("runs", json={"projectSlug": project, "input": "hello", **fields})
    assert r.status_code == 200, r.text
    return r.json()["runId"]


def step(c: httpx.Client, run_id: str, index: int | None, type: str = "llm_call", name: str = "model", **extra: Any) -> httpx.Response:
    body = {"type": type, "name": name, "input": f"in{index}", "output": f"out{index}", "latency_ms": 12.5, "token_count": 10, "cost_usd": 0.001, **extra}
    if index is not None:
        body["step_index"] = index
    return c.post(f"runs/{run_id}/steps", json=body)


def wait_grade(c: httpx.Client, run_id: str, status: str = "done", timeout: float = 30) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = c.get(f"runs/{run_id}").json().get("grade")
        if last and last["status"] == status:
            return last
        time.sleep(0.05)
    raise AssertionError(f"grade of {run_id} never reached {status!r}; last: {last}")
