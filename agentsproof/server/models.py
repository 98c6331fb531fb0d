"""Tables of the server (SQLAlchemy 2). The schema itself is created by the Alembic
migrations in ``migrations/versions``; keep the two in step."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import JSON, Boolean, DateTime, Float, ForeignKey, Index, Integer, PrimaryKeyConstraint, String, Text, UniqueConstraint
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column


def utcnow() -> datetime:
    """The current time, timezone-aware UTC (every stored time)."""
    return datetime.now(UTC)


class Base(DeclarativeBase):
    """The declarative base of the server's tables."""


TS = DateTime(timezone=True)


class Project(Base):
    """A project: the unit API keys, runs and goldens belong to, named by its slug."""

    __tablename__ = "projects"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    slug: Mapped[str] = mapped_column(String(100), unique=True)
    created_at: Mapped[datetime] = mapped_column(TS, default=utcnow)


class ApiKey(Base):
    """An API key of a project, stored as its SHA-256 hash and a short prefix to recognise it."""

    __tablename__ = "api_keys"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id"))
    prefix: Mapped[str] = mapped_column(String(20))
    key_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime] = mapped_column(TS, default=utcnow)
    revoked_at: Mapped[datetime | None] = mapped_column(TS, nullable=True)


class Golden(Base):
    """A golden; its id is unique within its project (two projects may both have ``case-001``)."""

    __tablename__ = "goldens"
    __table_args__ = (PrimaryKeyConstraint("project_id", "id", name="pk_goldens_project_id"),)
    id: Mapped[str] = mapped_column(String(40))
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id"), index=True)
    suite_slug: Mapped[str | None] = mapped_column(String(100), nullable=True, index=True)
    name: Mapped[str] = mapped_column(String(500), default="")
    input: Mapped[Any] = mapped_column(JSON, nullable=True)
    goal: Mapped[str | None] = mapped_column(Text, nullable=True)
    expected_output: Mapped[Any] = mapped_column(JSON, nullable=True)
    expected_behavior: Mapped[str | None] = mapped_column(Text, nullable=True)
    success_criteria: Mapped[Any] = mapped_column(JSON, nullable=True)
    trace_assertions: Mapped[Any] = mapped_column(JSON, nullable=True)
    failure_modes: Mapped[Any] = mapped_column(JSON, nullable=True)
    custom_grader_ids: Mapped[Any] = mapped_column(JSON, nullable=True)
    approved: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[datetime] = mapped_column(TS, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(TS, default=utcnow)


class Run(Base):
    """A traced agent run as the SDK sends it, with its public report id; its steps are ``Step`` rows."""

    __tablename__ = "runs"
    __table_args__ = (Index("uq_runs_project_client_run_id", "project_id", "client_run_id", unique=True),)
    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id"), index=True)
    client_run_id: Mapped[str | None] = mapped_column(String(200), nullable=True)
    label: Mapped[str | None] = mapped_column(String(500), nullable=True, index=True)
    input: Mapped[Any] = mapped_column(JSON, nullable=True)
    golden_id: Mapped[str | None] = mapped_column(String(100), nullable=True, index=True)
    goal: Mapped[str | None] = mapped_column(Text, nullable=True)
    expected_output: Mapped[Any] = mapped_column(JSON, nullable=True)
    expected_behavior: Mapped[str | None] = mapped_column(Text, nullable=True)
    success_criteria: Mapped[Any] = mapped_column(JSON, nullable=True)
    trace_assertions: Mapped[Any] = mapped_column(JSON, nullable=True)
    failure_modes: Mapped[Any] = mapped_column(JSON, nullable=True)
    meta: Mapped[Any] = mapped_column("metadata", JSON, nullable=True)
    output: Mapped[Any] = mapped_column(JSON, nullable=True)
    status: Mapped[str] = mapped_column(String(20), default="running")
    public_id: Mapped[str | None] = mapped_column(String(64), unique=True, nullable=True)
    public_revoked: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[datetime] = mapped_column(TS, default=utcnow, index=True)
    completed_at: Mapped[datetime | None] = mapped_column(TS, nullable=True)


class Step(Base):
    """One step of a run (an LLM call, a tool call ...), unique by ``(run_id, step_index)``."""

    __tablename__ = "steps"
    __table_args__ = (UniqueConstraint("run_id", "step_index", name="uq_steps_run_index"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    run_id: Mapped[str] = mapped_column(ForeignKey("runs.id"), index=True)
    step_index: Mapped[int] = mapped_column(Integer)
    type: Mapped[str] = mapped_column(String(20))
    name: Mapped[str | None] = mapped_column(String(500), nullable=True)
    input: Mapped[Any] = mapped_column(JSON, nullable=True)
    output: Mapped[Any] = mapped_column(JSON, nullable=True)
    latency_ms: Mapped[float | None] = mapped_column(Float, nullable=True)
    token_count: Mapped[int | None] = mapped_column(Integer, nullable=True)
    cost_usd: Mapped[float | None] = mapped_column(Float, nullable=True)
    created_at: Mapped[str | None] = mapped_column(String(64), nullable=True)


class Grade(Base):
    """One grading job and its result; the worker's queue (status pending/running/errored)."""

    __tablename__ = "grades"
    run_id: Mapped[str] = mapped_column(ForeignKey("runs.id"), primary_key=True)
    status: Mapped[str] = mapped_column(String(20), default="pending", index=True)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    next_attempt_at: Mapped[datetime] = mapped_column(TS, default=utcnow)
    error: Mapped[str | None] = mapped_column(Text, nullable=True)
    overall_score: Mapped[float | None] = mapped_column(Float, nullable=True)
    result: Mapped[Any] = mapped_column(JSON, nullable=True)
    updated_at: Mapped[datetime] = mapped_column(TS, default=utcnow)


class ProofRun(Base):
    """One run of a proof suite: its cases' counts, overall score and public report id."""

    __tablename__ = "proof_runs"
    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id"), index=True)
    suite_slug: Mapped[str] = mapped_column(String(100))
    status: Mapped[str] = mapped_column(String(20), default="running")
    total_cases: Mapped[int] = mapped_column(Integer, default=0)
    passed_cases: Mapped[int | None] = mapped_column(Integer, nullable=True)
    failed_cases: Mapped[int | None] = mapped_column(Integer, nullable=True)
    overall_score: Mapped[float | None] = mapped_column(Float, nullable=True)
    public_id: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime] = mapped_column(TS, default=utcnow)
    completed_at: Mapped[datetime | None] = mapped_column(TS, nullable=True)


class CaseResult(Base):
    """One case of a proof run: the golden, the run that answered it, its score and pass/fail."""

    __tablename__ = "proof_case_results"
    __table_args__ = (UniqueConstraint("proof_run_id", "golden_id", name="uq_case_golden"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    proof_run_id: Mapped[str] = mapped_column(ForeignKey("proof_runs.id"), index=True)
    golden_id: Mapped[str] = mapped_column(String(100))
    run_id: Mapped[str | None] = mapped_column(String(100), nullable=True)
    score: Mapped[float | None] = mapped_column(Float, nullable=True)
    passed: Mapped[bool] = mapped_column(Boolean, default=False)
    failure_summary: Mapped[str | None] = mapped_column(Text, nullable=True)
    created_at: Mapped[datetime] = mapped_column(TS, default=utcnow)


class CliResult(Base):
    """An eval / eval-all / tc-eval JSON report pushed with ``agentsproof push``."""

    __tablename__ = "cli_results"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    sha256: Mapped[str] = mapped_column(String(64), unique=True)
    command: Mapped[str] = mapped_column(String(20))
    plugin: Mapped[str] = mapped_column(String(500))
    created_at: Mapped[str] = mapped_column(String(64), index=True)
    source: Mapped[str] = mapped_column(String(1000), default="")
    data: Mapped[Any] = mapped_column(JSON)
