"""Small steps of a trial, kept out of the runner: promptfoo's ``options.transform`` applied to
the answer, the agent's tool calls as log lines, and the reason of a trial that failed unexpectedly."""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from agentsproof.core.scrub import clip, scrub
from agentsproof.model.results import LogEvent, ToolCall

if TYPE_CHECKING:
    from agentsproof.model.items import EvalItem
    from agentsproof.targets.base import TrialRecord


async def apply_transform(item: EvalItem, rec: TrialRecord, t0: float) -> None:
    """The answer as the item's transform returns it (a confined program, core/confine.py), the
    answer before it kept in the trial's log."""
    from agentsproof.core.confine import project_of, transform_answer

    rec.log.append(LogEvent(t=time.perf_counter() - t0, role="info", text="the answer before its transform: " + rec.answer[:2000]))
    readable = [Path(item.eval_path).parent, project_of(Path(item.eval_path).parent)] if item.eval_path else []
    rec.answer = await transform_answer(list(item.transform), rec.answer, readable=readable, timeout=item.timeout)


def trajectory_events(trajectory: Sequence[ToolCall], t: float) -> list[LogEvent]:
    """Each tool call of an agent trial as one ``tool`` line of its log: the call, and what it returned."""
    return [LogEvent(t=t, role="tool", text=f"{s.name} {s.arguments}".strip() + (f" → {s.result}" if s.result else "")) for s in trajectory]


def unexpected(where: str, err: Exception) -> str:
    """The reason for an errored trial when something below raised what it should not:
    one line, bounded, no traceback (the exception type names the layer)."""
    text = clip(" ".join(scrub(str(err)).split()), 300)  # masked before the cut
    return f"{where} failed unexpectedly: {type(err).__name__}: {text}" if text else f"{where} failed unexpectedly: {type(err).__name__}"
