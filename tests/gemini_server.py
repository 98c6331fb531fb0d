"""A scripted Gemini API server on loopback (``generateContent``), for Gemini CLI's tests.

``POST /v1beta/models/<model>:generateContent`` answers a ``GenerateContentResponse``
(one candidate, ``usageMetadata``); ``:streamGenerateContent?alt=sse`` sends the same as
server-sent events (the text in two chunks, then the function calls, then the finish
reason and usage); ``:countTokens`` answers ``totalTokens``. Replies are chosen by the same
:class:`openai_server.Rule` objects, matched against the request read as a chat request
(``systemInstruction`` as the system message, ``contents`` as the turns). A reply is text,
or a dict from :func:`function_reply` (``functionCall`` parts); a callable reply gets the
request as sent (Gemini's shape). :func:`offered_functions` and :func:`function_results`
read such a request. ``seen`` records each request's path and ``x-goog-api-key``.
"""

from __future__ import annotations

import json
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from openai_server import Rule, RuleServer, default_reply

__all__ = ["GeminiServer", "Rule", "function_reply", "function_results", "offered_functions"]


def function_reply(name: str, args: dict[str, Any], text: str | None = None) -> dict[str, Any]:
    """A model turn that calls ``name`` with ``args`` (after ``text``, when given)."""
    return {"parts": [*([{"text": text}] if text else []), {"functionCall": {"name": name, "args": args}}]}


def offered_functions(req: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The function declarations a request offers, by name."""
    out = {}
    for tool in req.get("tools") or []:
        for decl in tool.get("functionDeclarations") or []:
            out[decl.get("name")] = decl
    return out


def function_results(req: dict[str, Any]) -> list[Any]:
    """The ``functionResponse`` parts a request carries back, in order."""
    return [p["functionResponse"] for c in req.get("contents") or [] for p in c.get("parts") or [] if isinstance(p, dict) and "functionResponse" in p]


def _text(parts: Any) -> str:
    return "\n".join(str(p.get("text") or "") for p in parts or [] if isinstance(p, dict))


def as_chat(req: dict[str, Any]) -> dict[str, Any]:
    """The request as a chat request (for rules and judge detection)."""
    messages = []
    system = req.get("systemInstruction") or {}
    if system:
        messages.append({"role": "system", "content": _text(system.get("parts"))})
    for c in req.get("contents") or []:
        messages.append({"role": "assistant" if c.get("role") == "model" else "user", "content": _text(c.get("parts"))})
    return {"model": req.get("model"), "messages": messages}


class GeminiServer(RuleServer):
    """The Gemini API's generateContent, scripted (see the module docstring)."""

    def _make_httpd(self, host: str, port: int) -> ThreadingHTTPServer:
        return _make_httpd(self, host, port)

    @staticmethod
    def as_chat(req: dict[str, Any]) -> dict[str, Any]:
        return as_chat(req)

    @property
    def base_url(self) -> str:
        """What ``GOOGLE_GEMINI_BASE_URL`` is set to (the client appends ``/v1beta/...``)."""
        return f"http://127.0.0.1:{self.port}"


def _make_httpd(server: GeminiServer, host: str, port: int) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:
            pass

        def _send(self, status: int, body: dict[str, Any]) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            self._send(404, {"error": {"code": 404, "message": f"no route {self.path}", "status": "NOT_FOUND"}})

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            path = self.path.split("?", 1)[0]
            with server.lock:
                server.seen.append({"path": self.path, "x-goog-api-key": self.headers.get("x-goog-api-key")})
            try:
                req = json.loads(raw or b"{}")
            except ValueError:
                self._send(400, {"error": {"code": 400, "message": "not JSON", "status": "INVALID_ARGUMENT"}})
                return
            model, _, method = path.rsplit("/", 1)[-1].partition(":")
            if method == "countTokens":
                self._send(200, {"totalTokens": len(json.dumps(req).split())})
                return
            if method not in ("generateContent", "streamGenerateContent"):
                self._send(404, {"error": {"code": 404, "message": f"no route {self.path}", "status": "NOT_FOUND"}})
                return
            req = {**req, "model": model}
            with server.lock:
                server.requests.append(req)
            chat = as_chat(req)
            rule = server.first_match(chat)
            if rule is not None and rule.status != 200:
                self._send(rule.status, {"error": {"code": rule.status, "message": rule.message or f"scripted HTTP {rule.status}", "status": "UNAVAILABLE"}})
                return
            reply = rule.reply if rule is not None else None
            reply = reply(req) if callable(reply) else reply
            if reply is None:
                reply = default_reply(chat)
            content = reply if isinstance(reply, dict) else {"parts": [{"text": reply}]}
            content = {"role": "model", **content}
            usage = {"promptTokenCount": len(json.dumps(req.get("contents")).split()), "candidatesTokenCount": 3}
            usage["totalTokenCount"] = usage["promptTokenCount"] + 3
            done = {"candidates": [{"content": content, "finishReason": "STOP", "index": 0}], "usageMetadata": usage, "modelVersion": model}
            if method == "generateContent":
                self._send(200, done)
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Connection", "close")
            self.end_headers()
            texts = [p["text"] for p in content["parts"] if "text" in p]
            calls = [p for p in content["parts"] if "text" not in p]
            text = "".join(texts)
            chunks = [{"role": "model", "parts": [{"text": piece}]} for piece in (text[: len(text) // 2], text[len(text) // 2 :]) if piece]
            if calls:
                chunks.append({"role": "model", "parts": calls})
            for n, chunk in enumerate(chunks or [{"role": "model", "parts": [{"text": ""}]}]):
                last = n == max(len(chunks), 1) - 1
                event = {"candidates": [{"content": chunk, "index": 0, **({"finishReason": "STOP"} if last else {})}], "modelVersion": model,
                         **({"usageMetadata": usage} if last else {})}
                self.wfile.write(f"data: {json.dumps(event)}\r\n\r\n".encode())
                self.wfile.flush()
            self.close_connection = True

    return ThreadingHTTPServer((host, port), Handler)
