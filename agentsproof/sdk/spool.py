"""Runs the server could not take, kept on disk for ``agentsproof sync``.

Location: ``$AGENTSPROOF_SPOOL_DIR``, else ``$XDG_STATE_HOME/agentsproof/spool``, else
``~/.local/state/agentsproof/spool``. One JSON file per run, named by its clientRunId,
written atomically and readable by the owner only. A file holds the run body, its steps
and (when the agent completed it) the output, plus the base URL it was meant for. Never
the API key: ``agentsproof sync`` takes the key from ``--api-key``/``AGENTSPROOF_API_KEY``.

Uploading is idempotent: the server maps a repeated clientRunId to the same run and
ignores a step index it already has, so a sync interrupted halfway can simply run again.
"""

from __future__ import annotations

import json
import logging
import os
import re
import stat
import tempfile
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from agentsproof.sdk.transport import HTTPStatusError, Transport, TransportError

log = logging.getLogger("agentsproof.sdk")

FORMAT = "agentsproof-spool/1"


def spool_dir() -> Path:
    """Where runs that could not be sent wait: ``AGENTSPROOF_SPOOL_DIR``, else ``$XDG_STATE_HOME/agentsproof/spool``."""
    env = os.environ.get("AGENTSPROOF_SPOOL_DIR")
    if env:
        return Path(env).expanduser()
    state = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(state) / "agentsproof" / "spool"


def _safe_url(url: str) -> str:
    """The base URL without user:password@ (credentials never reach the spool)."""
    p = urllib.parse.urlsplit(url)
    netloc = p.hostname or ""
    if p.port:
        netloc += f":{p.port}"
    return urllib.parse.urlunsplit((p.scheme, netloc, p.path, p.query, ""))


_URL_CREDENTIALS = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/\s@]*@")


def scrub_urls(text: str) -> str:
    """``text`` with the user:password@ part of every URL in it removed."""
    return _URL_CREDENTIALS.sub(r"\1", text)


def write(record: dict[str, Any], directory: Path | None = None) -> Path | None:
    """Write one run record; returns its path, or None (logged) when the disk refuses."""
    d = Path(directory) if directory else spool_dir()
    name = re.sub(r"[^A-Za-z0-9._-]", "_", str(record["run"].get("clientRunId") or "run"))[:120]
    record = {"format": FORMAT, "spooledAt": datetime.now(UTC).isoformat(), **record}
    record["baseUrl"] = _safe_url(record.get("baseUrl") or "")
    if isinstance(record.get("reason"), str):
        record["reason"] = scrub_urls(record["reason"])
    try:
        d.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd, tmp = tempfile.mkstemp(prefix=".spool-", suffix=".tmp", dir=d)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(record, f, ensure_ascii=True)  # ASCII: any string the agent handed us is stored
            os.chmod(tmp, 0o600)
            path = d / f"{name}.json"
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return path
    except Exception as err:  # noqa: BLE001 - logging must never crash the agent
        log.warning("agentsproof: could not spool run to %s: %s", d, err)
        return None


def _rewrite(path: Path, record: dict[str, Any], lock: _Lock | None = None) -> None:
    """Replace ``path`` with ``record``, atomically. With ``lock``, the new file is locked
    *before* it takes the name, so a file being sent never stands unlocked for a moment (the
    old one is replaced, and another process could otherwise lock the new one and send the
    same run at once)."""
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.unlink(missing_ok=True)  # a leftover of an interrupted rewrite (never followed: unlink removes a link itself)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0), 0o600)
    try:
        os.write(fd, json.dumps(record, ensure_ascii=True).encode("ascii"))
        if lock is not None:
            lock.adopt(fd)
            fd = -1
    finally:
        if fd >= 0:
            os.close(fd)
    os.replace(tmp, path)


def pending(directory: Path | None = None) -> Iterator[Path]:
    """The spooled run files in ``directory`` (default: ``spool_dir()``), sorted; links and other non-regular files skipped."""
    d = Path(directory) if directory else spool_dir()
    if d.is_dir():
        yield from sorted(p for p in d.glob("*.json") if _regular(p))  # never a link someone planted


def _regular(path: Path) -> bool:
    try:
        return stat.S_ISREG(path.lstat().st_mode)
    except OSError:
        return False


def upload(transport: Transport, record: dict[str, Any], path: Path | None = None, lock: _Lock | None = None) -> dict[str, Any]:
    """Send one spooled run: create it (unless the server already has it), steps, complete.

    The server's run id is written back into the file as soon as it is known, so a sync
    interrupted halfway never creates the run twice. Returns the complete response
    (``publicUrl``), or ``{"runId"}`` for a run the agent never completed. Raises
    ``TransportError`` when the server did not take it.
    """
    run_id = record.get("remoteRunId")
    if not run_id:
        run_id = transport.request("POST", "/runs", record["run"])["runId"]
        record["remoteRunId"] = run_id
        if path is not None:
            _rewrite(path, record, lock)
    refused: list[dict[str, Any]] = []
    for step in record.get("steps", []):
        try:
            transport.request("POST", f"/runs/{run_id}/steps", step)
        except HTTPStatusError as err:
            if err.retryable:
                raise
            log.warning("agentsproof sync: step %s of run %s refused (%s); kept in failed/", step.get("step_index"), run_id, err.status)
            refused.append(step)
    if refused and path is not None:  # never discarded: what the server will not take waits in failed/ for a person
        _keep_failed(path, {**record, "steps": refused, "completed": False, "reason": "steps refused by the server"})
    if record.get("completed"):
        done = transport.request("POST", f"/runs/{run_id}/complete", {"output": record.get("output")})
        return dict(done or {}, runId=(done or {}).get("runId", run_id))
    return {"runId": run_id}


def _keep_failed(path: Path, record: dict[str, Any]) -> Path:
    failed = path.parent / "failed"
    failed.mkdir(exist_ok=True, mode=0o700)
    target = failed / path.name
    if target.exists():
        target = failed / f"{path.stem}-{datetime.now(UTC).strftime('%Y%m%dT%H%M%S%f')}.json"
    _rewrite(target, record)
    return target


@dataclass
class SyncResult:
    """One spooled file's outcome in ``sync``: uploaded (``ok``) or kept/moved, with a line saying which."""

    path: Path
    ok: bool
    message: str


def sync(*, api_key: str | None, base_url: str | None = None, directory: Path | None = None, timeout: float = 30.0) -> list[SyncResult]:
    """Upload every spooled run; a file is deleted once the server has it all.

    ``base_url`` overrides the URL stored with each run. A run refused for good (a 4xx other
    than auth or rate limiting) moves to ``failed/`` beside the spool so it is not retried forever.
    """
    results: list[SyncResult] = []
    transports: dict[str, Transport] = {}
    for path in pending(directory):
        record = _read(path)
        if isinstance(record, str):
            results.append(SyncResult(path, False, record))
            continue
        url = base_url or record.get("baseUrl")
        if not url:
            results.append(SyncResult(path, False, "no base URL stored; pass --base-url"))
            continue
        results.append(send_file(transports.setdefault(url, Transport(url, api_key, timeout)), path, record))
    return results


def _read(path: Path, fd: int | None = None) -> dict[str, Any] | str:
    """The spooled record in ``path`` (or the open ``fd`` of it), or why it cannot be read.
    A symlink is never followed."""
    try:
        if fd is None:
            with open(os.open(path, os.O_RDONLY | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0)), "rb") as f:
                data = f.read()
        else:
            data = os.pread(fd, os.fstat(fd).st_size, 0)
        record = json.loads(data.decode("utf-8"))
        if not isinstance(record, dict) or record.get("format") != FORMAT or "run" not in record:
            raise ValueError(f"not an {FORMAT} file")
    except (OSError, ValueError) as err:
        return f"unreadable: {err}"
    return record


def send_file(transport: Transport, path: Path, record: dict[str, Any]) -> SyncResult:
    """Upload one spooled run and delete its file; a run refused for good moves to ``failed/``.

    The file is locked while it is sent (``flock``), so an ``agentsproof sync`` and a client
    re-sending at its start never upload the same run at the same time. The record is read
    again from the locked file (another process may have sent part of it meanwhile)."""
    with _locked(path) as lock:
        if lock is None:
            return SyncResult(path, False, "being sent by another process")
        if lock.fd is not None:
            fresh = _read(path, lock.fd)
            if isinstance(fresh, str):
                return SyncResult(path, False, fresh)
            record = fresh
        try:
            res = upload(transport, record, path, lock)
        except HTTPStatusError as err:
            if not err.retryable:
                failed = path.parent / "failed"
                failed.mkdir(exist_ok=True, mode=0o700)
                os.replace(path, failed / path.name)
                return SyncResult(path, False, f"refused by the server ({scrub_urls(str(err))}); moved to {failed}")
            return SyncResult(path, False, f"kept for the next sync: {err}")
        except (TransportError, KeyError, TypeError) as err:
            return SyncResult(path, False, f"kept for the next sync: {type(err).__name__}: {err}")
        path.unlink(missing_ok=True)
        return SyncResult(path, True, f"run {res.get('runId')}: {res.get('publicUrl') or 'not completed by the agent'}")


class _Lock:
    """The flock'd descriptors of one spooled run: the file as it was opened, and each file
    that replaced it while it was being sent (locked before it took the name)."""

    def __init__(self, fd: int | None):
        self.fd = fd
        self._fds = [fd] if fd is not None else []

    def adopt(self, fd: int) -> None:
        try:
            import fcntl
        except ImportError:  # no flock (Windows)
            os.close(fd)
            return
        fcntl.flock(fd, fcntl.LOCK_EX)  # a file nobody else can name yet: never waits
        self._fds.append(fd)

    def close(self) -> None:
        for fd in self._fds:
            os.close(fd)
        self._fds = []


@contextmanager
def _locked(path: Path) -> Iterator[_Lock | None]:
    """Hold an exclusive, non-blocking lock on ``path``; yields None when another process
    holds it, or when ``path`` is no longer the file that was locked (sent and removed, or
    replaced, meanwhile) or is a link."""
    try:
        import fcntl
    except ImportError:  # no flock (Windows): upload is idempotent anyway
        yield _Lock(None)
        return
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        yield None
        return
    lock = _Lock(fd)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            now, held = os.stat(path, follow_symlinks=False), os.fstat(fd)
        except OSError:
            yield None
            return
        if (now.st_dev, now.st_ino) != (held.st_dev, held.st_ino):
            yield None
            return
        yield lock
    finally:
        lock.close()


RESEND_MAX_RUNS = 50
RESEND_BUDGET = 60.0


def resend(transport: Transport, directory: Path | None = None, *, max_runs: int = RESEND_MAX_RUNS, budget: float = RESEND_BUDGET) -> list[SyncResult]:
    """What a client does at its start, in a background thread: upload the spooled runs that
    were meant for its own server (the same base URL), at most ``max_runs`` of them and for
    at most ``budget`` seconds; it stops at the first one the server cannot take now."""
    import time

    deadline = time.monotonic() + budget
    mine = _safe_url(transport.base_url)
    results: list[SyncResult] = []
    for path in pending(directory):
        if len(results) >= max_runs or time.monotonic() >= deadline:
            break
        record = _read(path)
        if isinstance(record, str) or _safe_url(str(record.get("baseUrl") or "")) != mine:
            continue
        res = send_file(transport, path, record)
        results.append(res)
        if not res.ok and res.message.startswith("kept"):
            break  # the server is down (or the key is wrong): the next start, or `agentsproof sync`, tries again
    return results
