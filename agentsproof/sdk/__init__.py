"""The AgentsProof SDK: trace any Python agent into ``agentsproof serve`` (or a hosted server).

Standard library only; wire-compatible with the published ``agentsproof`` SDK 1.0.6.
See docs/sdk-python.md.
"""

from importlib import import_module
from typing import Any

# Loaded on first use, so that ``agentsproof.cli.sdk`` (the CLI's ``sync`` and
# ``suite run``) does not load the whole SDK at every CLI start.
_WHERE = {
    "AgentsProof": "client",
    "DEFAULT_BASE_URL": "client",
    "AgentRun": "run",
    "ProofContext": "suite",
    "ProofSuiteError": "suite",
    "trace_llm": "tracer",
    "trace_tool": "tracer",
    "atrace_llm": "tracer",
    "atrace_tool": "tracer",
    "StepPayload": "types",
    "StepType": "types",
    "GoldenCase": "types",
    "ProofSuiteResult": "types",
}

__all__ = [
    "DEFAULT_BASE_URL",
    "AgentRun",
    "AgentsProof",
    "GoldenCase",
    "ProofContext",
    "ProofSuiteError",
    "ProofSuiteResult",
    "StepPayload",
    "StepType",
    "atrace_llm",
    "atrace_tool",
    "trace_llm",
    "trace_tool",
]


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        value = getattr(import_module(f"agentsproof.sdk.{_WHERE[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'agentsproof.sdk' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
