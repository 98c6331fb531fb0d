"""Retries with exponential backoff and jitter, for every provider.

Retried: 429, 503 (and other 5xx), connection errors and per-call timeouts, i.e. any
:class:`LLMError` with ``retryable=True``. A ``Retry-After`` the server sends is honoured
(capped by ``max_wait``). Settings come from the environment so that CI can tune them:

- ``AGENTSPROOF_MAX_RETRIES`` (default 4)
- ``AGENTSPROOF_RETRY_BASE_DELAY`` seconds (default 0.5; 0 disables waiting, for tests)
- ``AGENTSPROOF_RETRY_MAX_WAIT`` seconds, the cap on one wait (default 30)
"""

from __future__ import annotations

import asyncio
import os
import random
import time
from dataclasses import dataclass
from typing import Awaitable, Callable

from agentsproof.llm.base import ChatRequest, ChatResponse, LLMClient, LLMError


def _env_float(name: str, default: float) -> float:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        return float(raw)
    except ValueError:
        return default


@dataclass
class RetryPolicy:
    max_retries: int = 4
    base_delay: float = 0.5
    max_wait: float = 30.0
    jitter: float = 0.25

    @classmethod
    def from_env(cls) -> "RetryPolicy":
        return cls(
            max_retries=max(0, int(_env_float("AGENTSPROOF_MAX_RETRIES", 4))),
            base_delay=max(0.0, _env_float("AGENTSPROOF_RETRY_BASE_DELAY", 0.5)),
            max_wait=max(0.0, _env_float("AGENTSPROOF_RETRY_MAX_WAIT", 30.0)),
        )

    def wait_for(self, attempt: int, retry_after: float | None, rng: random.Random) -> float:
        """Seconds to wait before retry number ``attempt`` (1-based)."""
        if retry_after is not None and retry_after >= 0:
            return min(retry_after, self.max_wait)
        if self.base_delay <= 0:
            return 0.0
        delay = self.base_delay * (2 ** (attempt - 1))
        delay *= 1 + rng.uniform(-self.jitter, self.jitter)
        return min(delay, self.max_wait)


class RetryingClient(LLMClient):
    """Wraps a provider with per-call timeout and retries. Keeps the provider's name."""

    def __init__(
        self,
        inner: LLMClient,
        policy: RetryPolicy | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        seed: int | None = None,
    ):
        self.inner = inner
        self.policy = policy or RetryPolicy.from_env()
        self.name = inner.name
        self.max_concurrency = inner.max_concurrency
        self._sleep = sleep
        self._rng = random.Random(seed)
        self.waits: list[float] = []

    async def complete(self, request: ChatRequest) -> ChatResponse:
        attempt = 0
        start = time.perf_counter()
        while True:
            attempt += 1
            try:
                if request.timeout:
                    try:
                        resp = await asyncio.wait_for(self.inner.complete(request), request.timeout)
                    except asyncio.TimeoutError:
                        raise LLMError(
                            f"timed out after {request.timeout:g}s", retryable=True, kind="timeout"
                        ) from None
                else:
                    resp = await self.inner.complete(request)
                resp.attempts = attempt
                return resp
            except LLMError as err:
                if not err.retryable or attempt > self.policy.max_retries:
                    if attempt > 1:
                        elapsed = time.perf_counter() - start
                        raise LLMError(
                            f"{err} (after {attempt} attempts, {elapsed:.1f}s)",
                            retryable=False,
                            status=err.status,
                            kind=err.kind,
                        ) from err
                    raise
                wait = self.policy.wait_for(attempt, err.retry_after, self._rng)
                self.waits.append(wait)
                if wait > 0:
                    await self._sleep(wait)

    async def aclose(self) -> None:
        await self.inner.aclose()

    def describe(self) -> dict:
        return self.inner.describe()
