"""Server unreachable → the run is spooled to disk (no key in it) → ``agentsproof sync``
uploads it later, once; a process that exits before complete() spools too."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import time

from conftest import run_cli
from sdk_recorder import RecordingServer

from agentsproof import AgentsProof
from agentsproof.sdk.client import OFFLINE_SECONDS

KEY = "ap-spool-secret-key"


def _dead_url() -> str:
    srv = RecordingServer().start()
    url = srv.base_url
    srv.stop()  # nothing listens there any more
    return url


def _offline_run(spool, url=None):
    ap = AgentsProof(api_key=KEY, base_url=url or _dead_url(), spool_dir=spool)
    run = ap.start_run(project_slug="p", input={"q": 1}, goal="g", client_run_id="client-run-1")
    run.trace("tool_call", "search", lambda: {"hits": 1}, input="q")
    run.log_step({"type": "llm_call", "name": "m", "output": "answer"})
    return run.complete({"answer": 42})


def test_unreachable_server_spools_the_run(tmp_path):
    res = _offline_run(tmp_path)
    assert res["publicUrl"] is None and res["spooled"] == str(tmp_path / "client-run-1.json")
    path = tmp_path / "client-run-1.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    text = path.read_text()
    assert KEY not in text
    rec = json.loads(text)
    assert rec["completed"] is True and rec["output"] == {"answer": 42}
    assert rec["run"]["clientRunId"] == "client-run-1" and rec["run"]["goal"] == "g"
    assert [s["name"] for s in rec["steps"]] == ["search", "m"]


def test_sync_uploads_spooled_runs_once(tmp_path):
    _offline_run(tmp_path)
    srv = RecordingServer().start()
    try:
        env = {"AGENTSPROOF_API_KEY": KEY, "AGENTSPROOF_SPOOL_DIR": str(tmp_path)}
        code, out, err = run_cli(["sync", "--base-url", srv.base_url], env=env)
        assert code == 0, err
        assert "1 synced, 0 left" in out and "/r/run-1" in out
        assert [(r.method, r.path) for r in srv.requests] == [
            ("POST", "/api/runs"), ("POST", "/api/runs/run-1/steps"), ("POST", "/api/runs/run-1/steps"),
            ("POST", "/api/runs/run-1/complete")]
        assert all(r.headers["x-api-key"] == KEY for r in srv.requests)
        assert srv.requests[0].body["clientRunId"] == "client-run-1"
        assert srv.requests[-1].body == {"output": {"answer": 42}}
        assert list(tmp_path.glob("*.json")) == []
        code, out, _ = run_cli(["sync", "--base-url", srv.base_url], env=env)
        assert code == 0 and "nothing to sync" in out and len(srv.requests) == 4
    finally:
        srv.stop()


def test_sync_keeps_runs_while_the_server_is_still_down(tmp_path):
    _offline_run(tmp_path)
    code, out, err = run_cli(["sync", "--base-url", _dead_url()], env={"AGENTSPROOF_SPOOL_DIR": str(tmp_path)})
    assert code == 30 and "kept" in err and "0 synced, 1 left" in out
    assert (tmp_path / "client-run-1.json").exists()


def test_sync_uses_the_stored_url_and_never_creates_a_run_twice(tmp_path):
    srv = RecordingServer().start()
    try:
        srv.fail[("POST", r"/api/runs/[^/]+/complete")] = 503  # created, then the server failed
        ap = AgentsProof(api_key=KEY, base_url=srv.base_url, spool_dir=tmp_path)
        run = ap.start_run(project_slug="p", input="q", client_run_id="half")
        run.log_step({"type": "tool_call", "name": "s"})
        res = run.complete("out")
        assert res["spooled"] and res["runId"] == "run-1"
        srv.fail.clear()
        code, out, err = run_cli(["sync"], env={"AGENTSPROOF_SPOOL_DIR": str(tmp_path), "AGENTSPROOF_API_KEY": KEY})
        assert code == 0, err
        assert len(srv.of("POST", "/api/runs")) == 1  # the server's run id was kept in the spool file
        assert srv.of("POST", "/api/runs/run-1/complete")[-1].body == {"output": "out"}
    finally:
        srv.stop()


def test_a_run_refused_for_good_moves_aside(tmp_path):
    _offline_run(tmp_path)
    srv = RecordingServer().start()
    srv.fail[("POST", "/api/runs")] = 422
    try:
        code, _, err = run_cli(["sync", "--base-url", srv.base_url], env={"AGENTSPROOF_SPOOL_DIR": str(tmp_path)})
        assert code == 30 and "refused" in err
        assert (tmp_path / "failed" / "client-run-1.json").exists() and not (tmp_path / "client-run-1.json").exists()
    finally:
        srv.stop()


def test_exit_before_complete_spools_the_run(tmp_path):
    script = (
        "from agentsproof import AgentsProof\n"
        f"ap = AgentsProof(api_key={KEY!r}, base_url={_dead_url()!r})\n"
        "run = ap.start_run(project_slug='p', input='q', client_run_id='crashed')\n"
        "run.log_step({'type': 'tool_call', 'name': 'before-crash'})\n"
    )
    env = {**os.environ, "AGENTSPROOF_SPOOL_DIR": str(tmp_path)}
    res = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    rec = json.loads((tmp_path / "crashed.json").read_text())
    assert rec["completed"] is False and [s["name"] for s in rec["steps"]] == ["before-crash"]
    assert "agentsproof sync" in res.stderr


def test_the_client_recovers_when_the_server_comes_back(tmp_path):
    srv = RecordingServer().start()
    ap = AgentsProof(api_key=KEY, base_url=srv.base_url, spool_dir=tmp_path)
    srv.fail[("POST", "/api/runs")] = 401
    assert ap.start_run(project_slug="p", input=1).complete(None)["spooled"]
    srv.fail.clear()
    ap._offline_until = time.monotonic()  # skip the OFFLINE_SECONDS pause instead of sleeping it
    assert OFFLINE_SECONDS > 0
    assert ap.start_run(project_slug="p", input=2).complete(None)["publicUrl"]
    srv.stop()


def test_spool_location(monkeypatch, tmp_path):
    from agentsproof.sdk.spool import spool_dir

    monkeypatch.delenv("AGENTSPROOF_SPOOL_DIR", raising=False)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    assert spool_dir() == tmp_path / "state" / "agentsproof" / "spool"
    monkeypatch.delenv("XDG_STATE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert spool_dir() == tmp_path / "home" / ".local" / "state" / "agentsproof" / "spool"
    monkeypatch.setenv("AGENTSPROOF_SPOOL_DIR", str(tmp_path / "mine"))
    assert spool_dir() == tmp_path / "mine"


def test_the_spool_never_stores_url_credentials(tmp_path):
    from agentsproof.sdk import spool

    path = spool.write({"baseUrl": "http://user:hunter2@127.0.0.1:9/api", "run": {"clientRunId": "c/../x"}}, tmp_path)
    assert path == tmp_path / "c_.._x.json"
    assert "hunter2" not in path.read_text() and json.loads(path.read_text())["baseUrl"] == "http://127.0.0.1:9/api"


def test_a_file_rewritten_while_it_is_sent_stays_locked(tmp_path):
    """The server's run id is written back into the spooled file (a new file takes its name):
    that new file is locked before it does, so a `sync` in another process cannot send the
    same run meanwhile."""
    from agentsproof.sdk import spool

    _offline_run(tmp_path)
    path = tmp_path / "client-run-1.json"
    srv = RecordingServer().start()
    try:
        with spool._locked(path) as lock:
            assert lock is not None
            record = json.loads(path.read_text())
            spool._rewrite(path, {**record, "remoteRunId": "run-9"}, lock)
            env = {"AGENTSPROOF_API_KEY": KEY, "AGENTSPROOF_SPOOL_DIR": str(tmp_path)}
            code, out, err = run_cli(["sync", "--base-url", srv.base_url], env=env)
            assert "being sent by another process" in out + err
            assert srv.requests == []
        assert json.loads(path.read_text())["remoteRunId"] == "run-9"
    finally:
        srv.stop()


def test_sync_never_follows_a_link_planted_in_the_spool(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    _offline_run(outside)
    target = outside / "client-run-1.json"
    before = target.read_bytes()
    spool_dir = tmp_path / "spool"
    spool_dir.mkdir()
    (spool_dir / "planted.json").symlink_to(target)
    srv = RecordingServer().start()
    try:
        env = {"AGENTSPROOF_API_KEY": KEY, "AGENTSPROOF_SPOOL_DIR": str(spool_dir)}
        code, out, err = run_cli(["sync", "--base-url", srv.base_url], env=env)
        assert code == 0, err
        assert srv.requests == []
    finally:
        srv.stop()
    assert target.read_bytes() == before and (spool_dir / "planted.json").is_symlink()
