"""The ASGI app: ``create_app(settings)`` wires the API, the pages and the grading worker.

The database is opened (and migrated) when the app is created; the worker thread starts
with the app's lifespan and resumes any grading left pending in the database.
"""

from __future__ import annotations

import os
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from agentsproof.server.db import Database

DEFAULT_MAX_BODY = 2 * 1024 * 1024


@dataclass
class Settings:
    db_url: str
    provider: str | None = None
    model: str | None = None
    runs_dir: str | None = None
    public_url: str | None = None
    max_body: int = field(default_factory=lambda: int(os.environ.get("AGENTSPROOF_MAX_BODY", DEFAULT_MAX_BODY)))
    grade_delay: float = field(default_factory=lambda: float(os.environ.get("AGENTSPROOF_GRADE_DELAY", "1.0")))
    """Seconds between complete and grading, so fire-and-forget steps can land first."""
    worker: bool = True


class BodyLimit:
    """Pure ASGI middleware: 413 for a body over ``limit`` bytes (declared or streamed)."""

    def __init__(self, app: Any, limit: int):
        self.app, self.limit = app, limit

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        for name, value in scope.get("headers", []):
            if name == b"content-length":
                try:
                    too_big = int(value) > self.limit
                except ValueError:
                    too_big = True
                if too_big:
                    return await _too_large(scope, receive, send)
        seen = 0

        async def limited() -> dict:
            nonlocal seen
            msg = await receive()
            if msg["type"] == "http.request":
                seen += len(msg.get("body", b""))
                if seen > self.limit:
                    raise _TooLarge()
            return msg

        try:
            await self.app(scope, limited, send)
        except _TooLarge:
            await _too_large(scope, receive, send)


class _TooLarge(Exception):
    pass


async def _too_large(scope: dict, receive: Any, send: Any) -> None:
    await JSONResponse({"detail": "request body too large"}, status_code=413)(scope, receive, send)


def create_app(settings: Settings) -> Any:
    from agentsproof.server import api, pages
    from agentsproof.server.worker import GradingWorker

    db = Database(settings.db_url)
    worker = GradingWorker(db, provider=settings.provider, model=settings.model) if settings.worker else None

    @asynccontextmanager
    async def lifespan(app: FastAPI):
        if settings.runs_dir:
            from agentsproof.server.results import import_runs_dir

            import_runs_dir(db, settings.runs_dir)
        if worker:
            worker.start()
        yield
        if worker:
            worker.stop()
        db.close()

    app = FastAPI(title="AgentsProof server", version="1", lifespan=lifespan, docs_url="/api/docs", openapi_url="/api/openapi.json", redoc_url=None)
    app.state.db = db
    app.state.settings = settings
    app.state.public_url = (settings.public_url or "").rstrip("/") or None
    app.state.grade_delay = settings.grade_delay
    app.state.worker = worker
    app.state.wake_worker = worker.wake if worker else (lambda: None)
    app.include_router(api.router)
    app.include_router(pages.router)

    from sqlalchemy.exc import DataError

    @app.exception_handler(DataError)
    async def _bad_data(request: Request, exc: DataError) -> JSONResponse:  # e.g. NUL in a path or query on PostgreSQL
        return JSONResponse({"detail": "invalid data for the database (text with NUL characters?)"}, status_code=422)

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception) -> JSONResponse:  # never leak a traceback
        import logging

        logging.getLogger("agentsproof.server").exception("unhandled error on %s", request.url.path)
        return JSONResponse({"detail": "internal error"}, status_code=500)

    if settings.max_body:
        app.add_middleware(BodyLimit, limit=settings.max_body)
    return app
