"""The simulated user of a multi-turn trial (eval.yaml ``user:``), played by the judge model.

After each reply of the agent the judge gets the persona, the goal and the conversation
so far, and answers with the user's next message, or ``DONE`` once the goal is met (or
after ``max_turns`` follow-ups, when the user stops anyway). Replies are remembered per
run by (persona, goal, conversation): both arms, and every trial, meet the same user for
the same state of the conversation, so the arms differ by the agent's replies alone. A
judge failure is an errored trial.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Awaitable, Callable

from agentsproof.grading.judge import Judge
from agentsproof.llm.base import ChatRequest, LLMError
from agentsproof.model.items import SimulatedUser

MARKER = "You play the user in a conversation with an AI assistant."
DONE = "DONE"
MAX_REPLY_CHARS = 4_000
TIMEOUT_S = 120.0


def _system(user: SimulatedUser) -> str:
    return (
        f"{MARKER}\n\nWho you are: {user.persona}\nWhat you want: {user.goal}\n\n"
        "Reply with the user's next message only, in the user's own words (no quotes, no role label). "
        f"When the assistant has given you what you want, or you have nothing to add, reply with exactly {DONE}."
    )


def _transcript(conversation: list[dict[str, str]]) -> str:
    names = {"user": "You (the user)", "assistant": "The assistant"}
    return "\n\n".join(f"[{names.get(m['role'], m['role'])}]\n{m['content']}" for m in conversation) + "\n\nYour next message:"


class UserSimulator:
    """One per run: the judge plays every simulated user; replies remembered by state."""

    def __init__(self, judge: Judge):
        self.judge = judge
        self._replies: dict[str, asyncio.Future[str | None]] = {}

    def for_user(self, user: SimulatedUser, slot: tuple[str, str, int] | None = None) -> Callable[[list[dict[str, str]]], Awaitable[str | None]]:
        """The simulated user of one trial (``slot``: its calls' cache key, the first asker's)."""

        async def next_turn(conversation: list[dict[str, str]]) -> str | None:
            follow_ups = sum(1 for m in conversation if m.get("role") == "user") - 1
            if follow_ups >= user.max_turns:
                return None
            key = hashlib.sha256(json.dumps([user.persona, user.goal, conversation]).encode()).hexdigest()
            pending = self._replies.get(key)
            if pending is None:  # the first to ask for this state asks the judge; the rest wait for it
                pending = self._replies[key] = asyncio.get_running_loop().create_future()
                try:
                    pending.set_result(await self._ask(user, conversation, slot))
                except BaseException as err:
                    del self._replies[key]
                    pending.set_exception(err)
                    pending.exception()  # (retrieved: not logged as never awaited)
                    raise
            return await asyncio.shield(pending)

        return next_turn

    async def _ask(self, user: SimulatedUser, conversation: list[dict[str, str]], slot: tuple[str, str, int] | None) -> str | None:
        left = self.judge.time_left()
        timeout = TIMEOUT_S if left is None else max(1.0, min(TIMEOUT_S, left))
        req = ChatRequest(
            messages=[{"role": "system", "content": _system(user)}, {"role": "user", "content": _transcript(conversation)}],
            model=self.judge.model,
            temperature=0.0,
            max_tokens=self.judge.max_tokens,
            timeout=timeout,
            budget=timeout,
            slot=slot,
        )
        try:
            resp = await self.judge.client.complete(req)
        except LLMError as err:
            raise LLMError(f"the simulated user could not answer: {err}", retryable=err.retryable, status=err.status, kind=err.kind) from None
        text = (resp.text or "").strip() if isinstance(resp.text, str) else ""
        if not text or text.strip(" .\"'").upper() == DONE:
            return None
        return text[:MAX_REPLY_CHARS]
