"""Read models shared by the API and the pages: a run with steps and grade, case scores."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from agentsproof.server.models import CaseResult, Grade, Run, Step
from agentsproof.server.protocol import renderable
from agentsproof.server.store import fmt_time


def steps_of(s: Session, run_id: str) -> list[Step]:
    """A run's steps in step order."""
    return list(s.scalars(select(Step).where(Step.run_id == run_id).order_by(Step.step_index)))


def step_dict(st: Step) -> dict[str, Any]:
    """A step as the API and the pages show it."""
    return {
        "step_index": st.step_index,
        "type": st.type,
        "name": st.name,
        "input": st.input,
        "output": st.output,
        "latency_ms": st.latency_ms,
        "token_count": st.token_count,
        "cost_usd": st.cost_usd,
        "created_at": st.created_at,
    }


def grade_dict(g: Grade | None) -> dict[str, Any] | None:
    """A run's grade as the API and the pages show it (status, attempts, error, score and the judge's result); None when the run has no grade row."""
    if g is None:
        return None
    return {
        "status": g.status,
        "attempts": g.attempts,
        "error": g.error,
        "overall_score": g.overall_score,
        **(g.result or {}),
    }


def run_view(s: Session, run: Run) -> dict[str, Any]:
    """A run as the API, the pages and the judge see it (always renderable, old rows too)."""
    view: dict[str, Any] = renderable(
        {
            "runId": run.id,
            "label": run.label,
            "status": run.status,
            "clientRunId": run.client_run_id,
            "goldenId": run.golden_id,
            "input": run.input,
            "goal": run.goal,
            "expected_output": run.expected_output,
            "expected_behavior": run.expected_behavior,
            "success_criteria": run.success_criteria or [],
            "trace_assertions": run.trace_assertions or [],
            "failure_modes": run.failure_modes or [],
            "metadata": run.meta or {},
            "output": run.output,
            "created_at": fmt_time(run.created_at),
            "completed_at": fmt_time(run.completed_at),
            "steps": [step_dict(st) for st in steps_of(s, run.id)],
            "grade": grade_dict(s.get(Grade, run.id)),
        }
    )
    return view


def case_score(s: Session, r: CaseResult) -> float:
    """A case's score: the one reported, else its run's grade, else 1/0 by passed."""
    if r.score is not None:
        return float(r.score)
    if r.run_id:
        g = s.get(Grade, r.run_id)
        if g is not None and g.status == "done" and g.overall_score is not None:
            return float(g.overall_score)
    return 1.0 if r.passed else 0.0
