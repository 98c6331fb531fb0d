"""The server's CLI commands: light imports, keys output, --db handling, --runs-dir."""

from __future__ import annotations

import json
import subprocess
import sys

import httpx

from serverkit import running_server


def _cli(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    import os

    return subprocess.run([sys.executable, "-m", "agentsproof", *args], capture_output=True, text=True, timeout=120, env={**os.environ, **(env or {})})


def test_cli_stays_light():
    code = "import sys, agentsproof.cli; bad = [m for m in ('fastapi', 'sqlalchemy', 'uvicorn', 'alembic', 'starlette') if m in sys.modules]; print(bad)"
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0 and res.stdout.strip() == "[]", res.stdout + res.stderr


def test_keys_create_prints_the_key_alone_on_its_last_line(tmp_path):
    db = f"sqlite:///{tmp_path / 'k.db'}"
    res = _cli("keys", "create", "--project", "shop", "--db", db)
    assert res.returncode == 0, res.stderr
    key = res.stdout.splitlines()[-1]
    assert key.startswith("ap_") and len(key) > 40 and res.stdout.strip() == key
    listed = _cli("keys", "list", env={"AGENTSPROOF_DB": db}).stdout  # the env names the same database
    assert key not in listed and key[:10] in listed and "\tshop\t" in listed and "active" in listed
    assert _cli("keys", "revoke", key, "--db", db).returncode == 0
    assert "revoked" in _cli("keys", "list", "--db", db).stdout
    res = _cli("keys", "revoke", "999", "--db", db)
    assert res.returncode == 30 and res.stderr.startswith("error: command line: KEY_ID: ")


def test_bad_db_urls_are_one_line_exit_30(tmp_path):
    res = _cli("keys", "list", "--db", "mysql://x/y")
    assert res.returncode == 30 and res.stderr.strip() == "error: --db: URL: expected sqlite:///PATH or postgresql://USER@HOST:PORT/DB"
    res = _cli("keys", "list", "--db", "postgresql://u:hunter2@127.0.0.1:9/db")
    assert res.returncode == 30 and len(res.stderr.strip().splitlines()) == 1
    assert "cannot open the database" in res.stderr and "hunter2" not in res.stderr
    res = _cli("keys", "create", "--project", "bad slug", "--db", f"sqlite:///{tmp_path / 'x.db'}")
    assert res.returncode == 30 and "--project" in res.stderr


def test_serve_runs_dir_imports_reports(tmp_path):
    runs = tmp_path / "runs" / "demo"
    runs.mkdir(parents=True)
    report = {"tool": "agentsproof", "command": "tc-eval", "plugin": "cases", "created_at": "2026-02-01T00:00:00+00:00", "verdict": "FAIL",
              "items": [{"id": "case-1", "name": "case one", "kind": "case", "delta": -0.2, "stats": {"delta_ci": [-0.5, 0.1]}}]}
    (runs / "cases-tc-eval.json").write_text(json.dumps(report))
    (runs / "other.json").write_text(json.dumps({"not": "a report"}))
    with running_server(tmp_path / "srv", extra_args=("--runs-dir", str(tmp_path / "runs"))) as srv:
        page = httpx.get(srv.root_url + "/results").text
    assert "case one" in page and "tc-eval" in page and "-0.20 [-0.50, +0.10]" in page
    res = _cli("serve", "--runs-dir", str(tmp_path / "missing"), "--db", f"sqlite:///{tmp_path / 'y.db'}")
    assert res.returncode == 30 and "--runs-dir" in res.stderr


def test_a_misplaced_star_in_allowed_host_is_one_line_exit_30(tmp_path):
    res = _cli("serve", "--port", "0", "--db", f"sqlite:///{tmp_path / 'h.db'}", "--allowed-host", "localhost, a*.example.org")
    assert res.returncode == 30
    assert res.stderr.strip() == ("error: command line: --allowed-host: 'a*.example.org': a '*' stands alone (any Host) "
                                  "or leads a domain ('*.example.org')")
