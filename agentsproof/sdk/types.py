"""Typed shapes of the SDK's payloads (plain dicts at runtime), named as in the published SDK."""

from __future__ import annotations

from typing import Any, Literal, TypedDict

StepType = Literal["llm_call", "tool_call", "tool_result", "memory_read", "memory_write"]


class StepPayload(TypedDict, total=False):
    """One step as ``log_step`` takes it; every key optional."""

    type: StepType
    name: str
    input: Any
    output: Any
    latency_ms: float
    token_count: int
    cost_usd: float


class GoldenCase(TypedDict, total=False):
    """A golden as the server sends it to a proof suite's handler."""

    id: str
    name: str
    input: Any
    goal: str
    expected_output: Any
    expected_behavior: str
    success_criteria: list[str]
    trace_assertions: list[str]
    failure_modes: list[str]
    custom_grader_ids: list[str]


class ProofSuiteResult(TypedDict, total=False):
    """What ``run_proof_suite`` returns: the server's ``/proof-runs/{id}/complete`` answer."""

    proofRunId: str
    passedCases: int
    failedCases: int
    overallScore: float
    publicUrl: str
