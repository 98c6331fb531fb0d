"""Blocking work off the event loop, on agentsproof's own threads.

:func:`to_thread` is ``asyncio.to_thread`` on a pool of our own: a trial's file work (the
workspace's seed copy, snapshots and deletion, an agent's harness, its event stream, the
files grader) never waits in the loop's default executor behind an SDK's own work (the
Copilot SDK writes every JSON-RPC message through it), nor holds it up. The context
(e.g. the trial's phase timer, :mod:`agentsproof.core.phases`) goes with the call.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")

WORKERS = min(32, (os.cpu_count() or 1) + 4)
_pool: ThreadPoolExecutor | None = None


def _executor() -> ThreadPoolExecutor:
    global _pool
    if _pool is None:
        _pool = ThreadPoolExecutor(max_workers=WORKERS, thread_name_prefix="agentsproof-io")
    return _pool


async def to_thread(fn: Callable[P, R], /, *args: P.args, **kwargs: P.kwargs) -> R:
    """``fn(*args, **kwargs)`` on one of our threads, awaited; the caller's context goes along."""
    loop = asyncio.get_running_loop()
    call = functools.partial(contextvars.copy_context().run, fn, *args, **kwargs)
    return await loop.run_in_executor(_executor(), call)
