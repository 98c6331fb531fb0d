"""The chat target: one chat completion with the arm's system prompt (the default mode)."""

from __future__ import annotations

import asyncio
from typing import Any

from agentsproof.core.units import seconds
from agentsproof.llm.base import ChatRequest, LLMClient, LLMError
from agentsproof.model.results import ToolCall
from agentsproof.targets.base import Target, TrialInput, TrialRecord

TIMEOUT_GRACE_S = 5.0
"""How far past the trial's timeout the target waits for a provider that overruns its budget."""
MAX_ARGUMENT_CHARS = 2_000


class ChatTarget(Target):
    kind = "chat"
    name = "chat"

    def __init__(self, client: LLMClient, model: str, *, temperature: float | None = None, max_tokens: int | None = None):
        self.client = client
        self.model = model
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.max_concurrency = client.max_concurrency

    async def run(self, trial: TrialInput) -> TrialRecord:
        req = ChatRequest(
            messages=[{"role": "system", "content": trial.system}, {"role": "user", "content": trial.prompt}],
            model=trial.item.model or self.model,
            temperature=self.temperature,
            max_tokens=self.max_tokens,
            timeout=trial.timeout,
            budget=trial.timeout,
        )
        try:
            # The retry loop keeps every attempt and wait inside the budget and says why it
            # stopped; this outer bound only catches a provider that ignores it.
            resp = await asyncio.wait_for(self.client.complete(req), trial.timeout + TIMEOUT_GRACE_S)
        except TimeoutError:
            raise LLMError(f"trial timed out after {seconds(trial.timeout)}", kind="timeout") from None
        if not isinstance(resp.text, str):
            raise LLMError(f"the provider's reply has no text ({type(resp.text).__name__})")
        return TrialRecord(
            answer=resp.text,
            trajectory=[_step(call) for call in resp.tool_calls],
            usage=resp.usage,
            cost_usd=resp.cost_usd,
            latency_s=resp.latency_s,
            cached=resp.cached,
            raw_tool_calls=list(resp.tool_calls),
        )

    def describe(self) -> dict[str, Any]:
        return {}

    async def aclose(self) -> None:
        return None  # the session owns the client


def _step(call: dict[str, Any]) -> ToolCall:
    args = call.get("arguments", "")
    if not isinstance(args, str):
        import json

        try:
            args = json.dumps(args, ensure_ascii=False)
        except (TypeError, ValueError):
            args = str(args)
    return ToolCall(name=str(call.get("name", "")), arguments=args[:MAX_ARGUMENT_CHARS])
