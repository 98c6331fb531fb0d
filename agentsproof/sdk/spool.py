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
import tempfile
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from agentsproof.sdk.transport import HTTPStatusError, Transport, TransportError

log = logging.getLogger("agentsproof.sdk")

FORMAT = "agentsproof-spool/1"


def spool_dir() -> Path:
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


def write(record: dict[str, Any], directory: Path | None = None) -> Path | None:
    """Write one run record; returns its path, or None (logged) when the disk refuses."""
    d = Path(directory) if directory else spool_dir()
    name = re.sub(r"[^A-Za-z0-9._-]", "_", str(record["run"].get("clientRunId") or "run"))[:120]
    record = {"format": FORMAT, "spooledAt": datetime.now(UTC).isoformat(), **record}
    record["baseUrl"] = _safe_url(record.get("baseUrl") or "")
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


def _rewrite(path: Path, record: dict[str, Any]) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(record, ensure_ascii=True), encoding="utf-8")
    os.chmod(tmp, 0o600)
    os.replace(tmp, path)


def pending(directory: Path | None = None) -> Iterator[Path]:
    d = Path(directory) if directory else spool_dir()
    if d.is_dir():
        yield from sorted(p for p in d.glob("*.json") if p.is_file())


def upload(transport: Transport, record: dict[str, Any], path: Path | None = None) -> dict[str, Any]:
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
            _rewrite(path, record)
    for step in record.get("steps", []):
        try:
            transport.request("POST", f"/runs/{run_id}/steps", step)
        except HTTPStatusError as err:
            if err.retryable:
                raise
            log.warning("agentsproof sync: step %s of run %s refused (%s); skipped", step.get("step_index"), run_id, err.status)
    if record.get("completed"):
        done = transport.request("POST", f"/runs/{run_id}/complete", {"output": record.get("output")})
        return dict(done or {}, runId=(done or {}).get("runId", run_id))
    return {"runId": run_id}


@dataclass
class SyncResult:
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
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
            if record.get("format") != FORMAT or "run" not in record:
                raise ValueError(f"not an {FORMAT} file")
        except (OSError, ValueError) as err:
            results.append(SyncResult(path, False, f"unreadable: {err}"))
            continue
        url = base_url or record.get("baseUrl")
        if not url:
            results.append(SyncResult(path, False, "no base URL stored; pass --base-url"))
            continue
        transport = transports.setdefault(url, Transport(url, api_key, timeout))
        try:
            res = upload(transport, record, path)
        except HTTPStatusError as err:
            if not err.retryable:
                failed = path.parent / "failed"
                failed.mkdir(exist_ok=True, mode=0o700)
                os.replace(path, failed / path.name)
                results.append(SyncResult(path, False, f"refused by the server ({err}); moved to {failed}"))
            else:
                results.append(SyncResult(path, False, f"kept for the next sync: {err}"))
            continue
        except (TransportError, KeyError, TypeError) as err:
            results.append(SyncResult(path, False, f"kept for the next sync: {type(err).__name__}: {err}"))
            continue
        path.unlink(missing_ok=True)
        results.append(SyncResult(path, True, f"run {res.get('runId')}: {res.get('publicUrl') or 'not completed by the agent'}"))
    return results
