"""Crash isolation of the embedded model through the real CLI (real model, real processes).

A worker killed with SIGSEGV mid-run costs exactly the trial it was generating; the other
trials are scored, the reports are written and the exit code follows the usual rules. No
worker outlives the CLI, not even after a Ctrl-C to the whole process group. ``doctor``
reports a crashing llama.cpp build as one line plus the fix.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from conftest import read_json, run_cli

pytestmark = pytest.mark.local_model

from conftest import require_local_model  # noqa: E402

require_local_model()

from agentsproof.llm import local_pool  # noqa: E402
from agentsproof.llm.local_worker import ENV_FAULT  # noqa: E402


REPO = Path(__file__).resolve().parents[2]
EVAL = REPO / "evals" / "demo-plugin" / "skills" / "acme-support-reply" / "eval.yaml"
CRASH_REASON = "local model worker crashed (signal SIGSEGV) while generating; restarted"


def workers() -> dict[int, tuple[int, str]]:
    """{pid: (ppid, command line)} of every live local-model worker on the machine."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            status = (entry / "status").read_text()
        except OSError:
            continue
        if "agentsproof.llm.local_worker" in cmdline:
            ppid = int(next(ln.split()[1] for ln in status.splitlines() if ln.startswith("PPid:")))
            found[int(entry.name)] = (ppid, cmdline)
    return found


def workers_of(parent: int) -> list[int]:
    """Workers started by ``parent``, even after they were re-parented (their argv names it)."""
    return [pid for pid, (_, cmd) in workers().items() if f"--parent-pid {parent} " in cmd + " "]


def wait_generating(parent: int, timeout: float = 120.0) -> int:
    """PID of a worker of ``parent`` caught in the middle of a call (process name ``apw:busy``)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        for pid in workers_of(parent):
            try:
                if Path(f"/proc/{pid}/comm").read_text().strip() == "apw:busy":
                    return pid
            except OSError:
                continue
        time.sleep(0.01)
    raise AssertionError(f"no worker of {parent} was seen generating: {workers()}")


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch):
    for var in ("AGENTSPROOF_LOCAL_MODEL", "AGENTSPROOF_LOCAL_N_CTX", "AGENTSPROOF_LOCAL_INSTANCES", ENV_FAULT,
                "AGENTSPROOF_MODEL", "AGENTSPROOF_JUDGE_MODEL", "AGENTSPROOF_PROVIDER_URL", "AGENTSPROOF_PROVIDER_KEY"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("AGENTSPROOF_PROVIDER_TYPE", "local")
    monkeypatch.setenv("AGENTSPROOF_LOCAL_MAX_TOKENS", "40")
    monkeypatch.setenv("AGENTSPROOF_LOCAL_THREADS", "1")
    monkeypatch.setenv("AGENTSPROOF_LOCAL_SEED", "11")
    local_pool.shutdown_all()
    yield
    local_pool.shutdown_all()


def _trials(report: Path) -> tuple[dict, list[dict]]:
    item = read_json(report)["items"][0]
    return item, item["with_arm"]["trials"] + item["without_arm"]["trials"]


def _expected_exit(item: dict) -> int:
    """What --ci exits with (executor/gate.py): 30 errored, 1 failed or passed on too few trials (UNPROVEN), else 0."""
    if item["status"] == "errored":
        return 30
    return 0 if item["passed"] and (item.get("stats") or {}).get("enough_data") is not False else 1


def test_a_worker_crash_mid_run_errors_only_its_trial(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Test hook: the worker's 2nd call kills the worker with SIGSEGV (its successor does not).
    monkeypatch.setenv(ENV_FAULT, "segv-on-call:2")
    out = tmp_path / "runs"
    code, stdout, stderr = run_cli(["eval", EVAL, "--provider", "local", "--trials", "3", "--ci", "--output", out])
    assert "Traceback" not in stderr, stderr
    report = out / "demo-plugin" / "acme-support-reply-eval.json"
    assert report.is_file(), (code, stdout, stderr)
    item, trials = _trials(report)
    errored = [t for t in trials if t["status"] == "errored"]
    assert len(trials) == 6 and len(errored) == 1, [(t["status"], t.get("error")) for t in trials]
    assert CRASH_REASON in errored[0]["error"] and "agentsproof doctor --provider local" in errored[0]["error"]
    assert all(t["status"] == "scored" for t in trials if t is not errored[0])
    assert code == _expected_exit(item), (code, item["status"], stdout, stderr)
    assert not workers_of(os.getpid())  # the CLI closed its client: the workers are gone


def test_kill_segv_of_a_worker_during_a_real_cli_run(tmp_path: Path) -> None:
    """What an operator does: ``kill -SEGV`` a worker found in /proc while `eval` runs."""
    out = tmp_path / "runs"
    cli = subprocess.Popen(
        [sys.executable, "-m", "agentsproof", "eval", str(EVAL), "--provider", "local", "--trials", "3", "--ci",
         "--output", str(out)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    killed: list[int] = []

    def killer() -> None:
        pid = wait_generating(cli.pid)
        os.kill(pid, signal.SIGSEGV)
        killed.append(pid)

    thread = threading.Thread(target=killer, daemon=True)
    thread.start()
    stdout, stderr = cli.communicate(timeout=300)
    thread.join(5)
    assert killed, "the worker was never killed"
    assert "Traceback" not in stderr, stderr
    item, trials = _trials(out / "demo-plugin" / "acme-support-reply-eval.json")
    errored = [t for t in trials if t["status"] == "errored"]
    assert len(trials) == 6 and len(errored) == 1, [(t["status"], t.get("error")) for t in trials]
    assert CRASH_REASON in errored[0]["error"]
    assert cli.returncode == _expected_exit(item), (cli.returncode, item["status"], stdout, stderr)
    assert killed[0] not in workers()
    assert not workers_of(cli.pid), workers()  # no orphan after the CLI exited


def test_ctrl_c_to_the_process_group_leaves_no_worker_and_no_worker_traceback(tmp_path: Path) -> None:
    cli = subprocess.Popen(
        [sys.executable, "-m", "agentsproof", "eval", str(EVAL), "--provider", "local", "--trials", "3",
         "--output", str(tmp_path / "runs")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
    )
    try:
        worker = wait_generating(cli.pid)
        os.killpg(cli.pid, signal.SIGINT)  # what a terminal's Ctrl-C does
        _, stderr = cli.communicate(timeout=30)
    finally:
        if cli.poll() is None:
            os.killpg(cli.pid, signal.SIGKILL)
            cli.wait()
    assert "local_worker" not in stderr and "llama_cpp" not in stderr, stderr
    deadline = time.monotonic() + 3
    while workers_of(cli.pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not workers_of(cli.pid), workers()
    assert worker not in workers()


def test_doctor_reports_a_crashing_build_in_one_line_with_the_fix(monkeypatch: pytest.MonkeyPatch) -> None:
    # Test hook: every worker raises SIGILL after loading the model, as a build for another CPU does.
    monkeypatch.setenv(ENV_FAULT, "ill-at-start")
    code, stdout, stderr = run_cli(["doctor", "--provider", "local"])
    assert code == 30, (stdout, stderr)
    assert "Traceback" not in stderr
    failed = [ln for ln in stdout.splitlines() if ln.startswith("call:")]
    assert len(failed) == 1, stdout
    assert failed[0].startswith("call: FAILED") and "local model worker crashed (signal SIGILL)" in failed[0]
    assert "does not run on this CPU" in failed[0]
    fix = stdout.splitlines()[stdout.splitlines().index(failed[0]) + 1]
    assert fix.startswith("fix: ") and 'CMAKE_ARGS="-DGGML_NATIVE=OFF' in fix and "README" in fix
    assert not workers_of(os.getpid())


def test_doctor_generates_a_token_in_a_worker() -> None:
    code, stdout, stderr = run_cli(["doctor", "--provider", "local"])
    assert code == 0, (stdout, stderr)
    assert "status: ok" in stdout and "reply: " in stdout
    assert not workers_of(os.getpid())
