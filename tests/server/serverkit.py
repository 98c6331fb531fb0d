"""Start the real ``agentsproof serve`` for tests: a subprocess on a free loopback port.

In Python tests (the server tests and the SDK tests)::

    from serverkit import running_server

    with running_server(tmp_path) as srv:
        key = srv.create_key("demo")          # runs the real `agentsproof keys create`
        client = AgentsProof(api_key=key, base_url=srv.base_url)   # http://127.0.0.1:PORT/api
        ...
        srv.restart()                          # same port, same database
        srv.stop(); srv.start(); srv.kill()    # graceful stop, start again, SIGKILL (a crash)
        srv.cli("golden", "list")              # any agentsproof command on the same --db
        srv.root_url, srv.db_url, srv.log_tail()

By default the judge is a scripted OpenAI-compatible server (``tests/openai_server.py``)
started in this process, answering every grading request with a valid verdict
(``srv.judge`` is that ScriptedServer: ``srv.judge.add(judge_rule(scores={...}))`` or any
Rule scripts other replies; the judge scores axes 0..10). Grading starts 0.3 s after
complete and errored grades are retried after 0.5 s. Pass
``env={"AGENTSPROOF_PROVIDER_TYPE": ...}`` or ``extra_args=("--provider", ...)`` to use
another judge.

From a shell (the Node tests use this)::

    python tests/server/serverkit.py --dir DIR [--project demo] [--db URL] [--port N]

prints one JSON line ``{"base_url", "root_url", "api_key", "project", "db_url"}`` once
the server is ready, then serves until killed (SIGTERM/SIGINT stop the server too).
Signature and handle attributes are stable; add, don't change.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any, Iterator, Mapping, Sequence

TESTS_DIR = Path(__file__).resolve().parent.parent
if str(TESTS_DIR) not in sys.path:
    sys.path.insert(0, str(TESTS_DIR))

from openai_server import Rule, ScriptedServer  # noqa: E402

JUDGE_MARK = "AgentsProof run grader"
JUDGE_KEY = "sk-serverkit-judge-secret"
AXES = ("goal_completion", "output_quality", "tool_accuracy", "step_efficiency", "safety")


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def criteria_in_prompt(req: dict[str, Any]) -> list[str]:
    """The numbered criteria the grader listed in its prompt (empty when none)."""
    user = next((m.get("content") or "" for m in req.get("messages", []) if m.get("role") == "user"), "")
    m = re.search(r"## Criteria \(answer criteria_results[^\n]*\n(.*?)(?:\n\n|$)", user, re.S)
    if not m:
        return []
    return [re.sub(r"^\d+\.\s*", "", line) for line in m.group(1).splitlines() if line.strip()]


def verdict(req: dict[str, Any], scores: Mapping[str, int] | None = None, passed: bool = True, failure_modes: Sequence[str] = ()) -> str:
    """A valid grading reply for ``req``: each axis at ``scores[axis]`` (whole numbers 0..10 as the
    judge answers them; stored as 0..1), default 8."""
    scores = dict(scores or {})
    axes = {a: {"score": scores.get(a, 8), "reasoning": f"scripted {a}"} for a in AXES}
    crit = [{"criterion": c, "passed": passed, "reasoning": "scripted"} for c in criteria_in_prompt(req)]
    return json.dumps({"axes": axes, "criteria_results": crit, "failure_modes_observed": list(failure_modes)})


def judge_rule(**kw: Any) -> Rule:
    """A Rule answering grading requests with :func:`verdict` (kw are verdict's)."""
    return Rule(reply=lambda req: verdict(req, **kw), system_contains=JUDGE_MARK)


class ServerHandle:
    def __init__(self, workdir: Path, db_url: str, env: Mapping[str, str], extra_args: Sequence[str], judge: ScriptedServer | None, port: int | None = None):
        self.workdir = workdir
        self.db_url = db_url
        self.port = port or free_port()
        self.root_url = f"http://127.0.0.1:{self.port}"
        self.base_url = f"{self.root_url}/api"
        self.judge = judge
        self.extra_args = list(extra_args)
        self.env = dict(env)
        self.log_path = workdir / "server.log"
        self.proc: subprocess.Popen | None = None

    def _cli(self, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        res = subprocess.run([sys.executable, "-m", "agentsproof", *args, "--db", self.db_url], env=self.env, cwd=self.workdir, capture_output=True, text=True, timeout=120)
        if check and res.returncode != 0:
            raise RuntimeError(f"agentsproof {' '.join(args)} failed ({res.returncode}): {res.stderr.strip()}")
        return res

    def create_key(self, project_slug: str) -> str:
        """A new API key for the project (created when new), via the real CLI."""
        return self._cli("keys", "create", "--project", project_slug).stdout.strip().splitlines()[-1]

    def cli(self, *args: str) -> subprocess.CompletedProcess:
        """Run another agentsproof command against this server's database (not checked)."""
        return self._cli(*args, check=False)

    def start(self, timeout: float = 60.0) -> "ServerHandle":
        log = open(self.log_path, "ab")
        cmd = [sys.executable, "-m", "agentsproof", "serve", "--host", "127.0.0.1", "--port", str(self.port), "--db", self.db_url, *self.extra_args]
        self.proc = subprocess.Popen(cmd, env=self.env, cwd=self.workdir, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        log.close()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"agentsproof serve exited with {self.proc.returncode}: {self.log_tail()}")
            try:
                with urllib.request.urlopen(f"{self.base_url}/health", timeout=2) as r:
                    if r.status == 200:
                        return self
            except OSError:
                time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"agentsproof serve not ready after {timeout}s: {self.log_tail()}")

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5)

    def kill(self) -> None:
        """Stop abruptly (SIGKILL), as a crash would."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(5)

    def restart(self) -> "ServerHandle":
        self.stop()
        return self.start()

    def log_tail(self, n: int = 3000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-n:]
        except OSError:
            return ""


@contextlib.contextmanager
def running_server(tmp_path: Path, *, db_url: str | None = None, env: Mapping[str, str] | None = None, extra_args: Sequence[str] = (),
                   port: int | None = None) -> Iterator[ServerHandle]:
    """Start ``agentsproof serve`` (SQLite file in ``tmp_path`` unless ``db_url``); stop it on exit."""
    workdir = Path(tmp_path)
    workdir.mkdir(parents=True, exist_ok=True)
    judge = ScriptedServer([judge_rule()]).start()
    full_env = {
        **os.environ,
        "AGENTSPROOF_PROVIDER_TYPE": "openai",
        "AGENTSPROOF_PROVIDER_URL": judge.base_url,
        "AGENTSPROOF_PROVIDER_KEY": JUDGE_KEY,
        "AGENTSPROOF_MODEL": "judge-model",
        "AGENTSPROOF_RETRY_BASE_DELAY": "0",
        "AGENTSPROOF_GRADE_DELAY": "0.3",
        "AGENTSPROOF_GRADE_RETRY_DELAY": "0.5",
        "PYTHONUNBUFFERED": "1",
        **(env or {}),
    }
    full_env.pop("AGENTSPROOF_DB", None)
    handle = ServerHandle(workdir, db_url or f"sqlite:///{workdir / 'server.db'}", full_env, extra_args, judge, port)
    try:
        handle.start()
        yield handle
    finally:
        handle.stop()
        judge.stop()


def _main() -> None:
    import argparse

    ap = argparse.ArgumentParser(description="Start agentsproof serve for tests; print {base_url, root_url, api_key, project, db_url}.")
    ap.add_argument("--dir", required=True, type=Path, help="Working folder (database, log).")
    ap.add_argument("--project", default="demo")
    ap.add_argument("--db", default=None, help="Database URL (default: SQLite file in --dir).")
    ap.add_argument("--port", type=int, default=None, help="TCP port (default: a free one); the same --dir and --port restart a server.")
    args = ap.parse_args()
    stop = {"now": False}

    def _on_signal(*_: Any) -> None:
        stop["now"] = True

    signal.signal(signal.SIGTERM, _on_signal)
    signal.signal(signal.SIGINT, _on_signal)
    with running_server(args.dir, db_url=args.db, port=args.port) as srv:
        key = srv.create_key(args.project)
        print(json.dumps({"base_url": srv.base_url, "root_url": srv.root_url, "api_key": key, "project": args.project, "db_url": srv.db_url}), flush=True)
        while not stop["now"] and srv.proc.poll() is None:
            time.sleep(0.2)


if __name__ == "__main__":
    _main()
