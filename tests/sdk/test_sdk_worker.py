"""The background worker: bounded, non-blocking, deadline-bound flush, fork-safe, and a
failing job never reaches the caller."""

from __future__ import annotations

import logging
import os
import threading
import time

import pytest

from agentsproof.sdk.worker import BackgroundWorker


def test_submit_returns_false_when_full_and_never_blocks():
    gate = threading.Event()
    started = threading.Event()
    w = BackgroundWorker(queue_size=2)
    assert w.submit(lambda: (started.set(), gate.wait()))  # occupies the thread until the gate opens
    assert started.wait(30)
    assert w.submit(lambda: None) and w.submit(lambda: None)
    # the queue is full and stays full while the gate is shut: a submit that waited for room
    # would never return (the guard below), one that does not wait says False
    answer: list[bool] = []
    caller = threading.Thread(target=lambda: answer.append(w.submit(lambda: None)), daemon=True)
    caller.start()
    caller.join(30)  # a hang guard, not a speed target (bench/timings.py: sdk-submit-full)
    assert answer == [False]
    gate.set()
    assert w.flush(5) == 0


def test_flush_stops_at_its_deadline_and_reports_pending():
    gate = threading.Event()
    w = BackgroundWorker()
    w.submit(gate.wait)
    w.submit(lambda: None)
    pending: list[int] = []
    flusher = threading.Thread(target=lambda: pending.append(w.flush(0.2)), daemon=True)
    flusher.start()
    flusher.join(30)  # a hang guard: a flush past its deadline would wait for the shut gate for ever
    assert pending == [2]  # both jobs still pending when flush gave up (how soon: bench/timings.py)
    gate.set()
    assert w.flush(5) == 0


def test_flush_waits_for_work_that_ends_before_its_deadline():
    release = threading.Timer(0.1, (gate := threading.Event()).set)
    w = BackgroundWorker()
    w.submit(gate.wait)
    w.submit(lambda: None)
    release.start()
    try:
        assert w.flush(60) == 0  # it waited for the gate (opened by the timer), then for the job after it
        assert gate.is_set()
    finally:
        release.cancel()


def test_a_failing_job_is_logged_not_raised(caplog):
    done = []
    w = BackgroundWorker()
    with caplog.at_level(logging.DEBUG, logger="agentsproof.sdk"):
        w.submit(lambda: 1 / 0)
        w.submit(lambda: done.append(1))
        assert w.flush(5) == 0
    assert done == [1] and "ZeroDivisionError" in caplog.text and w.is_alive


def test_kill_then_submit_restarts_the_thread():
    w = BackgroundWorker()
    w.submit(lambda: None)
    w.kill()
    w.flush(5)
    deadline = time.monotonic() + 5
    while w.is_alive and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not w.is_alive
    done = []
    assert w.submit(lambda: done.append(1)) and w.flush(5) == 0 and done == [1]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_gets_its_own_thread():
    w = BackgroundWorker()
    gate = threading.Event()
    w.submit(gate.wait)  # the parent's thread is busy (and its queue lock may be held) at fork time
    r, wfd = os.pipe()
    pid = os.fork()
    if pid == 0:  # child
        try:
            ok = w.submit(lambda: os.write(wfd, b"child-ran")) and w.flush(5) == 0
            os._exit(0 if ok else 1)
        except BaseException:
            os._exit(2)
    _, status = os.waitpid(pid, 0)
    gate.set()
    assert os.waitstatus_to_exitcode(status) == 0
    assert os.read(r, 100) == b"child-ran"
    assert w.flush(5) == 0
