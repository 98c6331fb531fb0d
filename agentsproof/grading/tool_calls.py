"""Tool-calls grader: checks of the trial's trajectory by tool name.

The matching is :mod:`agentsproof.grading.tracecheck`'s, shared with the server's
``trace_assertions``. Steps are the trial's tool calls (a chat trial's too). One check per
must_call / must_not_call entry, per step bound and for the sequence; score = the share
that passed.
"""

from __future__ import annotations

from agentsproof.grading import tracecheck
from agentsproof.model.evalfile import ToolCallsGrader
from agentsproof.grading.context import TrialContext
from agentsproof.model.results import CheckResult, GraderResult


def grade_tool_calls(spec: ToolCallsGrader, ctx: TrialContext) -> GraderResult:
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
    score = sum(c.passed for c in checks) / len(checks)
    return GraderResult(type="tool_calls", weight=spec.weight, score=score, checks=checks)
