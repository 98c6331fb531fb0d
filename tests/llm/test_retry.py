"""RetryingClient around the real OpenAI-compatible client: which failures are retried, how long it
waits (recorded, never slept for real), and when it gives up."""

from __future__ import annotations

import random

import pytest

from agentsproof.llm.base import ChatRequest, LLMError
from agentsproof.llm.openai_http import openai_client
from agentsproof.llm.retry import RetryingClient, RetryPolicy
from conftest import SECRET_KEY, Rule

pytestmark = pytest.mark.usefixtures("openai_path")  # every test on both transports: the pooled one and httpx's own

MSGS = [{"role": "user", "content": "hi"}]


@pytest.fixture
def slept() -> list[float]:
    return []


@pytest.fixture
async def make(scripted_server, slept):
    made = []

    def _make(**policy) -> RetryingClient:
        async def fake_sleep(seconds: float) -> None:
            slept.append(seconds)

        inner = openai_client(base_url=scripted_server.base_url, api_key=SECRET_KEY)
        c = RetryingClient(inner, RetryPolicy(**{"max_retries": 3, "base_delay": 0.5, **policy}), sleep=fake_sleep, seed=1)
        made.append(c)
        return c

    yield _make
    for c in made:
        await c.aclose()


async def test_429_retry_after_is_honoured_then_success(make, scripted_server, slept):
    scripted_server.add(Rule(status=429, retry_after=1.5, times=2))
    resp = await make().complete(ChatRequest(messages=MSGS, model="m"))
    assert resp.text == "OK" and resp.attempts == 3
    assert slept == [1.5, 1.5]
    assert len(scripted_server.requests) == 3


async def test_retry_after_is_capped(make, scripted_server, slept):
    scripted_server.add(Rule(status=503, retry_after=120, times=1))
    await make(max_wait=2).complete(ChatRequest(messages=MSGS, model="m"))
    assert slept == [2]


async def test_backoff_grows_exponentially_with_jitter(make, scripted_server, slept):
    scripted_server.add(Rule(status=500, times=3))
    resp = await make(max_retries=3, base_delay=0.5).complete(ChatRequest(messages=MSGS, model="m"))
    assert resp.attempts == 4 and len(slept) == 3
    for wait, base in zip(slept, [0.5, 1.0, 2.0]):
        assert base * 0.75 <= wait <= base * 1.25


async def test_gives_up_after_max_retries_with_reason(make, scripted_server, slept):
    scripted_server.add(Rule(status=500))
    with pytest.raises(LLMError) as err:
        await make(max_retries=2).complete(ChatRequest(messages=MSGS, model="m"))
    assert "HTTP 500" in str(err.value) and "after 3 attempts" in str(err.value)
    assert not err.value.retryable and err.value.status == 500
    assert len(scripted_server.requests) == 3


@pytest.mark.parametrize("status", [400, 401, 403, 404, 422])
async def test_client_errors_are_not_retried(make, scripted_server, slept, status):
    scripted_server.add(Rule(status=status))
    with pytest.raises(LLMError) as err:
        await make().complete(ChatRequest(messages=MSGS, model="m"))
    assert err.value.status == status and "attempts" not in str(err.value)
    assert len(scripted_server.requests) == 1 and slept == []


async def test_dropped_connection_then_success(make, scripted_server, slept):
    scripted_server.add(Rule(drop=True, times=2))
    resp = await make().complete(ChatRequest(messages=MSGS, model="m"))
    assert resp.attempts == 3


async def test_per_call_timeout_is_retried(make, scripted_server, slept):
    scripted_server.add(Rule(delay=2, times=1))
    resp = await make(base_delay=0).complete(ChatRequest(messages=MSGS, model="m", timeout=0.3))
    assert resp.attempts == 2 and slept == []


async def test_zero_base_delay_never_sleeps(make, scripted_server, slept):
    scripted_server.add(Rule(status=503, times=2))
    await make(base_delay=0).complete(ChatRequest(messages=MSGS, model="m"))
    assert slept == []


def test_policy_from_env(monkeypatch):
    monkeypatch.setenv("AGENTSPROOF_MAX_RETRIES", "7")
    monkeypatch.setenv("AGENTSPROOF_RETRY_BASE_DELAY", "0.25")
    monkeypatch.setenv("AGENTSPROOF_RETRY_MAX_WAIT", "9")
    p = RetryPolicy.from_env()
    assert (p.max_retries, p.base_delay, p.max_wait) == (7, 0.25, 9.0)
    monkeypatch.delenv("AGENTSPROOF_MAX_RETRIES")
    assert RetryPolicy.from_env().max_retries == 4


@pytest.mark.parametrize(
    "name, raw, problem",
    [
        ("AGENTSPROOF_MAX_RETRIES", "lots", "is not a whole number"),
        ("AGENTSPROOF_MAX_RETRIES", "2.5", "is not a whole number"),
        ("AGENTSPROOF_MAX_RETRIES", "-1", "must be between 0 and 100"),
        ("AGENTSPROOF_MAX_RETRIES", "1000", "must be between 0 and 100"),
        ("AGENTSPROOF_RETRY_BASE_DELAY", "soon", "is not a number"),
        ("AGENTSPROOF_RETRY_BASE_DELAY", "nan", "is not a finite number"),
        ("AGENTSPROOF_RETRY_MAX_WAIT", "inf", "is not a finite number"),
        ("AGENTSPROOF_RETRY_MAX_WAIT", "-3", "must be between"),
    ],
)
def test_malformed_retry_env_is_refused_naming_the_variable(monkeypatch, name, raw, problem):
    monkeypatch.setenv(name, raw)
    with pytest.raises(LLMError) as err:
        RetryPolicy.from_env()
    assert str(err.value).startswith(f"environment: {name}: {raw!r}") and problem in str(err.value)


def test_malformed_retry_env_makes_the_provider_unusable(monkeypatch, scripted_server):
    from agentsproof.core.errors import ProviderUnavailable
    from agentsproof.llm.registry import build_client

    monkeypatch.setenv("AGENTSPROOF_PROVIDER_URL", scripted_server.base_url)
    monkeypatch.setenv("AGENTSPROOF_PROVIDER_KEY", SECRET_KEY)
    monkeypatch.setenv("AGENTSPROOF_RETRY_MAX_WAIT", "30s")
    with pytest.raises(ProviderUnavailable, match="AGENTSPROOF_RETRY_MAX_WAIT: '30s' is not a number"):
        build_client("openai")


def test_wait_for_math():
    p = RetryPolicy(base_delay=1.0, max_wait=5.0, jitter=0.0)
    rng = random.Random(0)
    assert [p.wait_for(a, None, rng) for a in (1, 2, 3, 4)] == [1.0, 2.0, 4.0, 5.0]
    assert p.wait_for(1, 0.0, rng) == 0.0
    assert p.wait_for(1, 3.0, rng) == 3.0


async def test_the_final_error_keeps_the_providers_fix_advice():
    """A wrapped final error (after retries or a spent budget) keeps ``fix``, which doctor prints."""
    from agentsproof.llm.base import ChatResponse, LLMClient

    class Failing(LLMClient):
        name = "failing"

        async def complete(self, request: ChatRequest) -> ChatResponse:
            err = LLMError("worker crashed", retryable=True, kind="worker_crash")
            err.fix = "reinstall with portable flags"  # type: ignore[attr-defined]
            raise err

    client = RetryingClient(Failing(), RetryPolicy(max_retries=1, base_delay=0))
    with pytest.raises(LLMError) as info:
        await client.complete(ChatRequest(messages=[{"role": "user", "content": "x"}], model="m"))
    assert "after 2 attempts" in str(info.value)
    assert info.value.fix == "reinstall with portable flags"
