"""The two OpenAI-compatible paths fail alike: for every error the scripted server can
send, plain httpx (agentsproof.llm.openai_http) and the official SDK
(agentsproof.llm.openai_compat) raise the same LLMError - kind, retryable, status,
retry_after and message - and the http path never imports ``openai``."""

from __future__ import annotations

import subprocess
import sys

import pytest

from agentsproof.llm.base import ChatRequest, LLMError
from agentsproof.llm.openai_compat import OpenAICompatibleClient
from agentsproof.llm.openai_http import OpenAIHttpClient, client_path, openai_client
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


def _facts(err: LLMError) -> tuple:
    return (err.kind, err.retryable, err.status, err.retry_after, str(err))


async def _failure(client, timeout: float = 0.5) -> tuple:
    try:
        with pytest.raises(LLMError) as err:
            await client.complete(ChatRequest(messages=MSGS, model="m", timeout=timeout))
    finally:
        await client.aclose()
    return _facts(err.value)


@pytest.mark.parametrize("rule", RULES, ids=[f"{i}" for i in range(len(RULES))])
async def test_both_paths_raise_the_same_error(scripted_server, monkeypatch, rule):
    monkeypatch.setenv("AGENTSPROOF_HTTP_TRANSPORT", "httpx")
    scripted_server.add(rule)
    http = await _failure(OpenAIHttpClient(base_url=scripted_server.base_url, api_key=SECRET_KEY))
    sdk = await _failure(OpenAICompatibleClient(base_url=scripted_server.base_url, api_key=SECRET_KEY))
    assert http == sdk
    assert SECRET_KEY not in http[4]


async def test_connection_refused_alike():
    url = "http://127.0.0.1:9/v1"
    http = await _failure(OpenAIHttpClient(base_url=url, api_key=SECRET_KEY))
    sdk = await _failure(OpenAICompatibleClient(base_url=url, api_key=SECRET_KEY))
    assert http[:4] == sdk[:4] == ("connection", True, None, None)


async def test_tool_calls_and_usage_alike(scripted_server):
    body = {
        "model": "m-2",
        "choices": [{"message": {"content": None, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": '{"a": 1}'}}]}}],
        "usage": {"prompt_tokens": 7, "completion_tokens": 2, "total_tokens": 9, "prompt_tokens_details": {"cached_tokens": 4}},
    }
    scripted_server.add(Rule(body=body))
    out = []
    for client in (OpenAIHttpClient(base_url=scripted_server.base_url, api_key=SECRET_KEY), OpenAICompatibleClient(base_url=scripted_server.base_url, api_key=SECRET_KEY)):
        try:
            r = await client.complete(ChatRequest(messages=MSGS, model="m", json_schema={"type": "object"}))
        finally:
            await client.aclose()
        out.append((r.text, r.usage, r.tool_calls, r.model))
    assert out[0] == out[1] and out[0][2][0]["name"] == "f" and out[0][1].cache_read_tokens == 4
    first, second = scripted_server.requests
    assert first == {**second, "_path": first["_path"]} and first["response_format"]["type"] == "json_schema"


def test_path_choice(monkeypatch):
    monkeypatch.delenv("AGENTSPROOF_OPENAI_CLIENT", raising=False)
    assert (client_path("openai"), client_path("ollama"), client_path("azure")) == ("http", "http", "sdk")
    monkeypatch.setenv("AGENTSPROOF_OPENAI_CLIENT", "sdk")
    assert client_path("openai") == "sdk"
    monkeypatch.setenv("AGENTSPROOF_OPENAI_CLIENT", "HTTP")
    assert client_path("ollama") == "http" and client_path("azure") == "sdk"
    monkeypatch.setenv("AGENTSPROOF_OPENAI_CLIENT", "curl")
    with pytest.raises(LLMError, match="AGENTSPROOF_OPENAI_CLIENT: 'curl' is not one of http, sdk"):
        openai_client(base_url="http://127.0.0.1:9/v1")


def test_malformed_path_setting_is_one_line_before_any_call(byok_env, tmp_path, monkeypatch):
    from conftest import make_plugin, run_cli, simple_eval

    monkeypatch.setenv("AGENTSPROOF_OPENAI_CLIENT", "curl")
    plugin = make_plugin(tmp_path, skills={"s": {"eval": simple_eval()}})
    code, _, err = run_cli(["eval", plugin / "skills" / "s" / "eval.yaml", "--model", "m", "--output", tmp_path / "runs"])
    assert code == 30 and err.strip().count("\n") == 0 and "AGENTSPROOF_OPENAI_CLIENT" in err
    assert byok_env.requests == []


def test_http_path_never_imports_openai():
    code = (
        "import sys, asyncio\n"
        "from agentsproof.llm.openai_http import openai_client\n"
        "c = openai_client(base_url='http://127.0.0.1:9/v1', api_key='k')\n"
        "asyncio.run(c.aclose())\n"
        "print(type(c).__name__, 'openai' in sys.modules)\n"
    )
    env = {"AGENTSPROOF_OPENAI_CLIENT": "http", "PATH": "/usr/bin:/bin", "PYTHONPATH": ":".join(sys.path)}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert out.stdout.split() == ["OpenAIHttpClient", "False"], out.stderr


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
