"""Proof suites: fetch a suite's approved goldens, run each through the agent's handler
locally, report each case, and complete the proof run. The wire flow is the published
SDK's: ``GET /proof-suites/{slug}/cases?projectSlug=`` → ``{"proofRunId", "cases"}``,
``POST /proof-runs/{id}/case-results`` per case, ``POST /proof-runs/{id}/complete``.

``handler(input, ctx)`` gets the golden's input and a ``ProofContext``: ``ctx.start_run()``
starts a run pre-filled from the golden (label, input, goal, expected_output; overrides
win) and tagged ``metadata.goldenId``/``proofRunId``, exactly as the published SDK does (the
server applies the golden's other fields from ``metadata.goldenId``); ``ctx.golden_case``
is the golden.
A case passes when the handler returns without raising. A run the handler started but did
not complete is completed with the handler's return value, so it is graded.

Unlike logging, a suite that cannot be loaded or completed raises ``ProofSuiteError``:
there is nothing sensible to return.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import urllib.parse
from collections.abc import Callable, Iterator
from typing import Any, Protocol, runtime_checkable

from agentsproof.sdk.run import AgentRun
from agentsproof.sdk.transport import Transport, TransportError

log = logging.getLogger("agentsproof.sdk")


@runtime_checkable
class SuiteClient(Protocol):
    """What a proof suite uses of its client (``AgentsProof`` satisfies it; this module never
    imports the client, which imports this one)."""

    _transport: Transport

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
        """Start a traced run (``AgentsProof.start_run``)."""
        ...


class ProofSuiteError(RuntimeError):
    """The suite could not be loaded or its proof run completed."""


def _field(golden: dict[str, Any], snake: str) -> Any:
    if snake in golden:
        return golden[snake]
    head, *rest = snake.split("_")
    return golden.get(head + "".join(w.title() for w in rest))


class ProofContext:
    """What ``handler(input, ctx)`` gets: the golden (``golden_case``), the proof run's id, and
    ``start_run`` for a run pre-filled from the golden; ``run`` is the run it started, if any."""

    def __init__(self, client: SuiteClient, project_slug: str, proof_run_id: str, golden: dict[str, Any]) -> None:
        self._client = client
        self._project_slug = project_slug
        self.proof_run_id = proof_run_id
        self.golden_case = golden
        self.run: AgentRun | None = None

    def start_run(self, **overrides: Any) -> AgentRun:
        """Start this case's run: the golden's label, input, goal and expected output (``overrides``
        win, ``metadata`` is merged) and ``metadata.goldenId``/``proofRunId``."""
        g = self.golden_case
        fields: dict[str, Any] = {
            "label": f"Proof case: {g.get('name', '')}",
            "input": g.get("input"),
            "goal": _field(g, "goal"),
            "expected_output": _field(g, "expected_output"),
        }
        fields.update({k: v for k, v in overrides.items() if k not in ("metadata", "project_slug")})
        metadata = {**(overrides.get("metadata") or {}), "goldenId": g.get("id"), "proofRunId": self.proof_run_id}
        self.run = self._client.start_run(project_slug=overrides.get("project_slug", self._project_slug), metadata=metadata, **fields)
        return self.run


def _load(client: SuiteClient, project_slug: str, suite_slug: str) -> tuple[str, list[dict[str, Any]]]:
    path = f"/proof-suites/{urllib.parse.quote(suite_slug, safe='')}/cases"
    try:
        data = client._transport.request("GET", path, params={"projectSlug": project_slug}, timeout=15)
        return str(data["proofRunId"]), list(data["cases"])
    except (TransportError, KeyError, TypeError) as err:
        raise ProofSuiteError(f"AgentsProof: failed to load proof suite {suite_slug!r}: {err}") from err


def _report(client: SuiteClient, proof_run_id: str, golden: dict[str, Any], run_id: str | None, passed: bool, failure: str | None) -> None:
    body = {"goldenId": golden.get("id"), "runId": run_id, "score": None, "passed": passed, "failureSummary": failure}
    try:
        client._transport.request("POST", f"/proof-runs/{proof_run_id}/case-results", body, timeout=10)
    except TransportError as err:
        log.warning("agentsproof: case result for golden %s not recorded: %s", golden.get("id"), err)


def _finish(client: SuiteClient, proof_run_id: str) -> dict[str, Any]:
    try:
        return dict(client._transport.request("POST", f"/proof-runs/{proof_run_id}/complete", None, timeout=30) or {})
    except TransportError as err:
        raise ProofSuiteError(f"AgentsProof: failed to complete proof suite: {err}") from err


def _remote_id(run: AgentRun | None) -> str | None:
    """The server's id of the case's run (created now if still pending); None without a run."""
    return run.remote_run_id if run else None


def _contexts(client: SuiteClient, project_slug: str, proof_run_id: str, cases: list[dict[str, Any]]) -> Iterator[tuple[dict[str, Any], ProofContext]]:
    """Each golden case of the proof run with the context its handler gets."""
    for golden in cases:
        yield golden, ProofContext(client, project_slug, proof_run_id, golden)


def _left_open(ctx: ProofContext) -> AgentRun | None:
    """The case's run when the handler started it and left it open (it is completed for it)."""
    return ctx.run if ctx.run is not None and not ctx.run._completed else None


def _failure(err: BaseException) -> str:
    return str(err) or type(err).__name__


def run_proof_suite(client: SuiteClient, *, project_slug: str, suite_slug: str, handler: Callable[[Any, Any], Any]) -> dict[str, Any]:
    """Run every case of the suite through ``handler`` and complete the proof run; returns the
    server's ``ProofSuiteResult``. Raises ``ProofSuiteError`` if the suite cannot be loaded or completed."""
    proof_run_id, cases = _load(client, project_slug, suite_slug)
    for golden, ctx in _contexts(client, project_slug, proof_run_id, cases):
        passed, failure = False, None
        try:
            result = handler(golden.get("input"), ctx)
            if inspect.isawaitable(result):
                raise TypeError("handler returned an awaitable; use arun_proof_suite for async handlers")
            if (run := _left_open(ctx)) is not None:
                run.complete(result)
            passed = True
        except Exception as err:  # noqa: BLE001 - a failing case is a result, not a crash
            failure = _failure(err)
            if (run := _left_open(ctx)) is not None:
                run.complete({"error": failure})
        _report(client, proof_run_id, golden, _remote_id(ctx.run), passed, failure)
    return _finish(client, proof_run_id)


async def arun_proof_suite(client: SuiteClient, *, project_slug: str, suite_slug: str, handler: Callable[[Any, Any], Any]) -> dict[str, Any]:
    """Async ``run_proof_suite``: ``handler`` may be sync or async; HTTP calls run in a thread."""
    proof_run_id, cases = await asyncio.to_thread(_load, client, project_slug, suite_slug)
    for golden, ctx in _contexts(client, project_slug, proof_run_id, cases):
        passed, failure = False, None
        try:
            result = handler(golden.get("input"), ctx)
            if inspect.isawaitable(result):
                result = await result
            if (run := _left_open(ctx)) is not None:
                await run.acomplete(result)
            passed = True
        except Exception as err:  # noqa: BLE001
            failure = _failure(err)
            if (run := _left_open(ctx)) is not None:
                await run.acomplete({"error": failure})
        run_id = await asyncio.to_thread(_remote_id, ctx.run) if ctx.run else None
        await asyncio.to_thread(_report, client, proof_run_id, golden, run_id, passed, failure)
    return await asyncio.to_thread(_finish, client, proof_run_id)
