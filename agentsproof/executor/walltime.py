"""``--plan``: how long a run would take, at its ``--parallel`` and at more.

A trial is its model call and then its judge calls, one after another; trials run
``--parallel`` at a time. The seconds a call takes come from the last run of the same
reports when there is one (its trials' mean latency), else from a typical figure for the
provider (:data:`TYPICAL_CALL_S`), and the line says which. Agent trials take what the
agent takes: the last run's mean when known, else :data:`TYPICAL_AGENT_S`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path

from agentsproof.model.items import EvalItem
from agentsproof.targets.registry import is_agent

TYPICAL_CALL_S = {"local": 8.0}
"""Seconds per call when no earlier run says: the embedded model on a laptop CPU."""
DEFAULT_CALL_S = 2.0
"""Seconds per call of a hosted model when no earlier run says."""
TYPICAL_AGENT_S = 60.0
"""Seconds per agent trial when no earlier run says."""
FASTER = 8
"""The ``--parallel`` the plan also estimates, when the run's is lower."""


def last_latency(json_report: Path) -> float | None:
    """The mean latency (seconds) of the scored trials of the report at ``json_report``, if any."""
    try:
        if not json_report.is_file() or json_report.is_symlink() or json_report.stat().st_size > 256 << 20:
            return None
        data = json.loads(json_report.read_text(encoding="utf-8"))
        values = [
            float(t["latency_s"])
            for it in data.get("items", [])
            for arm in ("with_arm", "without_arm")
            for t in ((it.get(arm) or {}).get("trials") or [])
            if t.get("status") == "scored" and isinstance(t.get("latency_s"), (int, float))
        ]
    except (OSError, ValueError, TypeError, AttributeError):
        return None
    return sum(values) / len(values) if values else None


def plan_wall_time(items: Sequence[EvalItem], provider: str, parallel: int, json_report: Path | None) -> list[str]:
    """The wall-time line of ``--plan`` for ``items`` (the judge calls counted as the plan counts them)."""
    from agentsproof.executor.costplan import _plan_items

    plan = _plan_items(items)
    last = last_latency(json_report) if json_report is not None else None
    return wall_time_lines(items, provider, parallel, plan.judges.calls + plan.pairwise.calls, last)


def wall_time_lines(items: Sequence[EvalItem], provider: str, parallel: int, judge_calls: int, last: float | None) -> list[str]:
    """The plan's wall-time line: ``judge_calls`` judge calls spread over the trials, at ``parallel``
    and (when lower) at :data:`FASTER`; ``last``: the last run's seconds per trial, if known."""
    from agentsproof.core.units import seconds

    trials = sum(it.trials * len(it.arms) for it in items)
    if not trials:
        return []
    agents = sum(it.trials * len(it.arms) for it in items if is_agent(it.target))
    call = TYPICAL_CALL_S.get(provider, DEFAULT_CALL_S)
    per_trial_judges = judge_calls / trials
    if last is not None:
        per_trial, basis = last * (1 + per_trial_judges), f"at {seconds(last)} a call, as the last run of these reports measured"
    else:
        typical = call * (1 + per_trial_judges)
        per_trial = (agents * TYPICAL_AGENT_S + (trials - agents) * typical) / trials
        basis = (
            f"at about {seconds(call)} a call, {'the embedded model on a laptop CPU' if provider == 'local' else 'a typical hosted model'}"
            + (f", and {seconds(TYPICAL_AGENT_S)} an agent trial" if agents else "")
            + "; no earlier run of these reports to go by"
        )
    width = max(1, parallel)
    at = math.ceil(trials / width) * per_trial
    line = f"  wall time: about {seconds(at)} at --parallel {width}"
    if width < FASTER and provider != "local":
        line += f", about {seconds(math.ceil(trials / FASTER) * per_trial)} at --parallel {FASTER} if the provider allows it"
    return [line + f" ({basis})"]
