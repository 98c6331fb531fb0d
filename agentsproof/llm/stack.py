"""A run's client stack, built in one place.

provider → throttle (rate-limited HTTP APIs) → retry → the models the replies name
(``served``, for the report's manifest) → budget (``--max-calls`` /
``--max-cost``) → response cache (``--cache``). The layers a run reads again (the throttle's
statistics, the budget, the cache's hit counts) are kept by reference in the
:class:`ClientStack`, never looked up by walking the chain.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentsproof.llm.base import LLMClient
from agentsproof.llm.registry import build_layers, resolve_choice

if TYPE_CHECKING:
    from agentsproof.llm.budget import Budget
    from agentsproof.llm.cache import ResponseCache
    from agentsproof.llm.throttle import ThrottledClient


@dataclass(frozen=True)
class StackOptions:
    """How a run's stack is built beyond the provider itself (defaults: no limits, no cache)."""

    prompt_cache: bool = True
    parallel: int | None = None
    """The throttle's ceiling (the run's ``--parallel``); None: the limiter's own."""
    max_calls: int | None = None
    max_cost: float | None = None
    cache_dir: Path | None = None
    """The response cache's folder; None: no response cache."""


@dataclass
class ClientStack:
    """The trial and judge models and the client every call of a run goes through."""

    provider: str
    model: str
    judge_model: str
    client: LLMClient | None
    """The outermost layer; None when nothing in the run calls a model (agent targets graded
    without a judge)."""
    described: dict[str, Any]
    """What the provider says of itself (``client`` settings of the report), without its name."""
    throttle: ThrottledClient | None = None
    budget: Budget | None = None
    cache: ResponseCache | None = None

    def throttle_stats(self) -> dict[str, Any] | None:
        """The AIMD limiter's record, when it ever lowered its limit (else None)."""
        if self.throttle is None or not self.throttle.limiter.decreases:
            return None
        return self.throttle.stats()


def no_model(model: str | None) -> ClientStack:
    """A run in which the harness calls no model itself."""
    return ClientStack(provider="none", model=model or "", judge_model="", client=None, described={})


def build_stack(provider: str | None, model: str | None, judge_model: str | None, options: StackOptions = StackOptions()) -> ClientStack:
    """The provider resolved (``auto``, env), its models chosen, and every layer built."""
    name, choice = resolve_choice(provider, model, judge_model)
    client, throttle = build_layers(name, prompt_cache=options.prompt_cache)
    described = {k: v for k, v in client.describe().items() if k != "provider"}
    from agentsproof.llm.served import ServedModels, reset

    reset()  # a new run: the models its replies name (the report's manifest)
    client = ServedModels(client)
    if throttle is not None and options.parallel is not None:
        throttle.limiter.set_maximum(options.parallel)
    budget = None
    if options.max_calls is not None or options.max_cost is not None:
        from agentsproof.llm.budget import budget_for

        budget, client = budget_for(client, name, (choice.model, choice.judge_model), options.max_calls, options.max_cost)
    cache = None
    if options.cache_dir is not None:
        from agentsproof.llm.cache import CachingClient, ResponseCache

        cache = ResponseCache(options.cache_dir)
        client = CachingClient(client, cache)
    return ClientStack(name, choice.model, choice.judge_model, client, described, throttle, budget, cache)
