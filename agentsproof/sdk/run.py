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
from agentsproof.sdk.transport import HTTPStatusError, TransportError
from agentsproof.sdk.usage import usage_of

log = logging.getLogger("agentsproof.sdk")


def _call_input(args: tuple, kwargs: dict) -> Any:
    if len(args) == 1 and not kwargs:
        return args[0]
    if not args:
        return kwargs or None
    return {"args": list(args), "kwargs": kwargs} if kwargs else list(args)


PREVIEW_CHARS = 20_000


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
        self._refused: str | None = None  # the server rejected the run for good (4xx)
        self._completed = False
        self._result: dict[str, Any] | None = None
        self._output: Any = None
        self._started_at = time.monotonic()
        self._pid = os.getpid()
        client._track(self)
        client._worker.submit(self._create_quietly)

    # ------------------------------------------------------------------ server side

    def _create(self) -> str | None:
        """The server's run id, creating the run if needed; raises TransportError."""
        with self._create_lock:
            if self._remote_run_id is None and self._refused is None:
                try:
                    res = self._client._transport.request("POST", "/runs", self._body)
                    self._remote_run_id = str(res["runId"])
                except HTTPStatusError as err:
                    if not err.retryable:
                        self._refused = f"run refused: {err}"
                        self._client._warn_once("refused", "agentsproof: the server refused a run (%s); it is not recorded", err)
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
        """Worker job: post one step unless the server is unreachable (then complete/spool handles it)."""
        if not self._client._online() or self._refused:
            return
        try:
            rid = self._create()
            if rid is None:
                return
            self._post_step(rid, step)
            self._sent.add(step["step_index"])
        except HTTPStatusError as err:
            if not err.retryable:  # a malformed step will not get better by retrying
                self._sent.add(step["step_index"])
            self._client._failed(err)
        except TransportError as err:
            self._client._failed(err)

    def _post_step(self, rid: str, step: dict[str, Any]) -> None:
        try:
            self._client._transport.request("POST", f"/runs/{rid}/steps", step)
        except HTTPStatusError as err:
            if err.status != 413:
                raise
            self._client._transport.request("POST", f"/runs/{rid}/steps", shrunk(step))

    @property
    def remote_run_id(self) -> str | None:
        if self._remote_run_id is None and self._refused is None and self._client._online():
            try:
                self._create()
            except TransportError as err:
                self._client._failed(err)
        return self._remote_run_id

    @property
    def elapsed_ms(self) -> float:
        return (time.monotonic() - self._started_at) * 1000

    # ------------------------------------------------------------------ steps

    def log_step(self, payload: dict[str, Any] | None = None, **fields: Any) -> None:
        """Record one step (type, name, input, output, latency_ms, token_count, cost_usd); never blocks."""
        try:
            merged = {**(payload or {}), **fields}
            step = {to_jsonable(str(k)): to_jsonable(v) for k, v in merged.items()}
            for k in ("latency_ms", "token_count", "cost_usd"):  # a number JSON has none for (NaN, inf) is left out
                if isinstance(step.get(k), str) and step[k].lower().lstrip("+-") in ("nan", "inf", "infinity"):
                    step.pop(k)  # to_jsonable spelled the float out
            if isinstance(step.get("name"), str):
                step["name"] = step["name"][:500]
            with self._lock:
                step["step_index"] = len(self._steps)
                step["created_at"] = datetime.now(UTC).isoformat()
                self._steps.append(step)
            if not self._client._worker.submit(functools.partial(self._send_step, step)):
                self._client._warn_once("full", "agentsproof: step queue full; steps will be sent when the run completes")
        except Exception:  # noqa: BLE001 - logging must never crash the agent
            log.debug("agentsproof: log_step failed", exc_info=True)

    def _log_call(self, type: str, name: str, input: Any, t0: float, result: Any, err: BaseException | None, extract: Any) -> None:
        try:
            latency = (time.perf_counter() - t0) * 1000
            if err is not None:
                self.log_step({"type": type, "name": name, "input": input,
                               "output": {"error": str(err), "error_type": type_name(err)}, "latency_ms": latency})
                return
            usage = usage_of(result, extract, self._client._prices)
            self.log_step({"type": type, "name": name, "input": input, "output": result, "latency_ms": latency, **usage})
        except Exception:  # noqa: BLE001
            log.debug("agentsproof: tracing failed", exc_info=True)

    def trace(self, type: str, name: str, fn: Callable[[], Any] | None = None, input: Any = None,
              extract: Callable[[Any], dict] | None = None) -> Any:
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

    def atrace(self, type: str, name: str, fn: Callable[[], Any] | None = None, input: Any = None,
               extract: Callable[[Any], dict] | None = None) -> Any:
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
            self._output = to_jsonable(output)
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
        client = self._client
        client._worker.flush(client.flush_timeout)
        if self._refused:
            return {"publicUrl": None, "error": self._refused}
        reason = client._last_error or "server unreachable"
        if client._online():
            try:
                rid = self._create()
                if rid is None:  # refused meanwhile (by a step job still in flight after the flush timed out)
                    return {"publicUrl": None, "error": self._refused}
                for step in list(self._steps):
                    if step["step_index"] not in self._sent:
                        try:
                            self._post_step(rid, step)
                        except HTTPStatusError as err:
                            if err.retryable:
                                raise
                        self._sent.add(step["step_index"])
                try:
                    res = client._transport.request("POST", f"/runs/{rid}/complete", {"output": self._output})
                except HTTPStatusError as err:
                    if err.status != 413:
                        raise
                    res = client._transport.request("POST", f"/runs/{rid}/complete", shrunk({"output": self._output}))
                client._forget(self)
                return dict(res or {}, runId=(res or {}).get("runId", rid))
            except HTTPStatusError as err:
                client._failed(err)
                if not err.retryable:
                    return {"publicUrl": None, "runId": self._remote_run_id, "error": str(err)}
                reason = str(err)
            except TransportError as err:
                client._failed(err)
                reason = str(err)
        return self._spool(completed=True, reason=reason)

    def _needs_spool(self) -> bool:
        """True for an unfinished run of this process the server does not fully have."""
        return self._pid == os.getpid() and not self._completed and not self._refused and (self._remote_run_id is None or len(self._sent) < len(self._steps))

    def _spool(self, *, completed: bool, reason: str) -> dict[str, Any]:
        record = {"baseUrl": self._client.base_url, "reason": reason, "remoteRunId": self._remote_run_id,
                  "run": self._body, "steps": list(self._steps), "completed": completed, "output": self._output}
        path = spool.write(record, self._client._spool_dir)
        self._client._forget(self)
        if path is not None:
            log.warning("agentsproof: run %s not delivered (%s); spooled to %s - upload it with `agentsproof sync`",
                        self.run_id, reason, path)
        return {"publicUrl": None, "runId": self._remote_run_id, "spooled": str(path) if path else None, "error": reason}


def type_name(err: BaseException) -> str:
    return type(err).__name__


__all__ = ["AgentRun"]
