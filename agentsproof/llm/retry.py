"""Retries with exponential backoff and jitter, for every provider, within a time budget.

Retried: 429, 503 (and other 5xx), connection errors, malformed replies and per-attempt
timeouts, i.e. any :class:`LLMError` with ``retryable=True``. A ``Retry-After`` the server
sends is honoured (capped by ``max_wait``).

**Time budget.** A request may carry a ``budget`` (seconds for the whole call, retries and
waits included: the eval's ``timeout``) and/or an absolute ``deadline``. Each attempt then
gets ``min(request.timeout, ATTEMPT_SHARE * budget, time left)`` seconds; the default share
of one half means a timed-out first attempt still leaves room for one retry. A timed-out
attempt is retried while budget remains; a wait that would end past the deadline is not
taken, and the call fails with its last error and the budget named. Without a budget, each
attempt gets ``request.timeout`` (or the provider's own default) as before.

Settings come from the environment so that CI can tune them; a malformed value is an
:class:`LLMError` naming the variable:

- ``AGENTSPROOF_MAX_RETRIES`` (default 4, 0..100)
- ``AGENTSPROOF_RETRY_BASE_DELAY`` seconds (default 0.5; 0 disables waiting, for tests)
- ``AGENTSPROOF_RETRY_MAX_WAIT`` seconds, the cap on one wait (default 30)

**Why not tenacity or stamina** (measured by ``bench/retry_overhead.py``, figures in
docs/benchmarks.md): either would replace only the loop in :meth:`RetryingClient.complete`;
the per-attempt share of the budget, the deadline check, ``Retry-After`` capped by
``max_wait`` (stamina passes a hook's wait on uncapped), the final error that names the
attempts and the budget, and the waits recorded for the tests stay ours, as callbacks.
For that, tenacity costs 2.1x this wrapper's CPU per call (stamina, built on it, 2.7x) and
about 12 ms of import on the way to the first call (5 % of the 0.25 s start-up). The AIMD
limiter (:mod:`agentsproof.llm.throttle`) has no counterpart in either: they retry, they
do not limit the calls in flight.
"""

from __future__ import annotations

import asyncio
import dataclasses
import math
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeGuard

from agentsproof.core.scrub import scrub_text
from agentsproof.core.units import seconds
from agentsproof.llm.base import ChatRequest, ChatResponse, LLMClient, LLMError, provider_setting

ATTEMPT_SHARE = 0.5
"""Share of a request's budget one attempt may use when the request sets a budget."""
MIN_ATTEMPT_S = 0.05
"""An attempt is not started with less time than this left: the budget is spent."""
MAX_RETRIES_LIMIT = 100
MAX_DELAY_S = 3600.0

ENV_MAX_RETRIES = "AGENTSPROOF_MAX_RETRIES"
ENV_BASE_DELAY = "AGENTSPROOF_RETRY_BASE_DELAY"
ENV_MAX_WAIT = "AGENTSPROOF_RETRY_MAX_WAIT"


@dataclass
class RetryPolicy:
    """How often and how long to retry: retries after the first attempt, backoff base and cap on one wait (seconds), jitter (± share of a delay)."""

    max_retries: int = 4
    base_delay: float = 0.5
    max_wait: float = 30.0
    jitter: float = 0.25

    @classmethod
    def from_env(cls) -> RetryPolicy:
        """The policy from the environment; LLMError naming the variable when one is malformed."""
        return cls(
            max_retries=int(provider_setting(ENV_MAX_RETRIES, 4, lo=0, hi=MAX_RETRIES_LIMIT, whole=True)),
            base_delay=provider_setting(ENV_BASE_DELAY, 0.5, lo=0, hi=MAX_DELAY_S),
            max_wait=provider_setting(ENV_MAX_WAIT, 30.0, lo=0, hi=MAX_DELAY_S),
        )

    def wait_for(self, attempt: int, retry_after: float | None, rng: random.Random) -> float:
        """Seconds to wait before retry number ``attempt`` (1-based)."""
        if retry_after is not None and math.isfinite(retry_after) and retry_after >= 0:
            return min(retry_after, self.max_wait)
        if self.base_delay <= 0:
            return 0.0
        delay = self.base_delay * (2 ** min(attempt - 1, 60))
        delay *= 1 + rng.uniform(-self.jitter, self.jitter)
        wait: float = min(delay, self.max_wait)
        return wait


def _finite(value: float | None) -> TypeGuard[float]:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def request_deadline(request: ChatRequest, now: float) -> float | None:
    """The absolute ``time.monotonic()`` instant the call must end by, if any."""
    ends = [d for d in (request.deadline,) if _finite(d)]
    if _finite(request.budget) and request.budget > 0:
        ends.append(now + request.budget)
    return min(ends) if ends else None


def attempt_timeout(request: ChatRequest, total: float | None, left: float | None) -> float | None:
    """Seconds for one attempt: ``min(request.timeout, ATTEMPT_SHARE * total, left)``."""
    limits = [t for t in (request.timeout,) if _finite(t) and t > 0]
    if total is not None:
        limits.append(max(ATTEMPT_SHARE * total, MIN_ATTEMPT_S))
    if left is not None:
        limits.append(left)
    return min(limits) if limits else None


class RetryingClient(LLMClient):
    """Wraps a provider with per-attempt timeouts, a time budget and retries. Keeps the provider's name."""

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

    async def _attempt(self, request: ChatRequest, timeout: float | None) -> ChatResponse:
        try:
            if not timeout:  # no limit: an infinite or odd request.timeout is not passed on
                return await self.inner.complete(request if _finite(request.timeout) else dataclasses.replace(request, timeout=None))
            async with asyncio.timeout(timeout):  # wait_for's bound, in this task (no task per attempt, as wait_for since 3.12)
                return await self.inner.complete(dataclasses.replace(request, timeout=timeout))
        except TimeoutError:
            raise LLMError(f"timed out after {seconds(timeout or 0.0)}", retryable=True, kind="timeout") from None
        except LLMError:
            raise
        except Exception as exc:  # noqa: BLE001 - a provider bug is an errored call with its reason, not a crash
            detail = scrub_text(" ".join(f"{type(exc).__name__}: {exc}".split()))[:300]
            raise LLMError(f"provider {self.name} failed unexpectedly: {detail}", kind="error") from None

    async def complete(self, request: ChatRequest) -> ChatResponse:
        """The inner client's reply, retrying retryable LLMErrors within the request's budget; the last error (attempts named) otherwise."""
        attempt = 0
        start = time.perf_counter()
        now = time.monotonic()
        deadline = request_deadline(request, now)
        total = None if deadline is None else deadline - now
        while True:
            attempt += 1
            left = None if deadline is None else deadline - time.monotonic()
            try:
                if left is not None and left < MIN_ATTEMPT_S:
                    raise LLMError("no time left before the deadline", kind="timeout")
                resp = await self._attempt(request, attempt_timeout(request, total, left))
                resp.attempts = attempt
                return resp
            except LLMError as err:
                wait = self.policy.wait_for(attempt, err.retry_after, self._rng) if err.retryable else 0.0
                out_of_time = deadline is not None and time.monotonic() + wait + MIN_ATTEMPT_S > deadline
                if not err.retryable or attempt > self.policy.max_retries or out_of_time:
                    budget_spent = err.retryable and out_of_time and attempt <= self.policy.max_retries
                    final = self._final(err, attempt, start, total if budget_spent else None)
                    if final is err:
                        raise
                    raise final from err
                self.waits.append(wait)
                if wait > 0:
                    await self._sleep(wait)

    @staticmethod
    def _final(err: LLMError, attempt: int, start: float, budget: float | None) -> LLMError:
        if attempt <= 1 and budget is None:
            return err
        elapsed = time.perf_counter() - start
        where = f"after {attempt} attempt{'s' if attempt > 1 else ''}, {elapsed:.1f}s"
        if budget is not None:
            where += f"; no retry fits in the {budget:.3g}s budget"
        final = LLMError(f"{err} ({where})", retryable=False, status=err.status, kind=err.kind)
        fix = getattr(err, "fix", None)  # e.g. a crashed local worker's advice, which doctor prints
        if fix:
            final.fix = fix  # type: ignore[attr-defined]
        return final

    async def aclose(self) -> None:
        """Close the inner client."""
        await self.inner.aclose()

    def describe(self) -> dict:
        """The inner client's facts."""
        return self.inner.describe()
