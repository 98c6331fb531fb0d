"""``AgentsProof``: the SDK's entry point, API-compatible with the published ``agentsproof`` SDK.

Base URL: ``base_url``, else ``$AGENTSPROOF_BASE_URL``, else the local server
(``agentsproof serve``) at http://127.0.0.1:8787/api. API key: ``api_key``, else
``$AGENTSPROOF_API_KEY``.

This module is the top of the SDK: it imports ``run`` and ``suite``, which never import it
back (they are typed against the Protocols ``_base.RunClient`` and ``suite.SuiteClient``).
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import threading
import time
import uuid
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agentsproof.sdk import spool, suite
from agentsproof.sdk._base import TrackedRun
from agentsproof.sdk.jsonable import to_jsonable
from agentsproof.sdk.limits import fit_run
from agentsproof.sdk.run import AgentRun
from agentsproof.sdk.transport import TooSlow, Transport, TransportError, Unreachable
from agentsproof.sdk.usage import Prices
from agentsproof.sdk.worker import DEFAULT_QUEUE_SIZE, BackgroundWorker

log = logging.getLogger("agentsproof.sdk")

DEFAULT_BASE_URL = "http://127.0.0.1:8787/api"
OFFLINE_SECONDS = 1.0
"""After a connection failure, background sends pause this long (runs complete to the spool)."""


def resolve_base_url(base_url: str | None = None) -> str:
    """The server's API URL without a trailing slash: ``base_url``, else ``AGENTSPROOF_BASE_URL``, else the local default."""
    return (base_url or os.environ.get("AGENTSPROOF_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")


def _str_list(v: Any) -> list[str] | None:
    if v is None:
        return None
    if isinstance(v, str):
        return [v]
    return [x if isinstance(x, str) else str(to_jsonable(x)) for x in v]


class AgentsProof:
    """A client: ``start_run`` for traced runs, ``run_proof_suite`` for goldens.

    ``timeout`` bounds each HTTP call; ``flush_timeout`` bounds how long ``complete`` waits
    for queued steps; ``complete_timeout`` (default ``timeout``) bounds the whole of
    ``complete``: past it the run is spooled and ``complete`` returns, whatever the server does; ``spool_dir`` overrides where undelivered runs go; ``prices`` maps a
    model name to (USD per 1M input tokens, USD per 1M output tokens) for cost sniffing.
    ``resend_spooled`` (default True): at construction, a background thread uploads the runs
    spooled earlier for this base URL (bounded: ``spool.RESEND_MAX_RUNS`` runs,
    ``spool.RESEND_BUDGET`` seconds); ``agentsproof sync`` does the same by hand.
    """

    def __init__(
        self,
        api_key: str | None = None,
        base_url: str | None = None,
        *,
        timeout: float = 10.0,
        flush_timeout: float = 10.0,
        complete_timeout: float | None = None,
        queue_size: int = DEFAULT_QUEUE_SIZE,
        spool_dir: str | Path | None = None,
        prices: Prices | None = None,
        resend_spooled: bool = True,
    ) -> None:
        self._api_key = api_key if api_key is not None else os.environ.get("AGENTSPROOF_API_KEY")
        self.base_url = resolve_base_url(base_url)
        self.flush_timeout = flush_timeout
        self.complete_timeout = timeout if complete_timeout is None else complete_timeout
        self._transport = Transport(self.base_url, self._api_key, timeout)
        self._worker = BackgroundWorker(queue_size)
        self._spool_dir = Path(spool_dir) if spool_dir else None
        self._prices: Prices | None = dict(prices) if prices else None  # a copy, read by the runs
        self._offline_until = 0.0
        self._last_error: str | None = None
        self._warned: set[str] = set()
        self._warn_lock = threading.Lock()
        self._open_runs: weakref.WeakSet[TrackedRun] = weakref.WeakSet()
        self._resender: threading.Thread | None = None
        _CLIENTS.add(self)
        if resend_spooled:
            self._resender = threading.Thread(target=self._resend, name="agentsproof.sdk.resend", daemon=True)
            self._resender.start()

    def __repr__(self) -> str:  # the key never shows up in a log or traceback
        return f"AgentsProof(base_url={self.base_url!r})"

    # ------------------------------------------------------------------ runs

    def start_run(
        self,
        *,
        project_slug: str | None = None,
        input: Any = None,
        label: str | None = None,
        golden_id: str | None = None,
        goal: str | None = None,
        expected_output: Any = None,
        expected_behavior: str | None = None,
        success_criteria: list | None = None,
        trace_assertions: list | None = None,
        failure_modes: list | None = None,
        metadata: dict | None = None,
        client_run_id: str | None = None,
    ) -> AgentRun:
        """Start a run; returns at once (the server is told in the background)."""
        notes: list[str] = []
        body = {
            "label": to_jsonable(label, notes, "label"),
            "input": to_jsonable(input, notes, "input"),
            "projectSlug": project_slug,
            "clientRunId": client_run_id or uuid.uuid4().hex,
            "goldenId": golden_id,
            "goal": to_jsonable(goal, notes, "goal"),
            "expectedOutput": to_jsonable(expected_output, notes, "expectedOutput"),
            "expectedBehavior": to_jsonable(expected_behavior, notes, "expectedBehavior"),
            "successCriteria": _str_list(success_criteria),
            "traceAssertions": _str_list(trace_assertions),
            "failureModes": _str_list(failure_modes),
            "metadata": to_jsonable(metadata or {}, notes, "metadata"),
        }
        # every string valid Unicode (surrogate-escaped ones included), every field within the server's limits
        return AgentRun(self, fit_run(to_jsonable(body, notes, "run"), notes))

    def flush(self, timeout: float | None = None) -> int:
        """Wait for queued steps (at most ``timeout`` s); returns how many are still pending."""
        return self._worker.flush(self.flush_timeout if timeout is None else timeout)

    # ------------------------------------------------------------------ proof suites

    def run_proof_suite(self, *, project_slug: str, suite_slug: str, handler: Callable[[Any, Any], Any]) -> dict[str, Any]:
        """Run a suite's approved goldens through ``handler(input, ctx)``; see ``agentsproof.sdk.suite``."""
        return suite.run_proof_suite(self, project_slug=project_slug, suite_slug=suite_slug, handler=handler)

    async def arun_proof_suite(self, *, project_slug: str, suite_slug: str, handler: Callable[[Any, Any], Any]) -> dict[str, Any]:
        """Async ``run_proof_suite``; ``handler`` may be sync or async."""
        return await suite.arun_proof_suite(self, project_slug=project_slug, suite_slug=suite_slug, handler=handler)

    # ------------------------------------------------------------------ internals

    def _resend(self) -> None:
        """Upload earlier spooled runs for this server (background thread, never raises)."""
        try:
            for res in spool.resend(self._transport, self._spool_dir):
                if res.ok:
                    log.info("agentsproof: spooled %s re-sent: %s", res.path.name, res.message)
                else:
                    log.debug("agentsproof: spooled %s not re-sent: %s", res.path.name, res.message)
        except Exception:  # noqa: BLE001 - a background job never reaches the agent
            log.debug("agentsproof: re-sending spooled runs failed", exc_info=True)

    def _online(self) -> bool:
        return time.monotonic() >= self._offline_until

    def _failed(self, err: TransportError) -> None:
        status = getattr(err, "status", None)
        self._last_error = str(err)
        if isinstance(err, Unreachable) or status in (401, 403):  # neither gets better by the next step
            self._offline_until = time.monotonic() + OFFLINE_SECONDS
        if isinstance(err, TooSlow):  # it took the connection: slow (busy), not gone
            self._warn_once("slow", "agentsproof: server %s is slow (%s); runs it does not answer in time will be spooled", self.base_url, err)
        elif isinstance(err, Unreachable):
            self._warn_once("unreachable", "agentsproof: server %s unreachable (%s); runs will be spooled", self.base_url, err)
        else:
            hint = " (check AGENTSPROOF_API_KEY)" if status in (401, 403) else ""
            self._warn_once(f"http{status}", "agentsproof: server answered %s%s", err, hint)

    def _warn_once(self, key: str, msg: str, *args: Any) -> None:
        with self._warn_lock:
            if key in self._warned:
                return
            self._warned.add(key)
        log.warning(msg, *args)

    def _track(self, run: TrackedRun) -> None:
        self._open_runs.add(run)

    def _forget(self, run: TrackedRun) -> None:
        self._open_runs.discard(run)

    def _at_exit(self) -> None:
        """Give queued steps a moment, then spool runs the server never fully got."""
        self._worker.flush(min(self.flush_timeout, 2.0))
        for run in list(self._open_runs):
            if run._needs_spool():
                run._spool(completed=False, reason="process exited before complete()")


_CLIENTS: weakref.WeakSet[AgentsProof] = weakref.WeakSet()


@atexit.register
def _flush_all_at_exit() -> None:
    for client in list(_CLIENTS):
        with contextlib.suppress(Exception):  # at exit, one client's failure must not stop the others' flush
            client._at_exit()
