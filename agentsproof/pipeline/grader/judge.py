"""LLM-as-judge calls that must come back as JSON.

Every judge call is a fresh conversation at temperature 0 that asks for a JSON object
(with a JSON schema where the provider supports one). A reply that does not parse or
does not fit is retried with the problem stated; after the last attempt the grader is
*errored*, never scored 0.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Callable

from agentsproof.llm.base import ChatRequest, LLMClient, LLMError
from agentsproof.schemas.artifacts import Usage

JUDGE_ATTEMPTS = 3
_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.S)


class JudgeError(Exception):
    pass


@dataclass
class Judge:
    client: LLMClient
    model: str
    timeout: float | None = 120.0
    max_tokens: int | None = 400


def extract_json_object(text: str) -> dict[str, Any]:
    """The first JSON object in ``text`` (bare, fenced, or embedded in prose)."""
    candidates = [text.strip()]
    candidates += [m.strip() for m in _FENCE.findall(text)]
    start = text.find("{")
    if start >= 0:
        candidates.append(text[start : text.rfind("}") + 1])
    for cand in candidates:
        if not cand:
            continue
        try:
            value = json.loads(cand)
        except json.JSONDecodeError:
            # raw_decode tolerates trailing prose after the object
            try:
                value, _ = json.JSONDecoder().raw_decode(cand)
            except json.JSONDecodeError:
                continue
        if isinstance(value, dict):
            return value
    raise ValueError("no JSON object found in the reply")


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
    for attempt in range(1, JUDGE_ATTEMPTS + 1):
        req = ChatRequest(
            messages=list(messages),
            model=judge.model,
            temperature=0.0,
            json_schema=schema,
            max_tokens=judge.max_tokens,
            timeout=judge.timeout,
        )
        try:
            resp = await judge.client.complete(req)
        except LLMError as err:
            raise JudgeError(f"judge call failed: {err}") from None
        usage = usage + resp.usage
        raw.append(resp.text)
        try:
            return validate(extract_json_object(resp.text)), usage, raw
        except (ValueError, TypeError, KeyError) as exc:
            problem = str(exc)
            messages = messages[:2] + [
                {"role": "assistant", "content": resp.text[:2000]},
                {
                    "role": "user",
                    "content": f"That reply could not be used ({problem}). Answer again with only a JSON object of this schema: {json.dumps(schema)}",
                },
            ]
    snippet = raw[-1][:120].replace("\n", " ") if raw else ""
    raise JudgeError(f"judge reply unusable after {JUDGE_ATTEMPTS} attempts: {problem}; last reply: {snippet!r}")
