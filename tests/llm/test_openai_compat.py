"""The BYOK provider on the real OpenAI-compatible client against the scripted server."""

from __future__ import annotations

import pytest

from agentsproof.llm.base import ChatRequest, LLMError
from agentsproof.llm.openai_http import openai_client
from conftest import SECRET_KEY, Rule

pytestmark = pytest.mark.usefixtures("openai_path")  # every test on both transports: the pooled one and httpx's own

MSGS = [{"role": "system", "content": "sys"}, {"role": "user", "content": "hello"}]


@pytest.fixture
async def client(scripted_server):
    c = openai_client(base_url=scripted_server.base_url, api_key=SECRET_KEY)
    yield c
    await c.aclose()


async def test_text_usage_latency_and_request(client, scripted_server):
    scripted_server.add(Rule(reply="hi there", usage=(11, 3)))
    resp = await client.complete(ChatRequest(messages=MSGS, model="m1", temperature=0.2, max_tokens=50, timeout=5))
    assert resp.text == "hi there" and resp.model == "m1"
    assert (resp.usage.prompt_tokens, resp.usage.completion_tokens, resp.usage.total_tokens) == (11, 3, 14)
    assert resp.latency_s > 0
    (req,) = scripted_server.requests
    assert req["messages"] == MSGS and req["model"] == "m1"
    assert req["temperature"] == 0.2 and req["max_tokens"] == 50
    assert "response_format" not in req and "timeout" not in req


async def test_json_schema_request(client, scripted_server):
    schema = {"type": "object", "properties": {"x": {"type": "number"}}}
    await client.complete(ChatRequest(messages=MSGS, model="m", json_schema=schema))
    rf = scripted_server.requests[0]["response_format"]
    assert rf["type"] == "json_schema" and rf["json_schema"]["schema"] == schema


async def test_json_schema_degrades_when_endpoint_rejects_it(client, scripted_server):
    scripted_server.add(Rule(status=400, message="response_format json_schema is not supported", times=1))
    schema = {"type": "object"}
    resp = await client.complete(ChatRequest(messages=MSGS, model="m", json_schema=schema))
    assert resp.text == "OK"
    assert [r["response_format"]["type"] for r in scripted_server.requests] == ["json_schema", "json_object"]
    # remembered for the next call
    await client.complete(ChatRequest(messages=MSGS, model="m", json_schema=schema))
    assert scripted_server.requests[-1]["response_format"]["type"] == "json_object"


@pytest.mark.parametrize(
    "rule, retryable, status, text",
    [
        (Rule(status=429, retry_after=2), True, 429, "HTTP 429"),
        (Rule(status=500), True, 500, "HTTP 500"),
        (Rule(status=503), True, 503, "HTTP 503"),
        (Rule(status=401), False, 401, "AGENTSPROOF_PROVIDER_KEY"),
        (Rule(status=404), False, 404, "model name"),
        (Rule(status=400), False, 400, "HTTP 400"),
        (Rule(drop=True), True, None, "connection error"),
        (Rule(raw_body="<html>bad gateway</html>"), True, None, "not a chat completion"),
    ],
)
async def test_errors_become_llm_errors(client, scripted_server, rule, retryable, status, text):
    scripted_server.add(rule)
    with pytest.raises(LLMError) as err:
        await client.complete(ChatRequest(messages=MSGS, model="m"))
    e = err.value
    assert e.retryable is retryable and e.status == status and text in str(e)
    assert SECRET_KEY not in str(e)
    if status == 429:
        assert e.retry_after == 2


async def test_timeout(client, scripted_server):
    scripted_server.add(Rule(delay=2))
    with pytest.raises(LLMError) as err:
        await client.complete(ChatRequest(messages=MSGS, model="m", timeout=0.2))
    assert err.value.kind == "timeout" and err.value.retryable and "timed out" in str(err.value)


async def test_connection_refused():
    c = openai_client(base_url="http://127.0.0.1:9/v1", api_key=SECRET_KEY)
    try:
        with pytest.raises(LLMError) as err:
            await c.complete(ChatRequest(messages=MSGS, model="m", timeout=5))
    finally:
        await c.aclose()
    # at the first call nothing a retry fixes: not retried, the URL and where it came from named
    assert err.value.kind == "unreachable" and not err.value.retryable
    assert str(err.value).startswith("cannot reach http://127.0.0.1:9/v1 (as configured): ")


async def test_a_refused_connection_after_a_reply_is_retried_as_before():
    c = openai_client(base_url="http://127.0.0.1:9/v1", api_key=SECRET_KEY)
    c._reached = True  # type: ignore[attr-defined] - as after a first reply (the server then went away)
    try:
        with pytest.raises(LLMError) as err:
            await c.complete(ChatRequest(messages=MSGS, model="m", timeout=5))
    finally:
        await c.aclose()
    assert err.value.kind == "connection" and err.value.retryable


async def test_bearer_key_is_sent_but_not_described(scripted_server):
    c = openai_client(base_url=scripted_server.base_url, api_key=SECRET_KEY)
    await c.aclose()
    assert SECRET_KEY not in repr(c.describe())
    assert c.describe() == {"provider": "openai", "base_url": scripted_server.base_url}


async def test_ollama_defaults():
    c = openai_client(provider="ollama")
    await c.aclose()
    assert c.name == "ollama"


def test_azure_needs_url():
    with pytest.raises(LLMError, match="AGENTSPROOF_PROVIDER_URL"):
        openai_client(provider="azure", api_key="k")


async def test_azure_routes_to_the_deployment(scripted_server):
    base = scripted_server.base_url.rsplit("/v1", 1)[0]
    c = openai_client(provider="azure", base_url=base, api_key=SECRET_KEY, api_version="2024-10-21")
    try:
        # the scripted server only answers paths ending in /chat/completions, as Azure's do
        resp = await c.complete(ChatRequest(messages=MSGS, model="my-deployment"))
    finally:
        await c.aclose()
    assert resp.text == "OK"
    assert scripted_server.requests[0]["_path"].startswith("/openai/deployments/my-deployment/chat/completions?api-version=2024-10-21")


async def test_prompt_cache_hits_are_reported_as_cache_read_tokens(client, scripted_server):
    body = {
        "id": "c1", "object": "chat.completion", "created": 0, "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "cached hello"}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 1200, "completion_tokens": 5, "total_tokens": 1205, "prompt_tokens_details": {"cached_tokens": 1024}},
    }
    scripted_server.add(Rule(body=body, times=1), Rule(body={**body, "usage": {**body["usage"], "prompt_tokens_details": {"cached_tokens": "lots"}}}))
    resp = await client.complete(ChatRequest(messages=MSGS, model="m"))
    assert resp.text == "cached hello"
    assert (resp.usage.prompt_tokens, resp.usage.cache_read_tokens) == (1200, 1024)
    odd = await client.complete(ChatRequest(messages=MSGS, model="m"))
    assert odd.usage.cache_read_tokens == 0 and odd.usage.prompt_tokens == 1200  # an odd value counts as unknown
