"""Convenience wrappers, as in the published SDK."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from agentsproof.sdk.run import AgentRun


def trace_llm(run: AgentRun, name: str, fn: Callable[[], Any], input: Any = None) -> Any:
    """``fn()`` traced as an ``llm_call`` step of ``run``; returns what ``fn`` returns."""
    return run.trace("llm_call", name, fn, input)


def trace_tool(run: AgentRun, name: str, fn: Callable[[], Any], input: Any = None) -> Any:
    """``fn()`` traced as a ``tool_call`` step of ``run``; returns what ``fn`` returns."""
    return run.trace("tool_call", name, fn, input)


async def atrace_llm(run: AgentRun, name: str, fn: Callable[[], Any], input: Any = None) -> Any:
    """``fn`` (sync or async) awaited and traced as an ``llm_call`` step of ``run``."""
    return await run.atrace("llm_call", name, fn, input)


async def atrace_tool(run: AgentRun, name: str, fn: Callable[[], Any], input: Any = None) -> Any:
    """``fn`` (sync or async) awaited and traced as a ``tool_call`` step of ``run``."""
    return await run.atrace("tool_call", name, fn, input)
