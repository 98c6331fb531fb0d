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
    w = BackgroundWorker(queue_size=2)
    assert w.submit(gate.wait)  # occupies the thread
    time.sleep(0.05)
    assert w.submit(lambda: None) and w.submit(lambda: None)
    t0 = time.perf_counter()
    assert w.submit(lambda: None) is False
    assert time.perf_counter() - t0 < 0.05
    gate.set()
    assert w.flush(5) == 0


def test_flush_waits_at_most_its_deadline_and_reports_pending():
    gate = threading.Event()
    w = BackgroundWorker()
    w.submit(gate.wait)
    w.submit(lambda: None)
    t0 = time.perf_counter()
    assert w.flush(0.2) == 2
    assert 0.15 < time.perf_counter() - t0 < 2
    gate.set()
    assert w.flush(5) == 0


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
