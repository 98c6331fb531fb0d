"""Errors that end a run at the first trial that meets them.

Some provider failures fail every trial alike, and waiting for each to fail again only
burns time and calls: a refused key or permission (HTTP 401/403), and an endpoint that
cannot be reached at all on the first call (connection refused, no such host: kind
``unreachable``, raised by the providers only before any reply came back). The runner stops
at the first one (:meth:`agentsproof.executor.runner.DualArmRunner._record`), the run's
``incomplete_reason`` starts with :data:`FATAL_PREFIX`, and the command writes that run's
report into its own run folder, never over the last good report (``agentsproof.report.runs``).
"""

from __future__ import annotations

from typing import Any

from agentsproof.core.errors import LLMError
from agentsproof.model.results import RunResult

FATAL_STATUS = (401, 403)
FATAL_PREFIX = "stopped at the first failing call, which every trial would repeat: "


def fatal_reason(err: BaseException) -> str | None:
    """Why ``err`` ends the run (it names its cause), or None for a failure of this trial alone."""
    if not isinstance(err, LLMError):
        return None
    if err.kind == "unreachable":
        return str(err)
    if err.status in FATAL_STATUS:
        return f"{err} (HTTP {err.status} is not retried)" if f"HTTP {err.status}" not in str(err) else f"{err} (not retried)"
    return None


def stopped_by_fatal(run: RunResult) -> bool:
    """The run ended at a fatal error (:func:`fatal_reason`)."""
    return bool(run.incomplete and (run.incomplete_reason or "").startswith(FATAL_PREFIX))


def stop_at(runner: Any, reason: str) -> None:
    """Stop ``runner`` (a DualArmRunner) at the fatal error ``reason``: said at once on stderr,
    before any report is written; the trial that met it kept, the others cancelled."""
    from agentsproof.core.notice import say

    say(f"error: {reason}; stopping the run (every trial would fail alike)")
    runner.interrupt(FATAL_PREFIX + reason, keep_current=True)
