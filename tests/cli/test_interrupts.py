"""SIGINT and SIGTERM mid-run: the real CLI in a subprocess against the scripted server.

A run interrupted after some trials finished must stop new calls, write an incomplete
report holding every finished trial (items that never started say "not run"), exit 30
quickly, and leave no process behind.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import SECRET_KEY, Rule, make_plugin, simple_eval

# A lookahead is not RE2 syntax: the check runs in the time-limited Python-re helper
# process, so the orphan check below covers that helper too.
GRADERS = [{"type": "deterministic", "checks": {"mustContain": ["hello"], "regexMatch": ["hel(?=lo)"]}}]


def _own_processes_with(marker: str) -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace")
        except OSError:
            continue
        if marker in cmd:
            pids.append(int(entry.name))
    return pids


def _start(tmp_path: Path, srv, output: Path) -> subprocess.Popen:
    plugin = make_plugin(
        tmp_path,
        skills={
            "alpha": {"eval": simple_eval(GRADERS, trials=2, timeout=120)},
            "beta": {"eval": simple_eval(GRADERS, trials=2, timeout=120)},
        },
    )
    env = {
        **os.environ,
        "AGENTSPROOF_PROVIDER_TYPE": "openai",
        "AGENTSPROOF_PROVIDER_URL": srv.base_url,
        "AGENTSPROOF_PROVIDER_KEY": SECRET_KEY,
        "AGENTSPROOF_RETRY_BASE_DELAY": "0",
        "AGENTSPROOF_TEST_MARKER": str(tmp_path),
    }
    env.pop("CI", None)
    return subprocess.Popen(
        [sys.executable, "-m", "agentsproof", "eval-all", str(plugin), "--model", "m", "--parallel", "1", "--output", str(output)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
    )


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_interrupt_keeps_finished_trials(sig, scripted_server, tmp_path):
    # The first two trial calls answer at once; the third hangs until the run is interrupted.
    scripted_server.add(Rule(reply="hello there", times=2), Rule(reply="hello later", delay=60))
    output = tmp_path / "runs"
    proc = _start(tmp_path, scripted_server, output)
    try:
        deadline = time.monotonic() + 60
        while len(scripted_server.requests) < 3:
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the run never reached its third call"
            time.sleep(0.05)
        time.sleep(0.2)  # let the finished trials be graded
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=30)  # a hang guard: a run that does not stop fails here
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 30, (proc.returncode, out, err)
    assert "Traceback" not in err
    assert signal.Signals(sig).name in err
    report = json.loads((output / "demo-plugin" / "eval-all-summary.json").read_text())
    assert report["incomplete"] is True and report["verdict"] == "INCOMPLETE"
    assert signal.Signals(sig).name in report["incomplete_reason"]
    items = {it["name"]: it for it in report["items"]}
    alpha = items["alpha"]
    finished = [t for arm in ("with_arm", "without_arm") for t in alpha[arm]["trials"]]
    assert len(finished) == 2 and all(t["status"] == "scored" for t in finished)
    assert alpha["status"] == "incomplete"
    beta = items["beta"]
    assert beta["status"] == "incomplete" and beta["status_reason"].startswith("not run")
    assert not beta["with_arm"]["trials"] and not beta["without_arm"]["trials"]
    assert report["overall"]["not_run"] == 1
    html = (output / "demo-plugin" / "demo-plugin-eval.html").read_text()
    assert "NOT RUN" in html
    # No fourth call was made after the signal, and no helper process outlived the CLI.
    assert len(scripted_server.requests) == 3
    time.sleep(0.2)
    assert not _own_processes_with("for line in sys.stdin"), "the regex helper outlived the CLI"



def test_a_second_interrupt_takes_the_one_interrupt_path():
    # The first signal stops the run (the runner is interrupted, the handler stays); a second
    # one before the run has finished raises KeyboardInterrupt, which the CLI turns into
    # "error: interrupted" and exit 30 (as an interrupt outside a run), not os._exit; the
    # previous handler is back afterwards.
    import asyncio

    from agentsproof.executor.runner import DualArmRunner, Scheduling
    from agentsproof.executor.session import interruptible

    before = signal.getsignal(signal.SIGINT)
    seen: list[str] = []

    async def main() -> None:
        runner = DualArmRunner({}, Scheduling(), None)
        with interruptible(runner):
            os.kill(os.getpid(), signal.SIGINT)
            while not runner.state.aborted:
                await asyncio.sleep(0.01)
            seen.append(runner.state.abort_reason or "")
            os.kill(os.getpid(), signal.SIGINT)
            while True:  # the run still stopping
                await asyncio.sleep(0.01)

    with pytest.raises(KeyboardInterrupt):
        asyncio.run(main())
    assert seen and seen[0].startswith("interrupted by SIGINT")
    assert signal.getsignal(signal.SIGINT) is before


def test_the_cli_turns_a_keyboard_interrupt_into_exit_30(monkeypatch):
    from conftest import run_cli

    from agentsproof.commands import run as commands_run

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(commands_run, "run_eval", interrupted)
    code, out, err = run_cli(["eval", "anything.yaml", "--model", "m"])
    assert code == 30, (code, out, err)
    assert err.strip() == "error: interrupted" and "Traceback" not in err
