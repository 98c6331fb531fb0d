"""Helpers for SDK tests against the real ``agentsproof serve`` (tests/server/serverkit.py)."""

from __future__ import annotations

import json
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, Optional

SERVER_TESTS = Path(__file__).resolve().parent.parent / "server"
if str(SERVER_TESTS) not in sys.path:
    sys.path.insert(0, str(SERVER_TESTS))

from serverkit import running_server  # noqa: E402,F401


def api(srv: Any, key: str, method: str, path: str, body: Any = None) -> tuple[int, Any]:
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(srv.base_url + path, data=data, method=method,
                                 headers={"x-api-key": key, "content-type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=15) as r:
            return r.status, json.loads(r.read() or b"null")
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode(errors="replace")


def get_run(srv: Any, key: str, run_id: str) -> dict[str, Any]:
    status, body = api(srv, key, "GET", f"/runs/{run_id}")
    assert status == 200, body
    return body


def wait_graded(srv: Any, key: str, run_id: str, timeout: float = 60) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    run: Optional[dict] = None
    while time.monotonic() < deadline:
        run = get_run(srv, key, run_id)
        if (run.get("grade") or {}).get("status") in ("done", "errored"):
            return run
        time.sleep(0.2)
    raise AssertionError(f"run {run_id} not graded within {timeout}s: {run and run.get('grade')}")


def add_golden(srv: Any, key: str, suite: str, **fields: Any) -> dict[str, Any]:
    status, body = api(srv, key, "POST", "/goldens", {"suite": suite, "approved": True, **fields})
    assert status == 200, body
    return body


def fetch_page(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=15) as r:
            return r.status, r.read().decode(errors="replace")
    except urllib.error.HTTPError as err:
        return err.code, ""
