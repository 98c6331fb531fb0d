"""Where a trial's time goes: a cheap per-trial phase timer, off unless asked for.

``AGENTSPROOF_PHASES_FILE=PATH`` turns it on (``bench/agent_overhead.py`` does): the
runner opens a :class:`Phases` for each trial with :func:`begin` (held in a context
variable, so the trial's own task and every thread it starts through
:func:`agentsproof.core.threads.to_thread` see the same one), the runner and the targets time their steps with
:func:`phase` (``seed``, ``snapshot``, ``setup``, ``skills``, ``sandbox``, ``agent``,
``events``, ``cleanup``, ``graders``, ``journal``, ``finish``), and :func:`end` appends the
trial's times as one JSON line to the file: ``{"item", "arm", "index", "target",
"started_at" (epoch seconds), "total", "phases": {name: seconds}}``. A phase entered several times (one per turn) adds up.

Off, :func:`phase` costs one context-variable read and nothing is written. The file is
opened for appending without following a symlink; a line that cannot be written is
dropped (timings are never worth failing a run for).
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Iterator
from contextvars import ContextVar, Token
from typing import Any

ENV = "AGENTSPROOF_PHASES_FILE"


class Phases:
    """One trial's phase times (seconds, summed per name)."""

    def __init__(self, key: dict[str, Any]):
        self.key = key
        self.t0 = time.perf_counter()
        self.started_at = time.time()
        self.times: dict[str, float] = {}

    def add(self, name: str, seconds: float) -> None:
        """Add ``seconds`` to phase ``name``."""
        self.times[name] = self.times.get(name, 0.0) + seconds


_current: ContextVar[Phases | None] = ContextVar("agentsproof_phases", default=None)


def target_file() -> str | None:
    """The file phase times go to (``AGENTSPROOF_PHASES_FILE``), or None: off."""
    from agentsproof.core.envcfg import env_text

    return env_text(ENV)


def begin(**key: Any) -> tuple[Token[Phases | None], str] | None:
    """Start timing the current trial (``key``: item, arm, index, target); None when off."""
    path = target_file()
    if path is None:
        return None
    return _current.set(Phases(key)), path


def end(started: tuple[Token[Phases | None], str] | None) -> None:
    """Stop timing the trial :func:`begin` started and append its line."""
    if started is None:
        return
    token, path = started
    phases = _current.get()
    _current.reset(token)
    if phases is None:
        return
    line = {**phases.key, "started_at": phases.started_at, "total": time.perf_counter() - phases.t0, "phases": phases.times}
    data = (json.dumps(line, default=str) + "\n").encode("utf-8")
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
        try:
            os.write(fd, data)  # one write per line: lines of concurrent trials never interleave
        finally:
            os.close(fd)


@contextlib.contextmanager
def phase(name: str) -> Iterator[None]:
    """Time the block as phase ``name`` of the current trial (nothing when off)."""
    phases = _current.get()
    if phases is None:
        yield
        return
    t = time.perf_counter()
    try:
        yield
    finally:
        phases.add(name, time.perf_counter() - t)
