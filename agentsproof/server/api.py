"""The JSON API under ``/api``: exactly the routes and bodies of the published SDKs
(``protocol.py``), plus a few read routes for tools and tests."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from datetime import timedelta
from typing import TYPE_CHECKING, Annotated, Any

from fastapi import APIRouter, Depends, Header, HTTPException, Query, Request
from sqlalchemy import func, insert, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from agentsproof.server import protocol as P

__all__ = ["P", "router"]
from agentsproof.server import store
from agentsproof.server.models import CaseResult, Golden, Grade, Project, ProofRun, Run, Step, utcnow

if TYPE_CHECKING:
    from agentsproof.server.db import Database

router = APIRouter(prefix=P.API_PREFIX)
AUTH: dict[int | str, dict[str, Any]] = {401: {"model": P.ErrorBody}, 403: {"model": P.ErrorBody}, 404: {"model": P.ErrorBody}}


async def session(request: Request) -> AsyncIterator[Session]:
    """One database session per request, opened and closed on the event loop.

    A *sync* generator dependency would need a worker thread to close its session; under a
    burst (the published SDK sends every step from a thread of its own) all worker threads
    can be busy waiting for a pooled connection that only a close would free — a deadlock.
    Closing here needs no thread, so connections always come back."""
    s = request.app.state.db.session()
    try:
        yield s
    finally:
        s.close()


SessionDep = Annotated[Session, Depends(session)]


def project(request: Request, s: SessionDep, x_api_key: str | None = Header(None)) -> Project:
    p = store.project_for_key(s, x_api_key)
    # End the read transaction now: the connection goes back to the pool while the request
    # waits for a thread to run its handler (a burst of requests must not hold them all).
    s.commit()
    if p is None:
        raise HTTPException(401, "missing or invalid x-api-key")
    return p


ProjectDep = Annotated[Project, Depends(project)]


def root_url(request: Request) -> str:
    """Base of report URLs: ``--public-url``, else the address the server is bound to
    (the listening socket's, never the request's Host header, which a client chooses)."""
    public: str | None = request.app.state.public_url
    if public:
        return public
    host, port = (request.scope.get("server") or (request.app.state.settings.host, None))[:2]
    host = f"[{host}]" if ":" in str(host) else str(host)
    return f"http://{host}:{port}" if port else f"http://{host}"


def _same_project(p: Project, slug: str | None) -> None:
    if slug is not None and slug != p.slug:
        raise HTTPException(403, "this key does not belong to that project")


def _own_run(s: Session, p: Project, run_id: str) -> Run:
    run = s.get(Run, run_id) if len(run_id) <= 40 else None
    if run is None or run.project_id != p.id:
        raise HTTPException(404, "run not found")
    return run


def _own_golden(s: Session, p: Project, gid: str | None) -> Golden | None:
    return store.golden_of(s, p.id, gid)


def queue_grade(s: Session, run_id: str, delay: float) -> None:
    """(Re)queue grading of a run: the queue is the ``grades`` table."""
    when = utcnow() + timedelta(seconds=delay)
    g = s.get(Grade, run_id)
    if g is None:
        s.add(Grade(run_id=run_id, status="pending", attempts=0, next_attempt_at=when))
    else:
        g.status, g.next_attempt_at, g.attempts, g.error = "pending", when, 0, None


@router.get("/health")
def health() -> dict[str, bool]:
    """Liveness, no key needed."""
    return {"ok": True}


@router.post("/runs", response_model=P.RunCreated, responses=AUTH)
def create_run(body: P.RunCreate, p: ProjectDep, s: SessionDep) -> P.RunCreated:
    _same_project(p, body.projectSlug)
    if body.clientRunId:
        earlier = _run_by_client_id(s, p, body.clientRunId)
        if earlier is not None:  # a retry or a second upload of the same run
            return P.RunCreated(runId=earlier)
    meta = body.metadata or {}
    gid = body.goldenId or (meta.get("goldenId") if isinstance(meta.get("goldenId"), str) else None)
    golden = _own_golden(s, p, gid)
    if body.goldenId and golden is None:
        raise HTTPException(404, "golden not found")
    explicit = {
        "input": body.input,
        "goal": body.goal,
        "expected_output": body.expectedOutput,
        "expected_behavior": body.expectedBehavior,
        "success_criteria": body.successCriteria,
        "trace_assertions": body.traceAssertions,
        "failure_modes": body.failureModes,
    }
    if golden is not None:  # golden defaults; explicit fields win
        for k in P.GOLDEN_FIELDS:
            if explicit[k] is None:
                explicit[k] = getattr(golden, k)
    run = Run(
        id=store.new_id(10),
        project_id=p.id,
        client_run_id=body.clientRunId,
        label=body.label,
        golden_id=golden.id if golden else None,
        meta=meta,
        status="running",
        public_revoked=False,
        **explicit,
    )
    s.add(run)
    try:
        s.commit()
    except IntegrityError:  # the same clientRunId created at the same moment by a concurrent request
        s.rollback()
        earlier = _run_by_client_id(s, p, body.clientRunId) if body.clientRunId else None
        if earlier is None:
            raise
        return P.RunCreated(runId=earlier)
    return P.RunCreated(runId=run.id)


def _run_by_client_id(s: Session, p: Project, client_run_id: str) -> str | None:
    return s.scalar(select(Run.id).where(Run.project_id == p.id, Run.client_run_id == client_run_id))


@router.post("/runs/{run_id}/steps", response_model=P.StepAccepted, responses=AUTH)
def add_step(run_id: str, body: P.StepIn, request: Request, p: ProjectDep, s: SessionDep) -> P.StepAccepted:
    run = _own_run(s, p, run_id)
    fields = body.model_dump(exclude={"step_index"})
    if body.step_index is None:
        idx = _append_step(s, run.id, fields)
    else:
        idx = body.step_index
        s.add(Step(run_id=run.id, step_index=idx, **fields))
        try:
            s.commit()
        except IntegrityError:  # the same step_index again: a retry or duplicate send
            s.rollback()
            return P.StepAccepted(stepIndex=idx, duplicate=True)
    if run.status == "completed":  # a late step: grade again with it
        queue_grade(s, run.id, request.app.state.grade_delay)
        s.commit()
    return P.StepAccepted(stepIndex=idx)


def _append_step(s: Session, run_id: str, fields: dict[str, Any]) -> int:
    """Store a step after the run's last one; the index is assigned by the database.

    One INSERT computes ``max(step_index) + 1`` itself: SQLite runs it under its write lock,
    and PostgreSQL first locks the run's row, so concurrent appends to one run queue up
    instead of colliding. The retry only covers an explicit index sent at that moment."""
    next_index = select(func.coalesce(func.max(Step.step_index), -1) + 1).where(Step.run_id == run_id).scalar_subquery()
    stmt = insert(Step).values(run_id=run_id, step_index=next_index, **fields).returning(Step.step_index)
    for attempt in range(50):
        try:
            if s.get_bind().dialect.name == "postgresql":
                s.execute(select(Run.id).where(Run.id == run_id).with_for_update())
            idx = int(s.execute(stmt).scalar_one())
            s.commit()
            return idx
        except IntegrityError:
            s.rollback()
            time.sleep(0.005 * (attempt + 1))
    raise HTTPException(409, "could not append the step; retry")


@router.post("/runs/{run_id}/complete", response_model=P.RunCompleted, responses=AUTH)
def complete_run(run_id: str, request: Request, p: ProjectDep, s: SessionDep, body: P.RunComplete | None = None) -> P.RunCompleted:
    run = _own_run(s, p, run_id)
    run.output = body.output if body else None
    run.status = "completed"
    run.completed_at = utcnow()
    if not run.public_id:
        run.public_id = store.new_id(16)
    queue_grade(s, run.id, request.app.state.grade_delay)
    s.commit()
    request.app.state.wake_worker()
    return P.RunCompleted(publicUrl=f"{root_url(request)}/r/{run.public_id}", runId=run.id)


@router.get("/runs/{run_id}", responses=AUTH)
def get_run(run_id: str, p: ProjectDep, s: SessionDep) -> dict[str, Any]:
    """A run with its steps (in step_index order) and its grade."""
    from agentsproof.server.views import run_view

    return run_view(s, _own_run(s, p, run_id))


@router.post("/runs/{run_id}/revoke-public", responses=AUTH)
def revoke_public(run_id: str, p: ProjectDep, s: SessionDep) -> dict[str, bool]:
    """Make the run's public report URL stop working."""
    _own_run(s, p, run_id).public_revoked = True
    s.commit()
    return {"ok": True}


@router.get("/goldens", responses=AUTH)
def list_goldens(p: ProjectDep, s: SessionDep, projectSlug: str | None = Query(None, max_length=100)) -> list[dict[str, Any]]:
    _same_project(p, projectSlug)
    rows = s.scalars(select(Golden).where(Golden.project_id == p.id).order_by(Golden.created_at, Golden.id))
    return [store.golden_dict(g) for g in rows]


@router.post("/goldens", responses=AUTH)
def create_golden(body: dict[str, Any], p: ProjectDep, s: SessionDep) -> dict[str, Any]:
    """Create or edit a golden: the golden fields plus optional ``suite`` and ``approved``."""
    from agentsproof.core.errors import InputError

    body = dict(body)
    suite, approved, slug = body.pop("suite", None), body.pop("approved", None), body.pop("projectSlug", None)
    _same_project(p, slug if isinstance(slug, str) else None)
    try:
        if suite is not None:
            store.check_slug(suite if isinstance(suite, str) else "", "suite")
        fields = store.normalise_golden(body, "body")
        g = store.upsert_golden(s, p, suite, fields, approved if isinstance(approved, bool) else None)
    except InputError as err:
        s.rollback()
        raise HTTPException(422, str(err)) from None
    s.commit()
    return store.golden_dict(g)


@router.get("/proof-suites/{suite_slug}/cases", response_model=P.SuiteCases, responses=AUTH)
def suite_cases(suite_slug: str, request: Request, p: ProjectDep, s: SessionDep, projectSlug: str | None = Query(None, max_length=100)) -> P.SuiteCases:
    _same_project(p, projectSlug)
    in_suite = select(Golden).where(Golden.project_id == p.id, Golden.suite_slug == suite_slug)
    if s.scalar(select(func.count()).select_from(in_suite.subquery())) == 0:
        raise HTTPException(404, "proof suite not found")
    cases = s.scalars(in_suite.where(Golden.approved.is_(True)).order_by(Golden.created_at, Golden.id)).all()
    from agentsproof.server.proofs import expire

    expire(s, request.app.state.settings.proof_run_ttl)
    pr = ProofRun(id=store.new_id(10), project_id=p.id, suite_slug=suite_slug, status="running", total_cases=len(cases), public_id=store.new_id(16))
    s.add(pr)
    s.commit()
    return P.SuiteCases(proofRunId=pr.id, cases=[P.golden_wire(store.golden_dict(g)) for g in cases])


def _own_proof_run(s: Session, p: Project, prid: str) -> ProofRun:
    pr = s.get(ProofRun, prid) if len(prid) <= 40 else None
    if pr is None or pr.project_id != p.id:
        raise HTTPException(404, "proof run not found")
    return pr


@router.post("/proof-runs/{proof_run_id}/case-results", response_model=P.CaseResultAccepted, responses=AUTH)
def case_result(proof_run_id: str, body: P.CaseResultIn, p: ProjectDep, s: SessionDep) -> P.CaseResultAccepted:
    pr = _own_proof_run(s, p, proof_run_id)
    if pr.status == "expired":
        raise HTTPException(409, "proof run expired; fetch the suite's cases again")
    if _own_golden(s, p, body.goldenId) is None:
        raise HTTPException(404, "golden not found")
    if body.runId is not None:
        _own_run(s, p, body.runId)
    old = s.scalar(select(CaseResult).where(CaseResult.proof_run_id == pr.id, CaseResult.golden_id == body.goldenId))
    if old is not None:
        s.delete(old)
        s.flush()
    s.add(CaseResult(proof_run_id=pr.id, golden_id=body.goldenId, run_id=body.runId, score=body.score, passed=body.passed, failure_summary=body.failureSummary))
    s.commit()
    return P.CaseResultAccepted()


@router.post("/proof-runs/{proof_run_id}/complete", response_model=P.ProofRunCompleted, responses=AUTH)
async def complete_proof_run(proof_run_id: str, request: Request, p: ProjectDep) -> P.ProofRunCompleted:
    """Complete a proof run; its score is computed once the case runs are graded (``proofs.py``)."""
    import asyncio

    from starlette.concurrency import run_in_threadpool

    settings = request.app.state.settings
    deadline = time.monotonic() + settings.proof_wait
    while True:
        done = await run_in_threadpool(_finish_proof_run, request.app.state.db, p, proof_run_id, time.monotonic() >= deadline)
        if done is not None:
            break
        await asyncio.sleep(0.2)
    pr = done
    url = f"{root_url(request)}/p/{pr.public_id}"
    return P.ProofRunCompleted(
        proofRunId=pr.id,
        passedCases=pr.passed_cases,
        failedCases=pr.failed_cases,
        overallScore=pr.overall_score,
        publicUrl=url,
        passed_cases=pr.passed_cases,
        failed_cases=pr.failed_cases,
        overall_score=pr.overall_score,
        public_url=url,
    )


def _finish_proof_run(db: Database, p: Project, proof_run_id: str, final: bool) -> ProofRun | None:
    """Score and complete the proof run, or None while case runs are still being graded (unless ``final``)."""
    from agentsproof.server import proofs

    with db.session() as s:
        pr = _own_proof_run(s, p, proof_run_id)
        if pr.status == "expired":
            raise HTTPException(409, "proof run expired; fetch the suite's cases again")
        if not final and proofs.pending_cases(s, pr.id):
            s.rollback()
            return None
        proofs.score(s, pr)
        pr.completed_at = utcnow()
        s.commit()
        return pr
