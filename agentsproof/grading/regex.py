"""Regex checks that cannot hang.

A ``regexMatch`` pattern runs on RE2 (``google-re2``), a linear-time engine: no pattern,
however it is written, can backtrack for ever (``(a+)+$`` against 40 ``a``\\ s and a ``!``
answers in microseconds). RE2 understands the common Python syntax (classes, groups,
named groups ``(?P<n>...)``, ``(?i)``, ``\\b``, non-greedy repeats; ``\\Z`` is translated to
RE2's ``\\z``). Patterns RE2 cannot express — lookarounds and backreferences — run on
Python's ``re`` in a separate helper process with a hard time limit
(:data:`PY_REGEX_TIME_LIMIT`, env ``AGENTSPROOF_REGEX_TIME_LIMIT``); a search that runs
past it is killed and the check fails with the reason "cut off after N s". Nothing runs a
backtracking search in the harness process.
"""

from __future__ import annotations

import json
import select
import subprocess
import sys
import threading
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

PY_REGEX_TIME_LIMIT = 1.0
"""Seconds one Python-``re`` search may take before it is cut off."""

_WORKER = r"""
import json, re, sys
try:  # die with the parent, even mid-search (Linux)
    import ctypes, signal
    ctypes.CDLL(None).prctl(1, signal.SIGKILL)
except Exception:
    pass
for line in sys.stdin:
    req = json.loads(line)
    try:
        m = re.search(req["p"], req["t"])
        out = {"m": [m.start(), m.end()] if m else None}
    except Exception as exc:
        out = {"e": f"{type(exc).__name__}: {exc}"}
    sys.stdout.write(json.dumps(out) + "\n")
    sys.stdout.flush()
"""


@dataclass(frozen=True)
class Outcome:
    """One search's result: where the first match is, or why the search gave no answer, and the engine that ran it."""

    span: tuple[int, int] | None = None
    """Where the first match is; None when there is none."""
    error: str | None = None
    """Why the search gave no answer (cut off, invalid pattern); then the check fails."""
    engine: str = "re2"


def _re2_options() -> Any:
    import re2

    opts = re2.Options()
    opts.log_errors = False
    return opts


def _translate(pattern: str) -> str:
    """Python-only escapes RE2 spells differently (``\\Z`` → ``\\z``), outside classes."""
    out = []
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\" and i + 1 < len(pattern):
            nxt = pattern[i + 1]
            out.append("\\z" if nxt == "Z" else ch + nxt)
            i += 2
            continue
        out.append(ch)
        i += 1
    return "".join(out)


@lru_cache(maxsize=1024)
def compile_re2(pattern: str) -> Any | None:
    """The RE2 program for ``pattern``, or None when RE2 cannot express it."""
    try:
        import re2
    except ImportError:  # pragma: no cover - google-re2 is a core dependency
        return None
    try:
        return re2.compile(_translate(pattern), _re2_options())
    except Exception:  # noqa: BLE001 - re2.error and friends: not expressible in RE2
        return None


def engine_for(pattern: str) -> str:
    """``re2`` when RE2 can run ``pattern``, else ``python-re`` (the time-limited helper process)."""
    return "re2" if compile_re2(pattern) is not None else "python-re"


def time_limit() -> float:
    """Seconds a Python-``re`` search may take (``AGENTSPROOF_REGEX_TIME_LIMIT``, 0.01–60; default :data:`PY_REGEX_TIME_LIMIT`); InputError when malformed."""
    from agentsproof.core.envcfg import env_number

    return env_number("AGENTSPROOF_REGEX_TIME_LIMIT", PY_REGEX_TIME_LIMIT, lo=0.01, hi=60)


class _PyRegexWorker:
    """One helper process running Python ``re`` searches, killed and replaced on a timeout."""

    def __init__(self) -> None:
        self._proc: subprocess.Popen[bytes] | None = None
        self._lock = threading.Lock()

    def _start(self) -> subprocess.Popen[bytes]:
        if self._proc is None or self._proc.poll() is not None:
            self._proc = subprocess.Popen(
                [sys.executable, "-I", "-c", _WORKER],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            )
        return self._proc

    def kill(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait()

    def search(self, pattern: str, text: str, limit: float) -> Outcome:
        with self._lock:
            proc = self._start()
            assert proc.stdin is not None and proc.stdout is not None
            try:
                proc.stdin.write(json.dumps({"p": pattern, "t": text}).encode("utf-8", "surrogatepass") + b"\n")
                proc.stdin.flush()
            except OSError as err:
                self.kill()
                return Outcome(error=f"regex helper failed: {err}", engine="python-re")
            ready, _, _ = select.select([proc.stdout], [], [], limit)
            if not ready:
                self.kill()
                return Outcome(error=f"regex search cut off after {limit:g} s (pattern backtracks too much)", engine="python-re")
            line = proc.stdout.readline()
            if not line:
                self.kill()
                return Outcome(error="regex helper exited", engine="python-re")
            reply = json.loads(line)
            if "e" in reply:
                return Outcome(error=f"regex failed: {reply['e']}", engine="python-re")
            span = reply["m"]
            return Outcome(span=(span[0], span[1]) if span else None, engine="python-re")


_worker = _PyRegexWorker()


def search(pattern: str, text: str) -> Outcome:
    """First match of ``pattern`` in ``text``: on RE2, else on Python ``re`` with a time limit."""
    prog = compile_re2(pattern)
    if prog is not None:
        try:
            m = prog.search(text)
        except UnicodeEncodeError:  # a lone surrogate: same length, replaced
            m = prog.search(text.encode("utf-8", "replace").decode("utf-8"))
        return Outcome(span=(m.start(), m.end()) if m else None)
    return _worker.search(pattern, text, time_limit())


def shutdown() -> None:
    """Stop the helper process (it also ends by itself when its stdin closes)."""
    _worker.kill()
