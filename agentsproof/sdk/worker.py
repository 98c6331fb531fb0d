"""One daemon thread and a bounded queue: the shape of sentry-python's BackgroundWorker.

``submit`` never blocks (False when the queue is full), ``flush`` waits with a deadline and
returns how many jobs are still pending, a job's exception is logged and never reaches the
caller, and after a fork the child gets a fresh queue and thread (it remembers the pid).
"""

from __future__ import annotations

import contextlib
import logging
import os
import queue
import threading
import time
from collections.abc import Callable

log = logging.getLogger("agentsproof.sdk")

DEFAULT_QUEUE_SIZE = 10_000
_STOP = object()


class BackgroundWorker:
    """A daemon thread that runs queued jobs in order, restarted after a fork; jobs never block the agent."""

    def __init__(self, queue_size: int = DEFAULT_QUEUE_SIZE) -> None:
        self._queue_size = queue_size
        self._lock = threading.Lock()
        self._queue: queue.Queue = queue.Queue(queue_size)
        self._thread: threading.Thread | None = None
        self._pid: int | None = None

    @property
    def is_alive(self) -> bool:
        """True when this process's worker thread is running."""
        return self._pid == os.getpid() and self._thread is not None and self._thread.is_alive()

    def _ensure_thread(self) -> None:
        if self.is_alive:
            return
        pid = os.getpid()
        if self._pid != pid:
            # forked (or first use): nothing inherited is usable, the parent's jobs are the parent's
            self._lock = threading.Lock()
            self._queue = queue.Queue(self._queue_size)
            self._thread = None
        with self._lock:
            if self.is_alive:
                return
            self._thread = threading.Thread(target=self._run, name="agentsproof.sdk.worker", daemon=True)
            self._pid = pid
            self._thread.start()

    def submit(self, job: Callable[[], None]) -> bool:
        """Queue ``job``; False (and nothing queued) when the queue is full."""
        self._ensure_thread()
        try:
            self._queue.put_nowait(job)
            return True
        except queue.Full:
            return False

    @property
    def pending(self) -> int:
        """Jobs queued or running, not yet finished."""
        return self._queue.unfinished_tasks

    def flush(self, timeout: float) -> int:
        """Wait until every queued job ran, at most ``timeout`` seconds; returns the jobs still pending."""
        if self._pid != os.getpid():
            return 0
        deadline = time.monotonic() + max(0.0, timeout)
        q = self._queue
        with q.all_tasks_done:
            while q.unfinished_tasks:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                q.all_tasks_done.wait(left)
            return q.unfinished_tasks

    def kill(self) -> None:
        """Stop the thread after the jobs already queued (does not wait)."""
        if self.is_alive:
            with contextlib.suppress(queue.Full):
                self._queue.put_nowait(_STOP)

    def _run(self) -> None:
        q = self._queue
        while True:
            job = q.get()
            try:
                if job is _STOP:
                    return
                job()
            except Exception:  # noqa: BLE001 - a failed job is logged, never raised into the agent
                log.debug("agentsproof: background job failed", exc_info=True)
            finally:
                q.task_done()
