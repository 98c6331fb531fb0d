"""Worker processes of the ``local`` provider and their supervisor.

The embedded model never runs in the harness process: each of the
``AGENTSPROOF_LOCAL_INSTANCES`` slots of a :class:`WorkerPool` is one
``python -m agentsproof.llm.local_worker`` process with its own copy of the model, serving
one call at a time over length-prefixed JSON frames on its stdin/stdout (see
:mod:`agentsproof.llm.local_worker`). This module never imports llama_cpp.

Calls block in a thread of the caller's event loop while their worker generates, so the
pool does not belong to any event loop: one pool per settings serves every client and
every ``asyncio.run`` of the process. Clients hold a reference; the last ``release``
ends the workers.

Failures:

- A worker that dies (native fault, OOM kill, ``kill -SEGV``) fails only the call it was
  serving, with a :class:`WorkerCrashed` error (kind ``worker_crash``, not retryable: a
  prompt that crashes llama.cpp would crash it again on every retry; ``--retry-errors``
  re-runs such trials on demand). The slot gets a new worker on its next call.
- Workers that die before serving any call (while loading the model, in the warm-up
  tokens or in their first call) count as start-up crashes; after
  :data:`MAX_START_CRASHES` in a row the pool gives up and every call fails at once with
  a reason naming the probable cause (a llama.cpp build for another CPU) and the fix.
- A cancelled call (the trial's timeout) kills its worker, so nothing generates for
  nobody; the slot starts a new one for the next call.
- Workers die with this process: ``PR_SET_PDEATHSIG`` in the worker (tied to the thread
  that started it, hence the one long-lived spawner thread here), stdin EOF, and an
  ``atexit`` hook.
"""

from __future__ import annotations

import atexit
import os
import queue
import signal
import subprocess
import sys
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from agentsproof.llm.base import LLMError
from agentsproof.llm.local_model import LocalSettings
from agentsproof.llm.local_worker import encode_frame, read_frame

WORKER_MODULE = "agentsproof.llm.local_worker"
MAX_START_CRASHES = 3
START_TIMEOUT_S = 300.0
DOCTOR_HINT = "see `agentsproof doctor --provider local`"
PORTABLE_FIX = (
    "reinstall llama-cpp-python built for any CPU of this architecture, e.g. "
    'CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON" '
    "pip install --force-reinstall --no-cache-dir llama-cpp-python (see the README)"
)
CRASH_FIX = "one crashed call is an errored trial and the worker was restarted; if crashes repeat, " + PORTABLE_FIX


class WorkerCrashed(LLMError):
    """A worker process died. ``fix`` is the line ``doctor`` prints under the failure."""

    def __init__(self, message: str, *, kind: str = "worker_crash", fix: str = CRASH_FIX):
        super().__init__(message, kind=kind, retryable=False)
        self.fix = fix


class _Died(Exception):
    """The worker's pipe closed: it exited or was killed (``unsent``: before it got the request)."""

    def __init__(self, unsent: bool = False):
        super().__init__()
        self.unsent = unsent


class Call:
    """One call's hand-over between the event loop (which may cancel) and its thread."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.cancelled = False
        self.worker: _Worker | None = None


def _exit_reason(returncode: int | None) -> str:
    if returncode is None:
        return "stopped answering"
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        extra = ", killed: out of memory?" if -returncode == signal.SIGKILL else ""
        return f"signal {name}{extra}"
    return f"exit status {returncode}"


_SPAWNER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="agentsproof-local-spawner")
"""Workers are started from this one long-lived thread: PR_SET_PDEATHSIG fires when the
thread that forked the child ends, and asyncio's executor threads end with each loop."""


class _Worker:
    """One slot of the pool: at most one live process at a time, restarted on demand."""

    def __init__(self, slot: int):
        self.slot = slot
        self.spawns = 0
        self.proc: subprocess.Popen[bytes] | None = None
        self.stderr: Any = None
        self.served = 0
        self.killed_for: str | None = None

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc is not None and self.proc.poll() is None else None

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def start(self, settings: LocalSettings) -> None:
        """Start a process and wait until its model is loaded. Raises _Died or LLMError."""
        self.stop()
        self.stderr = tempfile.TemporaryFile()  # noqa: SIM115 - kept while the worker lives, closed by stop()
        env = dict(os.environ)
        root = str(Path(__file__).resolve().parents[2])
        env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        argv = [sys.executable, "-m", WORKER_MODULE, "--parent-pid", str(os.getpid()), "--slot", str(self.slot)]
        self.proc = _SPAWNER.submit(subprocess.Popen, argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.stderr, env=env).result()
        self.spawns += 1
        self.served = 0
        self.killed_for = None
        init = {
            "model_path": str(settings.model_path),
            "n_ctx": settings.n_ctx,
            "threads": settings.threads_per_instance,
            "slot": self.slot,
            "spawn": self.spawns - 1,
        }
        timer = threading.Timer(START_TIMEOUT_S, self.kill, args=("start-up timeout",))
        timer.daemon = True
        timer.start()
        try:
            reply = self._exchange(init)
        finally:
            timer.cancel()
        if not reply.get("ok"):
            self.stop()
            raise LLMError(str(reply.get("error") or "the local model worker failed to start"), kind="load_failed")

    def _exchange(self, message: dict[str, Any]) -> dict[str, Any]:
        proc = self.proc
        assert proc is not None and proc.stdin is not None and proc.stdout is not None
        try:
            proc.stdin.write(encode_frame(message))
            proc.stdin.flush()
        except (ValueError, OSError):
            raise _Died(unsent=True) from None
        try:
            reply = read_frame(proc.stdout)
        except (ValueError, OSError):
            reply = None
        if not isinstance(reply, dict):
            raise _Died()
        return reply

    def request(self, messages: list[dict[str, str]], params: dict[str, Any]) -> dict[str, Any]:
        return self._exchange({"messages": messages, "params": params})

    def death(self) -> str:
        """Why the process ended: signal or exit status, plus its last stderr line."""
        proc = self.proc
        code = None
        if proc is not None:
            try:
                code = proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
        reason = f"stopped: {self.killed_for}" if self.killed_for else _exit_reason(code)
        last = self._last_stderr_line()
        return f"{reason}; it printed: {last}" if last else reason

    def _last_stderr_line(self) -> str:
        if self.stderr is None:
            return ""
        try:
            self.stderr.seek(0, os.SEEK_END)
            size = self.stderr.tell()
            self.stderr.seek(max(0, size - 2048))
            tail = self.stderr.read().decode("utf-8", "replace")
        except (OSError, ValueError):
            return ""
        lines = [ln.strip() for ln in tail.splitlines() if ln.strip()]
        return lines[-1][:200] if lines else ""

    def kill(self, why: str) -> None:
        proc = self.proc
        if proc is not None and proc.poll() is None:
            self.killed_for = why
            proc.kill()

    def stop(self) -> None:
        """End the process (EOF first, then SIGKILL) and release its pipes."""
        proc, self.proc = self.proc, None
        if proc is not None:
            for stream in (proc.stdin, proc.stdout):
                try:
                    if stream is not None:
                        stream.close()
                except OSError:
                    pass
            try:
                proc.wait(timeout=0.5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if self.stderr is not None:
            self.stderr.close()
            self.stderr = None


class WorkerPool:
    """``settings.instances`` worker processes, each lent to one call at a time."""

    def __init__(self, settings: LocalSettings):
        self.settings = settings
        self.refs = 0
        self.closed = False
        self.broken: LLMError | None = None
        self.start_crashes = 0
        self.crashes = 0
        self._lock = threading.Lock()
        self._workers = [_Worker(i) for i in range(settings.instances)]
        self._free: queue.SimpleQueue[_Worker] = queue.SimpleQueue()
        for w in self._workers:
            self._free.put(w)

    def pids(self) -> list[int]:
        """PIDs of the live worker processes (a debug hook for tests and doctor)."""
        return [pid for w in self._workers if (pid := w.pid) is not None]

    def run(self, messages: list[dict[str, str]], params: dict[str, Any], call: Call) -> dict[str, Any]:
        """Serve one call (blocking). Returns the worker's reply; raises LLMError."""
        worker = self._borrow(call)
        try:
            self._ensure_started(worker)
            with call.lock:
                if call.cancelled:
                    raise LLMError("cancelled before the model was free", kind="cancelled")
                call.worker = worker
            try:
                return self._request(worker, messages, params)
            finally:
                with call.lock:
                    call.worker = None
        finally:
            self._free.put(worker)

    def cancel(self, call: Call) -> None:
        """The caller gave up (timeout): kill the worker serving the call, if any."""
        with call.lock:  # held while killing: the worker cannot pass to another call meanwhile
            call.cancelled = True
            if call.worker is not None:
                call.worker.kill("cancelled")

    def _borrow(self, call: Call) -> _Worker:
        while True:
            if self.broken is not None:
                raise self.broken
            if self.closed:
                raise LLMError("the local model was shut down", kind="closed")
            if call.cancelled:
                raise LLMError("cancelled before the model was free", kind="cancelled")
            try:
                return self._free.get(timeout=0.25)
            except queue.Empty:
                continue

    def _ensure_started(self, worker: _Worker) -> None:
        while not worker.alive():
            if self.broken is not None:
                raise self.broken
            if self.closed:
                raise LLMError("the local model was shut down", kind="closed")
            try:
                worker.start(self.settings)
            except _Died:
                if self.closed:
                    worker.stop()
                    raise LLMError("the local model was shut down", kind="closed") from None
                reason = worker.death()
                worker.stop()
                self._start_crash(f"local model worker crashed ({reason}) while starting (loading the model, first tokens)")
            except LLMError as err:  # the model file cannot be loaded: the same on every try
                self.broken = err
                raise
            else:
                if self.closed:  # closed while this worker was starting: do not leave it behind
                    worker.kill("closing")
                    worker.stop()
                    raise LLMError("the local model was shut down", kind="closed")
                return

    def _start_crash(self, message: str) -> None:
        with self._lock:
            self.start_crashes += 1
            self.crashes += 1
            if self.start_crashes >= MAX_START_CRASHES:
                self.broken = WorkerCrashed(
                    f"{message}; {self.start_crashes} workers in a row crashed before serving a call, so the "
                    "installed llama.cpp build probably does not run on this CPU; no more restarts",
                    kind="worker_broken",
                    fix=PORTABLE_FIX,
                )
                raise self.broken

    def _request(self, worker: _Worker, messages: list[dict[str, str]], params: dict[str, Any]) -> dict[str, Any]:
        for attempt in (1, 2):
            try:
                reply = worker.request(messages, params)
                break
            except _Died as died:
                if worker.killed_for == "cancelled":
                    worker.stop()
                    raise LLMError("cancelled while generating; the worker was stopped", kind="cancelled") from None
                if worker.killed_for == "closing":
                    worker.stop()
                    raise LLMError("the local model was shut down during the call", kind="closed") from None
                if died.unsent and attempt == 1 and worker.killed_for is None:
                    # It was gone before this call reached it (killed while idle): start another, resend.
                    worker.death()
                    worker.stop()
                    self._ensure_started(worker)
                    continue
                reason = worker.death()
                unproven = worker.served == 0
                worker.stop()
                message = f"local model worker crashed ({reason}) while generating; restarted for the next calls — {DOCTOR_HINT}"
                if unproven:
                    self._start_crash(message)
                else:
                    with self._lock:
                        self.crashes += 1
                raise WorkerCrashed(message) from None
        worker.served += 1
        with self._lock:
            self.start_crashes = 0
        if not reply.get("ok"):
            raise LLMError(str(reply.get("error") or "the local model failed"), kind=str(reply.get("kind") or "error"))
        return reply

    def close(self) -> None:
        """End every worker now; the pool takes no more calls."""
        self.closed = True
        for w in self._workers:
            w.kill("closing")
            w.stop()


_POOLS: dict[tuple[Any, ...], WorkerPool] = {}
_POOLS_LOCK = threading.Lock()


def _key(settings: LocalSettings) -> tuple[Any, ...]:
    return (str(settings.model_path), settings.n_ctx, settings.threads_per_instance, settings.instances)


def acquire(settings: LocalSettings) -> WorkerPool:
    """The process-wide pool for these settings (workers start on first use); +1 reference."""
    with _POOLS_LOCK:
        pool = _POOLS.get(_key(settings))
        if pool is None:
            pool = _POOLS[_key(settings)] = WorkerPool(settings)
        pool.refs += 1
        return pool


def release(pool: WorkerPool) -> None:
    """-1 reference; the last one ends the pool's workers (blocking, well under a second)."""
    with _POOLS_LOCK:
        pool.refs -= 1
        if pool.refs > 0:
            return
        if _POOLS.get(_key(pool.settings)) is pool:
            del _POOLS[_key(pool.settings)]
    pool.close()


def pool_count() -> int:
    """How many pools are live in this process (for tests)."""
    with _POOLS_LOCK:
        return len(_POOLS)


@atexit.register
def shutdown_all() -> None:
    """End every pool's workers now (at exit; tests use it to start from a clean slate)."""
    with _POOLS_LOCK:
        pools = list(_POOLS.values())
        _POOLS.clear()
    for pool in pools:
        pool.close()
