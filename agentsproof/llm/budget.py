"""``--max-calls`` and ``--max-cost``: stop a run cleanly before it crosses a limit.

``BudgetClient`` wraps the provider (beneath the response cache, so a cached reply costs
nothing). Before every call it checks that one more call fits in ``max_calls`` and that
the call's worst case — its prompt (about 4 characters a token) plus its ``max_tokens``
(or ``DEFAULT_OUTPUT_TOKENS``) at the model's price — fits in what is left of
``max_cost``, counting calls still in flight at their worst case too. A call that does
not fit is never sent: the budget calls ``on_exhausted`` (the session stops the runner:
no new trial, trials in flight cancelled, an incomplete report, exit 30) and the call
fails. After a call its real cost (the provider's, else the price table's) replaces the
estimate. A provider retry of one call is the same call here.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from agentsproof.llm.base import ChatRequest, ChatResponse, LLMClient, LLMError
from agentsproof.llm.prices import Price, cost_usd, price_for
from agentsproof.model.results import Usage

T = TypeVar("T")

CHARS_PER_TOKEN = 4
DEFAULT_OUTPUT_TOKENS = 1024
"""Worst-case answer length assumed when a request sets no ``max_tokens``."""


class BudgetExhausted(LLMError):
    """A call refused because it would cross ``--max-calls`` or ``--max-cost``; never sent."""

    pass


def prompt_tokens(request: ChatRequest) -> int:
    """A request's prompt length in tokens, estimated at ``CHARS_PER_TOKEN`` characters a token."""
    chars = sum(len(m.get("content") or "") if isinstance(m.get("content"), str) else len(json.dumps(m.get("content"))) for m in request.messages)
    if request.json_schema:
        chars += len(json.dumps(request.json_schema))
    return chars // CHARS_PER_TOKEN + 8


@dataclass
class Budget:
    """What a run may still spend: the limits, the calls and USD so far, what is reserved for calls in flight."""

    max_calls: int | None = None
    max_cost: float | None = None
    prices: dict[str, Price] = field(default_factory=dict)
    free: bool = False
    """The provider costs nothing (the embedded local model)."""
    on_exhausted: Callable[[str], None] | None = None
    calls: int = 0
    spent: float = 0.0
    reserved: float = 0.0
    stopped: str | None = None

    def price(self, model: str) -> Price | None:
        """The price of ``model`` (USD per million tokens; zero for a free provider), or None when the price table has none."""
        return Price.of(0.0, 0.0) if self.free else price_for(model, self.prices)

    def _worst_case(self, request: ChatRequest) -> float:
        price = self.price(request.model)
        if price is None:
            return 0.0
        usage = Usage(prompt_tokens=prompt_tokens(request), completion_tokens=request.max_tokens or DEFAULT_OUTPUT_TOKENS)
        return cost_usd(price, usage) or 0.0

    def admit(self, request: ChatRequest) -> float:
        """Reserve one call (returns its reserved cost) or raise BudgetExhausted."""
        if self.stopped:
            raise BudgetExhausted(self.stopped)
        if self.max_calls is not None and self.calls + 1 > self.max_calls:
            self._stop(f"stopped before crossing --max-calls {self.max_calls}: {self.calls} calls made")
        est = self._worst_case(request)
        if self.max_cost is not None and self.spent + self.reserved + est > self.max_cost + 1e-12:
            self._stop(
                f"stopped before crossing --max-cost {self.max_cost:g} USD: ${self.spent:.4f} spent, "
                f"${self.reserved:.4f} in flight, the next call could cost up to ${est:.4f}"
            )
        self.calls += 1
        self.reserved += est
        return est

    def settle(self, reserved: float, response: ChatResponse | None, model: str) -> None:
        """After a call: free its reservation and add its real cost (the provider's, else the price table's; nothing when it failed)."""
        self.reserved = max(0.0, self.reserved - reserved)
        if response is None:
            return
        cost = response.cost_usd
        if cost is None:
            price = self.price(response.model or model) or self.price(model)
            cost = cost_usd(price, response.usage) if price is not None else None
        self.spent += cost or 0.0

    def _stop(self, reason: str) -> None:
        self.stopped = reason
        if self.on_exhausted is not None:
            self.on_exhausted(reason)
        raise BudgetExhausted(reason)

    def describe(self) -> dict[str, Any]:
        """Calls made, USD spent, the limits and why the budget stopped (None: it did not), for the report."""
        return {"calls": self.calls, "spent_usd": round(self.spent, 6), "max_calls": self.max_calls, "max_cost": self.max_cost, "stopped": self.stopped}


class BudgetClient(LLMClient):
    """A client whose calls are admitted by a :class:`Budget` first and settled after; keeps the provider's name."""

    def __init__(self, inner: LLMClient, budget: Budget):
        self.inner = inner
        self.budget = budget
        self.name = inner.name
        self.max_concurrency = inner.max_concurrency

    async def complete(self, request: ChatRequest) -> ChatResponse:
        """The inner client's reply once the budget admits the call; BudgetExhausted (nothing sent) when it does not."""
        return await self._admitted(request, lambda: self.inner.complete(request))

    async def embed(self, texts: list[str], model: str, timeout: float | None = None) -> list[list[float]]:
        """An embeddings call (the ``similar`` check's) counted against ``--max-calls`` like any
        call and refused past it; its cost is the provider's to report (none is added here)."""
        probe = ChatRequest(messages=[{"role": "user", "content": t} for t in texts], model=model, max_tokens=1)
        return await self._admitted(probe, lambda: self.inner.embed(texts, model, timeout))

    async def _admitted(self, request: ChatRequest, call: Callable[[], Awaitable[T]]) -> T:
        """``call()`` once the budget admits ``request``, its reservation settled after (with
        the reply's cost when it is a chat reply); BudgetExhausted (nothing sent) otherwise."""
        try:
            reserved = self.budget.admit(request)
        except BudgetExhausted:
            await asyncio.sleep(0)  # a trial the stop just cancelled ends here, as "not run"
            raise
        reply: T | None = None
        try:
            reply = await call()
            return reply
        finally:
            self.budget.settle(reserved, reply if isinstance(reply, ChatResponse) else None, request.model)

    async def aclose(self) -> None:
        """Close the inner client."""
        await self.inner.aclose()

    def describe(self) -> dict[str, Any]:
        """The inner client's facts (the budget is reported on its own)."""
        return self.inner.describe()


def budget_for(client: LLMClient, provider: str, models: tuple[str, str], max_calls: int | None, max_cost: float | None) -> tuple[Budget, LLMClient]:
    """The run's budget and the client that keeps to it; a --max-cost the price table cannot
    check (a model without a price) is an input error before the first call."""
    from agentsproof.core.errors import InputError
    from agentsproof.llm.prices import ENV_PRICES, load_prices
    from agentsproof.llm.registry import priced

    budget = Budget(max_calls=max_calls, max_cost=max_cost, prices=load_prices(), free=not priced(provider))
    if max_cost is not None:
        for model in dict.fromkeys(models):
            if model and budget.price(model) is None:
                raise InputError("command line", "--max-cost", f"no price for model {model!r}; add it to a JSON file named in {ENV_PRICES}")
    return budget, BudgetClient(client, budget)
