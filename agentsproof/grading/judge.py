"""LLM-as-judge calls that must come back as JSON.

Every judge call is a fresh conversation at temperature 0 that asks for a JSON object
(with a JSON schema where the provider supports one). A reply that does not parse or
does not fit is retried with the problem stated; after the last attempt the grader is
*errored*, never scored 0. Replies are read by :mod:`agentsproof.llm.replies` within its
limits (length, nesting depth, number size, finite numbers).

A judge may carry a ``deadline`` (see :meth:`Judge.within`): every call, retry and re-ask
of one trial's grading then ends by it, and a grader that runs out of time is errored.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from agentsproof.llm.base import ChatRequest, LLMClient, LLMError
from agentsproof.llm.replies import find_json_object
from agentsproof.model.results import Usage

JUDGE_ATTEMPTS = 3
MAX_RETRY_ECHO_CHARS = 2000
"""How much of an unusable reply is echoed back to the judge when asking again."""
MAX_EVIDENCE_CHARS = 2000
"""Longest reasoning/evidence kept from a verdict."""


def verdict_text(value: Any) -> str:
    """A verdict's reasoning or evidence as text, cut to MAX_EVIDENCE_CHARS."""
    if value is None:
        return ""
    text = value if isinstance(value, str) else json.dumps(value)  # depth is bounded by the parser
    return text[:MAX_EVIDENCE_CHARS]


class JudgeError(Exception):
    pass


@dataclass
class Judge:
    client: LLMClient
    model: str
    timeout: float | None = 120.0
    """Per-attempt timeout of one judge call, in seconds."""
    max_tokens: int | None = 400
    deadline: float | None = None
    """``time.monotonic()`` instant by which all calls must end (None: no limit)."""
    budget: float | None = None
    """The seconds ``deadline`` was set from, for error messages."""

    def within(self, timeout: float | None) -> Judge:
        """This judge with every call bounded by ``timeout`` seconds from now (None: unchanged)."""
        if timeout is None or not timeout > 0:
            return self
        deadline = time.monotonic() + timeout
        if self.deadline is not None and self.deadline < deadline:
            return self
        return dataclasses.replace(self, deadline=deadline, budget=timeout)

    def time_left(self) -> float | None:
        return None if self.deadline is None else self.deadline - time.monotonic()


def extract_json_object(text: str) -> dict[str, Any]:
    """The first JSON object in ``text`` (bare, fenced, or embedded in prose), within the
    limits of :func:`agentsproof.llm.replies.find_json_object`; ValueError otherwise."""
    return find_json_object(text)


async def _call(judge: Judge, req: ChatRequest) -> Any:
    """One judge call, bounded by the judge's deadline even if its client ignores it."""
    left = judge.time_left()
    if left is None:
        return await judge.client.complete(req)
    out_of_time = JudgeError(f"judge calls ran out of the eval's timeout of {judge.budget:g}s")
    if left <= 0:
        raise out_of_time
    try:
        return await asyncio.wait_for(judge.client.complete(req), left)
    except TimeoutError:
        raise out_of_time from None


async def judge_json(
    judge: Judge,
    system: str,
    user: str,
    schema: dict[str, Any],
    validate: Callable[[dict[str, Any]], Any],
) -> tuple[Any, Usage, list[str]]:
    """Ask for JSON, validate it; returns (validated value, usage, raw replies)."""
    messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
    usage = Usage()
    raw: list[str] = []
    problem = ""
    for _ in range(JUDGE_ATTEMPTS):
        req = ChatRequest(
            messages=list(messages),
            model=judge.model,
            temperature=0.0,
            json_schema=schema,
            max_tokens=judge.max_tokens,
            timeout=judge.timeout,
            deadline=judge.deadline,
        )
        try:
            resp = await _call(judge, req)
        except LLMError as err:
            raise JudgeError(f"judge call failed: {err}") from None
        usage = usage + resp.usage
        text = resp.text if isinstance(resp.text, str) else ""
        raw.append(text)
        try:
            return validate(extract_json_object(text)), usage, raw
        except Exception as exc:  # noqa: BLE001 - any unusable verdict is re-asked, then errored
            problem = " ".join(str(exc).split())[:300] or type(exc).__name__
            messages = messages[:2] + [
                {"role": "assistant", "content": text[:MAX_RETRY_ECHO_CHARS]},
                {
                    "role": "user",
                    "content": f"That reply could not be used ({problem}). Answer again with only a JSON object of this schema: {json.dumps(schema)}",
                },
            ]
    snippet = raw[-1][:120].replace("\n", " ") if raw else ""
    raise JudgeError(f"judge reply unusable after {JUDGE_ATTEMPTS} attempts: {problem}; last reply: {snippet!r}")
