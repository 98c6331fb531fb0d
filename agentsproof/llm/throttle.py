"""Concurrency that adapts to rate limits (AIMD), per provider.

Under sustained 429s a fixed ``--parallel`` burns retries: every call that comes back
rate-limited is sent again into the same crowd. :class:`ThrottledClient` sits *inside*
the retry loop, so every attempt passes its :class:`AdaptiveLimiter`:

- a 429 halves the number of calls allowed in flight (multiplicative decrease), at most
  once per "generation" — the 429s of calls that started before the last decrease do not
  halve it again;
- each successful call adds ``1 / limit`` (additive increase: about +1 per limit's worth
  of successes), up to the ``--parallel`` the run asked for.

Retry-After is honoured by the retry loop as before. ``AGENTSPROOF_THROTTLE=off`` keeps
concurrency fixed (for comparisons; ``bench`` and the tests measure both).

Ours, not a library's: tenacity and stamina retry but do not limit the calls in flight, and
the rate limiters on PyPI (aiolimiter and the like) are fixed-rate leaky buckets, not a
limit that halves on a 429 and grows back with successes.
"""

from __future__ import annotations

import asyncio
import os
from collections import deque
from typing import Any

from agentsproof.llm.base import ChatRequest, ChatResponse, LLMClient, LLMError


class AdaptiveLimiter:
    """Slots for calls in flight; the number of slots follows AIMD. Single event loop."""

    def __init__(self, maximum: int, minimum: int = 1):
        self.maximum = max(1, maximum)
        self.minimum = max(1, min(minimum, self.maximum))
        self.limit = float(self.maximum)
        self.in_flight = 0
        self.generation = 0
        self.decreases = 0
        self.lowest = float(self.maximum)
        self._waiters: deque[asyncio.Future[None]] = deque()

    def set_maximum(self, maximum: int) -> None:
        """The run's --parallel: where the limit starts and the most it grows back to."""
        self.maximum = max(1, maximum)
        self.limit = float(self.maximum)
        self.lowest = self.limit

    def _allowed(self) -> int:
        return max(self.minimum, int(self.limit))

    async def acquire(self) -> int:
        """Wait for a free slot (first come, first served); returns the generation the call starts in."""
        if self.in_flight >= self._allowed() or self._waiters:
            fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._waiters.append(fut)
            try:
                await fut
            except BaseException:
                if fut.done() and not fut.cancelled():
                    self.in_flight -= 1  # the slot was handed over as we were cancelled: give it back
                    self._wake()
                elif fut in self._waiters:
                    self._waiters.remove(fut)
                raise
        else:
            self.in_flight += 1
        return self.generation

    def _wake(self) -> None:
        while self._waiters and self.in_flight < self._allowed():
            fut = self._waiters.popleft()
            if not fut.done():
                self.in_flight += 1
                fut.set_result(None)

    def release(self, generation: int, rate_limited: bool) -> None:
        """A call is done: a 429 of the current generation halves the limit, a success raises it by ``1 / limit``."""
        self.in_flight -= 1
        if rate_limited:
            if generation == self.generation:
                self.limit = max(float(self.minimum), self.limit / 2)
                self.generation += 1
                self.decreases += 1
                self.lowest = min(self.lowest, self.limit)
        else:
            self.limit = min(float(self.maximum), self.limit + 1.0 / max(self.limit, 1.0))
        self._wake()


def throttling_enabled() -> bool:
    """False when ``AGENTSPROOF_THROTTLE`` is ``off``, ``0``, ``false`` or ``no`` (concurrency stays fixed)."""
    return os.environ.get("AGENTSPROOF_THROTTLE", "").strip().lower() not in ("off", "0", "false", "no")


class ThrottledClient(LLMClient):
    """A provider whose calls pass an AdaptiveLimiter; keeps the provider's name."""

    def __init__(self, inner: LLMClient, maximum: int = 512):
        self.inner = inner
        self.name = inner.name
        self.max_concurrency = inner.max_concurrency
        self.limiter = AdaptiveLimiter(maximum)

    async def complete(self, request: ChatRequest) -> ChatResponse:
        """The inner client's reply, once the limiter gives a slot; a 429 lowers the limit."""
        generation = await self.limiter.acquire()
        limited = False
        try:
            return await self.inner.complete(request)
        except LLMError as err:
            limited = err.status == 429
            raise
        finally:
            self.limiter.release(generation, limited)

    async def aclose(self) -> None:
        """Close the inner client."""
        await self.inner.aclose()

    def describe(self) -> dict[str, Any]:
        """The inner client's facts."""
        return self.inner.describe()

    def stats(self) -> dict[str, Any]:
        """The limiter's figures for the report: its maximum, lowest and final limit and how often it halved."""
        lim = self.limiter
        return {"max": lim.maximum, "lowest": lim.lowest, "final": round(lim.limit, 2), "decreases": lim.decreases}
