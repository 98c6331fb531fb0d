"""Convenience wrappers, as in the published SDK."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from agentsproof.sdk.run import AgentRun


def trace_llm(run: AgentRun, name: str, fn: Callable[[], Any], input: Any = None) -> Any:
    return run.trace("llm_call", name, fn, input)


def trace_tool(run: AgentRun, name: str, fn: Callable[[], Any], input: Any = None) -> Any:
    return run.trace("tool_call", name, fn, input)


async def atrace_llm(run: AgentRun, name: str, fn: Callable[[], Any], input: Any = None) -> Any:
    return await run.atrace("llm_call", name, fn, input)


async def atrace_tool(run: AgentRun, name: str, fn: Callable[[], Any], input: Any = None) -> Any:
    return await run.atrace("tool_call", name, fn, input)
