"""One traced agent run: steps go to the client's background worker, ``complete`` flushes,
finishes the run and returns ``{"publicUrl"}``; nothing here raises into the agent.

The run keeps its own steps until it is complete, so a step the queue could not take or
the server did not acknowledge is sent again by ``complete`` (the server ignores a step
index it already has), and a run the server never got is spooled whole for
``agentsproof sync``.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import logging
import os
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from agentsproof.sdk import spool
from agentsproof.sdk._base import RunClient
from agentsproof.sdk.jsonable import to_jsonable
from agentsproof.sdk.limits import fit_step, with_notes
from agentsproof.sdk.transport import HTTPStatusError, TransportError, Unreachable
from agentsproof.sdk.usage import usage_of

log = logging.getLogger("agentsproof.sdk")


def _call_input(args: tuple, kwargs: dict) -> Any:
    if len(args) == 1 and not kwargs:
        return args[0]
    if not args:
        return kwargs or None
    return {"args": list(args), "kwargs": kwargs} if kwargs else list(args)


PREVIEW_CHARS = 20_000
RETRY_DELAY = 0.25
"""First wait before sending again after a failure (doubled each time up to ``MAX_RETRY_DELAY``), as in the TypeScript SDK."""
MAX_RETRY_DELAY = 2.0
UNREACHABLE_GRACE = 3.0
"""How long ``complete`` keeps trying a server that refuses connections (a restart) before spooling."""
_NUMBERS = ("latency_ms", "token_count", "cost_usd")


def _number(v: Any) -> Any:
    """A step's number as given (NaN included, for ``fit_step`` to drop with a note);
    anything else made plain (numpy and Decimal numbers become floats)."""
    if isinstance(v, (int, float)):
        return v
    return to_jsonable(v)


def shrunk(payload: dict[str, Any], keys: tuple[str, ...] = ("input", "output")) -> dict[str, Any]:
    """``payload`` with its big values replaced by a JSON preview, for a server that answered 413."""
    import json

    out = dict(payload)
    for k in keys:
        if out.get(k) is not None:
            text = json.dumps(out[k], ensure_ascii=False)
            if len(text) > PREVIEW_CHARS:
                out[k] = {"truncated": True, "chars": len(text), "preview": text[:PREVIEW_CHARS]}
    return out


class AgentRun:
    """Created by ``AgentsProof.start_run``; ``run_id`` is the client run id, ``remote_run_id`` the server's.

    ``client`` is typed as ``RunClient`` (``_base.py``) so this module never imports the client.
    """

    def __init__(self, client: RunClient, body: dict[str, Any]) -> None:
        self.run_id: str = body["clientRunId"]
        self._client = client
        self._body = body
        self._lock = threading.Lock()
        self._create_lock = threading.Lock()
        self._steps: list[dict[str, Any]] = []
        self._sent: set[int] = set()
        self._remote_run_id: str | None = None
        self._refused: str | None = None  # the server rejected the run for good (4xx): it is spooled
        self._refused_steps: dict[int, str] = {}  # step index -> why the server refused it (spooled)
        self._deadline = 0.0
        self._completed = False
        self._result: dict[str, Any] | None = None
        self._output: Any = None
        self._started_at = time.monotonic()
        self._pid = os.getpid()
        client._track(self)
        client._worker.submit(self._create_quietly)

    # ------------------------------------------------------------------ server side

    def _create(self, timeout: float | None = None) -> str | None:
        """The server's run id, creating the run if needed; raises TransportError.

        Every attempt sends the same body, so the same ``clientRunId``: a retry after a
        timeout finds the run the server created meanwhile instead of making a second one."""
        with self._create_lock:
            if self._remote_run_id is None and self._refused is None:
                try:
                    res = self._client._transport.request("POST", "/runs", self._body, timeout=timeout)
                    self._remote_run_id = str(res["runId"])
                except HTTPStatusError as err:
                    if err.refused:
                        self._refused = f"run refused: {err}"
                        self._client._warn_once("refused", "agentsproof: the server refused a run (%s); it is spooled", err)
                    raise
                except (KeyError, TypeError) as err:
                    raise TransportError(f"unexpected /runs response: {err}") from err
            return self._remote_run_id

    def _create_quietly(self) -> None:
        if self._client._online():
            try:
                self._create()
            except TransportError as err:
                self._client._failed(err)

    def _send_step(self, step: dict[str, Any]) -> None:
        """Worker job: post one step unless the server is unreachable (then complete/spool handles it).

        A refused connection or a server error is retried once in place after
        ``RETRY_DELAY`` (the server ignores a step index it already has)."""
        if not self._client._online() or self._refused:
            return
        try:
            rid = self._create()
            if rid is None:
                return
            try:
                self._post_step(rid, step)
            except TransportError as err:
                if not isinstance(err, Unreachable) and not (isinstance(err, HTTPStatusError) and err.status >= 500):
                    raise
                time.sleep(RETRY_DELAY)
                self._post_step(rid, step)
        except HTTPStatusError as err:
            self._client._failed(err)
        except TransportError as err:
            self._client._failed(err)

    def _post_step(self, rid: str, step: dict[str, Any], timeout: float | None = None) -> None:
        """Send one step: acknowledged when the server took it; a step refused for good
        (4xx other than auth) is kept in ``_refused_steps`` for the spool, never dropped."""
        try:
            try:
                self._client._transport.request("POST", f"/runs/{rid}/steps", step, timeout=timeout)
            except HTTPStatusError as err:
                if err.status != 413:
                    raise
                self._client._transport.request("POST", f"/runs/{rid}/steps", shrunk(step), timeout=timeout)
        except HTTPStatusError as err:
            if err.refused:
                self._refused_steps[step["step_index"]] = str(err)
            raise
        self._refused_steps.pop(step["step_index"], None)
        self._sent.add(step["step_index"])

    @property
    def remote_run_id(self) -> str | None:
        """The server's id for this run, creating the run there first if needed; None while offline or refused."""
        if self._remote_run_id is None and self._refused is None and self._client._online():
            try:
                self._create()
            except TransportError as err:
                self._client._failed(err)
        return self._remote_run_id

    @property
    def elapsed_ms(self) -> float:
        """Milliseconds since the run started (monotonic clock)."""
        return (time.monotonic() - self._started_at) * 1000

    # ------------------------------------------------------------------ steps

    def log_step(self, payload: dict[str, Any] | None = None, **fields: Any) -> None:
        """Record one step (type, name, input, output, latency_ms, token_count, cost_usd); never blocks."""
        try:
            merged = {**(payload or {}), **fields}
            notes: list[str] = []
            step = {to_jsonable(str(k), notes, "key"): _number(v) if k in _NUMBERS else to_jsonable(v, notes, str(k)) for k, v in merged.items()}
            with self._lock:
                step["step_index"] = len(self._steps)
                step["created_at"] = datetime.now(UTC).isoformat()
                step = fit_step(step, notes)  # within the server's limits, changes noted in its output
                self._steps.append(step)
            if not self._client._worker.submit(functools.partial(self._send_step, step)):
                self._client._warn_once("full", "agentsproof: step queue full; steps will be sent when the run completes")
        except Exception:  # noqa: BLE001 - logging must never crash the agent
            log.debug("agentsproof: log_step failed", exc_info=True)

    def _log_call(self, type: str, name: str, input: Any, t0: float, result: Any, err: BaseException | None, extract: Any) -> None:
        try:
            latency = (time.perf_counter() - t0) * 1000
            if err is not None:
                self.log_step({"type": type, "name": name, "input": input, "output": {"error": str(err), "error_type": type_name(err)}, "latency_ms": latency})
                return
            usage = usage_of(result, extract, self._client._prices)
            self.log_step({"type": type, "name": name, "input": input, "output": result, "latency_ms": latency, **usage})
        except Exception:  # noqa: BLE001
            log.debug("agentsproof: tracing failed", exc_info=True)

    def trace(self, type: str, name: str, fn: Callable[[], Any] | None = None, input: Any = None, extract: Callable[[Any], dict] | None = None) -> Any:
        """Call ``fn()`` and log it as a step with its latency, usage and output (or error).

        Without ``fn`` it is a decorator: ``@run.trace("tool_call", "search")`` traces every
        call, with the call's arguments as the step input unless ``input`` is given.
        """
        if fn is None:

            def deco(func: Callable) -> Callable:
                @functools.wraps(func)
                def wrapper(*args: Any, **kwargs: Any) -> Any:
                    step_input = input if input is not None else _call_input(args, kwargs)
                    return self.trace(type, name, lambda: func(*args, **kwargs), step_input, extract)

                return wrapper

            return deco
        t0 = time.perf_counter()
        try:
            result = fn()
        except BaseException as err:
            self._log_call(type, name, input, t0, None, err, extract)
            raise
        self._log_call(type, name, input, t0, result, None, extract)
        return result

    def atrace(self, type: str, name: str, fn: Callable[[], Any] | None = None, input: Any = None, extract: Callable[[Any], dict] | None = None) -> Any:
        """Async ``trace``: ``await run.atrace(...)`` with a sync or async callable (or one returning
        an awaitable); without ``fn``, a decorator for async functions."""
        if fn is None:

            def deco(func: Callable) -> Callable:
                @functools.wraps(func)
                async def wrapper(*args: Any, **kwargs: Any) -> Any:
                    step_input = input if input is not None else _call_input(args, kwargs)
                    return await self._atrace(type, name, lambda: func(*args, **kwargs), step_input, extract)

                return wrapper

            return deco
        return self._atrace(type, name, fn, input, extract)

    async def _atrace(self, type: str, name: str, fn: Callable[[], Any], input: Any, extract: Any) -> Any:
        t0 = time.perf_counter()
        try:
            result = fn()
            if inspect.isawaitable(result):
                result = await result
        except BaseException as err:
            self._log_call(type, name, input, t0, None, err, extract)
            raise
        self._log_call(type, name, input, t0, result, None, extract)
        return result

    # ------------------------------------------------------------------ completion

    def complete(self, output: Any = None) -> dict[str, Any]:
        """Finish the run and trigger grading: ``{"publicUrl": ...}``. Never raises.

        When the server cannot be reached the run is spooled and the result is
        ``{"publicUrl": None, "spooled": PATH, "error": ...}``; ``agentsproof sync`` uploads it.
        """
        with self._lock:
            if self._completed:
                return dict(self._result or {"publicUrl": None})
            self._completed = True
            notes: list[str] = []
            self._output = with_notes(to_jsonable(output, notes, "output"), notes)
            self._deadline = time.monotonic() + self._client.complete_timeout
        box: dict[str, dict[str, Any]] = {}
        worker = threading.Thread(target=self._finish_into, args=(box,), name="agentsproof-complete", daemon=True)
        worker.start()
        worker.join(self._client.complete_timeout)
        if "result" in box:
            self._result = box["result"]
        else:  # the server accepted the connection but did not answer in time: keep the run on disk
            self._result = self._spool(completed=True, reason=f"no answer from the server within {self._client.complete_timeout:g}s")
            box["late"] = self._result
        return dict(self._result)

    def _finish_into(self, box: dict[str, dict[str, Any]]) -> None:
        try:
            res = self._finish()
            late = box.get("late")
            if late and late.get("spooled") and res.get("publicUrl"):  # delivered after all: the spooled copy is not needed
                from pathlib import Path

                Path(late["spooled"]).unlink(missing_ok=True)
            box["result"] = res
        except Exception as err:  # noqa: BLE001 - last line of defence: keep the run rather than drop it
            log.debug("agentsproof: complete failed", exc_info=True)
            box["result"] = self._spool(completed=True, reason=f"{type_name(err)}: {err}")

    async def acomplete(self, output: Any = None) -> dict[str, Any]:
        """Async ``complete`` (the HTTP calls run in a thread; the event loop is never blocked)."""
        return await asyncio.to_thread(self.complete, output)

    def _finish(self) -> dict[str, Any]:
        """Deliver the run, retrying with back-off until ``complete_timeout`` (a server that
        refuses connections gets ``UNREACHABLE_GRACE`` seconds to come back, as in the
        TypeScript SDK); whatever the server did not take is spooled."""
        client = self._client
        deadline = self._deadline or time.monotonic() + client.complete_timeout
        left = lambda: deadline - time.monotonic()  # noqa: E731
        client._worker.flush(max(0.0, min(client.flush_timeout, left())))
        delay, down_since = RETRY_DELAY, None
        while True:
            if self._refused:
                return self._spool(completed=True, reason=self._refused)
            try:
                return self._deliver(left)
            except HTTPStatusError as err:
                client._failed(err)
                reason = str(err)
                if not err.transient:  # auth: a later `agentsproof sync` with the right key; refused: kept
                    return self._spool(completed=True, reason=self._refused or reason)
                down_since = None
            except TransportError as err:
                client._failed(err)
                reason = str(err)
                down_since = down_since or time.monotonic()
                if time.monotonic() - down_since >= UNREACHABLE_GRACE:
                    return self._spool(completed=True, reason=reason)
            if left() <= delay:
                return self._spool(completed=True, reason=reason)
            time.sleep(delay)
            delay = min(delay * 2, MAX_RETRY_DELAY)

    def _deliver(self, left: Callable[[], float]) -> dict[str, Any]:
        """One attempt: create (if needed), the steps the server lacks, complete; raises TransportError."""
        client = self._client
        budget = lambda: max(0.05, min(client._transport.timeout, left()))  # noqa: E731
        rid = self._create(budget())
        if rid is None:
            raise TransportError(self._refused or "run not created")
        for step in list(self._steps):
            idx = step["step_index"]
            if idx not in self._sent and idx not in self._refused_steps:
                try:
                    self._post_step(rid, step, budget())
                except HTTPStatusError as err:
                    if not err.refused:
                        raise
        try:
            try:
                res = client._transport.request("POST", f"/runs/{rid}/complete", {"output": self._output}, timeout=budget())
            except HTTPStatusError as err:
                if err.status != 413:
                    raise
                res = client._transport.request("POST", f"/runs/{rid}/complete", shrunk({"output": self._output}), timeout=budget())
        except HTTPStatusError as err:
            if err.refused:
                self._refused = f"complete refused: {err}"
            raise
        client._forget(self)
        out = dict(res or {}, runId=(res or {}).get("runId", rid))
        if self._refused_steps:  # delivered, but for steps the server would not take: those are kept
            refused = [s for s in self._steps if s["step_index"] in self._refused_steps]
            reason = "; ".join(sorted(set(self._refused_steps.values())))
            record = {
                "baseUrl": client.base_url,
                "reason": f"steps refused: {reason}",
                "remoteRunId": rid,
                "run": self._body,
                "steps": refused,
                "completed": False,
                "output": None,
            }
            path = spool.write(record, client._spool_dir)
            out["spooled"] = str(path) if path else None
            log.warning("agentsproof: run %s: %d step(s) refused by the server (%s); spooled to %s", self.run_id, len(refused), reason, path)
        return out

    def _needs_spool(self) -> bool:
        """True for an unfinished run of this process the server does not fully have."""
        return (
            self._pid == os.getpid()
            and not self._completed
            and (self._refused is not None or self._remote_run_id is None or len(self._sent) < len(self._steps))
        )

    def _spool(self, *, completed: bool, reason: str) -> dict[str, Any]:
        record = {
            "baseUrl": self._client.base_url,
            "reason": reason,
            "remoteRunId": self._remote_run_id,
            "run": self._body,
            "steps": list(self._steps),
            "completed": completed,
            "output": self._output,
        }
        path = spool.write(record, self._client._spool_dir)
        self._client._forget(self)
        if path is not None:
            log.warning("agentsproof: run %s not delivered (%s); spooled to %s - upload it with `agentsproof sync`", self.run_id, reason, path)
        return {"publicUrl": None, "runId": self._remote_run_id, "spooled": str(path) if path else None, "error": reason}


def type_name(err: BaseException) -> str:
    return type(err).__name__


__all__ = ["AgentRun"]
