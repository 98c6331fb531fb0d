"""The one async interface every provider implements.

A provider turns a :class:`ChatRequest` into a :class:`ChatResponse`, or raises
:class:`LLMError` with a short reason. Nothing above this layer knows which provider
answered: runner, graders and generator only see these types.
"""

from __future__ import annotations

import abc
from dataclasses import dataclass, field
from typing import Any

from agentsproof.core.errors import LLMError as LLMError  # the provider layer's error type, re-exported
from agentsproof.model.results import Usage


@dataclass
class ChatRequest:
    """What one chat completion is asked for: messages, model and sampling, timeouts and the trial slot."""

    messages: list[dict[str, str]]
    model: str
    temperature: float | None = None
    json_schema: dict[str, Any] | None = None
    """When set, ask for a JSON object following this schema (best effort per provider)."""
    max_tokens: int | None = None
    timeout: float | None = None
    """Per-attempt timeout in seconds (one HTTP call / one session)."""
    budget: float | None = None
    """Seconds the whole call may take, retries and waits included (the eval's ``timeout``).
    :class:`~agentsproof.llm.retry.RetryingClient` gives each attempt
    ``min(timeout, ATTEMPT_SHARE * budget, time left)`` and never waits past the budget."""
    deadline: float | None = None
    """The same as an absolute ``time.monotonic()`` instant, shared by several calls (the
    judge calls of one trial); the earlier of ``deadline`` and ``now + budget`` counts."""
    extra: dict[str, Any] | None = None
    """Request-body fields sent as given (a promptfoo provider's ``config``: ``response_format``,
    ``seed``, ``stop`` …); the OpenAI-compatible client sends them, any other raises LLMError
    naming them (:func:`refuse_extra`): never dropped."""
    slot: tuple[str, str, int] | None = None
    """The trial the call is made for (item, arm, trial index; the judge's calls share their
    trial's): the response cache keys by it, so N trials of one prompt stay N samples."""


@dataclass
class ChatResponse:
    """One chat completion: its text, token usage, latency in seconds, cost in USD (None: unknown) and tool calls."""

    text: str
    usage: Usage = field(default_factory=Usage)
    latency_s: float = 0.0
    model: str = ""
    cost_usd: float | None = None
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    attempts: int = 1
    cached: bool = False
    """Served from the response cache (agentsproof.llm.cache): no call was made."""


def provider_setting(name: str, default: float, *, lo: float | None = None, hi: float | None = None, whole: bool = False) -> float:
    """An ``AGENTSPROOF_*`` number a provider reads when it is built: the shared env reader
    (:mod:`agentsproof.core.envcfg`), with a malformed or out-of-range value as an
    ``LLMError(kind="config")`` naming the variable (the provider layer's error type)."""
    from agentsproof.core.envcfg import env_int, env_number
    from agentsproof.core.errors import InputError

    try:
        if whole:
            return env_int(name, int(default), lo=None if lo is None else int(lo), hi=None if hi is None else int(hi))
        return env_number(name, default, lo=lo, hi=hi)
    except InputError as err:
        raise LLMError(err.format(), kind="config") from None


class LLMClient(abc.ABC):
    """Base class of all providers."""

    name: str = "base"
    max_concurrency: int | None = None
    """Upper bound on concurrent calls this provider can usefully take (None: no bound)."""

    @abc.abstractmethod
    async def complete(self, request: ChatRequest) -> ChatResponse:
        """One chat completion. Raise LLMError on failure."""

    async def embed(self, texts: list[str], model: str, timeout: float | None = None) -> list[list[float]]:
        """One embedding vector per text (an OpenAI-compatible ``/embeddings`` call). A wrapper
        of the client stack (retry, throttle, budget, cache: an ``inner`` client) hands the call
        on; a provider without an embeddings API raises LLMError saying so."""
        inner = getattr(self, "inner", None)
        if isinstance(inner, LLMClient):
            return await inner.embed(texts, model, timeout)
        raise LLMError(f"the {self.name} provider has no embeddings API (similar needs an OpenAI-compatible provider)", kind="config")

    async def aclose(self) -> None:
        """Release connections, processes or models (by default there are none)."""
        return None

    def describe(self) -> dict[str, Any]:
        """Non-secret facts for reports (never keys)."""
        return {"provider": self.name}


def refuse_extra(request: ChatRequest, provider: str) -> None:
    """LLMError naming the request-body fields (:attr:`ChatRequest.extra`) a provider without an
    OpenAI-compatible body cannot send: a field the eval file set is never silently dropped."""
    if request.extra:
        names = ", ".join(sorted(request.extra))
        raise LLMError(f"the {provider} provider cannot send {names} (a provider config field); run on an OpenAI-compatible provider", kind="config")
