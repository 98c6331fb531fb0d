"""Execution-metrics grader: agentv's ``execution-metrics`` thresholds on what a trial recorded.

::

    - type: execution-metrics
      max_tool_calls: 10            # the trial's tool calls (its trajectory)
      max_llm_calls: 5              # the model calls of a chat trial (one per turn); an agent's are not counted
      max_tokens: 5000              # prompt + completion tokens the target reported
      max_cost_usd: 0.05            # the trial's cost, when the target or the price table tells
      max_duration_ms: 30000        # how long the target took
      target_exploration_ratio: 0.6 # share of read-only calls (read, grep, glob, search, list …)
      exploration_tolerance: 0.2    # ± around it (default 0.2)

As agentv grades it: only the thresholds given are checked, each is one check, the score is
the share that passed, and a metric that was not recorded (no token counts, an unknown cost,
no tool call for the ratio) fails its check, saying so.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from agentsproof.grading.base import GradeInput, GraderEntry
from agentsproof.grading.context import TrialContext
from agentsproof.model.graders import MAX_WEIGHT, FieldError, Strict
from agentsproof.model.results import CheckResult, GraderResult

EXPLORATION_TOOLS = frozenset({"read", "grep", "glob", "search", "list", "Read", "Grep", "Glob", "WebSearch", "WebFetch"})
"""agentv's read-only tools (``DEFAULT_EXPLORATION_TOOLS``), by name as the trajectory records it."""
THRESHOLDS = ("max_tool_calls", "max_llm_calls", "max_tokens", "max_cost_usd", "max_duration_ms", "target_exploration_ratio")


class ExecutionMetricsGrader(Strict):
    """Upper bounds on a trial's tool calls, tokens, cost and duration, and a target share of
    read-only tool calls; each bound given is one check, the score the share that passed."""

    type: Literal["execution_metrics"]
    max_tool_calls: int | None = Field(None, ge=0, strict=True, description="At most this many tool calls.")
    max_llm_calls: int | None = Field(None, ge=0, strict=True, description="At most this many model calls (counted for chat trials only).")
    max_tokens: int | None = Field(None, ge=0, strict=True, description="At most this many tokens (prompt + completion).")
    max_cost_usd: float | None = Field(None, ge=0, allow_inf_nan=False, description="At most this cost in USD.")
    max_duration_ms: float | None = Field(None, ge=0, allow_inf_nan=False, description="At most this many milliseconds of the target's run.")
    target_exploration_ratio: float | None = Field(None, ge=0, le=1, allow_inf_nan=False, description="The share of read-only tool calls aimed at.")
    exploration_tolerance: float = Field(0.2, ge=0, le=1, allow_inf_nan=False, description="How far the share may be from the target.")
    weight: float = Field(1.0, gt=0, le=MAX_WEIGHT, strict=True, allow_inf_nan=False, description="Relative weight in the trial score.")

    @model_validator(mode="after")
    def _has_checks(self) -> ExecutionMetricsGrader:
        if all(getattr(self, k) is None for k in THRESHOLDS):
            raise FieldError("max_tool_calls", f"an execution_metrics grader needs at least one of {', '.join(THRESHOLDS)}")
        return self


def _bound(kind: str, what: str, value: float | None, limit: float, unit: str = "") -> CheckResult:
    if value is None:
        return CheckResult(kind=kind, target=f"{limit:g}{unit}", passed=False, evidence=f"{what}: not recorded for this trial")
    passed = value <= limit + 1e-9
    return CheckResult(kind=kind, target=f"{limit:g}{unit}", passed=passed, evidence=f"{what} {value:g}{unit} {'<=' if passed else '>'} {limit:g}{unit} max")


def grade_metrics(spec: ExecutionMetricsGrader, ctx: TrialContext) -> GraderResult:
    """One check per threshold given; a metric the trial did not record fails its check."""
    checks: list[CheckResult] = []
    calls = [step.name for step in ctx.trajectory]
    if spec.max_tool_calls is not None:
        checks.append(_bound("max_tool_calls", "tool calls", len(calls), spec.max_tool_calls))
    if spec.max_llm_calls is not None:
        checks.append(_bound("max_llm_calls", "model calls", ctx.llm_calls, spec.max_llm_calls))
    if spec.max_tokens is not None:
        u = ctx.usage
        tokens = None if u is None else (u.prompt_tokens + u.completion_tokens) or u.total_tokens or None  # 0: the target counted none
        checks.append(_bound("max_tokens", "tokens", tokens, spec.max_tokens))
    if spec.max_cost_usd is not None:
        checks.append(_bound("max_cost_usd", "cost", ctx.cost_usd, spec.max_cost_usd, " USD"))
    if spec.max_duration_ms is not None:
        ms = None if ctx.latency_s is None else round(ctx.latency_s * 1000, 1)
        checks.append(_bound("max_duration_ms", "duration", ms, spec.max_duration_ms, " ms"))
    if spec.target_exploration_ratio is not None:
        aim, tol = spec.target_exploration_ratio, spec.exploration_tolerance
        if not calls:
            checks.append(CheckResult(kind="exploration_ratio", target=f"{aim:g} ± {tol:g}", passed=False, evidence="no tool calls: no exploration ratio"))
        else:
            ratio = sum(name in EXPLORATION_TOOLS for name in calls) / len(calls)
            passed = abs(ratio - aim) <= tol + 1e-9
            evidence = f"exploration ratio {ratio:.2f} ({len(calls)} calls) {'within' if passed else 'outside'} {aim:g} ± {tol:g}"
            checks.append(CheckResult(kind="exploration_ratio", target=f"{aim:g} ± {tol:g}", passed=passed, evidence=evidence))
    score = sum(c.passed for c in checks) / len(checks)
    return GraderResult(type="execution_metrics", weight=spec.weight, score=score, checks=checks)


async def grade(spec: ExecutionMetricsGrader, given: GradeInput) -> GraderResult:
    """The execution_metrics grader's hook: its thresholds on the trial's record."""
    return grade_metrics(spec, given.context)


GRADER = GraderEntry(
    type="execution_metrics",
    config=ExecutionMetricsGrader,
    grade=grade,
    oracle_checked=False,  # a reference command records no tokens, calls or cost
)
