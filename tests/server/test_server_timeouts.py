"""Slow clients are dropped: a connection that sends its headers (or its body) a byte at a
time gets 408 and is closed after AGENTSPROOF_HEADER_TIMEOUT (AGENTSPROOF_BODY_TIMEOUT)
seconds, while normal requests are answered meanwhile and a slow handler is never cut.
Loopback only, a bounded number of connections, each given up after a bounded time."""

from __future__ import annotations

import socket
import threading
import time

import httpx
import pytest
from pg import BACKENDS, make_db_url, pg_cluster  # noqa: F401 - fixture
from server_helpers import api, new_run
from serverkit import running_server

SLOW_HEADERS = 12
SLOW_BODIES = 8
GIVE_UP = 30.0  # seconds a slow client keeps trying before the test calls it "held"


def _slowloris(port: int, first: bytes, trickle: bytes, out: list, i: int) -> None:
    """Send ``first`` at once, then ``trickle`` one byte every 0.2 s; record how it ended."""
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    s.settimeout(0.2)
    got = b""
    try:
        if first:
            s.sendall(first)
        t0 = time.monotonic()
        n = 0
        while time.monotonic() - t0 < GIVE_UP:
            try:
                s.send(trickle[n % len(trickle):n % len(trickle) + 1])
                n += 1
            except OSError:
                break  # closed by the server
            try:
                data = s.recv(4096)
                if not data:
                    break
                got += data
            except socket.timeout:
                pass
            except OSError:
                break  # reset: closed with our unread bytes in its buffer
        else:
            out[i] = ("held", got)
            return
        # drain what the server wrote before closing
        try:
            s.settimeout(2)
            while data := s.recv(4096):
                got += data
        except OSError:
            pass
        out[i] = ("closed", got)
    finally:
        s.close()


@pytest.mark.parametrize("backend", BACKENDS)
def test_slow_clients_are_dropped_and_others_still_served(backend, request, tmp_path):
    env = {"AGENTSPROOF_HEADER_TIMEOUT": "1", "AGENTSPROOF_BODY_TIMEOUT": "2", "AGENTSPROOF_PROOF_WAIT": "3", "AGENTSPROOF_GRADE_DELAY": "600"}
    with running_server(tmp_path, db_url=make_db_url(request, backend, tmp_path), env=env) as srv:
        key = srv.create_key("slow")
        out: list = [None] * (SLOW_HEADERS + SLOW_BODIES)
        head = b"GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Pad: "
        body_head = (b"POST /api/runs HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-type: application/json\r\nx-api-key: " + key.encode()
                     + b"\r\ncontent-length: 100000\r\n\r\n")
        threads = [threading.Thread(target=_slowloris, args=(srv.port, b"", head + b"a" * 100_000, out, i)) for i in range(SLOW_HEADERS)]
        threads += [threading.Thread(target=_slowloris, args=(srv.port, body_head, b" ", out, SLOW_HEADERS + i)) for i in range(SLOW_BODIES)]
        for t in threads:
            t.start()
        try:
            # normal requests are answered while the slow ones are connected
            with api(srv, key) as c:
                run_id = new_run(c, "slow", label="while slowed")
                assert c.get(f"runs/{run_id}").status_code == 200
                # a handler slower than both deadlines (a proof run waiting for its case run's grade) is not cut
                assert c.post("goldens", json={"name": "g", "input": "q", "suite": "core", "approved": True}).status_code == 200
                cases = c.get("proof-suites/core/cases", params={"projectSlug": "slow"}).json()
                assert c.post(f"runs/{run_id}/complete", json={"output": "x"}).status_code == 200  # graded only after 600 s
                gid = cases["cases"][0]["id"]
                assert c.post(f"proof-runs/{cases['proofRunId']}/case-results", json={"goldenId": gid, "runId": run_id, "passed": True}).status_code == 200
                done = c.post(f"proof-runs/{cases['proofRunId']}/complete")
                assert done.status_code == 200 and done.json()["overallScore"] is None  # answered after waiting 3 s
        finally:
            for t in threads:
                t.join(GIVE_UP + 15)
        held = [i for i, o in enumerate(out) if o is None or o[0] != "closed"]
        assert held == [], f"{len(held)} of {len(out)} slow connections were still held after {GIVE_UP}s"
        # what reached the client before the close (a reset may drop it) is the 408
        assert all(o[1].startswith(b"HTTP/1.1 408 ") for o in out if o[1]), {o[1][:40] for o in out}
        assert any(o[1] for o in out)
        assert httpx.get(f"{srv.base_url}/health", timeout=10).status_code == 200
        assert "Traceback" not in srv.log_tail(200_000)


def test_keep_alive_connections_serve_many_requests(tmp_path):
    """The header deadline starts again after each answer: a kept-alive client making
    requests for longer than the deadline is served every time."""
    with running_server(tmp_path, env={"AGENTSPROOF_HEADER_TIMEOUT": "1"}) as srv:
        with httpx.Client(timeout=10) as c:
            for _ in range(6):
                assert c.get(f"{srv.base_url}/health").status_code == 200
                time.sleep(0.4)
