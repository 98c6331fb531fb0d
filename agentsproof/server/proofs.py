"""Proof runs after their cases: the overall score once the case runs are graded, and
the expiry of proof runs that were opened (``GET …/cases``) but never completed.

A proof run's score is stored in one place (``proof_runs.overall_score``) and every
reader shows that number: the complete response, the ``/p/`` page and the list. It is
computed when the client completes the proof run, after waiting (at most
``AGENTSPROOF_PROOF_WAIT`` seconds) for the case runs still being graded; a proof run
completed before they are graded is ``grading`` with no score, and the worker stores
the score when the last of its case runs is graded (and again if one is re-graded).
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from sqlalchemy import and_, exists, select, update
from sqlalchemy.orm import Session

from agentsproof.server.models import CaseResult, Grade, ProofRun, utcnow
from agentsproof.server.views import case_score

OPEN = ("running",)


def pending_cases(s: Session, proof_run_id: str) -> int:
    """Case results whose score waits for their run's grade (pending or being graded)."""
    q = (
        select(CaseResult.id)
        .join(Grade, Grade.run_id == CaseResult.run_id)
        .where(CaseResult.proof_run_id == proof_run_id, CaseResult.score.is_(None), Grade.status.in_(("pending", "running")))
    )
    return len(s.execute(q).all())


def score(s: Session, pr: ProofRun) -> None:
    """Store the counts and the overall score of ``pr`` from its case results as they stand."""
    results = s.scalars(select(CaseResult).where(CaseResult.proof_run_id == pr.id)).all()
    passed = sum(1 for r in results if r.passed)
    pr.passed_cases, pr.failed_cases = passed, len(results) - passed
    waiting = pending_cases(s, pr.id)
    scores = [case_score(s, r) for r in results]
    pr.overall_score = None if waiting or not scores else round(sum(scores) / len(scores), 4)
    pr.status = "grading" if waiting else "completed"


def rescore_for_run(s: Session, run_id: str) -> None:
    """A run was graded: store the score again of every completed proof run it is a case of."""
    ids = s.scalars(select(CaseResult.proof_run_id).where(CaseResult.run_id == run_id)).all()
    for pr in s.scalars(select(ProofRun).where(ProofRun.id.in_(set(ids)), ProofRun.status.in_(("grading", "completed")))):
        score(s, pr)


def expire(s: Session, ttl: float) -> int:
    """Mark ``expired`` the open proof runs with no activity (created, or a case result) for ``ttl`` seconds."""
    cutoff = utcnow() - timedelta(seconds=ttl)
    recent = exists().where(and_(CaseResult.proof_run_id == ProofRun.id, CaseResult.created_at >= cutoff))
    res: Any = s.execute(
        update(ProofRun).where(ProofRun.status.in_(OPEN), ProofRun.created_at < cutoff, ~recent).values(status="expired", completed_at=utcnow())
    )
    return int(res.rowcount or 0)
