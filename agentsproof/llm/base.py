"""The one async interface every provider implements.

A provider turns a :class:`ChatRequest` into a :class:`ChatResponse`, or raises
:class:`LLMError` with a short reason. Nothing above this layer knows which provider
answered: runner, graders and generator only see these types.
"""

from __future__ import annotations

import abc
from dataclasses import dataclass, field
from typing import Any

from agentsproof.schemas.artifacts import Usage


@dataclass
class ChatRequest:
    messages: list[dict[str, str]]
    model: str
    temperature: float | None = None
    json_schema: dict[str, Any] | None = None
    """When set, ask for a JSON object following this schema (best effort per provider)."""
    max_tokens: int | None = None
    timeout: float | None = None
    """Per-call timeout in seconds."""


@dataclass
class ChatResponse:
    text: str
    usage: Usage = field(default_factory=Usage)
    latency_s: float = 0.0
    model: str = ""
    cost_usd: float | None = None
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    attempts: int = 1


def scrub(text: str, secrets: "list[str] | tuple[str, ...]") -> str:
    """``text`` with every secret (of 4+ characters) replaced by ``***``: for error reasons."""
    for secret in secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, "***")
    return text


class LLMError(Exception):
    """A provider call failed. ``str(err)`` is the reason shown on an errored trial."""

    def __init__(
        self,
        message: str,
        *,
        retryable: bool = False,
        status: int | None = None,
        retry_after: float | None = None,
        kind: str = "error",
    ):
        super().__init__(message)
        self.retryable = retryable
        self.status = status
        self.retry_after = retry_after
        self.kind = kind


class LLMClient(abc.ABC):
    """Base class of all providers."""

    name: str = "base"
    max_concurrency: int | None = None
    """Upper bound on concurrent calls this provider can usefully take (None: no bound)."""

    @abc.abstractmethod
    async def complete(self, request: ChatRequest) -> ChatResponse:
        """One chat completion. Raise LLMError on failure."""

    async def aclose(self) -> None:
        """Release connections, processes or models."""

    def describe(self) -> dict[str, Any]:
        """Non-secret facts for reports (never keys)."""
        return {"provider": self.name}
