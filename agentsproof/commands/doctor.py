"""``agentsproof doctor``: the installed plugins, then one real call to the configured provider."""

from __future__ import annotations

import asyncio
import sys
import time

from agentsproof.core.errors import EXIT_ERROR, EXIT_OK, AgentsproofError
from agentsproof.executor.session import prepare_provider


def doctor(provider: str | None = None, model: str | None = None, judge_model: str | None = None) -> int:
    """Print what the provider is and one call's latency, tokens and reply; exit 0 when the call answers, 30 when not."""
    from agentsproof.commands.plugins import plugin_statuses
    from agentsproof.llm.base import ChatRequest, ChatResponse, LLMError

    out = sys.stdout
    for status in plugin_statuses():  # nothing when no plugin is installed
        print(status.line(), file=out)
    try:
        prepared = prepare_provider(provider, model, judge_model)
    except AgentsproofError as err:
        print(f"provider: not usable\nfix: {err}", file=out)
        return EXIT_ERROR
    client = prepared.client
    if client is None:  # prepare_provider always builds one
        print("provider: not usable\nfix: no client was built for it", file=out)
        return EXIT_ERROR
    print(f"provider: {prepared.provider}", file=out)
    print(f"model: {prepared.model}", file=out)
    if prepared.judge_model != prepared.model:
        print(f"judge model: {prepared.judge_model}", file=out)
    for k, v in client.describe().items():
        if k != "provider" and v:
            print(f"{k}: {v}", file=out)

    async def _call() -> ChatResponse:
        try:
            return await client.complete(
                ChatRequest(
                    messages=[{"role": "user", "content": "Reply with the single word: ready"}],
                    model=prepared.model,
                    temperature=0.0,
                    max_tokens=8,
                    timeout=120,
                )
            )
        finally:
            await client.aclose()

    t0 = time.perf_counter()
    try:
        resp = asyncio.run(_call())
    except LLMError as err:
        print(f"call: FAILED after {time.perf_counter() - t0:.2f}s: {err}", file=out)
        fix = getattr(err, "fix", None)  # e.g. the local provider's crashed-worker advice
        print(f"fix: {fix or 'check the provider settings above (URL, key, model name) and that the service is running'}", file=out)
        return EXIT_ERROR
    print(f"latency: {resp.latency_s:.2f}s", file=out)
    print(f"tokens: {resp.usage.total_tokens}", file=out)
    print(f"reply: {resp.text.strip()[:80]!r}", file=out)
    print("status: ok", file=out)
    return EXIT_OK
