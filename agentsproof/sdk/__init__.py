"""The AgentsProof SDK: trace any Python agent into ``agentsproof serve`` (or a hosted server).

Standard library only; wire-compatible with the published ``agentsproof`` SDK 1.0.6.
See docs/sdk-python.md.
"""

from agentsproof.sdk.client import DEFAULT_BASE_URL, AgentsProof
from agentsproof.sdk.run import AgentRun
from agentsproof.sdk.suite import ProofContext, ProofSuiteError
from agentsproof.sdk.tracer import atrace_llm, atrace_tool, trace_llm, trace_tool
from agentsproof.sdk.types import GoldenCase, ProofSuiteResult, StepPayload, StepType

__all__ = [
    "AgentsProof",
    "AgentRun",
    "DEFAULT_BASE_URL",
    "ProofContext",
    "ProofSuiteError",
    "trace_llm",
    "trace_tool",
    "atrace_llm",
    "atrace_tool",
    "StepPayload",
    "StepType",
    "GoldenCase",
    "ProofSuiteResult",
]
