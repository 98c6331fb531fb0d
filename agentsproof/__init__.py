"""agentsproof: does this skill or agent make the model's answers better, and by how much?

``from agentsproof import AgentsProof`` gives the tracing SDK (``agentsproof.sdk``). The
names below are loaded on first use, so ``import agentsproof`` stays light: no CLI, no
openai, numpy, scipy or jinja2.
"""

from __future__ import annotations

from typing import Any

_SDK_NAMES = (
    "AgentsProof",
    "AgentRun",
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
)

__all__ = ["__version__", *_SDK_NAMES]


def __getattr__(name: str) -> Any:
    if name == "__version__":  # kept in agentsproof.core.version; loaded on use, like the SDK
        from agentsproof.core.version import __version__

        return __version__
    if name in _SDK_NAMES:
        from agentsproof import sdk

        value = getattr(sdk, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'agentsproof' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_SDK_NAMES) | {"__version__"})
