"""A run's client stack is built in one place (agentsproof.llm.stack): provider → throttle →
retry → served models (the manifest's record) → budget → response cache, and the layers a run reads back (the throttle's record,
the budget, the cache's counts) are the very objects in the chain, kept by reference."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from conftest import Rule

from agentsproof.llm.base import ChatRequest
from agentsproof.llm.budget import BudgetClient
from agentsproof.llm.cache import CachingClient
from agentsproof.llm.retry import RetryingClient
from agentsproof.llm.served import ServedModels
from agentsproof.llm.stack import StackOptions, build_stack
from agentsproof.llm.throttle import ThrottledClient


def test_every_layer_in_order_and_kept_by_reference(byok_env: Any, tmp_path: Path) -> None:
    byok_env.add(Rule(reply="hello", judge=False))
    stack = build_stack("openai", "m", None, StackOptions(parallel=7, max_calls=2, cache_dir=tmp_path / "cache"))
    assert (stack.provider, stack.model, stack.judge_model) == ("openai", "m", "m")
    cache = stack.client
    assert isinstance(cache, CachingClient) and cache.cache is stack.cache
    budget = cache.inner
    assert isinstance(budget, BudgetClient) and budget.budget is stack.budget
    served = budget.inner
    assert isinstance(served, ServedModels)
    retry = served.inner
    assert isinstance(retry, RetryingClient)
    assert retry.inner is stack.throttle and isinstance(stack.throttle, ThrottledClient)
    assert stack.throttle.limiter.maximum == 7  # --parallel is the limiter's ceiling
    assert "provider" not in stack.described

    async def two_calls() -> None:
        try:
            for i in range(2):
                await stack.client.complete(ChatRequest(messages=[{"role": "user", "content": f"hi {i}"}], model="m"))
        finally:
            await stack.client.aclose()

    asyncio.run(two_calls())
    assert stack.cache.misses == 2 and stack.budget.describe()["calls"] == 2
    assert stack.throttle_stats() is None  # never backed off: nothing to record


def test_no_budget_and_no_cache_unless_asked(byok_env: Any) -> None:
    stack = build_stack("openai", "m", "j")
    assert isinstance(stack.client, ServedModels) and isinstance(stack.client.inner, RetryingClient)
    assert stack.budget is None and stack.cache is None and stack.judge_model == "j"


def test_throttle_off_leaves_no_throttle(byok_env: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTSPROOF_THROTTLE", "off")
    stack = build_stack("openai", "m", None, StackOptions(parallel=3))
    retry = stack.client.inner  # below the served-models layer
    assert stack.throttle is None and isinstance(retry, RetryingClient)
    assert not isinstance(retry.inner, ThrottledClient)


def test_embedding_calls_count_against_max_calls(byok_env: Any) -> None:
    """The similar check's /embeddings calls go through the budget: counted, and refused (never
    sent) past --max-calls."""
    from agentsproof.llm.budget import BudgetExhausted

    stack = build_stack("openai", "m", None, StackOptions(parallel=2, max_calls=1))

    async def two() -> None:
        try:
            vectors = await stack.client.embed(["a b", "b c"], "text-embedding-3-large")
            assert len(vectors) == 2
            with pytest.raises(BudgetExhausted):
                await stack.client.embed(["again"], "text-embedding-3-large")
        finally:
            await stack.client.aclose()

    asyncio.run(two())
    assert stack.budget is not None and stack.budget.describe()["calls"] == 1
    assert len(byok_env.embedding_requests) == 1
