"""Server-rendered pages: projects, runs (filters, pagination), run and proof-run reports
at their public URLs, goldens (create, edit, approve, import) and the CLI's results.

The dashboard pages are meant for the loopback interface the server binds by default;
report pages are reachable by their unguessable public ids. Everything is rendered by
Jinja with autoescape and a Content-Security-Policy that allows no script at all."""

from __future__ import annotations

import json
import math
from datetime import UTC, date, datetime, time
from typing import Any
from urllib.parse import parse_qs, urlencode

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse
from jinja2 import DictLoader, Environment, select_autoescape
from sqlalchemy import String, case, cast, false, func, literal, select
from sqlalchemy.orm import Session

from agentsproof.core.errors import InputError
from agentsproof.server import store
from agentsproof.server.models import CaseResult, Golden, Grade, Project, ProofRun, Run
from agentsproof.server.protocol import bad_text, renderable
from agentsproof.server.templates import TEMPLATES
from agentsproof.server.views import case_score, run_view

router = APIRouter(include_in_schema=False)
PAGE_SIZE = 25
CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"


def _pretty(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, indent=2, ensure_ascii=False, default=str)


ENV = Environment(loader=DictLoader(TEMPLATES), autoescape=select_autoescape(default=True, default_for_string=True))
ENV.filters["pretty"] = _pretty


def render(name: str, status: int = 200, **ctx: Any) -> HTMLResponse:
    """The page ``name`` rendered with ``ctx`` as an HTML response with the strict security headers (CSP, nosniff, no referrer)."""
    html = renderable(ENV.get_template(name).render(**ctx))  # an old row's lone surrogate must not fail the page
    return HTMLResponse(
        html, status_code=status, headers={"Content-Security-Policy": CSP, "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer"}
    )


def _db(request: Request):
    return request.app.state.db.session()


def _not_found(message: str) -> HTMLResponse:
    return render("not_found.html", 404, message=message)


def _project(s, slug: str) -> Project | None:
    return s.scalar(select(Project).where(Project.slug == slug)) if len(slug) <= 100 else None


def _count(s: Session, model: type[Run] | type[Golden] | type[ProofRun], project_id: int) -> int | None:
    return s.scalar(select(func.count()).select_from(model).where(model.project_id == project_id))


@router.get("/", response_class=HTMLResponse)
def projects(request: Request) -> HTMLResponse:
    """``GET /``: every project with its counts of runs, goldens and proof runs."""
    with _db(request) as s:
        rows = []
        for p in s.scalars(select(Project).order_by(Project.slug)):
            rows.append({"slug": p.slug, "runs": _count(s, Run, p.id), "goldens": _count(s, Golden, p.id), "proof_runs": _count(s, ProofRun, p.id)})
    return render("projects.html", projects=rows)


def _day(value: str, field: str, end: bool = False) -> datetime:
    try:
        d = date.fromisoformat(value)
    except ValueError:
        raise InputError("filter", field, f"{value!r} is not a date (YYYY-MM-DD)") from None
    return datetime.combine(d, time.max if end else time.min, tzinfo=UTC)


@router.get("/projects/{slug}/runs", response_class=HTMLResponse)
def runs(request: Request, slug: str, label: str = "", meta: str = "", golden: str = "", since: str = "", until: str = "", page: int = 1) -> HTMLResponse:
    """``GET /projects/{slug}/runs``: a project's runs, filtered by label, metadata, golden and dates, one page at a time."""
    f = {"label": label[:200], "meta": meta[:200], "golden": golden[:100], "since": since[:10], "until": until[:10]}
    with _db(request) as s:
        p = _project(s, slug)
        if p is None:
            return _not_found("no such project")
        q = select(Run, Grade.status, Grade.overall_score).outerjoin(Grade, Grade.run_id == Run.id).where(Run.project_id == p.id)
        error = None
        try:
            for k, v in f.items():
                found = bad_text(v, k)
                if found:
                    raise InputError("filter", k, found.partition(": ")[2])
            if f["label"]:
                q = q.where(Run.label.contains(f["label"], autoescape=True))
            if f["golden"]:
                q = q.where(Run.golden_id == f["golden"])
            if f["meta"]:
                key, sep, value = f["meta"].partition("=")
                if not sep or not key.strip():
                    raise InputError("filter", "metadata", "use key=value")
                q = q.where(meta_text(s, key.strip()) == value.strip())
            if f["since"]:
                q = q.where(Run.created_at >= _day(f["since"], "from"))
            if f["until"]:
                q = q.where(Run.created_at <= _day(f["until"], "to", end=True))
        except InputError as err:
            error = str(err)
            q = q.where(false())
            for k in ("since", "until"):  # never echo a bad value into a date input
                try:
                    date.fromisoformat(f[k] or "2000-01-01")
                except ValueError:
                    f[k] = ""
        total = s.scalar(select(func.count()).select_from(q.subquery())) or 0
        pages = max(1, math.ceil(total / PAGE_SIZE))
        page = min(max(1, page), pages)
        rows = s.execute(q.order_by(Run.created_at.desc(), Run.id).offset((page - 1) * PAGE_SIZE).limit(PAGE_SIZE)).all()
        items = [
            {
                "id": r.id,
                "label": r.label,
                "golden_id": r.golden_id,
                "public_id": None if r.public_revoked else r.public_id,
                "status": r.status,
                "created_at": store.fmt_time(r.created_at),
                "meta": _meta_line(r.meta),
                "grade_status": gs,
                "score": sc,
            }
            for r, gs, sc in rows
        ]
    qs = urlencode({k: v for k, v in f.items() if v})
    return render("runs.html", project=slug, runs=items, f=f, total=total, page=page, pages=pages, qs=qs, error=error)


def _meta_line(meta: Any) -> str:
    """A run's metadata in one line (``k=v, ...``); an old row holding something else is shown as it is."""
    if isinstance(meta, dict):
        return ", ".join(f"{k}={v}" for k, v in meta.items())
    return "" if meta is None else str(meta)


def meta_text(s: Session, key: str) -> Any:
    """SQL for the text of ``metadata[key]``, NULL for a row whose stored JSON the database
    cannot read (written before values were checked): such a row just does not match."""
    if s.get_bind().dialect.name == "postgresql":
        return func.agentsproof_json_text(Run.meta, key)  # migration 0004
    # SQLite: the key is matched as a bound value among the object's members, never put in a
    # JSON path (where a `"` or `.` in it would be a path error, not a filter): what
    # PostgreSQL's `->>` gives, JSON true/false as text included.
    doc = case((func.json_valid(Run.meta) == 1, Run.meta), else_=literal("{}"))
    member = func.json_each(doc).table_valued("key", "value", "type")
    text = case((member.c.type.in_(("true", "false")), member.c.type), else_=cast(member.c.value, String))
    return select(text).where(func.json_type(doc) == "object", member.c.key == key).limit(1).scalar_subquery()


@router.get("/r/{public_id}", response_class=HTMLResponse)
def run_report(request: Request, public_id: str) -> HTMLResponse:
    """``GET /r/{public_id}``: a run's public report (404 once revoked)."""
    with _db(request) as s:
        run = s.scalar(select(Run).where(Run.public_id == public_id)) if len(public_id) <= 64 else None
        if run is None or run.public_revoked:
            return _not_found("no such report (it may have been revoked)")
        view = run_view(s, run)
    return render("report.html", run=view)


@router.get("/projects/{slug}/proof-runs", response_class=HTMLResponse)
def proof_runs(request: Request, slug: str) -> HTMLResponse:
    """``GET /projects/{slug}/proof-runs``: a project's latest 200 proof runs, newest first."""
    with _db(request) as s:
        p = _project(s, slug)
        if p is None:
            return _not_found("no such project")
        rows = [
            {
                **{k: getattr(pr, k) for k in ("public_id", "suite_slug", "status", "passed_cases", "failed_cases", "overall_score")},
                "created_at": store.fmt_time(pr.created_at),
            }
            for pr in s.scalars(select(ProofRun).where(ProofRun.project_id == p.id).order_by(ProofRun.created_at.desc()).limit(200))
        ]
    return render("proof_runs.html", project=slug, proof_runs=rows)


@router.get("/p/{public_id}", response_class=HTMLResponse)
def proof_report(request: Request, public_id: str) -> HTMLResponse:
    """``GET /p/{public_id}``: a proof run's public report with its case results."""
    with _db(request) as s:
        pr = s.scalar(select(ProofRun).where(ProofRun.public_id == public_id)) if len(public_id) <= 64 else None
        if pr is None:
            return _not_found("no such proof run")
        cases = []
        for c in s.scalars(select(CaseResult).where(CaseResult.proof_run_id == pr.id).order_by(CaseResult.id)):
            g = store.golden_of(s, pr.project_id, c.golden_id)
            run = s.get(Run, c.run_id) if c.run_id else None
            cases.append(
                {
                    "golden_name": g.name if g else c.golden_id,
                    "passed": c.passed,
                    "score": case_score(s, c),
                    "failure_summary": c.failure_summary,
                    "public_id": run.public_id if run is not None and not run.public_revoked else None,
                }
            )
        view = {k: getattr(pr, k) for k in ("suite_slug", "status", "passed_cases", "failed_cases", "overall_score")}
        view["created_at"] = store.fmt_time(pr.created_at)  # the stored score: the one the SDK was given (proofs.py)
    return render("proof_report.html", pr=view, cases=cases)


# ---- goldens ----------------------------------------------------------------------------


def _goldens_page(s, p: Project, error: str | None = None, status: int = 200) -> HTMLResponse:
    goldens = [store.golden_dict(g) for g in s.scalars(select(Golden).where(Golden.project_id == p.id).order_by(Golden.created_at, Golden.id))]
    return render("goldens.html", status, project=p.slug, goldens=goldens, error=error)


@router.get("/projects/{slug}/goldens", response_class=HTMLResponse)
def goldens(request: Request, slug: str) -> HTMLResponse:
    """``GET /projects/{slug}/goldens``: a project's goldens, oldest first."""
    with _db(request) as s:
        p = _project(s, slug)
        return _goldens_page(s, p) if p else _not_found("no such project")


def _cross_site(request: Request) -> bool:
    """A form post from another site (CSRF). A browser that sends ``Sec-Fetch-Site`` is
    believed (``same-origin`` or ``none`` pass; our pages' no-referrer policy makes
    Chromium send ``Origin: null`` for its own forms); otherwise the Origin must be this
    server's, and a ``null`` one (sandboxed frames, file pages) is refused."""
    site = request.headers.get("sec-fetch-site")
    if site is not None:
        return site not in ("same-origin", "none")
    origin = request.headers.get("origin")
    if origin is None:
        return False  # not a browser form post (curl, scripts); the Host was already checked
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(origin)
        netloc = parts.netloc
    except ValueError:
        return True
    return origin == "null" or parts.scheme not in ("http", "https") or netloc != request.headers.get("host", "")


async def _form(request: Request) -> dict[str, str]:
    if _cross_site(request):
        from fastapi import HTTPException

        raise HTTPException(403, "cross-site form posts are refused")
    body = (await request.body()).decode("utf-8", "replace")
    return {k: v[-1] for k, v in parse_qs(body, keep_blank_values=True).items()}


def _json_or_text(text: str) -> Any:
    text = text.strip()
    if not text:
        return None
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def _golden_fields(form: dict[str, str], gid: str | None) -> dict[str, Any]:
    fields: dict[str, Any] = {"input": _json_or_text(form.get("input", ""))}
    if gid:
        fields["id"] = gid
    for k in ("name", "goal", "expected_behavior"):
        if form.get(k, "").strip():
            fields[k] = form[k].strip()
    if form.get("expected_output", "").strip():
        fields["expected_output"] = _json_or_text(form["expected_output"])
    for k in ("success_criteria", "trace_assertions", "failure_modes"):
        fields[k] = [line.strip() for line in form.get(k, "").splitlines() if line.strip()]
    return store.normalise_golden(fields, "form")


@router.post("/projects/{slug}/goldens/import", response_class=HTMLResponse)
async def import_goldens(request: Request, slug: str) -> Any:
    """``POST /projects/{slug}/goldens/import``: add or update the pasted goldens (JSONL, one per line) in a suite; 422 with the page on a bad line."""
    form = await _form(request)
    with _db(request) as s:
        p = _project(s, slug)
        if p is None:
            return _not_found("no such project")
        try:
            suite = store.check_slug(form.get("suite", "").strip(), "suite")
            lines = [ln for ln in form.get("jsonl", "").splitlines() if ln.strip()]
            if not lines:
                raise InputError("import", "jsonl", "no golden given")
            for n, line in enumerate(lines, 1):
                try:
                    obj = json.loads(line)
                except json.JSONDecodeError as err:
                    raise InputError("import", f"line {n}", f"invalid JSON: {err.msg}") from None
                store.upsert_golden(s, p, suite, store.normalise_golden(obj, f"line {n}"), True if form.get("approve") == "1" else None)
        except InputError as err:
            s.rollback()
            return _goldens_page(s, p, str(err), 422)
        s.commit()
    return RedirectResponse(f"/projects/{slug}/goldens", status_code=303)


@router.post("/projects/{slug}/goldens", response_class=HTMLResponse)
@router.post("/projects/{slug}/goldens/{gid}", response_class=HTMLResponse)
async def save_golden(request: Request, slug: str, gid: str | None = None) -> Any:
    """``POST /projects/{slug}/goldens[/{gid}]``: create a golden, or update ``gid``, from the form."""
    form = await _form(request)
    with _db(request) as s:
        p = _project(s, slug)
        if p is None or (gid and store.golden_of(s, p.id, gid) is None):
            return _not_found("no such project or golden")
        try:
            suite = form.get("suite", "").strip()
            if suite:
                store.check_slug(suite, "suite")
            g = store.upsert_golden(s, p, suite or None, _golden_fields(form, gid), form.get("approved") == "1")
        except InputError as err:
            s.rollback()
            return _goldens_page(s, p, str(err), 422)
        s.commit()
        return RedirectResponse(f"/projects/{slug}/goldens/{g.id}", status_code=303)


@router.get("/projects/{slug}/goldens/{gid}", response_class=HTMLResponse)
def edit_golden(request: Request, slug: str, gid: str) -> HTMLResponse:
    """``GET /projects/{slug}/goldens/{gid}``: the form to edit one golden."""
    with _db(request) as s:
        p = _project(s, slug)
        g = store.golden_of(s, p.id, gid) if p else None
        if p is None or g is None:
            return _not_found("no such golden")
        return render("golden_edit.html", project=slug, g=store.golden_dict(g), error=None)


@router.post("/projects/{slug}/goldens/{gid}/approve")
async def approve_golden(request: Request, slug: str, gid: str) -> Any:
    """``POST /projects/{slug}/goldens/{gid}/approve``: approve a golden for proof suites, then back to the list."""
    await _form(request)
    with _db(request) as s:
        p = _project(s, slug)
        g = store.golden_of(s, p.id, gid) if p else None
        if p is None or g is None:
            return _not_found("no such golden")
        g.approved = True
        s.commit()
    return RedirectResponse(f"/projects/{slug}/goldens", status_code=303)


@router.get("/results", response_class=HTMLResponse)
def results(request: Request) -> HTMLResponse:
    """``GET /results``: the CLI reports stored here (``agentsproof push``, ``serve --runs-dir``) and each item's delta over time."""
    from agentsproof.server.reports import results_view

    return render("results.html", **results_view(request.app.state.db))
