"""Slow clients are dropped: a connection that sends its headers (or its body) a byte at a
time gets 408 and is closed after AGENTSPROOF_HEADER_TIMEOUT (AGENTSPROOF_BODY_TIMEOUT)
seconds, while normal requests are answered meanwhile and a slow handler is never cut.
Loopback only, a bounded number of connections, each given up after a bounded time."""

from __future__ import annotations

import json
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


def _upload(port: int, head: bytes, chunks: int, size: int, pause: float, out: list, i: int) -> None:
    """Send ``head`` then ``chunks`` chunks of ``size`` bytes ``pause`` s apart; record the answer's status line."""
    s = socket.create_connection(("127.0.0.1", port), timeout=30)
    try:
        s.sendall(head)
        for _ in range(chunks):
            time.sleep(pause)
            s.sendall(b" " * size)
        got = b""
        while not got.startswith(b"HTTP/1.1 ") or b"\r\n" not in got:
            data = s.recv(4096)
            if not data:
                break
            got += data
        out[i] = got.split(b"\r\n", 1)[0]
    except OSError:
        out[i] = b"closed"
    finally:
        s.close()


def _post_head(key: str, length: int) -> bytes:
    return (b"POST /api/runs HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-type: application/json\r\nx-api-key: " + key.encode()
            + b"\r\ncontent-length: " + str(length).encode() + b"\r\n\r\n")


def test_trickled_bodies_are_closed_at_the_default_deadlines_and_real_uploads_pass(tmp_path):
    """With the default 60 s body deadline, a body trickled a byte at a time (declared as 100 kB,
    or as 10 MB, past the 2 MiB cap) is closed (the least rate after its 5 s grace; the 413's
    connection by the header deadline); a body sent in pieces over 8 s at 24 kB/s is answered."""
    with running_server(tmp_path) as srv:
        key = srv.create_key("trickle")
        trickled: list = [None] * 6
        threads = [threading.Thread(target=_slowloris, args=(srv.port, _post_head(key, 100_000 if i % 2 else 10_000_000), b" ", trickled, i))
                   for i in range(6)]
        body = json.dumps({"projectSlug": "trickle", "label": "steady upload", "input": "x" * 190_000}).encode()
        piece = -(-len(body) // 8)
        steady: list = [None]

        def upload() -> None:
            with socket.create_connection(("127.0.0.1", srv.port), timeout=30) as s:
                s.sendall(_post_head(key, len(body)))
                for k in range(8):
                    time.sleep(1.0)
                    s.sendall(body[k * piece:(k + 1) * piece])
                steady[0] = s.recv(4096).split(b"\r\n", 1)[0]

        threads.append(threading.Thread(target=upload))
        for t in threads:
            t.start()
        for t in threads:
            t.join(GIVE_UP + 15)
        assert [o[0] for o in trickled] == ["closed"] * 6, [o and o[0] for o in trickled]
        assert all(o[1][:13] in (b"HTTP/1.1 408 ", b"HTTP/1.1 413 ", b"") for o in trickled), [o[1][:30] for o in trickled]
        assert steady[0] == b"HTTP/1.1 200 OK", steady
        assert "Traceback" not in srv.log_tail(200_000)


def test_slow_uploads_past_the_cap_are_closed_oldest_first(tmp_path):
    """Four bodies arriving at 2 kB/s (above the least rate) for 8 s, with room for two slow
    uploads: two are closed with 408, the other two arrive whole and are answered."""
    with running_server(tmp_path, env={"AGENTSPROOF_MAX_SLOW_UPLOADS": "2"}) as srv:
        key = srv.create_key("capped")
        out: list = [None] * 4
        threads = [threading.Thread(target=_upload, args=(srv.port, _post_head(key, 16_000), 16, 1_000, 0.5, out, i)) for i in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(GIVE_UP + 15)
        cut = [o for o in out if o in (b"HTTP/1.1 408 Request Timeout", b"closed")]
        answered = [o for o in out if o == b"HTTP/1.1 422 Unprocessable Entity"]  # sixteen thousand spaces are no JSON
        assert len(cut) == 2 and len(answered) == 2, out
        assert "Traceback" not in srv.log_tail(200_000)
