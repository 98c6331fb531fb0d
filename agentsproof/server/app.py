"""The ASGI app: ``create_app(settings)`` wires the API, the pages and the grading worker.

The database is opened (and migrated) when the app is created; the worker thread starts
with the app's lifespan and resumes any grading left pending in the database.
"""

from __future__ import annotations

import json
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from agentsproof.core.envcfg import env_int, env_number
from agentsproof.server.db import Database, is_outage, log

DEFAULT_MAX_BODY = 2 * 1024 * 1024
DEFAULT_HEADER_TIMEOUT = 10.0
DEFAULT_BODY_TIMEOUT = 60.0
RETRY_AFTER = 5
"""Seconds a client is told to wait (``Retry-After``) while the database is down."""


LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")


@dataclass
class Settings:
    """How ``serve`` runs the server: database, judge provider and model, allowed hosts, limits and timeouts."""

    db_url: str
    provider: str | None = None
    model: str | None = None
    runs_dir: str | None = None
    public_url: str | None = None
    host: str = "127.0.0.1"
    """The interface ``serve`` binds; its name is an allowed Host by default."""
    allowed_hosts: list[str] | None = None
    """Host header names served (``*`` = any); default: ``host``, loopback names and --public-url's host."""
    max_body: int = field(default_factory=lambda: env_int("AGENTSPROOF_MAX_BODY", DEFAULT_MAX_BODY, lo=0))
    """Largest request body in bytes (0 = no cap); larger ones get 413."""
    grade_delay: float = field(default_factory=lambda: env_number("AGENTSPROOF_GRADE_DELAY", 1.0, lo=0, hi=3600))
    """Seconds between complete and grading, so fire-and-forget steps can land first."""
    proof_wait: float = field(default_factory=lambda: env_number("AGENTSPROOF_PROOF_WAIT", 20.0, lo=0, hi=600))
    """How long completing a proof run waits for its case runs' grades before answering with a pending score."""
    proof_run_ttl: float = field(default_factory=lambda: env_number("AGENTSPROOF_PROOF_RUN_TTL", 24 * 3600.0, lo=1, hi=365 * 24 * 3600))
    """Seconds after which a proof run with no activity that was never completed expires."""
    proof_run_purge: float = field(default_factory=lambda: env_number("AGENTSPROOF_PROOF_RUN_PURGE", 24 * 3600.0, lo=0, hi=365 * 24 * 3600))
    """Seconds after its expiry that a proof run which never received a case result is deleted."""
    orphan_run_ttl: float = field(default_factory=lambda: env_number("AGENTSPROOF_ORPHAN_RUN_TTL", 24 * 3600.0, lo=1, hi=365 * 24 * 3600))
    """Seconds after which a run never completed and without any step (its creator never heard back) is deleted."""
    header_timeout: float = field(default_factory=lambda: env_number("AGENTSPROOF_HEADER_TIMEOUT", DEFAULT_HEADER_TIMEOUT, lo=0.1, hi=3600))
    """Seconds a connection has to send a request's headers (from connecting, or from the previous answer)."""
    body_timeout: float = field(default_factory=lambda: env_number("AGENTSPROOF_BODY_TIMEOUT", DEFAULT_BODY_TIMEOUT, lo=0.1, hi=3600))
    """Seconds a request has to send its whole body once its headers are in."""
    body_min_rate: float = field(default_factory=lambda: env_number("AGENTSPROOF_BODY_MIN_RATE", 1024.0, lo=0, hi=1e12))
    """Bytes a second a body must average once it has arrived for 5 s (0: no least rate)."""
    max_slow_uploads: int = field(default_factory=lambda: env_int("AGENTSPROOF_MAX_SLOW_UPLOADS", 32, lo=1))
    """Bodies that may still be arriving after 5 s at once; past that the oldest is closed."""
    worker: bool = True

    def host_names(self) -> set[str]:
        """The Host names served, normalised: ``allowed_hosts`` if set, else loopback, ``host`` and the public URL's host."""
        if self.allowed_hosts:
            return {normal_host(h) for h in self.allowed_hosts}
        names = {*LOOPBACK_NAMES, normal_host(self.host)}
        if self.public_url:
            names.add(normal_host(urlsplit(self.public_url).hostname or ""))
        return names - {""}


def normal_host(name: str) -> str:
    """A host name as compared: lower case, no brackets, no trailing dot."""
    return name.strip().strip("[]").rstrip(".").lower()


def host_patterns(names: set[str]) -> list[str]:
    """``names`` as starlette's ``TrustedHostMiddleware`` compares them: an IPv6 literal in
    brackets (as a Host header carries it), a name also with its trailing dot (``localhost.``
    is ``localhost``); ``*`` and ``*.example.org`` stay patterns."""
    out: list[str] = []
    for name in sorted(names):
        if name == "*" or name.startswith("*."):
            out.append(name)
        elif ":" in name:
            out.append(f"[{name}]")
        else:
            out += [name, f"{name}."]
    return out


def bad_host_pattern(name: str) -> bool:
    """A ``*`` anywhere but alone or as a leading ``*.`` (the wildcards starlette knows)."""
    return "*" in name and name != "*" and not (name.startswith("*.") and "*" not in name[1:])


_PASSED = "agentsproof_host_passed"
"""Set in the ASGI scope once the Host was allowed."""


class HostCheck:
    """400 for a request whose Host is not an allowed name: starlette's
    ``TrustedHostMiddleware`` parses the header and decides; a refused request gets our
    JSON answer (which says how to allow the name) instead of its plain text.

    A page opened through a domain that an attacker re-points at 127.0.0.1 (DNS
    rebinding) carries that domain in Host, so it never reaches the dashboard."""

    def __init__(self, app: ASGIApp, names: set[str]):
        from starlette.middleware.trustedhost import TrustedHostMiddleware

        self.app = app
        self.any = "*" in names
        self._check = TrustedHostMiddleware(self._allowed, allowed_hosts=host_patterns(names), www_redirect=False)

    async def _allowed(self, scope: Scope, receive: Receive, send: Send) -> None:
        scope[_PASSED] = True
        await self.app(scope, receive, send)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass a request whose Host is allowed (and every non-HTTP scope) to the app; answer 400 to any other."""
        if scope["type"] != "http" or self.any:
            await self.app(scope, receive, send)
            return

        async def gate(message: Message) -> None:  # starlette's own refusal is not sent
            if scope.get(_PASSED):
                await send(message)

        await self._check(scope, receive, gate)
        if not scope.get(_PASSED):
            resp = JSONResponse({"detail": "unknown Host; start the server with --allowed-host NAME to serve it"}, status_code=400)
            await resp(scope, receive, send)
        return None


class BodyLimit:
    """Pure ASGI middleware: 413 for a body over ``limit`` bytes (declared or streamed).

    A streamed (chunked) body is answered 413 as soon as it passes the limit; the app then
    sees the client as gone and whatever it would answer is dropped."""

    def __init__(self, app: ASGIApp, limit: int):
        self.app, self.limit = app, limit

    async def __call__(self, scope: dict, receive: Receive, send: Send) -> None:
        """Pass the request on, answering 413 instead once its body is over ``limit`` bytes."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        for name, value in scope.get("headers", []):
            if name == b"content-length":
                try:
                    too_big = int(value) > self.limit
                except ValueError:
                    too_big = True
                if too_big:
                    return await _too_large(scope, receive, send)
        seen = 0
        answered = False

        async def limited() -> Message:
            nonlocal seen, answered
            if answered:
                return {"type": "http.disconnect"}
            msg = await receive()
            if msg["type"] == "http.request":
                seen += len(msg.get("body", b""))
                if seen > self.limit:
                    answered = True
                    await _too_large(scope, receive, send)
                    return {"type": "http.disconnect"}
            return msg

        async def guarded_send(msg: Message) -> None:
            if not answered:
                await send(msg)

        try:
            await self.app(scope, limited, guarded_send)
        except Exception:
            if not answered:
                raise


async def _too_large(scope: dict, receive: Receive, send: Send) -> None:
    await JSONResponse({"detail": "request body too large"}, status_code=413)(scope, receive, send)


class SafeJSONResponse(JSONResponse):
    """JSON that always encodes: text and numbers pass :func:`protocol.renderable` first."""

    def render(self, content: Any) -> bytes:
        """``content`` as compact UTF-8 JSON, made renderable first (never NaN, never a lone surrogate)."""
        from agentsproof.server.protocol import renderable

        return json.dumps(renderable(content), ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode("utf-8")


def _error_list(errors: Any) -> list[dict[str, Any]]:
    """Validation errors without the input they were about (it may not even encode)."""
    from agentsproof.server.protocol import renderable

    out = []
    for e in errors:
        loc = [x if isinstance(x, int) else str(x)[:100] for x in e.get("loc", ())]
        out.append(renderable({"type": e.get("type"), "loc": loc, "msg": str(e.get("msg", ""))[:500]}))
    return out


def create_app(settings: Settings) -> Any:
    """The FastAPI app for ``settings``: database opened and migrated, grading worker, routes and middleware."""
    from agentsproof.server import api, apidocs, pages
    from agentsproof.server.worker import GradingWorker

    db = Database(settings.db_url)
    worker = (
        GradingWorker(
            db,
            provider=settings.provider,
            model=settings.model,
            proof_run_ttl=settings.proof_run_ttl,
            proof_run_purge=settings.proof_run_purge,
            orphan_run_ttl=settings.orphan_run_ttl,
        )
        if settings.worker
        else None
    )

    @asynccontextmanager
    async def lifespan(app: FastAPI):
        if settings.runs_dir:
            from agentsproof.server.reports import import_runs_dir

            import_runs_dir(db, settings.runs_dir)
        if worker:
            worker.start()
        yield
        if worker:
            worker.stop()
        db.close()

    app = FastAPI(
        title="AgentsProof server",
        version="1",
        lifespan=lifespan,
        default_response_class=SafeJSONResponse,
        docs_url=None,
        openapi_url="/api/openapi.json",
        redoc_url=None,
    )
    app.state.db = db
    app.state.settings = settings
    app.state.public_url = (settings.public_url or "").rstrip("/") or None
    app.state.grade_delay = settings.grade_delay
    app.state.worker = worker
    app.state.wake_worker = worker.wake if worker else (lambda: None)
    app.include_router(api.router)
    app.include_router(pages.router)
    app.include_router(apidocs.router)

    from fastapi.exceptions import RequestValidationError
    from sqlalchemy.exc import DataError, InterfaceError, OperationalError
    from sqlalchemy.exc import TimeoutError as PoolTimeout

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        return SafeJSONResponse({"detail": _error_list(exc.errors())}, status_code=422)

    @app.exception_handler(DataError)
    async def _bad_data(request: Request, exc: DataError) -> Any:  # e.g. NUL in a path or query on PostgreSQL
        message = "invalid data for the database (text with NUL characters?)"
        if not request.url.path.startswith(api.P.API_PREFIX + "/"):  # a page answers with a page
            return pages.render("not_found.html", 422, message=message)
        return JSONResponse({"detail": message}, status_code=422)

    async def _db_down(request: Request, exc: Exception) -> JSONResponse:
        if not is_outage(exc):  # one query's own failure: logged as such, never as an outage
            log.error(
                "database error on %s %s: %s", request.method, request.url.path, (str(getattr(exc, "orig", None) or exc).strip().splitlines() or ["?"])[0][:300]
            )
            return JSONResponse({"detail": "internal error"}, status_code=500)
        db.outage.down(exc)
        return JSONResponse({"detail": "database unavailable; retry later"}, status_code=503, headers={"Retry-After": str(RETRY_AFTER)})

    for kind in (OperationalError, InterfaceError, PoolTimeout):
        app.add_exception_handler(kind, _db_down)

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception) -> JSONResponse:  # never leak a traceback
        # the server logs the traceback once (uvicorn's "Exception in ASGI application")
        return JSONResponse({"detail": "internal error"}, status_code=500)

    if settings.max_body:
        app.add_middleware(BodyLimit, limit=settings.max_body)
    app.add_middleware(HostCheck, names=settings.host_names())
    return app
