"""A loopback HTTP server that answers the AgentsProof wire protocol minimally and records
every request: for wire-shape tests of our SDK and the published one (no storage, no grading).

``RecordingServer().start()``; ``.base_url`` ends in ``/api``; ``.requests`` is a list of
``Request(method, path, query, headers, body)``; ``.fail[(method, path_regex)] = status``
makes matching requests answer that status; ``.cases`` are the goldens a suite serves;
``.gate = threading.Event()`` holds every reply until the gate is set (at most a minute),
and ``.answered`` counts the replies sent.
"""

from __future__ import annotations

import json
import re
import socket
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit


@dataclass
class Request:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: Any


@dataclass
class RecordingServer:
    cases: list[dict[str, Any]] = field(default_factory=list)
    fail: dict[tuple[str, str], int] = field(default_factory=dict)
    delay: float = 0.0
    gate: threading.Event | None = None
    answered: int = 0
    requests: list[Request] = field(default_factory=list)

    def start(self) -> "RecordingServer":
        rec = self
        self._n = 0
        self._lock = threading.Lock()

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a: Any) -> None:
                pass

            def _handle(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length) if length else b""
                parts = urlsplit(self.path)
                body = json.loads(raw) if raw else None
                with rec._lock:
                    rec.requests.append(Request(self.command, parts.path, parse_qs(parts.query), {k.lower(): v for k, v in self.headers.items()}, body))
                if rec.delay:
                    time.sleep(rec.delay)
                if rec.gate is not None:
                    rec.gate.wait(60)
                status, reply = rec._answer(self.command, parts.path, body)
                data = json.dumps(reply).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                with rec._lock:
                    rec.answered += 1

            do_GET = do_POST = _handle

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/api"

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def _answer(self, method: str, path: str, body: Any) -> tuple[int, Any]:
        for (m, pattern), status in self.fail.items():
            if m == method and re.fullmatch(pattern, path):
                return status, {"detail": "scripted failure"}
        if method == "POST" and path == "/api/runs":
            with self._lock:
                self._n += 1
                return 200, {"runId": f"run-{self._n}"}
        if m := re.fullmatch(r"/api/runs/([^/]+)/steps", path):
            return 200, {"ok": True, "stepIndex": (body or {}).get("step_index", 0), "duplicate": False}
        if m := re.fullmatch(r"/api/runs/([^/]+)/complete", path):
            return 200, {"publicUrl": f"http://127.0.0.1/r/{m.group(1)}", "runId": m.group(1)}
        if re.fullmatch(r"/api/proof-suites/([^/]+)/cases", path):
            return 200, {"proofRunId": "proof-1", "cases": self.cases}
        if re.fullmatch(r"/api/proof-runs/([^/]+)/case-results", path):
            return 200, {"ok": True}
        if re.fullmatch(r"/api/proof-runs/([^/]+)/complete", path):
            return 200, {"proofRunId": "proof-1", "passedCases": 1, "failedCases": 0, "overallScore": None, "publicUrl": "http://127.0.0.1/p/proof-1"}
        return 404, {"detail": "not found"}

    def of(self, method: str, pattern: str) -> list[Request]:
        return [r for r in self.requests if r.method == method and re.fullmatch(pattern, r.path)]


class HungServer:
    """Accepts connections and reads requests, never answers."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.conns: list[socket.socket] = []
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}/api"
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.conns.append(conn)

    def close(self) -> None:
        for c in self.conns:
            c.close()
        self.sock.close()
