"""Tool-calls grader: checks of the trial's trajectory by tool name.

The matching is :mod:`agentsproof.grading.tracecheck`'s, shared with the server's
``trace_assertions``. Steps are the trial's tool calls (a chat trial's too). One check per
must_call / must_not_call entry, per step bound, for the sequence, per ``called_with`` entry
(a call with these arguments) and per ``call_count`` tool (how many calls); score = the share
that passed.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated, Any, Literal

from pydantic import Field, field_validator, model_validator

from agentsproof.grading import tracecheck
from agentsproof.grading.base import GradeInput, GraderEntry
from agentsproof.grading.context import TrialContext
from agentsproof.grading.hooks import Finding, LintCase, LintFact, typed_assertion
from agentsproof.model.graders import MAX_WEIGHT, FieldError, Strict, one_or_many
from agentsproof.model.results import CheckResult, GraderResult


class ArgsMatch(Strict):
    """A call of a tool with these arguments (agentv's ``trajectory:tool-args-match``)."""

    name: str = Field(min_length=1, description="The tool (``*`` wildcards allowed).")
    args: dict[str, Any] = Field(description="The arguments expected (JSON values).")
    mode: Literal["partial", "exact"] = Field(
        "partial", description="partial: these arguments among others (nested mappings likewise); exact: these and no other."
    )
    ignore: list[Annotated[str, Field(min_length=1)]] = Field(default_factory=list, description="Argument names left out of the comparison.")

    @field_validator("ignore", mode="before")
    @classmethod
    def _one_or_many(cls, value: Any) -> Any:
        return one_or_many(value)


class CallCount(Strict):
    """How many times one tool is called (agentv's ``trajectory:tool-used`` with ``min`` / ``max``)."""

    min: int = Field(1, ge=0, strict=True, description="At least this many calls.")
    max: int | None = Field(None, ge=0, strict=True, description="At most this many calls.")

    @model_validator(mode="after")
    def _ordered(self) -> CallCount:
        if self.max is not None and self.min > self.max:
            raise FieldError("min", f"{self.min} is more than max ({self.max})")
        return self


class ToolCallsGrader(Strict):
    """Checks of the trajectory, with the SDK's trace_assertions vocabulary.

    Names may use ``*`` wildcards (``mcp__*``); every other character stands for itself.
    Steps are the tool calls of the trial. Each entry is one check; the score is the share
    that passed."""

    type: Literal["tool_calls"]
    must_call: list[Annotated[str, Field(min_length=1)]] = Field(default_factory=list, description="Tools that must each be called at least once.")
    must_not_call: list[Annotated[str, Field(min_length=1)]] = Field(default_factory=list, description="Tools that must never be called.")
    max_steps: int | None = Field(None, ge=0, strict=True, description="At most this many tool calls.")
    min_steps: int | None = Field(None, ge=0, strict=True, description="At least this many tool calls.")
    sequence: list[Annotated[str, Field(min_length=1)]] = Field(default_factory=list, description="Tools called in this order (other calls may come between).")
    called_with: list[ArgsMatch] = Field(default_factory=list, description="Each: some call of the tool had these arguments.")
    call_count: dict[str, CallCount] = Field(default_factory=dict, description="Per tool (``*`` wildcards allowed): how many calls, {min, max}.")
    weight: float = Field(1.0, gt=0, le=MAX_WEIGHT, strict=True, allow_inf_nan=False, description="Relative weight in the trial score.")

    @field_validator("must_call", "must_not_call", "sequence", mode="before")
    @classmethod
    def _name_shorthand(cls, value: Any) -> Any:
        return one_or_many(value)

    @model_validator(mode="after")
    def _has_checks(self) -> ToolCallsGrader:
        if (
            not (self.must_call or self.must_not_call or self.sequence or self.called_with or self.call_count)
            and self.max_steps is None
            and self.min_steps is None
        ):
            raise FieldError(
                "must_call", "a tool_calls grader needs at least one check (must_call, must_not_call, max_steps, min_steps, sequence, called_with, call_count)"
            )
        if self.max_steps is not None and self.min_steps is not None and self.min_steps > self.max_steps:
            raise FieldError("min_steps", f"{self.min_steps} is more than max_steps ({self.max_steps})")
        return self


def grade_tool_calls(spec: ToolCallsGrader, ctx: TrialContext) -> GraderResult:
    """One check per ``must_call``, ``must_not_call``, step bound and ``sequence`` on the trial's tool calls; the score is the share that pass."""
    names = [step.name for step in ctx.trajectory]
    checks: list[CheckResult] = []

    def add(kind: str, target: str, verdict: tracecheck.Verdict) -> None:
        checks.append(CheckResult(kind=kind, target=target, passed=verdict.passed, evidence=verdict.detail))

    for pattern in spec.must_call:
        add("must_call", pattern, tracecheck.must_call(names, pattern))
    for pattern in spec.must_not_call:
        add("must_not_call", pattern, tracecheck.must_not_call(names, pattern))
    if spec.max_steps is not None:
        add("max_steps", str(spec.max_steps), tracecheck.max_steps(len(names), spec.max_steps))
    if spec.min_steps is not None:
        add("min_steps", str(spec.min_steps), tracecheck.min_steps(len(names), spec.min_steps))
    if spec.sequence:
        add("sequence", " → ".join(spec.sequence), tracecheck.sequence(names, spec.sequence))
    for want in spec.called_with:
        checks.append(_called_with(ctx, want))
    for pattern, count in spec.call_count.items():
        n = sum(tracecheck.matches(name, pattern) for name in names)
        passed = n >= count.min and (count.max is None or n <= count.max)
        bound = f"at least {count.min}" if count.max is None else f"{count.min} to {count.max}"
        checks.append(CheckResult(kind="call_count", target=f"{pattern}: {bound}", passed=passed, evidence=f"{pattern} called {n} time{'s' if n != 1 else ''}"))
    score = sum(c.passed for c in checks) / len(checks)
    return GraderResult(type="tool_calls", weight=spec.weight, score=score, checks=checks)


def _partial(actual: Any, expected: Any) -> bool:
    """``expected`` within ``actual``: a mapping's keys each (recursively), a list item by item, a value equal."""
    if isinstance(expected, dict):
        return isinstance(actual, dict) and all(k in actual and _partial(actual[k], v) for k, v in expected.items())
    if isinstance(expected, list):
        return isinstance(actual, list) and len(actual) == len(expected) and all(_partial(a, e) for a, e in zip(actual, expected, strict=True))
    return bool(actual == expected and type(actual) is type(expected)) or (
        isinstance(actual, (int, float))
        and isinstance(expected, (int, float))
        and not isinstance(actual, bool)
        and not isinstance(expected, bool)
        and actual == expected
    )


def _called_with(ctx: TrialContext, want: ArgsMatch) -> CheckResult:
    """Whether some call of ``want.name`` had ``want.args`` (its arguments read as a JSON object)."""
    import json

    target = f"{want.name}({json.dumps(want.args, ensure_ascii=False, sort_keys=True)}, {want.mode})"
    calls = [step for step in ctx.trajectory if tracecheck.matches(step.name, want.name)]
    seen: list[str] = []
    for step in calls:
        try:
            args = json.loads(step.arguments) if step.arguments.strip() else None
        except ValueError:
            args = None
        if not isinstance(args, dict):
            continue
        args = {k: v for k, v in args.items() if k not in want.ignore}
        expected = {k: v for k, v in want.args.items() if k not in want.ignore}
        if (args == expected) if want.mode == "exact" else _partial(args, expected):
            return CheckResult(kind="called_with", target=target, passed=True, evidence=f"{step.name} called with {step.arguments[:200]}")
        seen.append(step.arguments[:120])
    if not calls:
        why = f"{want.name} was not called"
    elif not seen:
        why = f"{want.name} was called, but no arguments were recorded as a JSON object"
    else:
        why = f"no call of {want.name} had these arguments; seen: {'; '.join(seen[:3])}"
    return CheckResult(kind="called_with", target=target, passed=False, evidence=why)


async def grade(spec: ToolCallsGrader, given: GradeInput) -> GraderResult:
    """The tool_calls grader's hook: its checks run on the trial's trajectory."""
    return grade_tool_calls(spec, given.context)


def lint(spec: ToolCallsGrader, case: LintCase) -> Iterator[LintFact]:
    """A call both required and banned; more required calls than ``max_steps`` allows."""
    where, banned = case.where, set(spec.must_not_call)
    for key in ("must_call", "sequence"):
        for i, name in enumerate(getattr(spec, key)):
            if name in banned:
                yield Finding(f"{where}.{key}[{i}]", "impossible-check", f"{name!r} must be called and is in must_not_call", "remove it from one of the two")
    need = max(len(set(spec.must_call)), len(spec.sequence))
    if spec.max_steps is not None and need > spec.max_steps:
        yield Finding(
            f"{where}.max_steps",
            "impossible-check",
            f"{spec.max_steps} steps cannot hold the {need} calls must_call/sequence require",
            f"raise max_steps to at least {need}",
        )


GRADER = GraderEntry(
    type="tool_calls",
    config=ToolCallsGrader,
    grade=grade,
    lint=lint,
    to_agentevals=typed_assertion,
    oracle_checked=False,  # a reference command leaves no trajectory
)
