"""The wire protocol of the published AgentsProof SDKs, as pydantic models.

One module for both sides: the server validates requests and shapes responses with these
models (so the OpenAPI document is generated from them), and SDK tests import them.

Casing follows the published clients exactly: run creation and proof-suite bodies are
camelCase, steps are snake_case. Goldens are served in both casings because the Python
SDK reads ``expected_output`` and the TypeScript SDK reads ``expectedOutput``.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

API_PREFIX = "/api"
API_KEY_HEADER = "x-api-key"

WIRE_LIMITS_FILE = Path(__file__).resolve().parent.parent / "data" / "wire_limits.json"
LIMITS: dict[str, Any] = json.loads(WIRE_LIMITS_FILE.read_text(encoding="utf-8"))
"""The one table of field limits (``agentsproof/data/wire_limits.json``): these models read
it, the Python SDK fits values to it, the TypeScript SDK embeds a copy at build time."""
_RUN, _STEP, _CASE = LIMITS["run"], LIMITS["step"], LIMITS["caseResult"]
_NUM = _STEP["numbers"]

STEP_TYPES = ("llm_call", "tool_call", "tool_result", "memory_read", "memory_write")
StepType = Literal["llm_call", "tool_call", "tool_result", "memory_read", "memory_write"]
if list(STEP_TYPES) != _STEP["types"]:  # pragma: no cover - a test keeps them equal
    raise RuntimeError(f"{WIRE_LIMITS_FILE}: step.types differ from protocol.StepType")

_SLUG = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$"


MAX_DEPTH = 64
"""Deepest nesting of objects and lists a body may hold; a deeper body gets 422 (the
values below it are checked like any other, so nothing unchecked is ever stored)."""


def bad_text(value: Any, path: str = "", depth: int = 0) -> str | None:
    """Where ``value`` holds something no page or database can keep, and what: a NUL
    character (PostgreSQL stores none), a lone UTF-16 surrogate (no UTF-8 encoding), a
    non-finite number (NaN/Infinity are not JSON) or nesting deeper than
    :data:`MAX_DEPTH`. ``None`` when it is clean. The answer names the field
    (``metadata.k[2]``) and never repeats the bad text itself."""
    if isinstance(value, str):
        if "\x00" in value:
            return f"{_where(path)}: text must not contain NUL (\\u0000) characters"
        if _SURROGATE.search(value):
            return f"{_where(path)}: text holds a lone UTF-16 surrogate (not valid Unicode)"
        return None
    if isinstance(value, float):
        return None if math.isfinite(value) else f"{_where(path)}: numbers must be finite (no NaN or Infinity)"
    if not isinstance(value, (dict, list)):
        return None
    if depth >= MAX_DEPTH:
        return f"{_where(path)}: nested deeper than {MAX_DEPTH} levels"
    if isinstance(value, dict):
        for k, v in value.items():
            key = k if isinstance(k, str) else str(k)
            sub = f"{path}.{_safe_key(key)}" if path else _safe_key(key)
            found = bad_text(key, sub, depth + 1) or bad_text(v, sub, depth + 1)
            if found:
                return found
    else:
        for i, v in enumerate(value):
            found = bad_text(v, f"{path}[{i}]", depth + 1)
            if found:
                return found
    return None


_SURROGATE = re.compile("[\ud800-\udfff]")


def _where(path: str) -> str:
    """The field named in a message: ``body`` for the whole body; a very deep path keeps its two ends."""
    if not path:
        return "body"
    return path if len(path) <= 240 else path[:120] + "…" + path[-119:]


def _safe_key(key: str) -> str:
    """A field name fit for a message: bad characters replaced, at most 60 characters."""
    clean = _SURROGATE.sub("\ufffd", key).replace("\x00", "\ufffd")
    return clean if len(clean) <= 60 else clean[:60] + "…"


class _In(BaseModel):
    # unknown fields are ignored so newer clients keep working
    model_config = ConfigDict(extra="ignore")

    @model_validator(mode="before")
    @classmethod
    def _clean_text(cls, data: Any) -> Any:
        found = bad_text(data)
        if found:
            raise ValueError(found)
        return data


class RunCreate(_In):
    """``POST /api/runs``."""

    label: str | None = Field(None, max_length=_RUN["text"]["label"])
    input: Any = None
    projectSlug: str | None = Field(None, max_length=_RUN["ids"]["projectSlug"])
    clientRunId: str | None = Field(None, max_length=_RUN["ids"]["clientRunId"])
    goldenId: str | None = Field(None, max_length=_RUN["ids"]["goldenId"])
    goal: str | None = Field(None, max_length=_RUN["text"]["goal"])
    expectedOutput: Any = None
    expectedBehavior: str | None = Field(None, max_length=_RUN["text"]["expectedBehavior"])
    successCriteria: list[str] | None = Field(None, max_length=_RUN["lists"]["successCriteria"])
    traceAssertions: list[str] | None = Field(None, max_length=_RUN["lists"]["traceAssertions"])
    failureModes: list[str] | None = Field(None, max_length=_RUN["lists"]["failureModes"])
    metadata: dict[str, Any] | None = None


class RunCreated(BaseModel):
    """``POST /api/runs``'s answer: the server's id of the run."""

    runId: str


class StepIn(_In):
    """``POST /api/runs/{id}/steps``: one step, snake_case as the SDKs send it."""

    type: StepType
    name: str | None = Field(None, max_length=_STEP["text"]["name"])
    input: Any = None
    output: Any = None
    latency_ms: float | None = Field(None, ge=_NUM["latency_ms"]["min"], le=_NUM["latency_ms"]["max"])
    token_count: int | None = Field(None, ge=_NUM["token_count"]["min"], le=_NUM["token_count"]["max"])
    cost_usd: float | None = Field(None, ge=_NUM["cost_usd"]["min"], le=_NUM["cost_usd"]["max"])
    step_index: int | None = Field(None, ge=_STEP["step_index"]["min"], le=_STEP["step_index"]["max"])
    created_at: str | None = Field(None, max_length=_STEP["text"]["created_at"])


class StepAccepted(BaseModel):
    """``POST /api/runs/{id}/steps``'s answer: the step's index, and whether it was already stored."""

    ok: bool = True
    stepIndex: int
    duplicate: bool = False


class RunComplete(_In):
    """``POST /api/runs/{id}/complete``."""

    output: Any = None


class RunCompleted(BaseModel):
    """``POST /api/runs/{id}/complete``'s answer: the run's id and its public report URL."""

    publicUrl: str
    runId: str


class Golden(BaseModel):
    """A golden as served to proof-suite clients: every field in snake_case and camelCase."""

    id: str
    name: str
    input: Any = None
    goal: str | None = None
    expected_output: Any = None
    expected_behavior: str | None = None
    success_criteria: list[str] = []
    trace_assertions: list[str] = []
    failure_modes: list[str] = []
    custom_grader_ids: list[str] = []
    expectedOutput: Any = None
    expectedBehavior: str | None = None
    successCriteria: list[str] = []
    traceAssertions: list[str] = []
    failureModes: list[str] = []
    customGraderIds: list[str] = []


class SuiteCases(BaseModel):
    """``GET /api/proof-suites/{slug}/cases?projectSlug=``: a new proof run and its approved goldens."""

    proofRunId: str
    cases: list[Golden]


class CaseResultIn(_In):
    """``POST /api/proof-runs/{id}/case-results``."""

    goldenId: str = Field(..., max_length=_CASE["text"]["goldenId"])
    runId: str | None = Field(None, max_length=_CASE["text"]["runId"])
    score: float | None = Field(None, ge=0, le=1)
    passed: bool = False
    failureSummary: str | None = Field(None, max_length=_CASE["text"]["failureSummary"])


class CaseResultAccepted(BaseModel):
    """``POST /api/proof-runs/{id}/case-results``'s answer."""

    ok: bool = True


class ProofRunCompleted(BaseModel):
    """``POST /api/proof-runs/{id}/complete``; camelCase as documented, snake_case for the Python SDK's types."""

    proofRunId: str
    passedCases: int
    failedCases: int
    overallScore: float | None
    publicUrl: str
    passed_cases: int
    failed_cases: int
    overall_score: float | None
    public_url: str


class ErrorBody(BaseModel):
    """An error answer: ``detail`` says what went wrong."""

    detail: Any


GOLDEN_FIELDS = (
    "input",
    "goal",
    "expected_output",
    "expected_behavior",
    "success_criteria",
    "trace_assertions",
    "failure_modes",
)
"""Golden fields that fill a run's defaults (explicit run fields win)."""


def golden_wire(g: dict[str, Any]) -> Golden:
    """A stored golden (snake_case dict) as served, in both casings."""
    lists = {k: list(g.get(k) or []) for k in ("success_criteria", "trace_assertions", "failure_modes", "custom_grader_ids")}
    return Golden(
        id=g["id"],
        name=g.get("name") or "",
        input=g.get("input"),
        goal=g.get("goal"),
        expected_output=g.get("expected_output"),
        expected_behavior=g.get("expected_behavior"),
        expectedOutput=g.get("expected_output"),
        expectedBehavior=g.get("expected_behavior"),
        successCriteria=lists["success_criteria"],
        traceAssertions=lists["trace_assertions"],
        failureModes=lists["failure_modes"],
        customGraderIds=lists["custom_grader_ids"],
        **lists,
    )


def renderable(value: Any, depth: int = 0) -> Any:
    """``value`` made fit to show: lone surrogates become U+FFFD and non-finite numbers
    ``None``. Rows stored before text was checked at the edge are rendered with it,
    so an old bad row never turns a page or an API answer into an error."""
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value) if _SURROGATE.search(value) else value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if depth > 200:
        return None
    if isinstance(value, dict):
        return {renderable(str(k)): renderable(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [renderable(v, depth + 1) for v in value]
    return value
