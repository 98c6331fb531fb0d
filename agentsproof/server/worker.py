"""The grading worker: one daemon thread draining the ``grades`` table.

The queue lives in the database, so nothing is lost on restart: at start-up grades left
``running`` by a stopped server go back to ``pending``. A job is claimed with a
conditional UPDATE (safe with several servers on one PostgreSQL). A judge failure marks
the grade ``errored`` with its reason and schedules a retry with exponential back-off
(``AGENTSPROOF_GRADE_RETRY_DELAY`` seconds, doubling, at most an hour) - never a 0 score.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import threading
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from sqlalchemy import select, update

from agentsproof.server.models import Grade, Run, utcnow
from agentsproof.server.views import run_view

if TYPE_CHECKING:
    from agentsproof.server.db import Database

log = logging.getLogger("agentsproof.server.worker")
MAX_BACKOFF = 3600.0


class GradingWorker:
    """The server's grading queue: one daemon thread claims pending grades, has the judge grade each run and retries failures with backoff."""

    def __init__(
        self,
        db: Database,
        *,
        provider: str | None = None,
        model: str | None = None,
        poll: float = 0.5,
        proof_run_ttl: float | None = None,
        proof_run_purge: float | None = None,
        orphan_run_ttl: float | None = None,
    ):
        self.db = db
        self.proof_run_ttl = proof_run_ttl
        self.proof_run_purge = proof_run_purge
        self.orphan_run_ttl = orphan_run_ttl
        self._next_sweep = 0.0
        self.provider_flag, self.model_flag = provider, model
        self.poll = poll
        from agentsproof.core.envcfg import env_number

        self.retry_delay = env_number("AGENTSPROOF_GRADE_RETRY_DELAY", 30.0, lo=0, hi=MAX_BACKOFF)
        self._event = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._judge: Any = None
        self._loop: asyncio.AbstractEventLoop | None = None

    # -- lifecycle -------------------------------------------------------------------
    def start(self) -> None:
        """Requeue grades left running by a previous server, then start the thread."""
        with self.db.session() as s:
            s.execute(update(Grade).where(Grade.status == "running").values(status="pending", next_attempt_at=utcnow()))
            s.commit()
        self._thread = threading.Thread(target=self._main, name="agentsproof-grader", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        """Stop the thread after its current job, waiting at most ``timeout`` seconds."""
        self._stop.set()
        self._event.set()
        if self._thread:
            self._thread.join(timeout)

    def wake(self) -> None:
        """Look at the queue now instead of at the next poll."""
        self._event.set()

    # -- the loop --------------------------------------------------------------------
    def _main(self) -> None:
        self._loop = asyncio.new_event_loop()
        try:
            while not self._stop.is_set():
                try:
                    self._sweep()
                    run_id = self._claim()
                except Exception as err:  # noqa: BLE001 - a database hiccup is logged and the worker keeps going
                    self._db_error(err, "could not poll the grading queue")
                    run_id = None
                if run_id is None:
                    self._event.wait(self.poll)
                    self._event.clear()
                    continue
                try:
                    self._grade(run_id)
                except Exception as err:  # noqa: BLE001 - logged; one job must never kill the worker
                    self._db_error(err, f"grading run {run_id} crashed")
        finally:
            if self._judge is not None:
                with contextlib.suppress(Exception):  # the worker is stopping: a client that fails to close changes nothing
                    self._loop.run_until_complete(self._judge.client.aclose())
            self._loop.close()

    def _db_error(self, err: Exception, what: str) -> None:
        """A database outage is logged once (by the database's outage tracker); anything else with its traceback."""
        from sqlalchemy.exc import InterfaceError, OperationalError
        from sqlalchemy.exc import TimeoutError as PoolTimeout

        if isinstance(err, (OperationalError, InterfaceError, PoolTimeout)) and hasattr(self.db, "outage"):
            self.db.outage.down(err)
            self._stop.wait(min(5.0, self.poll * 4))
        else:
            log.exception(what)

    def _sweep(self) -> None:
        """Expire proof runs nobody completed and delete rows nobody will use (``cleanup.py``),
        at most every few seconds."""
        import time

        ttls = [t for t in (self.proof_run_ttl, self.proof_run_purge, self.orphan_run_ttl) if t]
        if not ttls or time.monotonic() < self._next_sweep:
            return
        self._next_sweep = time.monotonic() + max(0.5, min(60.0, min(ttls) / 4))
        from agentsproof.server.cleanup import purge_orphan_runs, purge_proof_runs
        from agentsproof.server.proofs import expire

        with self.db.session() as s:
            if self.proof_run_ttl is not None:
                expire(s, self.proof_run_ttl)
            if self.proof_run_purge is not None:
                purge_proof_runs(s, self.proof_run_purge)
            if self.orphan_run_ttl is not None:
                purge_orphan_runs(s, self.orphan_run_ttl)
            s.commit()

    def _claim(self) -> str | None:
        with self.db.session() as s:
            rows = s.execute(
                select(Grade.run_id, Grade.status)
                .where(Grade.status.in_(("pending", "errored")), Grade.next_attempt_at <= utcnow())
                .order_by(Grade.next_attempt_at)
                .limit(5)
            ).all()
            for run_id, status in rows:
                res: Any = s.execute(
                    update(Grade)
                    .where(Grade.run_id == run_id, Grade.status == status)
                    .values(status="running", attempts=Grade.attempts + 1, updated_at=utcnow())
                )
                s.commit()
                if res.rowcount == 1:
                    claimed: str = run_id
                    return claimed
        return None

    def _get_judge(self) -> Any:
        if self._judge is None:
            from agentsproof.grading.judge import Judge
            from agentsproof.llm.registry import build_client, resolve_models, resolve_provider_name

            provider = resolve_provider_name(self.provider_flag)
            choice = resolve_models(provider, self.model_flag, None)
            self._judge = Judge(client=build_client(provider), model=choice.judge_model, timeout=120.0, max_tokens=1500)
        return self._judge

    def _grade(self, run_id: str) -> None:
        from agentsproof.server.grading import grade_run

        loop = self._loop
        assert loop is not None, "grading runs on the worker thread, inside _main's event loop"
        with self.db.session() as s:
            run = s.get(Run, run_id)
            view = run_view(s, run) if run else None
            grade = s.get(Grade, run_id)
            attempts = grade.attempts if grade else 1
        try:
            if view is None:
                raise RuntimeError("run not found")
            result = loop.run_until_complete(grade_run(self._get_judge(), view, view["steps"]))
        except Exception as err:  # noqa: BLE001 - JudgeError, ProviderUnavailable, anything: the grade is errored, retried later
            reason = _one_line(err)
            delay = min(MAX_BACKOFF, self.retry_delay * 2 ** max(0, attempts - 1))
            log.warning("grading run %s failed (attempt %d, retry in %.0fs): %s", run_id, attempts, delay, reason)
            self._finish(run_id, status="errored", error=reason, next_attempt_at=utcnow() + timedelta(seconds=delay))
            return
        self._finish(run_id, status="done", error=None, result=result, overall_score=result["overall_score"])

    def _finish(self, run_id: str, **values: Any) -> None:
        with self.db.session() as s:
            # only if still ours: a late step may have re-queued the run meanwhile
            res: Any = s.execute(update(Grade).where(Grade.run_id == run_id, Grade.status == "running").values(updated_at=utcnow(), **values))
            if res.rowcount:
                from agentsproof.server.proofs import rescore_for_run

                rescore_for_run(s, run_id)  # the proof runs this run is a case of
            s.commit()


def _one_line(err: BaseException) -> str:
    from agentsproof.core.scrub import scrub_text

    text = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
    secrets = [os.environ.get(name, "") for name in ("AGENTSPROOF_PROVIDER_KEY", "ANTHROPIC_API_KEY", "OPENAI_API_KEY")]
    return scrub_text(text, secrets)[:500]
