"""A scripted Anthropic Messages API server on loopback, for tests.

``POST /v1/messages`` answers like the real API: a ``message`` with ``content`` blocks
(text, ``tool_use``), ``stop_reason`` and ``usage`` including the prompt-cache counts, and
errors as ``{"type": "error", "error": {"type": ..., "message": ...}}``. Replies are chosen
by the same :class:`openai_server.Rule` objects (text, HTTP errors with Retry-After, delays,
raw or odd bodies, dropped connections, ``times``), matched against the request with its
``system`` field seen as a system message; judge calls get the same default verdicts as on
the OpenAI-compatible server.

Extra behaviour of this server:

- **Prompt caching**: a system block with ``cache_control`` is "written" the first time
  its text is seen (``cache_creation_input_tokens``) and "read" afterwards
  (``cache_read_input_tokens``); without ``cache_control`` it counts as plain input.
  Tokens are whitespace-separated words.
- **Forced tool** (``tool_choice: {type: tool, name}``): a reply that is a JSON object
  comes back as that tool's ``tool_use`` input, as the real API does for judge calls.
- ``Rule.reply`` may be a list of content blocks (e.g. ``tool_use`` blocks of a trial); a
  callable reply gets the request as sent (Anthropic shape), not its chat reading.
- **Streaming** (``"stream": true``, what Claude Code sends): the same message as
  server-sent events (``message_start``, per block ``content_block_start`` /
  ``content_block_delta`` (``text_delta``, or ``input_json_delta`` for a ``tool_use``
  block's input, in two pieces) / ``content_block_stop``, ``message_delta`` with the
  stop reason and output tokens, ``message_stop``).
- ``seen`` records per request the path and the ``x-api-key``, ``anthropic-version``,
  ``authorization`` and ``content-type`` headers; ``requests`` holds the bodies.
- ``POST /v1/messages/count_tokens`` answers ``{"input_tokens": N}``.

Agent scripts: :func:`tool_use` makes a ``tool_use`` block for ``Rule.reply``;
:func:`tool_results` reads the ``tool_result`` blocks a request carries back.
"""

from __future__ import annotations

import itertools
import json
import socket
import time
from http.server import BaseHTTPRequestHandler
from typing import Any

from openai_server import Rule, RuleServer, _ThreadingServer, default_reply

_IDS = itertools.count(1)

ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}


def tool_use(name: str, arguments: dict[str, Any], call_id: str | None = None) -> list[dict[str, Any]]:
    """A reply (content blocks) that calls tool ``name`` with ``arguments``."""
    return [{"type": "tool_use", "id": call_id or f"toolu_{next(_IDS):04d}", "name": name, "input": arguments}]


def tool_results(req: dict[str, Any]) -> list[str]:
    """The text of every ``tool_result`` block in a request's messages, in order."""
    out: list[str] = []
    for m in req.get("messages", []):
        content = m.get("content")
        if not isinstance(content, list):
            continue
        for block in content:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                inner = block.get("content")
                if isinstance(inner, list):
                    inner = " ".join(b.get("text", "") for b in inner if isinstance(b, dict))
                out.append(str(inner or ""))
    return out


def offered_tools(req: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The tools a request offers: name → input schema."""
    return {t["name"]: t.get("input_schema") or {} for t in req.get("tools") or [] if isinstance(t, dict) and "name" in t}


def system_text(req: dict[str, Any]) -> str:
    system = req.get("system")
    if isinstance(system, list):
        return "\n".join(b.get("text", "") for b in system if isinstance(b, dict))
    return system or ""


def as_chat(req: dict[str, Any]) -> dict[str, Any]:
    """The request as an OpenAI-style chat (system first), for Rule matching and default replies."""
    messages = [{"role": "system", "content": system_text(req)}] + [
        {"role": m.get("role"), "content": m.get("content") if isinstance(m.get("content"), str) else json.dumps(m.get("content"))}
        for m in req.get("messages", [])
    ]
    return {**req, "messages": messages}


def words(text: str) -> int:
    return len(text.split())


class AnthropicServer(RuleServer):
    def __init__(self, rules: list[Rule] | None = None, host: str = "127.0.0.1", port: int = 0):
        self.cached_prefixes: set[str] = set()
        super().__init__(rules, host, port)

    def _make_httpd(self, host: str, port: int) -> _ThreadingServer:
        return _make_httpd(self, host, port)

    @staticmethod
    def as_chat(req: dict[str, Any]) -> dict[str, Any]:
        return as_chat(req)

    @property
    def base_url(self) -> str:
        """Like the public endpoint's: the client appends ``/v1/messages``."""
        return f"http://127.0.0.1:{self.port}"

    def pick(self, chat: dict[str, Any]) -> Rule | None:
        return self.first_match(chat)

    def usage_for(self, req: dict[str, Any], output: int) -> dict[str, Any]:
        read = write = plain = 0
        for block in req.get("system") or []:
            n = words(block.get("text", "")) if isinstance(block, dict) else 0
            if isinstance(block, dict) and block.get("cache_control"):
                key = f"{req.get('model')}\0{block.get('text')}"
                with self.lock:
                    hit = key in self.cached_prefixes
                    self.cached_prefixes.add(key)
                read, write = (read + n, write) if hit else (read, write + n)
            else:
                plain += n
        plain += sum(words(m.get("content") if isinstance(m.get("content"), str) else json.dumps(m.get("content"))) for m in req.get("messages", []))
        return {"input_tokens": plain, "output_tokens": output, "cache_creation_input_tokens": write, "cache_read_input_tokens": read}



def _content(req: dict[str, Any], reply: Any) -> list[dict[str, Any]]:
    if isinstance(reply, list):
        return reply
    choice = req.get("tool_choice") or {}
    if choice.get("type") == "tool":
        try:
            value = json.loads(reply)
        except ValueError:
            value = None
        if isinstance(value, dict):
            return [{"type": "tool_use", "id": "toolu_test", "name": choice.get("name"), "input": value}]
    return [{"type": "text", "text": reply}]


def _make_httpd(server: AnthropicServer, host: str, port: int) -> _ThreadingServer:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:
            pass

        def _send(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(body)

        def _error(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
            body = {"type": "error", "error": {"type": ERROR_TYPES.get(status, "api_error"), "message": message}}
            self._send(status, json.dumps(body).encode(), headers)

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            path = self.path.split("?", 1)[0]
            with server.lock:
                server.seen.append({
                    "path": self.path,
                    "x-api-key": self.headers.get("x-api-key"),
                    "anthropic-version": self.headers.get("anthropic-version"),
                    "authorization": self.headers.get("Authorization"),
                    "content-type": self.headers.get("Content-Type"),
                })
            if path.rstrip("/") == "/v1/messages/count_tokens":
                try:
                    req = json.loads(raw or b"{}")
                except ValueError:
                    req = {}
                self._send(200, json.dumps({"input_tokens": server.usage_for(req, 0)["input_tokens"]}).encode())
                return
            if path.rstrip("/") != "/v1/messages":
                self._error(404, f"no route {self.path}")
                return
            try:
                req = json.loads(raw or b"{}")
            except ValueError:
                self._error(400, "invalid JSON body")
                return
            with server.lock:
                server.requests.append(req)
            if not self.headers.get("x-api-key"):
                self._error(401, "x-api-key header is required")
                return
            if not isinstance(req.get("max_tokens"), int):
                self._error(400, "max_tokens: Field required")
                return
            self._answer(req)

        def _answer(self, req: dict[str, Any]) -> None:
            chat = as_chat(req)
            rule = server.pick(chat)
            if rule and rule.delay:
                time.sleep(rule.delay)
            if rule and rule.drop:
                try:
                    self.connection.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                self.close_connection = True
                return
            headers = dict(rule.headers or {}) if rule else {}
            if rule and rule.retry_after is not None:
                headers.setdefault("Retry-After", f"{rule.retry_after:g}")
            if rule and (rule.raw_body is not None or rule.body is not None):
                body = rule.raw_body if rule.raw_body is not None else json.dumps(rule.body)
                self._send(rule.status, body.encode() if isinstance(body, str) else body, headers)
                return
            if rule and rule.status != 200:
                self._error(rule.status, rule.message or f"scripted HTTP {rule.status}", headers)
                return
            reply = rule.reply(req) if rule and callable(rule.reply) else rule.reply if rule and rule.reply is not None else default_reply(chat)
            content = _content(req, reply)
            text = " ".join(b.get("text", "") or json.dumps(b.get("input", "")) for b in content)
            usage = server.usage_for(req, max(1, words(text)))
            if rule and rule.usage:
                usage.update(input_tokens=rule.usage[0], output_tokens=rule.usage[1])
            stop = "tool_use" if any(b.get("type") == "tool_use" for b in content) else "end_turn"
            message = {
                "id": "msg_test",
                "type": "message",
                "role": "assistant",
                "model": req.get("model", "claude-test"),
                "content": content,
                "stop_reason": stop,
                "stop_sequence": None,
                "usage": usage,
            }
            if req.get("stream"):
                self._stream(message, headers)
            else:
                self._send(200, json.dumps(message).encode(), headers)

        def _stream(self, message: dict[str, Any], headers: dict[str, str]) -> None:
            body = b"".join(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode() for name, data in stream_events(message))
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Content-Length", str(len(body)))
            for k, v in headers.items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(body)

    return _ThreadingServer((host, port), Handler)


def stream_events(message: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """``message`` as the Messages API streams it: (event name, data) pairs."""
    usage = message["usage"]
    start = {**message, "content": [], "stop_reason": None, "usage": {**usage, "output_tokens": 1}}
    events: list[tuple[str, dict[str, Any]]] = [("message_start", {"type": "message_start", "message": start})]
    for i, block in enumerate(message["content"]):
        if block.get("type") == "tool_use":
            head = {**block, "input": {}}
            text = json.dumps(block.get("input") or {})
            half = len(text) // 2
            deltas = [{"type": "input_json_delta", "partial_json": part} for part in (text[:half], text[half:])]
        else:
            head = {"type": "text", "text": ""}
            deltas = [{"type": "text_delta", "text": block.get("text", "")}]
        events.append(("content_block_start", {"type": "content_block_start", "index": i, "content_block": head}))
        events += [("content_block_delta", {"type": "content_block_delta", "index": i, "delta": d}) for d in deltas]
        events.append(("content_block_stop", {"type": "content_block_stop", "index": i}))
    events.append(("message_delta", {"type": "message_delta", "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
                                     "usage": {"output_tokens": usage["output_tokens"]}}))
    events.append(("message_stop", {"type": "message_stop"}))
    return events
