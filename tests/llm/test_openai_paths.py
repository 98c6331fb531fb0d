"""The OpenAI-compatible client fails alike on both its transports: for every error the
scripted server can send, the pooled transport (agentsproof.llm.http_pool) and httpx's own
(what a configured proxy gets) raise the same LLMError - kind, retryable, status,
retry_after and message -, and it is the error the official ``openai`` SDK path raised
before the two clients were merged into one (pinned below). The client never imports
``openai``."""

from __future__ import annotations

import subprocess
import sys

import pytest

from agentsproof.llm.base import ChatRequest, LLMError
from agentsproof.llm.openai_http import OpenAIHttpClient
from conftest import SECRET_KEY, Rule
from test_hostile_replies import SHAPES

MSGS = [{"role": "system", "content": "sys"}, {"role": "user", "content": "hello"}]

RULES = [
    Rule(status=429, retry_after=2),
    Rule(status=429, headers={"retry-after-ms": "1500"}),
    Rule(status=500),
    Rule(status=502, raw_body=b"<html>bad gateway</html>"),
    Rule(status=503, body={"error": "overloaded"}),
    Rule(status=401, message=f"bad key {SECRET_KEY}"),
    Rule(status=404),
    Rule(status=400),
    Rule(status=422, body={"detail": "odd"}),
    Rule(raw_body="<html>bad gateway</html>"),
    Rule(delay=2),
] + [Rule(**rule) for _, rule, expected in SHAPES if expected[0] == "error"]


SDK_FACTS: list[tuple] = [
    ("http", True, 429, 2.0, "HTTP 429: scripted HTTP 429"),
    ("http", True, 429, 1.5, "HTTP 429: scripted HTTP 429"),
    ("http", True, 500, None, "HTTP 500: scripted HTTP 500"),
    ("http", True, 502, None, "HTTP 502: <html>bad gateway</html>"),
    ("http", True, 503, None, 'HTTP 503: {"error": "overloaded"}'),
    ("http", False, 401, None, "HTTP 401: bad key *** (check AGENTSPROOF_PROVIDER_KEY)"),
    ("http", False, 404, None, "HTTP 404: scripted HTTP 404 (check the model name and AGENTSPROOF_PROVIDER_URL)"),
    ("http", False, 400, None, "HTTP 400: scripted HTTP 400"),
    ("http", False, 422, None, 'HTTP 422: {"detail": "odd"}'),
    ("malformed", True, None, None, "the provider sent a reply that is not a chat completion: reply is not valid JSON (Expecting value: line 1 column 1 (char 0))"),
    ("timeout", True, None, None, "request timed out"),
]
"""What the SDK path (``openai_compat``, removed) raised for the first rules, message and all."""
SDK_KINDS: list[tuple] = [
    *[f[:4] for f in SDK_FACTS],
    *[("malformed", True, None, None)] * 2,
    ("empty", True, None, None),
    *[("malformed", True, None, None)] * 4,
    *[("empty", True, None, None)] * 3,
    *[("malformed", True, None, None)] * 10,
    ("http", True, 500, None),
    ("http", True, 503, None),
    ("http", True, 429, None),
    ("http", True, 503, None),
]
"""(kind, retryable, status, retry_after) the SDK path raised for every rule."""


def _facts(err: LLMError) -> tuple:
    return (err.kind, err.retryable, err.status, err.retry_after, str(err))


async def _failure(client, timeout: float = 0.5) -> tuple:
    try:
        with pytest.raises(LLMError) as err:
            await client.complete(ChatRequest(messages=MSGS, model="m", timeout=timeout))
    finally:
        await client.aclose()
    return _facts(err.value)


def _client(monkeypatch, transport: str, url: str) -> OpenAIHttpClient:
    if transport == "httpx":
        monkeypatch.setenv("AGENTSPROOF_HTTP_TRANSPORT", "httpx")
    else:
        monkeypatch.delenv("AGENTSPROOF_HTTP_TRANSPORT", raising=False)
    c = OpenAIHttpClient(base_url=url, api_key=SECRET_KEY)
    assert (c._pool is None) == (transport == "httpx")
    return c


def test_the_pinned_facts_cover_every_rule():
    assert len(SDK_KINDS) == len(RULES)


@pytest.mark.parametrize("i", range(len(RULES)), ids=[f"{i}" for i in range(len(RULES))])
async def test_both_transports_raise_the_error_the_sdk_raised(scripted_server, monkeypatch, i):
    scripted_server.add(RULES[i])
    pool = await _failure(_client(monkeypatch, "pool", scripted_server.base_url))
    httpx_own = await _failure(_client(monkeypatch, "httpx", scripted_server.base_url))
    assert pool == httpx_own
    assert pool[:4] == SDK_KINDS[i]
    if i < len(SDK_FACTS):
        assert pool == SDK_FACTS[i]
    assert SECRET_KEY not in pool[4]


async def test_connection_refused_alike(monkeypatch):
    url = "http://127.0.0.1:9/v1"
    pool = await _failure(_client(monkeypatch, "pool", url))
    httpx_own = await _failure(_client(monkeypatch, "httpx", url))
    assert pool[:4] == httpx_own[:4] == ("unreachable", False, None, None)  # at the first call: not retried, the run stops


async def test_tool_calls_and_usage_alike(scripted_server, monkeypatch):
    body = {
        "model": "m-2",
        "choices": [{"message": {"content": None, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": '{"a": 1}'}}]}}],
        "usage": {"prompt_tokens": 7, "completion_tokens": 2, "total_tokens": 9, "prompt_tokens_details": {"cached_tokens": 4}},
    }
    scripted_server.add(Rule(body=body))
    out = []
    for transport in ("pool", "httpx"):
        client = _client(monkeypatch, transport, scripted_server.base_url)
        try:
            r = await client.complete(ChatRequest(messages=MSGS, model="m", json_schema={"type": "object"}))
        finally:
            await client.aclose()
        out.append((r.text, r.usage, r.tool_calls, r.model))
    assert out[0] == out[1] and out[0][2][0]["name"] == "f" and out[0][1].cache_read_tokens == 4 and out[0][3] == "m-2"
    first, second = scripted_server.requests
    assert first == {**second, "_path": first["_path"]} and first["response_format"]["type"] == "json_schema"


def test_the_client_never_imports_openai():
    code = (
        "import sys, asyncio\n"
        "from agentsproof.llm.openai_http import openai_client\n"
        "for p in ('openai', 'azure', 'ollama'):\n"
        "    c = openai_client(provider=p, base_url='http://127.0.0.1:9/v1', api_key='k')\n"
        "    asyncio.run(c.aclose())\n"
        "print(type(c).__name__, 'openai' in sys.modules)\n"
    )
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": ":".join(sys.path)}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert out.stdout.split() == ["OpenAIHttpClient", "False"], out.stderr


async def test_azure_sends_the_key_as_api_key_and_quotes_the_deployment(scripted_server):
    base = scripted_server.base_url.rsplit("/v1", 1)[0]
    c = OpenAIHttpClient(provider="azure", base_url=base, api_key=SECRET_KEY, api_version="2024-10-21")
    try:
        await c.complete(ChatRequest(messages=MSGS, model="team/dep 1"))
        with pytest.raises(LLMError, match="is not a deployment name"):
            await c.complete(ChatRequest(messages=MSGS, model=".."))
    finally:
        await c.aclose()
    (seen,) = scripted_server.seen
    assert seen["api-key"] == SECRET_KEY and seen["authorization"] is None
    assert scripted_server.requests[0]["_path"] == "/openai/deployments/team%2Fdep%201/chat/completions?api-version=2024-10-21"


async def test_with_a_proxy_configured_httpx_own_client_carries_the_calls(scripted_server, monkeypatch):
    # a proxy in the environment: the pooled transport steps aside for httpx's client
    # (NO_PROXY lets it reach the loopback server directly)
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    scripted_server.add(Rule(status=429, retry_after=3, times=1), Rule(reply="via httpx"))
    c = OpenAIHttpClient(base_url=scripted_server.base_url + "?api-version=1", api_key=SECRET_KEY)
    try:
        assert c._pool is None
        with pytest.raises(LLMError) as err:
            await c.complete(ChatRequest(messages=MSGS, model="m", timeout=5))
        assert _facts(err.value)[:4] == ("http", True, 429, 3.0)
        assert (await c.complete(ChatRequest(messages=MSGS, model="m", timeout=5))).text == "via httpx"
    finally:
        await c.aclose()
    assert scripted_server.seen[-1]["query"] == {"api-version": "1"}
