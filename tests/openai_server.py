"""A scripted OpenAI-compatible chat-completions server on loopback, for tests and benchmarks.

It speaks enough of the real API (``POST /v1/chat/completions``, ``GET /v1/models``) for
the official ``openai`` client and the Copilot CLI's BYOK mode. Replies are chosen by
*rules*, first match wins; a rule may answer with text, an HTTP error (429 with
Retry-After, 500, 503 ...), a delay, a body that is not JSON, or a dropped connection, and
may apply only a limited number of ``times``. Hostile replies: ``raw_body`` sends any bytes,
``body`` any JSON value, ``headers`` any response headers. ``seen`` records each chat
request's path, query and credentials headers (the chat bodies stay in ``requests``).

A reply may also be an assistant message that calls tools (what an agent's model does):
``reply`` (or the callable's return value) is then a dict made with :func:`tool_reply`,
e.g. ``tool_reply(tool_call("create", {"path": "a.txt", "file_text": "hi"}))``; it is
sent with ``finish_reason: "tool_calls"``, streamed or not. :func:`offered_tools`,
:func:`tool_results` and :func:`after_tool` read an agent's request.

Skill activation: :func:`skill_loader` is a model that loads a skill (through Copilot's
``skill`` tool, or the chat target's simulated one) when the prompt names its trigger
words (:func:`trigger_words` of its description).
``POST /v1/responses`` speaks the Responses API (what Codex uses), streamed or not, with
the same rules: :func:`responses_as_chat` is how a rule sees such a request, a text reply
becomes an ``output_text`` message and a :func:`tool_reply` becomes ``function_call``
items; :func:`response_tools` and :func:`response_outputs` read such a request.

In process::

    with ScriptedServer([Rule(reply="hi", user_contains="hello")]) as srv:
        srv.base_url  # http://127.0.0.1:PORT/v1

Out of process (benchmarks)::

    python tests/openai_server.py --port 0 --latency 0.05 --port-file /tmp/port
"""

from __future__ import annotations

import argparse
import itertools
import json
import re
import socket
import sys
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable
from urllib.parse import parse_qsl

JUDGE_MARKERS = ("You grade an AI assistant", "You check one claim")
_CALL_IDS = itertools.count(1)


@dataclass
class Rule:
    reply: str | dict[str, Any] | Callable[[dict[str, Any]], str | dict[str, Any]] | None = None
    """Text, or an assistant message dict from :func:`tool_reply` (or a callable of the request returning either)."""
    status: int = 200
    retry_after: float | None = None
    delay: float = 0.0
    raw_body: str | bytes | None = None
    """Send this body as-is (e.g. not JSON, invalid UTF-8, 20 MB) with ``status`` (default 200)."""
    body: Any = None
    """Send this JSON value (any shape: ``{"choices": []}``, a list ...) with ``status``."""
    headers: dict[str, str] | None = None
    """Extra response headers (e.g. a hostile ``Retry-After``)."""
    chunked: bool = False
    """Send ``raw_body``/``body`` with chunked transfer encoding (no Content-Length)."""
    message: str | None = None
    """Error message in the body of a non-200 reply (default: "scripted HTTP <status>")."""
    drop: bool = False
    """Close the connection without answering."""
    times: int | None = None
    """Apply at most this many times (None: always)."""
    system_contains: str | None = None
    user_contains: str | None = None
    judge: bool | None = None
    """True: only judge calls; False: only trial calls; None: both."""
    model: str | None = None
    usage: tuple[int, int] | None = None
    used: int = field(default=0, init=False)

    def matches(self, req: dict[str, Any]) -> bool:
        if self.times is not None and self.used >= self.times:
            return False
        system, user = _texts(req)
        if self.system_contains is not None and self.system_contains not in system:
            return False
        if self.user_contains is not None and self.user_contains not in user:
            return False
        if self.judge is not None and is_judge(req) != self.judge:
            return False
        if self.model is not None and req.get("model") != self.model:
            return False
        return True


def _texts(req: dict[str, Any]) -> tuple[str, str]:
    system, user = "", ""
    for m in req.get("messages", []):
        content = m.get("content")
        if isinstance(content, list):
            content = " ".join(p.get("text", "") for p in content if isinstance(p, dict))
        content = content or ""
        if m.get("role") in ("system", "developer"):
            system += content + "\n"
        elif m.get("role") == "user":
            user = content  # the last user message
    return system, user


def is_judge(req: dict[str, Any]) -> bool:
    system, _ = _texts(req)
    return any(mark in system for mark in JUDGE_MARKERS)


def tool_call(name: str, arguments: dict[str, Any] | str, call_id: str | None = None) -> dict[str, Any]:
    """One OpenAI tool call; ``arguments`` as a dict (sent as JSON text) or raw text."""
    args = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return {"id": call_id or f"call_{next(_CALL_IDS)}", "type": "function", "function": {"name": name, "arguments": args}}


def tool_reply(*calls: dict[str, Any], content: str | None = None) -> dict[str, Any]:
    """An assistant message that calls ``calls`` (made with :func:`tool_call`)."""
    return {"content": content, "tool_calls": list(calls)}


def offered_tools(req: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The tools a request offers the model: name → JSON schema of its parameters."""
    out: dict[str, dict[str, Any]] = {}
    for tool in req.get("tools") or []:
        fn = tool.get("function") if isinstance(tool, dict) else None
        if isinstance(fn, dict) and isinstance(fn.get("name"), str):
            out[fn["name"]] = fn.get("parameters") or {}
    return out


def tool_results(req: dict[str, Any]) -> list[str]:
    """The text of every ``role: tool`` message in a request, in order."""
    out = []
    for m in req.get("messages", []):
        if m.get("role") == "tool":
            content = m.get("content")
            if isinstance(content, list):
                content = " ".join(p.get("text", "") for p in content if isinstance(p, dict))
            out.append(content or "")
    return out


def after_tool(first: Callable[[dict[str, Any]], str | dict[str, Any]] | str | dict[str, Any], then: str) -> Callable[[dict[str, Any]], str | dict[str, Any]]:
    """A reply that is ``first`` until a tool result comes back, then the text ``then``."""

    def reply(req: dict[str, Any]) -> str | dict[str, Any]:
        if req.get("messages") and req["messages"][-1].get("role") == "tool":
            return then
        return first(req) if callable(first) else first

    return reply


STOPWORDS = frozenset(
    "about after again against their there these those which while where would could should other every using "
    "files write writes written before under user users asks request requests something things task tasks make makes "
    "skill skills when with from into that this them they your what does help helps".split()
)
"""Words of a description that never count as a skill's trigger words (see :func:`trigger_words`)."""


def available_skills(req: dict[str, Any]) -> list[tuple[str, str]]:
    """(name, description) of every skill a request offers: the ``<available_skills>``
    catalogue in a system message (the chat target's simulated skill tool) or in the
    description of Copilot's ``skill`` tool."""
    texts = [m.get("content") for m in req.get("messages", []) if m.get("role") in ("system", "developer")]
    for tool in req.get("tools") or []:
        fn = tool.get("function") if isinstance(tool, dict) else None
        if isinstance(fn, dict) and fn.get("name") == "skill":
            texts.append(fn.get("description") or "")
    out: list[tuple[str, str]] = []
    for text in texts:
        if not isinstance(text, str) or "<available_skills>" not in text:
            continue
        block = text.split("<available_skills>", 1)[1].split("</available_skills>", 1)[0]
        for chunk in block.split("<skill>")[1:]:
            name = re.search(r"<name>(.*?)</name>", chunk, re.S)
            desc = re.search(r"<description>(.*?)</description>", chunk, re.S)
            if name:
                out.append((name.group(1).strip(), desc.group(1).strip() if desc else ""))
    return out


def trigger_words(description: str) -> set[str]:
    """A skill's trigger words for the scripted model: the description's words of five or
    more letters, lower-cased, without :data:`STOPWORDS`."""
    return {w for w in re.findall(r"[a-z]+", description.lower()) if len(w) >= 5 and w not in STOPWORDS}


def choose_skills(req: dict[str, Any], min_hits: int = 2) -> list[str]:
    """The skills the scripted model loads for a request: each offered skill that the user's
    prompt names, or whose trigger words it names at least ``min_hits`` times (distinct
    words), most hits first."""
    _, user = _texts(req)
    first_user = str(next((m.get("content") or "" for m in req.get("messages", []) if m.get("role") == "user"), user))
    words = set(re.findall(r"[a-z]+", first_user.lower()))
    scored = [(len(trigger_words(d) & words) + (min_hits if n.lower() in first_user.lower() else 0), i, n)
              for i, (n, d) in enumerate(available_skills(req))]
    return [n for hits, _, n in sorted(scored, key=lambda t: (-t[0], t[1])) if hits >= min_hits]


def skill_loader(final: str | Callable[[dict[str, Any]], str] = "done", min_hits: int = 2, only_best: bool = True) -> Callable[[dict[str, Any]], str | dict[str, Any]]:
    """A scripted model that loads the skill(s) whose trigger words the prompt names.

    Chat simulation (a system ``<available_skills>`` catalogue): answers ``{"skill": name}``
    or ``{"skill": null}``; a later turn gets ``final``. Copilot (a ``skill`` tool): calls it
    with each chosen skill in turn, then answers ``final``."""

    def reply(req: dict[str, Any]) -> str | dict[str, Any]:
        chosen = choose_skills(req, min_hits)
        if only_best:
            chosen = chosen[:1]
        if "skill" in offered_tools(req):
            done = len(tool_results(req))
            if done < len(chosen):
                return tool_reply(tool_call("skill", {"skill": chosen[done]}))
            return final(req) if callable(final) else final
        system, _ = _texts(req)
        if "<available_skills>" in system and not any(m.get("role") == "assistant" for m in req.get("messages", [])):
            return json.dumps({"skill": chosen[0] if chosen else None})
        return final(req) if callable(final) else final

    return reply


def default_reply(req: dict[str, Any]) -> str:
    """Judge calls get a valid verdict; assertion judges check quoted words literally.

    An assertion like ``The response mentions 'pytest'`` passes when the quoted text
    appears in the graded response, so tests can drive assertion grading by content.
    """
    system, _ = _texts(req)
    # the graded prompt is the first user message; a retry appends a follow-up after it
    user = next((m.get("content") or "" for m in req.get("messages", []) if m.get("role") == "user"), "")
    if "You check one claim" in system:
        claim = user.split("## Claim to check\n", 1)[-1].split("\n\n## Assistant response", 1)[0]
        response = user.split("<<<RESPONSE\n", 1)[-1].rsplit("\nRESPONSE>>>", 1)[0]
        quoted = re.findall(r"'([^']+)'", claim)
        passed = all(q.lower() in response.lower() for q in quoted) if quoted else True
        return json.dumps({"evidence": f"checked {quoted}", "passed": passed})
    if "You grade an AI assistant" in system:
        rubric = user.split("## Rubric\n", 1)[-1].split("\n\n## Assistant response", 1)[0]
        response = user.split("<<<RESPONSE\n", 1)[-1].rsplit("\nRESPONSE>>>", 1)[0]
        quoted = re.findall(r"'([^']+)'", rubric)
        if quoted:
            score = sum(q.lower() in response.lower() for q in quoted) / len(quoted)
        else:
            score = 0.5
        return json.dumps({"reasoning": f"quoted terms {quoted}", "score": score})
    return "OK"


def bag_of_words(text: str, dims: int = 64) -> list[float]:
    """The scripted ``/v1/embeddings`` vector of ``text``: its lower-cased words counted into
    ``dims`` buckets (stable across runs), so texts sharing words are similar and texts sharing
    none have cosine similarity 0."""
    import hashlib
    import re

    vec = [0.0] * dims
    for word in re.findall(r"[a-z0-9]+", text.lower()):
        vec[int(hashlib.sha256(word.encode()).hexdigest(), 16) % dims] += 1.0
    return vec


class RuleServer:
    """What every scripted server here shares: rules (newest first), the requests seen, a
    threaded HTTP server on loopback. Subclasses build the HTTP handler (``_make_httpd``)
    and say how a request reads as a chat request (``as_chat``, for rules and the judge test)."""

    def __init__(self, rules: list[Rule] | None = None, host: str = "127.0.0.1", port: int = 0):
        self.rules: list[Rule] = list(rules or [])
        self.requests: list[dict[str, Any]] = []
        self.seen: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        self._httpd = self._make_httpd(host, port)

    def _make_httpd(self, host: str, port: int) -> ThreadingHTTPServer:
        raise NotImplementedError

    @staticmethod
    def as_chat(req: dict[str, Any]) -> dict[str, Any]:
        return req

    @property
    def port(self) -> int:
        return self._httpd.server_address[1]

    def add(self, *rules: Rule) -> "RuleServer":
        with self.lock:
            self.rules[0:0] = list(rules)  # newest rules take precedence
        return self

    def first_match(self, chat: dict[str, Any]) -> Rule | None:
        """The first rule for ``chat`` (counted as used); the caller holds no lock."""
        with self.lock:
            for rule in self.rules:
                if rule.matches(chat):
                    rule.used += 1
                    return rule
        return None

    def trial_requests(self) -> list[dict[str, Any]]:
        return [r for r in self.requests if not is_judge(self.as_chat(r))]

    def judge_requests(self) -> list[dict[str, Any]]:
        return [r for r in self.requests if is_judge(self.as_chat(r))]

    def start(self) -> "RuleServer":
        threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> "RuleServer":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()


class ScriptedServer(RuleServer):
    def __init__(
        self,
        rules: list[Rule] | None = None,
        latency: float = 0.0,
        host: str = "127.0.0.1",
        port: int = 0,
        concurrency_limit: int | None = None,
    ):
        self.concurrency_limit = concurrency_limit
        """When set, a chat request arriving while more than this many are in flight gets a 429
        (``Retry-After: 0``), like a provider's concurrency cap; ``rate_limited`` counts them."""
        self.rate_limited = 0
        self.responses_requests: list[dict[str, Any]] = []
        """Bodies of ``/v1/responses`` requests, as sent."""
        self.embedding_requests: list[dict[str, Any]] = []
        """Bodies of ``/v1/embeddings`` requests, as sent (each text's vector: :func:`bag_of_words`)."""
        self.latency = latency
        self.in_flight = 0
        """Chat requests being answered right now."""
        self.max_in_flight = 0
        """The most chat requests ever answered at the same time."""
        super().__init__(rules, host, port)
        # self.seen: per chat request, ``path``, ``query`` (parsed), ``authorization`` and ``api-key`` headers

    def _make_httpd(self, host: str, port: int) -> ThreadingHTTPServer:
        return _make_httpd(self, host, port)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def pick(self, req: dict[str, Any]) -> Rule | None:
        with self.lock:
            self.requests.append(req)
        return self.first_match(req)

    def _enter(self) -> None:
        with self.lock:
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)

    def _leave(self) -> None:
        with self.lock:
            self.in_flight -= 1



def _message(reply: str | dict[str, Any]) -> dict[str, Any]:
    if isinstance(reply, dict):
        message = {"role": "assistant", "content": reply.get("content")}
        if reply.get("tool_calls"):
            message["tool_calls"] = list(reply["tool_calls"])
        return message
    return {"role": "assistant", "content": reply}


def _completion(req: dict[str, Any], reply: str | dict[str, Any], usage: tuple[int, int] | None) -> dict[str, Any]:
    message = _message(reply)
    text = message.get("content") or ""
    prompt_tokens, completion_tokens = usage or (
        sum(len(str(m.get("content", "")).split()) for m in req.get("messages", [])),
        max(1, len(text.split())),
    )
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": req.get("model", "test-model"),
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if message.get("tool_calls") else "stop"}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens, "total_tokens": prompt_tokens + completion_tokens},
    }


def _sse(req: dict[str, Any], reply: str | dict[str, Any], usage: tuple[int, int] | None) -> bytes:
    full = _completion(req, reply, usage)
    choice = full["choices"][0]
    delta: dict[str, Any] = {"role": "assistant", "content": choice["message"]["content"]}
    if choice["message"].get("tool_calls"):
        delta["tool_calls"] = [{"index": i, **call} for i, call in enumerate(choice["message"]["tool_calls"])]
    head = {"id": full["id"], "object": "chat.completion.chunk", "created": full["created"], "model": full["model"]}
    chunks = [
        {**head, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
        {**head, "choices": [{"index": 0, "delta": {}, "finish_reason": choice["finish_reason"]}], "usage": full["usage"]},
    ]
    return b"".join(f"data: {json.dumps(c)}\n\n".encode() for c in chunks) + b"data: [DONE]\n\n"


def _input_text(content: Any) -> str:
    if isinstance(content, list):
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return str(content or "")


def responses_as_chat(req: dict[str, Any]) -> dict[str, Any]:
    """A Responses API request read as a chat request: ``instructions`` and developer
    messages as the system message, user messages, tool outputs as ``role: tool``."""
    system = [str(req.get("instructions") or "")]
    messages: list[dict[str, Any]] = []
    items = req.get("input")
    for item in items if isinstance(items, list) else [{"type": "message", "role": "user", "content": items}]:
        if not isinstance(item, dict):
            continue
        kind = item.get("type", "message")
        if kind == "message" and item.get("role") in ("system", "developer"):
            system.append(_input_text(item.get("content")))
        elif kind == "message":
            messages.append({"role": item.get("role"), "content": _input_text(item.get("content"))})
        elif kind == "function_call":
            messages.append({"role": "assistant", "content": None, "tool_calls": [
                {"id": item.get("call_id"), "type": "function", "function": {"name": item.get("name"), "arguments": item.get("arguments")}}]})
        elif kind in ("function_call_output", "custom_tool_call_output"):
            output = item.get("output")
            messages.append({"role": "tool", "tool_call_id": item.get("call_id"), "content": output if isinstance(output, str) else json.dumps(output)})
    return {"model": req.get("model"), "messages": [{"role": "system", "content": "\n".join(t for t in system if t)}, *messages]}


def response_tools(req: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The function tools a Responses request offers: name → its parameters schema."""
    return {t["name"]: t.get("parameters") or {} for t in req.get("tools") or [] if isinstance(t, dict) and isinstance(t.get("name"), str)}


def response_outputs(req: dict[str, Any]) -> list[str]:
    """The output of every function call a Responses request carries back, in order."""
    return [m["content"] for m in responses_as_chat(req)["messages"] if m["role"] == "tool"]


def response_object(chat: dict[str, Any], reply: str | dict[str, Any], usage: tuple[int, int] | None) -> dict[str, Any]:
    """A completed ``response`` whose output is ``reply`` (text, or a :func:`tool_reply`)."""
    message = _message(reply)
    output: list[dict[str, Any]] = []
    if message.get("content"):
        output.append({"type": "message", "id": f"msg_{next(_CALL_IDS)}", "status": "completed", "role": "assistant",
                       "content": [{"type": "output_text", "text": message["content"], "annotations": []}]})
    for call in message.get("tool_calls") or []:
        output.append({"type": "function_call", "id": f"fc_{next(_CALL_IDS)}", "status": "completed", "call_id": call["id"],
                       "name": call["function"]["name"], "arguments": call["function"]["arguments"]})
    words = sum(len(str(m.get("content") or "").split()) for m in chat["messages"])
    inp, out = usage or (words, max(1, len(str(message.get("content") or "").split())))
    return {"id": f"resp_{next(_CALL_IDS)}", "object": "response", "created_at": int(time.time()), "status": "completed",
            "model": chat.get("model") or "test-model", "output": output,
            "usage": {"input_tokens": inp, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": out,
                      "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": inp + out}}


def response_events(response: dict[str, Any]) -> bytes:
    """``response`` as the Responses API streams it (text and function-call arguments in deltas)."""
    events: list[dict[str, Any]] = [{"type": "response.created", "response": {**response, "status": "in_progress", "output": []}}]
    for i, item in enumerate(response["output"]):
        if item["type"] == "function_call":
            events.append({"type": "response.output_item.added", "output_index": i, "item": {**item, "arguments": "", "status": "in_progress"}})
            args = item["arguments"]
            half = len(args) // 2
            for part in (args[:half], args[half:]):
                events.append({"type": "response.function_call_arguments.delta", "output_index": i, "item_id": item["id"], "delta": part})
            events.append({"type": "response.function_call_arguments.done", "output_index": i, "item_id": item["id"], "arguments": args})
        else:
            text = item["content"][0]["text"]
            events.append({"type": "response.output_item.added", "output_index": i, "item": {**item, "content": [], "status": "in_progress"}})
            events.append({"type": "response.content_part.added", "output_index": i, "item_id": item["id"], "content_index": 0,
                           "part": {"type": "output_text", "text": "", "annotations": []}})
            events.append({"type": "response.output_text.delta", "output_index": i, "item_id": item["id"], "content_index": 0, "delta": text})
            events.append({"type": "response.output_text.done", "output_index": i, "item_id": item["id"], "content_index": 0, "text": text})
            events.append({"type": "response.content_part.done", "output_index": i, "item_id": item["id"], "content_index": 0,
                           "part": item["content"][0]})
        events.append({"type": "response.output_item.done", "output_index": i, "item": item})
    events.append({"type": "response.completed", "response": response})
    return b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events)


def _make_httpd(server: ScriptedServer, host: str, port: int) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # headers and body go out in separate writes: without TCP_NODELAY each reply waits
        # for the client's delayed ACK (~40 ms on Linux), whatever the client
        disable_nagle_algorithm = True

        def log_message(self, *args: Any) -> None:  # quiet
            pass

        def _send(self, status: int, body: bytes, ctype: str = "application/json", headers: dict[str, str] | None = None) -> None:
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(body)

        def _send_chunked(self, status: int, body: bytes, headers: dict[str, str]) -> None:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Transfer-Encoding", "chunked")
            for k, v in headers.items():
                self.send_header(k, v)
            self.end_headers()
            for i in range(0, len(body), 65536):
                piece = body[i : i + 65536]
                self.wfile.write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
            self.wfile.write(b"0\r\n\r\n")

        def do_GET(self) -> None:
            if self.path.rstrip("/").endswith("/models"):
                body = {"object": "list", "data": [{"id": "test-model", "object": "model", "owned_by": "tests"}]}
                self._send(200, json.dumps(body).encode())
            else:
                self._send(404, b'{"error": {"message": "not found"}}')

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            if self.path.split("?", 1)[0].rstrip("/").endswith("/responses"):
                self._responses(raw)
                return
            if self.path.split("?", 1)[0].rstrip("/").endswith("/embeddings"):
                req = json.loads(raw or b"{}")
                with server.lock:
                    server.embedding_requests.append(req)
                texts = [req["input"]] if isinstance(req.get("input"), str) else list(req.get("input") or [])
                data = [{"object": "embedding", "index": i, "embedding": bag_of_words(t)} for i, t in enumerate(texts)]
                self._send(200, json.dumps({"object": "list", "data": data, "model": req.get("model", "")}).encode())
                return
            if not self.path.split("?", 1)[0].rstrip("/").endswith("/chat/completions"):
                self._send(404, json.dumps({"error": {"message": f"no route {self.path}"}}).encode())
                return
            try:
                req = json.loads(raw or b"{}")
            except json.JSONDecodeError:
                self._send(400, b'{"error": {"message": "invalid JSON body"}}')
                return
            req.setdefault("_path", self.path)  # not part of the API: lets tests check the route
            path, _, query = self.path.partition("?")
            with server.lock:
                server.seen.append({
                    "path": path,
                    "query": dict(parse_qsl(query, keep_blank_values=True)),
                    "authorization": self.headers.get("Authorization"),
                    "api-key": self.headers.get("api-key"),
                })
            server._enter()
            try:
                self._answer(req)
            finally:
                server._leave()

        def _responses(self, raw: bytes) -> None:
            """``POST /v1/responses`` (what Codex speaks): the same rules, matched against the
            request read as a chat (:func:`responses_as_chat`); a callable reply gets the
            request as sent. Streamed as the Responses API's server-sent events."""
            try:
                req = json.loads(raw or b"{}")
            except json.JSONDecodeError:
                self._send(400, b'{"error": {"message": "invalid JSON body"}}')
                return
            with server.lock:
                server.seen.append({"path": self.path.split("?", 1)[0], "query": {}, "authorization": self.headers.get("Authorization"),
                                    "api-key": self.headers.get("api-key")})
                server.responses_requests.append(req)
            chat = responses_as_chat(req)
            rule = server.first_match(chat)
            if rule and rule.delay:
                time.sleep(rule.delay)
            if rule and rule.status != 200:
                headers = {"Retry-After": f"{rule.retry_after:g}"} if rule.retry_after is not None else {}
                msg = {"error": {"message": rule.message or f"scripted HTTP {rule.status}", "type": "scripted", "code": str(rule.status)}}
                self._send(rule.status, json.dumps(msg).encode(), headers=headers)
                return
            reply = (rule.reply(req) if callable(rule.reply) else rule.reply) if rule and rule.reply is not None else default_reply(chat)
            response = response_object(chat, reply, rule.usage if rule else None)
            if req.get("stream"):
                self._send(200, response_events(response), ctype="text/event-stream")
            else:
                self._send(200, json.dumps(response).encode())

        def _answer(self, req: dict[str, Any]) -> None:
            limit = server.concurrency_limit
            if limit is not None and server.in_flight > limit:
                with server.lock:
                    server.rate_limited += 1
                    server.requests.append(req)
                time.sleep(server.latency)
                msg = {"error": {"message": "too many concurrent requests", "type": "rate_limit", "code": 429}}
                self._send(429, json.dumps(msg).encode(), headers={"Retry-After": "0"})
                return
            rule = server.pick(req)
            delay = server.latency + (rule.delay if rule else 0.0)
            if delay:
                time.sleep(delay)
            if rule and rule.drop:
                try:
                    self.connection.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                self.close_connection = True
                return
            if rule and (rule.raw_body is not None or rule.body is not None):
                raw = rule.raw_body if rule.raw_body is not None else json.dumps(rule.body).encode()
                headers = dict(rule.headers or {})
                if rule.retry_after is not None:
                    headers.setdefault("Retry-After", f"{rule.retry_after:g}")
                raw = raw.encode() if isinstance(raw, str) else raw
                if rule.chunked:
                    self._send_chunked(rule.status, raw, headers)
                else:
                    self._send(rule.status, raw, headers=headers)
                return
            if rule and rule.status != 200:
                headers = dict(rule.headers or {})
                if rule.retry_after is not None:
                    headers["Retry-After"] = f"{rule.retry_after:g}"
                text = rule.message or f"scripted HTTP {rule.status}"
                msg = {"error": {"message": text, "type": "scripted", "code": rule.status}}
                self._send(rule.status, json.dumps(msg).encode(), headers=headers)
                return
            if rule and rule.reply is not None:
                reply = rule.reply(req) if callable(rule.reply) else rule.reply
            else:
                reply = default_reply(req)
            usage = rule.usage if rule else None
            if req.get("stream"):
                self._send(200, _sse(req, reply, usage), ctype="text/event-stream")
            else:
                self._send(200, json.dumps(_completion(req, reply, usage)).encode())

    return _ThreadingServer((host, port), Handler)


class _ThreadingServer(ThreadingHTTPServer):
    # listen() runs in the constructor, so the backlog must be set on the class: with the
    # default of 5, a burst of 50 new connections overflows it and clients see resets.
    request_queue_size = 1024
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that hangs up early (a timed-out attempt, a refused oversized reply) is
        # normal here; printing its traceback would land in the stderr a test is checking.
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--latency", type=float, default=0.0)
    ap.add_argument("--reply", default="OK")
    ap.add_argument("--port-file")
    args = ap.parse_args()
    srv = ScriptedServer([Rule(reply=args.reply, judge=False)], latency=args.latency, port=args.port)
    if args.port_file:
        with open(args.port_file, "w") as fh:
            fh.write(str(srv.port))
    print(srv.port, flush=True)
    try:
        srv._httpd.serve_forever(poll_interval=0.05)
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
