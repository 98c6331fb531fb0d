"""Result and input schemas."""

from agentsproof.schemas.artifacts import (
    SCHEMA_VERSION,
    ArmResult,
    CheckResult,
    GraderResult,
    ItemResult,
    LogEvent,
    RunResult,
    Summary,
    TrialResult,
    Usage,
    compute_grade,
)

__all__ = [
    "SCHEMA_VERSION",
    "ArmResult",
    "CheckResult",
    "GraderResult",
    "ItemResult",
    "LogEvent",
    "RunResult",
    "Summary",
    "TrialResult",
    "Usage",
    "compute_grade",
]
