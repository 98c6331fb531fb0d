"""What the grading worker's sweep deletes, so rows nobody will use do not pile up for ever.

* **Unused proof runs.** Every ``GET /proof-suites/{slug}/cases`` opens a proof run. One
  never completed expires after ``AGENTSPROOF_PROOF_RUN_TTL`` seconds without activity
  (``proofs.expire``: a case result posted to it then gets 409); an expired one that never
  received a case result is deleted ``AGENTSPROOF_PROOF_RUN_PURGE`` seconds after it expired. Expired proof runs that
  hold case results are kept: they are shown, with their results, as ``expired``.
* **Orphan runs.** A run created but never completed and without a single step (a client
  that gave up waiting for the create's answer: it never learnt the run's id) is deleted
  ``AGENTSPROOF_ORPHAN_RUN_TTL`` seconds after it was created. A run with a step, a grade,
  a case result or a completion is never deleted.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from sqlalchemy import and_, delete, exists
from sqlalchemy.orm import Session

from agentsproof.server.models import CaseResult, Grade, ProofRun, Run, Step, utcnow


def purge_proof_runs(s: Session, ttl: float) -> int:
    """Delete the proof runs that expired ``ttl`` seconds ago or more and never got a case result."""
    cutoff = utcnow() - timedelta(seconds=ttl)
    used = exists().where(CaseResult.proof_run_id == ProofRun.id)
    res: Any = s.execute(delete(ProofRun).where(ProofRun.status == "expired", ProofRun.completed_at < cutoff, ~used))
    return int(res.rowcount or 0)


def purge_orphan_runs(s: Session, ttl: float) -> int:
    """Delete runs still ``running`` ``ttl`` seconds after their creation that nothing refers to."""
    cutoff = utcnow() - timedelta(seconds=ttl)
    referred = exists().where(Step.run_id == Run.id) | exists().where(Grade.run_id == Run.id) | exists().where(CaseResult.run_id == Run.id)
    res: Any = s.execute(delete(Run).where(and_(Run.status == "running", Run.completed_at.is_(None), Run.created_at < cutoff, ~referred)))
    return int(res.rowcount or 0)
