"""Database URL, engine and migrations.

``AGENTSPROOF_DB`` or ``--db`` names the database; the default is a SQLite file at
``$XDG_DATA_HOME/agentsproof/server.db`` (``~/.local/share/agentsproof/server.db``).
``postgresql://user:pass@host:port/db`` selects PostgreSQL (driver psycopg 3).
Every command opens the database through :func:`open_db`, which runs the Alembic
migrations up to head first, so a new file or an empty database just works.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from pathlib import Path

from agentsproof.core.envcfg import env_text
from agentsproof.core.errors import InputError

_MIGRATE_LOCK = threading.Lock()
log = logging.getLogger("agentsproof.server")


def default_db_url() -> str:
    """The SQLite database under ``$XDG_DATA_HOME/agentsproof`` (default ``~/.local/share``)."""
    base = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share") / "agentsproof"
    return f"sqlite:///{base / 'server.db'}"


def resolve_db_url(flag: str | None) -> str:
    """The SQLAlchemy URL from ``--db``, else ``AGENTSPROOF_DB``, else the default; a PostgreSQL URL gets the psycopg driver; InputError for another scheme."""
    url = (flag or env_text("AGENTSPROOF_DB") or "").strip() or default_db_url()
    if url.startswith("postgres://"):
        url = "postgresql://" + url[len("postgres://") :]
    if url.startswith("postgresql://"):
        url = "postgresql+psycopg://" + url[len("postgresql://") :]
    if not (url.startswith("sqlite:") or url.startswith("postgresql+")):
        raise InputError("--db", "URL", "expected sqlite:///PATH or postgresql://USER@HOST:PORT/DB")
    return url


def safe_url(url: str) -> str:
    """The URL with any password hidden, for messages."""
    from sqlalchemy.engine import make_url

    try:
        return make_url(url).render_as_string(hide_password=True)
    except Exception:  # noqa: BLE001 - a URL that does not even parse is still named in the message, without a password
        return "<database>"


POOL_SIZE = 20
POOL_OVERFLOW = 40
"""Connections: more than the 40 worker threads that run request handlers, so a burst of
requests queues for threads, never for connections held by handlers that wait on threads."""


def make_engine(url: str):
    """The SQLAlchemy engine for ``url``: SQLite in WAL mode in a file only its owner reads (created if new), PostgreSQL with pre-ping; JSON through ``json_out``/``json_in``."""
    from sqlalchemy import create_engine, event

    if url.startswith("sqlite"):
        path = url.split("///", 1)[-1].split("?", 1)[0]
        if path and path != ":memory:":
            _create_private(Path(path).expanduser())
        engine = create_engine(
            url,
            connect_args={"check_same_thread": False, "timeout": 30},
            pool_size=POOL_SIZE,
            max_overflow=POOL_OVERFLOW,
            json_serializer=json_out,
            json_deserializer=json_in,
        )

        @event.listens_for(engine, "connect")
        def _pragmas(dbapi_conn, _record):  # pragma: no cover - trivial
            cur = dbapi_conn.cursor()
            cur.execute("PRAGMA journal_mode=WAL")
            cur.execute("PRAGMA busy_timeout=30000")
            cur.execute("PRAGMA synchronous=NORMAL")  # with WAL: durable across crashes of the process, fast commits
            cur.execute("PRAGMA foreign_keys=ON")
            cur.close()
            # a row written before text was checked (or by another tool) may hold bytes that are
            # not UTF-8: read them with U+FFFD instead of failing the page that shows them
            dbapi_conn.text_factory = _lenient_text

        return engine
    return create_engine(url, pool_pre_ping=True, pool_size=POOL_SIZE, max_overflow=POOL_OVERFLOW, json_serializer=json_out, json_deserializer=json_in)


def json_out(value: object) -> str:
    """JSON as stored: always valid JSON, never the ``NaN`` / ``Infinity`` that SQLite's JSON
    functions and PostgreSQL's json type refuse. The API refuses such numbers in a request;
    one in anything else (a pushed CLI report, say) is stored as ``null``."""
    try:
        return json.dumps(value, allow_nan=False)
    except ValueError:
        from agentsproof.server.protocol import renderable

        return json.dumps(renderable(value), allow_nan=False)


def json_in(text: str) -> object:
    """A stored JSON value; a row no JSON parser reads (written by an older server or another
    tool, or nested too deep) comes back as its text, so its page still shows."""
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return text


def _lenient_text(raw: bytes) -> str:
    return raw.decode("utf-8", "replace")


def _create_private(path: Path) -> None:
    """Create the SQLite file (and its folder) readable by the owner only, when new;
    an existing file keeps its mode."""
    if not path.parent.exists():
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    except FileExistsError:
        return
    except OSError:
        return  # sqlite reports a folder it cannot write to with its own message
    os.close(fd)


_SQLITE_OUTAGE = ("unable to open", "disk i/o", "database is locked", "readonly database", "malformed", "not a database", "out of memory", "disk is full")
"""What SQLite says when the database itself fails; its other OperationalErrors (a JSON path
error, a syntax error) are a query's own fault, not an outage."""


def is_outage(err: BaseException) -> bool:
    """Whether a database error means the database is unavailable (answer 503 and log the
    outage) rather than one query failing (answer 500, never a false outage line)."""
    from sqlalchemy.exc import DBAPIError, OperationalError

    if not isinstance(err, OperationalError):
        return True  # InterfaceError, the pool's timeout: no connection to be had
    if isinstance(err, DBAPIError) and err.connection_invalidated:
        return True
    orig = getattr(err, "orig", None)
    if type(orig).__module__.startswith("sqlite3"):
        text = str(orig).lower()
        return any(m in text for m in _SQLITE_OUTAGE)
    state = getattr(orig, "sqlstate", None)
    # PostgreSQL: no state (no connection at all), connection exceptions (08), resources (53),
    # operator intervention (57: shutdown, cannot connect now; 57014 is a cancelled query), system (58)
    return state is None or (state[:2] in {"08", "53", "57", "58"} and state != "57014")


class Outage:
    """Whether the database answers, logged once per outage (not once per request).

    ``down(err)`` is called by every request that failed on the database, ``up()`` by
    every connection checked out of the pool (the pool pings the database first)."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.since: float | None = None
        self._lock = threading.Lock()

    def down(self, err: BaseException) -> None:
        """Note that the database went away (logged once per outage)."""
        import time

        with self._lock:
            if self.since is not None:
                return
            self.since = time.monotonic()
        first = (str(getattr(err, "orig", None) or err).strip().splitlines() or [type(err).__name__])[0]
        log.error("database %s unavailable (%s); answering 503 until it is back", safe_url(self.url), first[:300])

    def up(self) -> None:
        """Note that the database answers again (logged once, with how long it was down)."""
        if self.since is None:
            return
        import time

        with self._lock:
            if self.since is None:
                return
            lasted, self.since = time.monotonic() - self.since, None
        log.warning("database %s is back after %.0fs", safe_url(self.url), lasted)


def migrate(engine) -> None:
    """Upgrade the schema to the newest Alembic revision."""
    from alembic import command
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(Path(__file__).parent / "migrations"))
    with _MIGRATE_LOCK, engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "head")


class Database:
    """An engine with migrated schema and a session factory."""

    def __init__(self, url: str):
        from sqlalchemy import event
        from sqlalchemy.exc import OperationalError
        from sqlalchemy.orm import sessionmaker

        self.url = url
        self.outage = Outage(url)
        self.engine = make_engine(url)
        event.listen(self.engine, "checkout", lambda *_: self.outage.up())
        try:
            migrate(self.engine)
        except OperationalError as err:
            raise InputError("--db", safe_url(url), f"cannot open the database: {str(err.orig).strip().splitlines()[0]}") from None
        self.session = sessionmaker(self.engine, expire_on_commit=False)

    def close(self) -> None:
        """Close every pooled connection."""
        self.engine.dispose()


def open_db(flag: str | None) -> Database:
    """The ``Database`` that ``--db`` (or its defaults) names, schema migrated; InputError when it cannot be opened."""
    return Database(resolve_db_url(flag))
