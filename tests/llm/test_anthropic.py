"""The ``anthropic`` provider against a scripted Messages API server on loopback: the client
on its own, through the registry's retry and throttle layers, and end to end through the CLI
(``eval`` on a small plugin, ``doctor``). Nothing of ours is mocked."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentsproof.core.errors import ProviderUnavailable
from agentsproof.llm import prices, registry
from agentsproof.llm.anthropic import AnthropicClient, messages_url
from agentsproof.llm.base import ChatRequest, LLMError
from anthropic_server import AnthropicServer
from conftest import Rule, ScriptedServer, all_output_text, make_plugin, read_json, run_cli, simple_eval

KEY = "sk-ant-test-0123456789-secret"
MODEL = "claude-sonnet-4-5-20250929"
SKILL = "SKILLMARK: " + " ".join(["always greet with the word HELLO and sign with -- bot."] * 8) + "\n"
MSGS = [{"role": "system", "content": SKILL}, {"role": "user", "content": "Say hello."}]
GRADERS = [
    {"type": "deterministic", "checks": ["hello", "-- bot"]},
    {"type": "llm_rubric", "rubric": "Mentions 'HELLO' and '-- bot'.", "weight": 0.5},
]


@pytest.fixture
def server():
    with AnthropicServer() as srv:
        yield srv


@pytest.fixture
async def client(server):
    c = AnthropicClient(api_key=KEY, base_url=server.base_url)
    yield c
    await c.aclose()


@pytest.fixture
def claude_env(monkeypatch, server, tmp_path):
    for name in ("AGENTSPROOF_PROVIDER_KEY", "AGENTSPROOF_MODEL", "AGENTSPROOF_JUDGE_MODEL", "AGENTSPROOF_PRICES", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AGENTSPROOF_PROVIDER_TYPE", "anthropic")
    monkeypatch.setenv("AGENTSPROOF_PROVIDER_URL", server.base_url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    return server


def arms(server: AnthropicServer, with_reply: str = "HELLO there -- bot", without_reply: str = "hi") -> None:
    server.add(Rule(reply=with_reply, system_contains="SKILLMARK", judge=False), Rule(reply=without_reply, system_contains="helpful", judge=False))


def plugin(tmp_path: Path, trials: int = 3) -> Path:
    make_plugin(tmp_path, skills={"greeter": {"prompt": SKILL, "eval": simple_eval(GRADERS, trials=trials)}})
    return tmp_path / "demo-plugin" / "skills" / "greeter" / "eval.yaml"


# ---------------------------------------------------------------- the client


async def test_request_headers_prompt_cache_usage_and_cost(client, server):
    first = await client.complete(ChatRequest(messages=MSGS, model=MODEL, temperature=0.3, timeout=5))
    second = await client.complete(ChatRequest(messages=MSGS, model=MODEL, temperature=7.0, max_tokens=50))
    assert first.text == second.text == "OK" and first.model == MODEL and first.latency_s > 0
    req = server.requests[0]
    assert req["system"] == [{"type": "text", "text": SKILL, "cache_control": {"type": "ephemeral"}}]
    assert req["messages"] == [{"role": "user", "content": "Say hello."}]
    assert req["max_tokens"] == 4096 and req["temperature"] == 0.3
    assert server.requests[1]["max_tokens"] == 50 and server.requests[1]["temperature"] == 1.0  # the API's maximum
    for seen in server.seen:
        assert seen["path"] == "/v1/messages" and seen["x-api-key"] == KEY
        assert seen["anthropic-version"] == "2023-06-01" and seen["authorization"] is None
    n = len(SKILL.split())
    u1, u2 = first.usage, second.usage
    assert (u1.cache_write_tokens, u1.cache_read_tokens) == (n, 0)
    assert (u2.cache_write_tokens, u2.cache_read_tokens) == (0, n)
    assert u1.prompt_tokens == u2.prompt_tokens == n + 2 and u1.total_tokens == n + 3
    # claude-sonnet-4-5: $3 in, $15 out, writes 1.25x, reads 0.1x per million tokens
    assert first.cost_usd == pytest.approx((n * 3.75 + 2 * 3 + 15) / 1e6)
    assert second.cost_usd == pytest.approx((n * 0.3 + 2 * 3 + 15) / 1e6)


async def test_prompt_cache_off_and_no_system(server):
    c = AnthropicClient(api_key=KEY, base_url=server.base_url + "/v1", prompt_cache=False)
    try:
        resp = await c.complete(ChatRequest(messages=MSGS, model=MODEL))
        await c.complete(ChatRequest(messages=[{"role": "user", "content": "hi"}], model=MODEL))
    finally:
        await c.aclose()
    assert server.requests[0]["system"] == [{"type": "text", "text": SKILL}]
    assert "system" not in server.requests[1]
    assert resp.usage.cache_read_tokens == resp.usage.cache_write_tokens == 0
    assert c.describe() == {"provider": "anthropic", "base_url": server.base_url + "/v1", "prompt_cache": False}


async def test_tool_use_blocks_are_recorded(client, server):
    blocks = [{"type": "text", "text": "Looking."}, {"type": "tool_use", "id": "t1", "name": "grep", "input": {"q": "x"}}]
    server.add(Rule(reply=blocks))
    resp = await client.complete(ChatRequest(messages=MSGS, model=MODEL))
    assert resp.text == "Looking." and resp.tool_calls == [{"name": "grep", "arguments": '{"q": "x"}'}]


async def test_judge_json_through_a_forced_tool(client, server):
    schema = {"type": "object", "properties": {"score": {"type": "number"}}, "required": ["score"]}
    server.add(Rule(reply='{"score": 0.75}'))
    resp = await client.complete(ChatRequest(messages=MSGS, model=MODEL, json_schema=schema))
    assert json.loads(resp.text) == {"score": 0.75} and resp.tool_calls == []
    req = server.requests[0]
    assert req["tools"][0]["input_schema"] == schema
    assert req["tool_choice"] == {"type": "tool", "name": req["tools"][0]["name"]}


async def test_judge_asks_in_the_prompt_when_tools_are_refused(client, server):
    server.add(Rule(status=400, message="tools: this endpoint does not support tools", times=1), Rule(reply='{"score": 1}'))
    resp = await client.complete(ChatRequest(messages=MSGS, model=MODEL, json_schema={"type": "object"}))
    assert json.loads(resp.text) == {"score": 1}
    assert "tools" in server.requests[0] and "tools" not in server.requests[1]
    assert "JSON object" in server.requests[1]["system"][-1]["text"]


@pytest.mark.parametrize(
    "rule, retryable, status, kind, text",
    [
        (Rule(status=429, retry_after=2), True, 429, "http", "rate_limit_error"),
        (Rule(status=529, retry_after=1), True, 529, "http", "overloaded"),
        (Rule(status=500), True, 500, "http", "HTTP 500"),
        (Rule(status=401, message="invalid x-api-key"), False, 401, "http", "ANTHROPIC_API_KEY"),
        (Rule(status=404, message="model: nope"), False, 404, "http", "model name"),
        (Rule(status=400, message="prompt is too long: 210000 tokens > 200000 maximum"), False, 400, "context_length", "context window"),
        (Rule(status=400, message=f"bad request echoing {KEY}"), False, 400, "http", "bad request echoing ***"),
        (Rule(status=502, raw_body="<html>bad gateway</html>"), True, 502, "http", "bad gateway"),
        (Rule(drop=True), True, None, "connection", "connection error"),
        (Rule(raw_body="<html>not json</html>"), True, None, "malformed", "not valid JSON"),
        (Rule(raw_body="[" * 100 + "]" * 100), True, None, "malformed", "nests JSON"),
        (Rule(raw_body=b"x" * (9 * 1024 * 1024)), True, None, "malformed", "exceeds the limit"),
        (Rule(raw_body='{"content": [], "usage": {"input_tokens": NaN}}'), True, None, "malformed", "NaN"),
        (Rule(body={"type": "message", "content": "hi"}), True, None, "malformed", "'content' is a string"),
        (Rule(body={"type": "message", "content": [], "stop_reason": "max_tokens"}), True, None, "empty", "stop_reason max_tokens"),
        (Rule(body={"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}), True, None, "malformed", "Overloaded"),
    ],
)
async def test_errors_are_classified_and_scrubbed(client, server, rule, retryable, status, kind, text):
    server.add(rule)
    with pytest.raises(LLMError) as err:
        await client.complete(ChatRequest(messages=MSGS, model=MODEL, timeout=10))
    e = err.value
    assert (e.retryable, e.status, e.kind) == (retryable, status, kind) and text in str(e), str(e)
    assert KEY not in str(e)
    if rule.retry_after is not None:
        assert e.retry_after == rule.retry_after


async def test_timeout(client, server):
    server.add(Rule(delay=2))
    with pytest.raises(LLMError) as err:
        await client.complete(ChatRequest(messages=MSGS, model=MODEL, timeout=0.2))
    assert err.value.kind == "timeout" and err.value.retryable


@pytest.mark.parametrize("value", ["nan", "1e400", "-3", "soon", "Wed, 21 Oct 99999 07:28:00 GMT", ""])
async def test_odd_retry_after_values_are_ignored(client, server, value):
    server.add(Rule(status=429, headers={"Retry-After": value}))
    with pytest.raises(LLMError) as err:
        await client.complete(ChatRequest(messages=MSGS, model=MODEL))
    assert err.value.retryable and err.value.retry_after is None


async def test_url_credentials_are_sent_and_scrubbed(server):
    url = server.base_url.replace("http://", "http://proxyuser:proxy-pass-77@") + "?token=qtok-12345"
    c = AnthropicClient(api_key=KEY, base_url=url)
    server.add(Rule(status=500, message=f"upstream said {url} {KEY}"))
    try:
        with pytest.raises(LLMError) as err:
            await c.complete(ChatRequest(messages=MSGS, model=MODEL))
    finally:
        await c.aclose()
    shown = str(err.value) + json.dumps(c.describe())
    assert not any(s in shown for s in ("proxy-pass-77", "qtok-12345", KEY)) and "***" in shown
    assert server.seen[0]["authorization"].startswith("Basic ") and server.seen[0]["path"] == "/v1/messages?token=qtok-12345"


def test_messages_url_and_bad_urls():
    assert messages_url(None) == "https://api.anthropic.com/v1/messages"
    assert messages_url("http://h:1/") == messages_url("http://h:1/v1") == "http://h:1/v1/messages"
    assert messages_url("https://proxy/anthropic/v1/messages?x=1") == "https://proxy/anthropic/v1/messages?x=1"
    with pytest.raises(LLMError, match="http"):
        AnthropicClient(api_key=KEY, base_url="ftp://u:pw@host/")


# ---------------------------------------------------------------- registry, retries, prices


async def test_registry_retries_429_and_529_with_retry_after(claude_env):
    claude_env.add(Rule(status=429, retry_after=0.01, times=1), Rule(status=529, retry_after=0.01, times=1))
    c = registry.build_client("anthropic")
    try:
        resp = await c.complete(ChatRequest(messages=MSGS, model=MODEL, timeout=5))
        assert resp.text == "OK" and resp.attempts == 3 and c.waits == [0.01, 0.01]
        assert c.inner.limiter.decreases == 1  # the 429 (not the 529) halved the AIMD limit
    finally:
        await c.aclose()


def test_registry_keys_and_auto(claude_env, monkeypatch, tmp_path):
    monkeypatch.setenv("AGENTSPROOF_PROVIDER_KEY", "sk-preferred-key")
    assert registry.build_client("anthropic", retry=False).inner._headers["x-api-key"] == "sk-preferred-key"
    monkeypatch.delenv("AGENTSPROOF_PROVIDER_KEY")
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    with pytest.raises(ProviderUnavailable, match="ANTHROPIC_API_KEY"):
        registry.build_client("anthropic")
    # auto: ANTHROPIC_API_KEY is used only when no BYOK env, Copilot or local model is usable
    for name in ("AGENTSPROOF_PROVIDER_TYPE", "AGENTSPROOF_PROVIDER_URL", "GH_TOKEN", "GITHUB_TOKEN", "COPILOT_GITHUB_TOKEN", "AGENTSPROOF_COPILOT_PROVIDER_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("AGENTSPROOF_LOCAL_MODEL", str(tmp_path / "missing.gguf"))
    with pytest.raises(ProviderUnavailable, match="--provider anthropic"):
        registry.resolve_provider_name(None)
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    assert registry.resolve_provider_name(None) == "anthropic"
    monkeypatch.setenv("AGENTSPROOF_PROVIDER_URL", "http://127.0.0.1:9/v1")
    assert registry.resolve_provider_name(None) == "openai"


def test_price_table_and_override(monkeypatch, tmp_path):
    table = prices.load_prices()
    assert prices.price_for("claude-opus-4-1-20250805", table).input == 15.0
    assert prices.price_for("claude-opus-4-5", table).input == 5.0
    assert prices.price_for("us.anthropic.claude-haiku-4-5-20251001-v1:0", table).output == 5.0
    assert prices.price_for("claude-sonnet-45", table) is None and prices.price_for("my-proxy-model", table) is None
    assert prices.price_for("gpt-4o-2024-08-06", table).input == 2.5  # built in, for --plan and --max-cost
    f = tmp_path / "prices.json"
    f.write_text(json.dumps({"gpt-4o": {"input": 2.5, "output": 10, "cache_read": 1.25}}))
    monkeypatch.setenv("AGENTSPROOF_PRICES", str(f))
    p = prices.price_for("gpt-4o-2024-08-06", prices.load_prices())
    assert (p.input, p.output, p.cache_read, p.cache_write) == (2.5, 10.0, 1.25, 3.125)


# ---------------------------------------------------------------- end to end through the CLI


def test_cli_eval_grades_caches_prices_and_never_writes_the_key(claude_env, tmp_path, monkeypatch):
    monkeypatch.delenv("AGENTSPROOF_NO_CACHE")  # the response cache on: its file must not hold the key either
    cache_dir = tmp_path / "response-cache"
    arms(claude_env)
    out = tmp_path / "out"
    code, stdout, stderr = run_cli(["eval", plugin(tmp_path), "--model", MODEL, "--output", out, "--cache-dir", cache_dir])
    assert code == 0, stderr
    data = read_json(out / "demo-plugin" / "greeter-eval.json")
    assert data["provider"] == "anthropic" and data["settings"]["prompt_cache"] is True
    item = data["items"][0]
    assert (item["grade"], item["delta"], item["with_arm"]["mean_score"]) == ("A", 1.0, 1.0)
    w = item["with_arm"]["trials"]
    n = len(SKILL.split())
    assert [t["usage"]["cache_write_tokens"] for t in w] == [n, 0, 0]
    assert [t["usage"]["cache_read_tokens"] for t in w] == [0, n, n]
    assert item["with_arm"]["total_usage"]["cache_read_tokens"] == 2 * n
    assert all(t["cost_usd"] > 0 for t in w) and w[1]["cost_usd"] < w[0]["cost_usd"]
    md = (out / "demo-plugin" / "greeter-eval.md").read_text()
    saving = (2 * n * (3 - 0.3) - n * (3.75 - 3)) / 1e6  # two reads at a tenth, less one write's surcharge
    assert f"{2 * n} / {n} (${saving:.6f})" in md and "cost $" in md and " + judge $" in md
    html = (out / "demo-plugin" / "greeter-eval.html").read_text()
    assert "Prompt cache saving" in html and "Prompt-cache reads" in html
    assert {s["x-api-key"] for s in claude_env.seen} == {KEY}
    assert claude_env.judge_requests() and all("tool_choice" in r for r in claude_env.judge_requests())
    written = all_output_text(out, stdout, stderr) + "".join(p.read_bytes().decode("latin-1") for p in cache_dir.rglob("*") if p.is_file())
    assert KEY not in written and "responses.sqlite" in str(list(cache_dir.rglob("*")))


def test_cli_grades_match_the_openai_compatible_provider(claude_env, tmp_path, monkeypatch):
    arms(claude_env)
    path = plugin(tmp_path, trials=2)
    code, _, err = run_cli(["eval", path, "--model", MODEL, "--output", tmp_path / "claude"])
    assert code == 0, err
    with ScriptedServer([Rule(reply="HELLO there -- bot", system_contains="SKILLMARK", judge=False), Rule(reply="hi", judge=False)]) as oai:
        monkeypatch.setenv("AGENTSPROOF_PROVIDER_TYPE", "openai")
        monkeypatch.setenv("AGENTSPROOF_PROVIDER_URL", oai.base_url)
        monkeypatch.setenv("AGENTSPROOF_PROVIDER_KEY", KEY)
        code, _, err = run_cli(["eval", path, "--model", MODEL, "--output", tmp_path / "openai"])
    assert code == 0, err
    a, b = (read_json(tmp_path / d / "demo-plugin" / "greeter-eval.json")["items"][0] for d in ("claude", "openai"))
    for key in ("grade", "delta", "pass_rate", "passed"):
        assert a[key] == b[key]
    assert [g["score"] for t in a["with_arm"]["trials"] for g in t["graders"]] == [g["score"] for t in b["with_arm"]["trials"] for g in t["graders"]]


def test_cli_no_prompt_cache(claude_env, tmp_path):
    arms(claude_env)
    out = tmp_path / "out"
    code, _, err = run_cli(["eval", plugin(tmp_path, trials=2), "--model", MODEL, "--output", out, "--no-prompt-cache"])
    assert code == 0, err
    assert claude_env.requests and not any("cache_control" in json.dumps(r) for r in claude_env.requests)
    data = read_json(out / "demo-plugin" / "greeter-eval.json")
    assert data["settings"]["prompt_cache"] is False
    usage = data["items"][0]["with_arm"]["total_usage"]
    assert usage["cache_read_tokens"] == usage["cache_write_tokens"] == 0
    assert "prompt cache" not in (out / "demo-plugin" / "greeter-eval.md").read_text()


def test_cli_errors_make_errored_trials_with_reasons(claude_env, tmp_path, monkeypatch):
    monkeypatch.setenv("AGENTSPROOF_MAX_RETRIES", "1")
    claude_env.add(
        Rule(status=400, message="prompt is too long: 250000 tokens > 200000 maximum", system_contains="SKILLMARK", judge=False),
        Rule(status=529, retry_after=0.01, times=1, system_contains="helpful"),
        Rule(reply="hi", system_contains="helpful", judge=False),
    )
    out = tmp_path / "out"
    code, stdout, stderr = run_cli(["eval", plugin(tmp_path, trials=1), "--model", MODEL, "--output", out])
    assert code == 30
    item = read_json(out / "demo-plugin" / "greeter-eval.json")["items"][0]
    (w,), (b,) = item["with_arm"]["trials"], item["without_arm"]["trials"]
    assert w["status"] == "errored" and "prompt is too long" in w["error"] and "context window" in w["error"]
    assert b["status"] == "scored"  # the 529 was retried after its Retry-After
    claude_env.rules.clear()
    claude_env.add(Rule(status=401, message="invalid x-api-key"))
    code, stdout2, stderr2 = run_cli(["eval", plugin(tmp_path, trials=1), "--model", MODEL, "--output", out])
    # a refused key stops the run at once; its report is in its own run folder, beside the last one
    item = read_json(out / "demo-plugin" / "latest" / "greeter-eval.json")["items"][0]
    assert code == 30 and "ANTHROPIC_API_KEY" in item["with_arm"]["trials"][0]["error"]
    assert KEY not in all_output_text(out, stdout, stderr, stdout2, stderr2)


def test_doctor(claude_env, monkeypatch, tmp_path):
    code, out, err = run_cli(["doctor", "--provider", "anthropic", "--model", MODEL])
    assert code == 0, out + err
    assert "provider: anthropic" in out and "status: ok" in out and claude_env.base_url in out
    assert claude_env.seen[-1]["x-api-key"] == KEY and claude_env.requests[-1]["max_tokens"] == 8
    claude_env.add(Rule(status=401, message="invalid x-api-key"))
    code, out2, err2 = run_cli(["doctor", "--provider", "anthropic", "--model", MODEL])
    assert code == 30 and "FAILED" in out2 and "ANTHROPIC_API_KEY" in out2
    monkeypatch.setenv("AGENTSPROOF_ANTHROPIC_MAX_TOKENS", "2000")
    assert run_cli(["doctor", "--provider", "anthropic", "--model", MODEL])[0] == 30  # the 401 rule still applies
    assert claude_env.requests[-1]["max_tokens"] == 8  # the request's own limit wins over the default
    monkeypatch.setenv("AGENTSPROOF_ANTHROPIC_MAX_TOKENS", "lots")
    code, out4, err4 = run_cli(["eval", plugin(tmp_path), "--model", MODEL, "--output", tmp_path / "o"])
    assert code == 30 and "AGENTSPROOF_ANTHROPIC_MAX_TOKENS" in err4 and len(err4.strip().splitlines()) == 1
    monkeypatch.delenv("AGENTSPROOF_ANTHROPIC_MAX_TOKENS")
    bad = tmp_path / "prices.json"
    bad.write_text('{"claude-x": {"input": -1, "output": 2}}')
    monkeypatch.setenv("AGENTSPROOF_PRICES", str(bad))
    code, out3, err3 = run_cli(["eval", plugin(tmp_path), "--model", MODEL, "--output", tmp_path / "o"])
    assert code == 30 and "AGENTSPROOF_PRICES" in err3 and "claude-x.input" in err3 and len(err3.strip().splitlines()) == 1
    assert KEY not in out + err + out2 + err2 + out3 + err3
