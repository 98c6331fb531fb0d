"""The models the server says answered: every distinct ``model`` a provider's replies name
(e.g. ``gpt-4o-2024-08-06`` for ``--model gpt-4o``), for the report's manifest
(agentsproof.executor.proof). One layer of the client stack (agentsproof.llm.stack); it
changes nothing of a call."""

from __future__ import annotations

import threading
from typing import Any

from agentsproof.llm.base import ChatRequest, ChatResponse, LLMClient

_lock = threading.Lock()
_seen: dict[str, set[str]] = {}
MAX_NAMES = 50


class ServedModels(LLMClient):
    """Hands every call on and notes, per requested model, the model the reply names."""

    def __init__(self, inner: LLMClient):
        self.inner = inner
        self.name = inner.name
        self.max_concurrency = inner.max_concurrency

    async def complete(self, request: ChatRequest) -> ChatResponse:
        """The inner client's reply, its model noted."""
        response = await self.inner.complete(request)
        if response.model:
            with _lock:
                names = _seen.setdefault(str(request.model or ""), set())
                if len(names) < MAX_NAMES:
                    names.add(str(response.model)[:200])
        return response

    async def aclose(self) -> None:
        """Close the inner client."""
        await self.inner.aclose()

    def describe(self) -> dict[str, Any]:
        """The inner client's description."""
        return self.inner.describe()


def reset() -> None:
    """Forget what was seen (a new run starts)."""
    with _lock:
        _seen.clear()


def take() -> dict[str, list[str]]:
    """Requested model → the models the replies named, sorted; forgotten then (one report's worth)."""
    with _lock:
        out = {k: sorted(v) for k, v in sorted(_seen.items())}
        _seen.clear()
        return out
