"""A throwaway PostgreSQL cluster on loopback for the server tests.

``initdb`` + ``pg_ctl`` from ``/usr/lib/postgresql/*/bin`` (Debian package
``postgresql``) in a temp folder, on a free 127.0.0.1 port, as the ``postgres`` user
(via ``runuser``) when the tests run as root. Missing binaries skip the PostgreSQL
tests locally and fail them when ``CI`` is set.

Fixtures (import them into a test module): ``pg_cluster`` (session) and ``db_url``
(parametrised: a fresh SQLite file, and a fresh database in the cluster).
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
import uuid
from pathlib import Path

import pytest

BACKENDS = ["sqlite", "postgresql"]


def pg_bindir() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(Path(p).parts[-3]) if Path(p).parts[-3].isdigit() else 0)
    return Path(found[-1]).parent if found else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class PgCluster:
    def __init__(self, bindir: Path):
        self.bindir = bindir
        self.root = Path(tempfile.mkdtemp(prefix="agentsproof-pg-"))
        self.data = self.root / "data"
        self.port = _free_port()
        self.as_root = os.geteuid() == 0

    def _run(self, *args: str) -> None:
        cmd = list(args)
        if self.as_root:
            cmd = ["runuser", "-u", "postgres", "--", *cmd]
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd="/")
        if res.returncode != 0:
            raise RuntimeError(f"{' '.join(args[:2])} failed: {res.stderr.strip() or res.stdout.strip()}")

    def start(self) -> "PgCluster":
        if self.as_root:
            shutil.chown(self.root, "postgres", "postgres")
        os.chmod(self.root, 0o700)
        self._run(str(self.bindir / "initdb"), "-D", str(self.data), "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8")
        self.resume()
        return self

    def pause(self) -> None:
        """Stop the cluster, keeping its data (a database outage); ``resume`` starts it again."""
        self._run(str(self.bindir / "pg_ctl"), "-D", str(self.data), "-m", "fast", "-w", "stop")

    def resume(self) -> None:
        opts = f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
        self._run(str(self.bindir / "pg_ctl"), "-D", str(self.data), "-o", opts, "-l", str(self.root / "log"), "-w", "-t", "60", "start")

    def url(self, dbname: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{dbname}"

    def new_database(self) -> str:
        import psycopg

        name = "t_" + uuid.uuid4().hex[:12]
        with psycopg.connect(f"host=127.0.0.1 port={self.port} user=postgres dbname=postgres", autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def stop(self) -> None:
        try:
            self._run(str(self.bindir / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop")
        finally:
            shutil.rmtree(self.root, ignore_errors=True)


def require_pg() -> Path:
    bindir = pg_bindir()
    if bindir is None or (os.geteuid() == 0 and shutil.which("runuser") is None):
        msg = "PostgreSQL binaries not found (/usr/lib/postgresql/*/bin/initdb; Debian package postgresql)"
        if os.environ.get("CI"):
            pytest.fail(msg + " - required in CI")
        pytest.skip(msg)
    return bindir


@pytest.fixture(scope="session")
def pg_cluster():
    cluster = PgCluster(require_pg()).start()
    try:
        yield cluster
    finally:
        cluster.stop()


def make_db_url(request: pytest.FixtureRequest, backend: str, folder: Path) -> str:
    if backend == "sqlite":
        return f"sqlite:///{folder / 'server.db'}"
    return request.getfixturevalue("pg_cluster").new_database()


@pytest.fixture(params=BACKENDS)
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    return make_db_url(request, request.param, tmp_path)
