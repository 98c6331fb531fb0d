"""The response cache: an unchanged re-run makes no LLM call, and editing only the skill
re-runs only the with-skill arm (the baseline arm and its judge calls come from here).

A response is stored under a key made of everything that determines it: provider and its
settings (``describe()``, which holds no secret), model, messages, sampling parameters,
JSON schema and the **trial slot** (item, arm and trial index: ``ChatRequest.slot``, set
by whoever makes the call for a trial), so N trials of one prompt stay N independent
samples. Judge calls made for a trial share its slot. Keys are hashed; no API key is part of anything
written. Errored calls are never stored.

Storage: one SQLite file in WAL mode (``<cache dir>/responses.sqlite``), safe for
concurrent runs sharing it; bounded in size (``AGENTSPROOF_CACHE_MAX_MB``, default 512),
least recently used entries evicted first. ``--no-cache`` turns it off, ``--cache-dir``
moves it (default ``$AGENTSPROOF_CACHE_DIR``, else ``~/.cache/agentsproof``),
``agentsproof cache info|clear`` inspects or empties it.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from agentsproof.llm.base import ChatRequest, ChatResponse, LLMClient
from agentsproof.model.results import Usage

SCHEMA = 1
DEFAULT_MAX_MB = 512


def default_cache_dir() -> Path:
    """The cache folder when ``--cache-dir`` is not given (:func:`agentsproof.core.envcfg.cache_root`)."""
    from agentsproof.core.envcfg import cache_root

    return Path(cache_root())


def _max_bytes_from_env() -> int:
    from agentsproof.core.envcfg import env_number

    return int(env_number("AGENTSPROOF_CACHE_MAX_MB", DEFAULT_MAX_MB, lo=1, hi=1_000_000) * 1_000_000)


class ResponseCache:
    """The SQLite store. One connection per thread; every statement is short."""

    def __init__(self, directory: Path, max_bytes: int | None = None):
        self.directory = Path(directory)
        self.path = self.directory / "responses.sqlite"
        self.max_bytes = max_bytes if max_bytes is not None else _max_bytes_from_env()
        self._local = threading.local()
        self.hits = 0
        self.misses = 0
        self.stores = 0
        self._since_evict = 0

    def _db(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            self.directory.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(self.path, timeout=30, isolation_level=None)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute(
                "CREATE TABLE IF NOT EXISTS responses ("
                "key TEXT PRIMARY KEY, value TEXT NOT NULL, size INTEGER NOT NULL, "
                "created REAL NOT NULL, accessed REAL NOT NULL)"
            )
            conn.execute("CREATE INDEX IF NOT EXISTS responses_accessed ON responses(accessed)")
            self._local.conn = conn
        return conn

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored response under ``key`` (its access time refreshed), or None: a missing, damaged or unreadable row is a miss."""
        try:
            db = self._db()
            row = db.execute("SELECT value FROM responses WHERE key = ?", (key,)).fetchone()
            if row is None:
                self.misses += 1
                return None
            db.execute("UPDATE responses SET accessed = ? WHERE key = ?", (time.time(), key))
            value = json.loads(row[0])
            if not isinstance(value, dict):
                raise ValueError("not an object")
            self.hits += 1
            return value
        except (sqlite3.Error, OSError, ValueError, RecursionError):
            # a cache that cannot be read (a file where its folder goes, a damaged row) is a
            # cache miss, never a failed trial
            self.misses += 1
            return None

    def put(self, key: str, value: dict[str, Any]) -> None:
        """Store ``value`` under ``key``, evicting now and then; a store that fails (locked, disk full) is skipped."""
        text = json.dumps(value, separators=(",", ":"))
        now = time.time()
        try:
            db = self._db()
            db.execute(
                "INSERT OR REPLACE INTO responses(key, value, size, created, accessed) VALUES (?, ?, ?, ?, ?)",
                (key, text, len(text), now, now),
            )
            self.stores += 1
            self._since_evict += 1
            if self._since_evict >= 64:
                self.evict()
        except (sqlite3.Error, OSError):
            pass

    def evict(self) -> int:
        """Drop least recently used entries until the store is under 90 % of its bound."""
        self._since_evict = 0
        db = self._db()
        total = db.execute("SELECT COALESCE(SUM(size), 0) FROM responses").fetchone()[0]
        if total <= self.max_bytes:
            return 0
        target = int(self.max_bytes * 0.9)
        dropped = 0
        for key, size in db.execute("SELECT key, size FROM responses ORDER BY accessed").fetchall():
            if total <= target:
                break
            db.execute("DELETE FROM responses WHERE key = ?", (key,))
            total -= size
            dropped += 1
        return dropped

    def info(self) -> dict[str, Any]:
        """Path, entry count, size and bound in bytes, for ``agentsproof cache info``."""
        if not self.path.exists():
            return {"path": str(self.path), "entries": 0, "bytes": 0, "max_bytes": self.max_bytes}
        db = self._db()
        n, size = db.execute("SELECT COUNT(*), COALESCE(SUM(size), 0) FROM responses").fetchone()
        return {"path": str(self.path), "entries": n, "bytes": size, "max_bytes": self.max_bytes}

    def clear(self) -> int:
        """Delete every entry and compact the file; returns how many there were."""
        if not self.path.exists():
            return 0
        db = self._db()
        n: int = db.execute("SELECT COUNT(*) FROM responses").fetchone()[0]
        db.execute("DELETE FROM responses")
        db.execute("VACUUM")
        return n

    def close(self) -> None:
        """Close this thread's connection (the next use opens a new one)."""
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None


def request_key(namespace: dict[str, Any], request: ChatRequest, slot: tuple[str, str, int] | None) -> str:
    material = {
        "v": SCHEMA,
        "ns": namespace,
        "model": request.model,
        "messages": request.messages,
        "temperature": request.temperature,
        "max_tokens": request.max_tokens,
        "schema": request.json_schema,
        **({"extra": request.extra} if request.extra else {}),
        "slot": list(slot) if slot else None,
    }
    blob = json.dumps(material, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(blob.encode("utf-8", "surrogatepass")).hexdigest()


def _encode(resp: ChatResponse) -> dict[str, Any]:
    return {
        "text": resp.text,
        "usage": resp.usage.model_dump(),
        "latency_s": resp.latency_s,
        "model": resp.model,
        "cost_usd": resp.cost_usd,
        "tool_calls": resp.tool_calls,
    }


class _Row(BaseModel):
    """A stored response, validated: a row of the wrong shape is a miss, not a failed trial."""

    model_config = ConfigDict(strict=True, extra="ignore")
    text: str
    usage: Usage = Field(default_factory=Usage)
    latency_s: float = Field(0.0, ge=0, allow_inf_nan=False)
    model: str = ""
    cost_usd: float | None = Field(None, ge=0, allow_inf_nan=False)
    tool_calls: list[dict[str, Any]] = Field(default_factory=list)


def _decode(data: dict[str, Any]) -> ChatResponse:
    """The response of a cache row; ValueError when the row is not one."""
    for key in ("latency_s", "cost_usd"):  # JSON has one number type: 1 is a float here
        if type(data.get(key)) is int:
            data = {**data, key: float(data[key])}
    row = _Row.model_validate({k: v for k, v in data.items() if v is not None})
    return ChatResponse(
        text=row.text,
        usage=row.usage,
        latency_s=row.latency_s,
        model=row.model,
        cost_usd=row.cost_usd,
        tool_calls=row.tool_calls,
        cached=True,
    )


class CachingClient(LLMClient):
    """Any client, with its successful responses served from and stored in a ResponseCache."""

    def __init__(self, inner: LLMClient, cache: ResponseCache):
        self.inner = inner
        self.cache = cache
        self.name = inner.name
        self.max_concurrency = inner.max_concurrency
        described = inner.describe()
        self._namespace = {"provider": inner.name, **{k: v for k, v in described.items() if k not in ("threads", "instances")}}

    async def complete(self, request: ChatRequest) -> ChatResponse:
        """The cached reply for this request and slot, else the inner client's (stored when it succeeds)."""
        key = request_key(self._namespace, request, request.slot)
        hit = self.cache.get(key)
        if hit is not None:
            try:
                return _decode(hit)
            except (KeyError, TypeError, ValueError, RecursionError):
                self.cache.hits -= 1  # a row of the wrong shape: a miss
                self.cache.misses += 1
        resp = await self.inner.complete(request)
        self.cache.put(key, _encode(resp))
        return resp

    async def aclose(self) -> None:
        """Close the inner client, then the cache."""
        try:
            await self.inner.aclose()
        finally:
            self.cache.close()

    def describe(self) -> dict[str, Any]:
        """The inner client's facts: a cached reply reports the provider it came from."""
        return self.inner.describe()


__all__ = ["CachingClient", "ResponseCache", "default_cache_dir"]
