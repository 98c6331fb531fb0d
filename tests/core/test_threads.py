"""core/threads: blocking work on agentsproof's own threads, never the loop's: the call
runs off the loop's thread, in the caller's context, and its result or exception comes back."""

from __future__ import annotations

import contextvars
import threading

import pytest

from agentsproof.core.threads import to_thread

WHO: contextvars.ContextVar[str] = contextvars.ContextVar("who", default="nobody")


async def test_it_runs_on_one_of_our_threads_with_the_callers_context() -> None:
    WHO.set("trial-1")

    def where(x: int, *, y: int) -> tuple[str, str, int]:
        return threading.current_thread().name, WHO.get(), x + y

    name, who, total = await to_thread(where, 1, y=2)
    assert name.startswith("agentsproof-io") and name != threading.current_thread().name
    assert who == "trial-1" and total == 3


async def test_an_exception_comes_back_to_the_caller() -> None:
    def fail() -> None:
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        await to_thread(fail)
