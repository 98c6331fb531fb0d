"""The chat target: one chat completion with the arm's system prompt (the default mode).

With several skills installed (``trial.skills``: activation suites, the plugin arm) it
simulates an agent choosing among them: see :mod:`agentsproof.targets.chat.skill_choice`.
"""

from __future__ import annotations

import asyncio
from typing import Any

from agentsproof.core.units import seconds
from agentsproof.llm.base import ChatRequest, LLMClient, LLMError
from agentsproof.model.results import LogEvent, ToolCall
from agentsproof.targets.base import Target, TrialInput, TrialRecord, next_user_message

TIMEOUT_GRACE_S = 5.0
"""How far past the trial's timeout the target waits for a provider that overruns its budget."""
MAX_ARGUMENT_CHARS = 2_000


class ChatTarget(Target):
    """The built-in target: the run's model answers through the run's client, one call per trial (two for the plugin arm's simulated skill tool)."""

    kind = "chat"
    offers_skills = True  # the simulated skill tool (targets/chat/skill_choice.py)
    name = "chat"

    def __init__(self, client: LLMClient, model: str, *, temperature: float | None = None, max_tokens: int | None = None):
        self.client = client
        self.model = model
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.max_concurrency = client.max_concurrency

    def _temperature(self, trial: TrialInput) -> float | None:
        """The sampling temperature: the item's (a promptfoo provider's ``config.temperature``), else the target's."""
        return trial.item.temperature if trial.item.temperature is not None else self.temperature

    def _cap(self, trial: TrialInput) -> int | None:
        """The reply cap: the item's (eval.yaml ``defaults.max_tokens``), else the target's."""
        return trial.item.max_tokens if trial.item.max_tokens is not None else self.max_tokens

    async def _request(
        self,
        trial: TrialInput,
        messages: list[dict[str, str]],
        schema: dict[str, Any] | None = None,
        *,
        cap: bool = True,
    ) -> Any:
        req = ChatRequest(
            messages=messages,
            model=trial.item.model or self.model,
            temperature=self._temperature(trial),
            max_tokens=self._cap(trial) if cap else self.max_tokens,
            timeout=trial.timeout,
            extra=trial.item.body,
            budget=trial.timeout,
            json_schema=schema,
            slot=trial.slot,
        )
        try:
            async with asyncio.timeout(trial.timeout + TIMEOUT_GRACE_S):  # wait_for's bound without its extra task
                resp = await self.client.complete(req)
        except TimeoutError:
            raise LLMError(f"trial timed out after {seconds(trial.timeout)}", kind="timeout") from None
        if not isinstance(resp.text, str):
            raise LLMError(f"the provider's reply has no text ({type(resp.text).__name__})")
        return resp

    async def _choose(self, trial: TrialInput) -> TrialRecord:
        """The simulated skill tool: one call to choose, then (when a skill was chosen and
        the trial grades something) one call to answer with it."""
        from agentsproof.targets.chat import skill_choice as cat

        skills = [s for s in trial.skills if s.kind == "skill"]
        messages = [{"role": "system", "content": cat.choice_system(skills, trial.system)}, {"role": "user", "content": trial.prompt}]
        # the choice is a short JSON object the simulator reads, not a reply: never cut it off
        first = await self._request(trial, messages, cat.CHOICE_SCHEMA, cap=False)
        name = cat.parse_choice(first.text, [s.name for s in skills])  # an invalid choice: an errored trial
        usage, cost, latency, answer = first.usage, first.cost_usd, first.latency_s, first.text
        trajectory = [ToolCall(name=cat.SKILL_TOOL, arguments=f'{{"skill": "{name}"}}')] if name else []
        if name is not None and trial.item.case_at(trial.index).graders:
            skill = next(s for s in skills if s.name == name)
            messages += [{"role": "assistant", "content": first.text}, {"role": "user", "content": cat.loaded_message(skill)}]
            second = await self._request(trial, messages)
            usage = usage + second.usage
            cost = None if first.cost_usd is None or second.cost_usd is None else first.cost_usd + second.cost_usd
            latency, answer = latency + second.latency_s, second.text
        chosen = trial.skill is not None and name == trial.skill.name
        return TrialRecord(
            answer=answer,
            trajectory=trajectory,
            usage=usage,
            cost_usd=cost,
            latency_s=latency,
            cached=first.cached,
            skill_used=chosen if trial.skill is not None else None,
            skills_invoked=[name] if name else [],
        )

    async def run(self, trial: TrialInput) -> TrialRecord:
        """One chat call; in a multi-turn trial, one more per user message (``turns``, then
        the simulated user), each sent with the conversation so far (the last reply is graded). With several skills installed: the simulated choice."""
        if trial.skills:
            return await self._choose(trial)
        messages = [{"role": "system", "content": trial.system}, {"role": "user", "content": trial.prompt}]
        loop = asyncio.get_running_loop()
        deadline = loop.time() + trial.timeout
        record: TrialRecord | None = None
        n = 0
        while True:
            left = deadline - loop.time()
            if n and left <= 0:
                raise LLMError(f"trial timed out after {seconds(trial.timeout)} (at turn {n + 1})", kind="timeout")
            one = await self._call(
                messages,
                trial.timeout if n == 0 else left,
                trial.timeout,
                trial.item.model or self.model,
                self._cap(trial),
                trial.slot,
                self._temperature(trial),
                trial.item.body,
            )
            if record is None:
                record = one
            else:
                record.answer = one.answer
                record.trajectory += one.trajectory
                record.raw_tool_calls += one.raw_tool_calls
                record.usage = record.usage + one.usage
                record.cost_usd = None if record.cost_usd is None or one.cost_usd is None else record.cost_usd + one.cost_usd
                record.latency_s += one.latency_s
                record.cached = record.cached and one.cached
            record.replies.append(one.answer)
            messages.append({"role": "assistant", "content": one.answer})
            follow_up = await next_user_message(trial, messages[1:])
            if follow_up is None:
                return record
            record.log.append(LogEvent(t=record.latency_s, role="assistant", text=one.answer))
            record.log.append(LogEvent(t=record.latency_s, role="user", text=follow_up))
            messages.append({"role": "user", "content": follow_up})
            n += 1

    async def _call(
        self,
        messages: list[dict[str, str]],
        budget: float,
        timeout: float,
        model: str,
        max_tokens: int | None,
        slot: tuple[str, str, int] | None,
        temperature: float | None,
        extra: dict[str, Any] | None = None,
    ) -> TrialRecord:
        req = ChatRequest(
            messages=list(messages),
            model=model,
            temperature=temperature,
            max_tokens=max_tokens,
            extra=extra,
            timeout=budget,
            budget=budget,
            slot=slot,
        )
        try:
            # The retry loop keeps every attempt and wait inside the budget and says why it
            # stopped; this outer bound only catches a provider that ignores it.
            async with asyncio.timeout(budget + TIMEOUT_GRACE_S):
                resp = await self.client.complete(req)
        except TimeoutError:
            raise LLMError(f"trial timed out after {seconds(timeout)}", kind="timeout") from None
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
        """Empty: the chat target adds nothing to the run's settings (its provider and model are the run's)."""
        return {}

    async def aclose(self) -> None:
        """Nothing to close: the session owns the client."""
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
