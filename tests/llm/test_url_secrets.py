"""Credentials in the provider URL: a key in the query string and ``user:pw@`` user-info
work against the scripted server (sent as query and HTTP basic auth) and never appear in
describe(), error reasons, reports, stdout/stderr or ``doctor`` output."""

from __future__ import annotations

import base64

import pytest

from agentsproof.core.scrub import scrub_text as scrub
from agentsproof.core.scrub import scrub_url
from agentsproof.llm.base import ChatRequest, LLMError
from agentsproof.llm.openai_http import openai_client
from agentsproof.llm.registry import build_client
from conftest import SECRET_KEY, Rule, all_output_text, make_plugin, read_json, run_cli, simple_eval

pytestmark = pytest.mark.usefixtures("openai_path")  # every test on both transports: the pooled one and httpx's own

QUERY_KEY = "qk-9f8e7d6c5b"
USER, PASSWORD = "svc-robot", "pw-S3cr3t-x"
SECRETS = (QUERY_KEY, USER, PASSWORD, SECRET_KEY)
MSGS = [{"role": "user", "content": "hello"}]


def with_query(base: str, param: str = "api-key") -> str:
    return f"{base}?{param}={QUERY_KEY}&api-version=2024-10-21"


def with_userinfo(base: str) -> str:
    return base.replace("http://", f"http://{USER}:{PASSWORD}@")


def basic(user: str, password: str) -> str:
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


@pytest.mark.parametrize(
    "url, shown",
    [
        ("https://h/v1?api-key=K1234", "https://h/v1?api-key=***"),
        ("https://h/v1?key=K1234&x=1", "https://h/v1?key=***&x=1"),
        ("https://h/v1?token=K1234", "https://h/v1?token=***"),
        ("https://h/v1?access_token=K1234&sig=abc", "https://h/v1?access_token=***&sig=***"),
        ("https://h/v1?client_secret=K1234", "https://h/v1?client_secret=***"),
        ("https://h/v1?x=CONFIGURED", "https://h/v1?x=***"),  # equals a configured key
        ("https://u:p@h:8443/v1", "https://***@h:8443/v1"),
        ("https://only-user@h/v1", "https://***@h/v1"),
        ("https://h/v1?api-version=2024", "https://h/v1?api-version=2024"),
        ("http://127.0.0.1:9/v1", "http://127.0.0.1:9/v1"),
    ],
)
def test_scrub_url(url, shown):
    assert scrub_url(url, ["CONFIGURED"]) == shown


def test_scrub_finds_urls_in_free_text():
    text = f"cannot reach http://{USER}:{PASSWORD}@h/v1?token={QUERY_KEY} with {SECRET_KEY}"
    out = scrub(text, [SECRET_KEY])
    assert not any(s in out for s in SECRETS) and "http://***@h/v1?token=***" in out



async def test_query_key_is_sent_and_not_described(scripted_server):
    c = openai_client(base_url=with_query(scripted_server.base_url), api_key=SECRET_KEY)
    try:
        resp = await c.complete(ChatRequest(messages=MSGS, model="m", timeout=10))
    finally:
        await c.aclose()
    assert resp.text == "OK"
    (seen,) = scripted_server.seen
    assert seen["path"] == "/v1/chat/completions"
    assert seen["query"] == {"api-key": QUERY_KEY, "api-version": "2024-10-21"}
    assert seen["authorization"] == f"Bearer {SECRET_KEY}"
    shown = repr(c.describe())
    assert QUERY_KEY not in shown and "api-key=***" in shown and "api-version=2024-10-21" in shown


async def test_userinfo_is_sent_as_basic_auth(scripted_server):
    c = openai_client(base_url=with_userinfo(scripted_server.base_url), api_key=SECRET_KEY)
    try:
        resp = await c.complete(ChatRequest(messages=MSGS, model="m", timeout=10))
    finally:
        await c.aclose()
    assert resp.text == "OK"
    (seen,) = scripted_server.seen
    assert seen["authorization"] == basic(USER, PASSWORD) and seen["path"] == "/v1/chat/completions"
    shown = repr(c.describe())
    assert USER not in shown and PASSWORD not in shown and "***@127.0.0.1" in shown


async def test_azure_keeps_query_params_and_api_version(scripted_server):
    base = scripted_server.base_url.rsplit("/v1", 1)[0]
    c = openai_client(provider="azure", base_url=f"{base}?sig={QUERY_KEY}", api_key=SECRET_KEY, api_version="2024-10-21")
    try:
        await c.complete(ChatRequest(messages=MSGS, model="dep"))
    finally:
        await c.aclose()
    (seen,) = scripted_server.seen
    assert seen["query"] == {"sig": QUERY_KEY, "api-version": "2024-10-21"} and seen["api-key"] == SECRET_KEY
    assert QUERY_KEY not in repr(c.describe())


@pytest.mark.parametrize("rule", [Rule(status=401, message=f"bad key {QUERY_KEY} for {USER}:{PASSWORD}"), Rule(status=500), Rule(drop=True)])
async def test_error_reasons_never_show_url_credentials(scripted_server, rule):
    scripted_server.add(rule)
    url = with_userinfo(with_query(scripted_server.base_url, "token"))
    c = openai_client(base_url=url, api_key=SECRET_KEY)
    try:
        with pytest.raises(LLMError) as err:
            await c.complete(ChatRequest(messages=MSGS, model="m", timeout=10))
    finally:
        await c.aclose()
    assert not any(s in str(err.value) for s in SECRETS), str(err.value)


async def test_connection_refused_with_credentials_in_url():
    c = openai_client(base_url=f"http://{USER}:{PASSWORD}@127.0.0.1:9/v1?key={QUERY_KEY}", api_key=SECRET_KEY)
    try:
        with pytest.raises(LLMError) as err:
            await c.complete(ChatRequest(messages=MSGS, model="m", timeout=5))
    finally:
        await c.aclose()
    # refused at the first call: not retried, the URL in use named (its credentials masked)
    assert err.value.kind == "unreachable" and not err.value.retryable and "cannot reach http://" in str(err.value) and "127.0.0.1:9/v1" in str(err.value)
    assert not any(s in str(err.value) for s in SECRETS)


def test_registry_scrubs_its_errors(monkeypatch):
    monkeypatch.setenv("AGENTSPROOF_PROVIDER_URL", f"http://{USER}:{PASSWORD}@[::1/v1?token={QUERY_KEY}")
    monkeypatch.setenv("AGENTSPROOF_PROVIDER_KEY", SECRET_KEY)
    from agentsproof.core.errors import ProviderUnavailable

    with pytest.raises(ProviderUnavailable) as err:
        build_client("openai")
    assert "not a valid URL" in str(err.value) and not any(s in str(err.value) for s in SECRETS)


# ---------------------------------------------------------------- through the CLI


@pytest.mark.parametrize("make_url", [with_query, with_userinfo, lambda b: with_userinfo(with_query(b, "key"))], ids=["query", "userinfo", "both"])
def test_cli_eval_and_doctor_work_and_never_show_url_credentials(byok_env, tmp_path, monkeypatch, make_url):
    url = make_url(byok_env.base_url)
    monkeypatch.setenv("AGENTSPROOF_PROVIDER_URL", url)
    monkeypatch.setenv("AGENTSPROOF_MAX_RETRIES", "0")
    # one trial errors, its reason echoing the URL, so an error reason is in the reports too
    byok_env.add(Rule(status=500, message=f"upstream rejected {url}", system_contains="helpful"), Rule(reply="hello"))
    make_plugin(tmp_path, skills={"greeter": {"prompt": "Greet.\n", "eval": simple_eval(trials=1)}})
    out = tmp_path / "out"
    code, stdout, stderr = run_cli(["eval", tmp_path / "demo-plugin/skills/greeter/eval.yaml", "--model", "m", "--output", out])
    assert code == 30, stderr  # the without arm errored
    item = read_json(out / "demo-plugin/greeter-eval.json")["items"][0]
    assert item["with_arm"]["trials"][0]["status"] == "scored"
    assert "500" in item["without_arm"]["trials"][0]["error"]
    dcode, dout, derr = run_cli(["doctor", "--model", "m"])
    assert dcode == 0, dout + derr
    assert "***" in dout and "127.0.0.1" in dout
    text = all_output_text(out, stdout, stderr, dout, derr)
    assert not any(s in text for s in SECRETS)
    for seen in byok_env.seen:
        assert seen["path"] == "/v1/chat/completions"
        if make_url is with_query:
            assert seen["query"]["api-key"] == QUERY_KEY and seen["authorization"] == f"Bearer {SECRET_KEY}"
        else:
            assert seen["authorization"] == basic(USER, PASSWORD)
