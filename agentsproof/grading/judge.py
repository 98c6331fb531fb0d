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
    """No usable verdict from the judge (a failed call, unusable replies, out of time); the grader is errored with this reason."""


@dataclass
class PanelTally:
    """A judge panel's record: verdicts combined, and how many of them the models disagreed on."""

    verdicts: int = 0
    disagreements: int = 0

    def as_dict(self, models: tuple[str, ...], combine: str) -> dict[str, Any]:
        """The tally for the report: the panel's models, how verdicts combine, the counts and the disagreement rate (None before any verdict)."""
        return {
            "models": list(models),
            "combine": combine,
            "verdicts": self.verdicts,
            "disagreements": self.disagreements,
            "disagreement_rate": self.disagreements / self.verdicts if self.verdicts else None,
        }


SCORE_SPREAD = 0.25
"""A panel disagrees on a score when its models' scores span more than this."""


def combine_verdicts(values: list[Any], combine: str) -> tuple[Any, bool]:
    """(combined verdict, disagreed). Each value is (verdict, text) as a grader validates it:
    scores by mean (``combine: mean``) or median (``majority``); pass/fail and labels by
    majority (a tie: fail, or ``tie``)."""
    verdicts = [v[0] if isinstance(v, tuple) else v for v in values]
    texts = [str(v[1]) for v in values if isinstance(v, tuple) and len(v) > 1]
    first = verdicts[0]
    note = " | ".join(texts)[:MAX_EVIDENCE_CHARS]
    if isinstance(first, bool):
        yes = sum(bool(v) for v in verdicts)
        out: Any = yes * 2 > len(verdicts)
        disagreed = 0 < yes < len(verdicts)
    elif isinstance(first, (int, float)):
        nums = sorted(float(v) for v in verdicts)
        if combine == "majority":
            mid = len(nums) // 2
            out = nums[mid] if len(nums) % 2 else (nums[mid - 1] + nums[mid]) / 2
        else:
            out = sum(nums) / len(nums)
        disagreed = nums[-1] - nums[0] > SCORE_SPREAD
    else:
        counts: dict[Any, int] = {}
        for v in verdicts:
            counts[v] = counts.get(v, 0) + 1
        best = max(counts.values())
        leaders = [v for v, c in counts.items() if c == best]
        out = leaders[0] if len(leaders) == 1 else "tie"
        disagreed = len(counts) > 1
    return ((out, note) if isinstance(values[0], tuple) else out), disagreed


@dataclass
class Judge:
    """The LLM that grades: a client and its model, with per-call limits, an optional deadline and panel."""

    client: LLMClient
    model: str
    timeout: float | None = 120.0
    """Per-attempt timeout of one judge call, in seconds."""
    max_tokens: int | None = 400
    deadline: float | None = None
    """``time.monotonic()`` instant by which all calls must end (None: no limit)."""
    budget: float | None = None
    """The seconds ``deadline`` was set from, for error messages."""
    panel: tuple[str, ...] = ()
    """A judge panel (eval.yaml ``judge_models``): every verdict is asked of each model and combined."""
    combine: str = "mean"
    tally: PanelTally | None = None
    """Where a panel records its verdicts and disagreements (shared by the item's trials)."""
    slot: tuple[str, str, int] | None = None
    """The trial this judge grades (``ChatRequest.slot``: the response cache's key)."""

    def for_slot(self, slot: tuple[str, str, int]) -> Judge:
        """This judge, its calls made for the trial ``slot``."""
        return dataclasses.replace(self, slot=slot)

    def with_panel(self, models: tuple[str, ...], combine: str, tally: PanelTally) -> Judge:
        """This judge asking every verdict of each of ``models``, combined by ``combine`` and counted in ``tally``."""
        return dataclasses.replace(self, panel=models, combine=combine, tally=tally)

    def within(self, timeout: float | None) -> Judge:
        """This judge with every call bounded by ``timeout`` seconds from now (None: unchanged)."""
        if timeout is None or not timeout > 0:
            return self
        deadline = time.monotonic() + timeout
        if self.deadline is not None and self.deadline < deadline:
            return self
        return dataclasses.replace(self, deadline=deadline, budget=timeout)

    def time_left(self) -> float | None:
        """Seconds until the deadline (negative once past it), or None when there is none."""
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
    """Ask for JSON, validate it; returns (validated value, usage, raw replies). A panel
    asks each of its models and combines their verdicts (:func:`combine_verdicts`)."""
    if judge.panel:
        results = await asyncio.gather(
            *(judge_json(dataclasses.replace(judge, model=m, panel=(), tally=None), system, user, schema, validate) for m in judge.panel)
        )
        value, disagreed = combine_verdicts([r[0] for r in results], judge.combine)
        if judge.tally is not None:
            judge.tally.verdicts += 1
            judge.tally.disagreements += disagreed
        usage = Usage()
        for r in results:
            usage = usage + r[1]
        return value, usage, [raw for r in results for raw in r[2]]
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
            slot=judge.slot,
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
