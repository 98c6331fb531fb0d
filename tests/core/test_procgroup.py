"""core/procgroup: a command in its own process group; nothing it started outlives it (a
leftover, a timed-out group, a process in a session of its own holding the output), and
what it printed is kept within bounds. Real processes; the waits are hang guards only."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

import pytest

from agentsproof.core import procgroup
from agentsproof.core.errors import TargetError
from agentsproof.core.procgroup import group_alive, run_group, stop_group

ENV = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}


def _sh(script: str) -> list[str]:
    return ["/bin/sh", "-c", script]


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read().rsplit(b")", 1)[1].split()[0] not in (b"Z", b"X")
    except OSError:
        return False


async def test_exit_code_stdout_stdin_and_stderr(tmp_path: Path) -> None:
    out = await run_group(_sh("cat; echo err-line >&2; pwd; exit 3"), cwd=tmp_path, env=ENV, stdin_text="from stdin\n", timeout=60)
    assert out.returncode == 3 and not out.timed_out and not out.stdout_cut
    assert out.stdout == f"from stdin\n{tmp_path}\n".encode()
    assert [line for _, line in out.stderr] == ["err-line"]
    assert out.stdout_bytes == len(out.stdout) and out.notes == []


async def test_stderr_keeps_the_last_lines_each_cut(tmp_path: Path) -> None:
    script = f"i=0; while [ $i -lt 100 ]; do echo line-$i >&2; i=$((i+1)); done; printf '%0{procgroup.LINE_CHARS + 50}d\\n' 0 >&2"
    out = await run_group(_sh(script), cwd=tmp_path, env=ENV, stdin_text=None, timeout=60)
    lines = [line for _, line in out.stderr]
    assert len(lines) == procgroup.STDERR_LINES
    assert lines[0] == f"line-{100 - procgroup.STDERR_LINES + 1}" and lines[-1] == "0" * procgroup.LINE_CHARS


async def test_stdout_is_capped_with_its_tail_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(procgroup, "MAX_OUTPUT_BYTES", 1000)
    script = "i=0; while [ $i -lt 500 ]; do echo line-$i; i=$((i+1)); done; echo 'score: 0.75'"
    out = await run_group(_sh(script), cwd=tmp_path, env=ENV, stdin_text=None, timeout=60, keep_tail=20)
    assert out.stdout_cut and len(out.stdout) == 1000 and out.stdout.startswith(b"line-0\nline-1\n")
    assert out.stdout_tail == b"ine-499\nscore: 0.75\n"  # the last 20 bytes
    assert out.stdout_bytes > 1000
    short = await run_group(_sh("echo short"), cwd=tmp_path, env=ENV, stdin_text=None, timeout=60, keep_tail=20)
    assert short.stdout == b"short\n" and short.stdout_tail == b"" and not short.stdout_cut


async def test_a_timeout_stops_the_whole_group(tmp_path: Path) -> None:
    pidfile = tmp_path / "child.pid"
    out = await run_group(_sh(f"sleep 300 & echo $! > {pidfile}; wait"), cwd=tmp_path, env=ENV, stdin_text=None, timeout=3)
    assert out.timed_out
    child = int(pidfile.read_text())
    assert not _alive(child)


async def test_a_leftover_process_is_stopped_and_said(tmp_path: Path) -> None:
    pidfile = tmp_path / "child.pid"
    out = await run_group(_sh(f"sleep 300 >/dev/null 2>&1 & echo $! > {pidfile}; echo done"), cwd=tmp_path, env=ENV, stdin_text=None, timeout=60)
    assert out.returncode == 0 and out.stdout == b"done\n" and not out.timed_out
    assert out.notes == ["the agent left processes running after it exited; they were stopped"]
    assert not _alive(int(pidfile.read_text()))


async def test_a_process_in_its_own_session_holding_stdout_is_found_by_its_pipe(tmp_path: Path) -> None:
    pidfile = tmp_path / "escaped.pid"
    script = (f"setsid sh -c 'echo $$ > {pidfile}.tmp; mv {pidfile}.tmp {pidfile}; echo from-escaped; exec sleep 300' & "
              f"while [ ! -s {pidfile} ]; do sleep 0.05; done; echo parent-done")
    out = await run_group(_sh(script), cwd=tmp_path, env=ENV, stdin_text=None, timeout=60)
    assert b"parent-done" in out.stdout and b"from-escaped" in out.stdout  # what it printed is kept
    assert any("in a session of their own still held its output" in n for n in out.notes), out.notes
    assert not _alive(int(pidfile.read_text()))


async def test_a_command_that_cannot_start_is_a_target_error(tmp_path: Path) -> None:
    with pytest.raises(TargetError, match="cannot run '/no/such/agent'"):
        await run_group(["/no/such/agent"], cwd=tmp_path, env=ENV, stdin_text=None, timeout=60)


async def test_stop_group_and_group_alive(tmp_path: Path) -> None:
    import subprocess

    code = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); print('ready', flush=True); time.sleep(300)"
    proc = subprocess.Popen([sys.executable, "-c", code], start_new_session=True, stdout=subprocess.PIPE)
    try:
        assert proc.stdout is not None and proc.stdout.readline() == b"ready\n"  # SIGTERM is ignored from here on
        assert group_alive(proc.pid)
        # SIGTERM is ignored: SIGKILL after the grace
        assert await stop_group(proc.pid, grace=0.2) is True
        proc.wait(timeout=30)
        assert proc.returncode == -signal.SIGKILL
        assert not group_alive(proc.pid)
        assert await stop_group(proc.pid) is False  # nothing left to stop
    finally:
        if proc.poll() is None:
            proc.kill()


async def test_the_input_is_there_when_the_command_starts_even_with_the_loop_held(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The prompt is in the command's stdin before it starts: a CLI that gives up when no
    input arrives within seconds (Claude Code) never sees an empty pipe, however long the
    loop is held. Here the loop is held, right after the spawn, until the command has looked
    at its stdin without waiting (select with no timeout); a prompt fed later by a loop task
    would not be there yet. A large input (past the pipe's size) still arrives whole."""
    import asyncio
    import time

    verdict = tmp_path / "verdict"
    look = f"import select, sys, pathlib; r = select.select([sys.stdin], [], [], 0)[0]; pathlib.Path({str(verdict)!r}).write_text('ready' if r else 'empty'); sys.stdout.write(sys.stdin.read())"
    real = asyncio.create_subprocess_exec

    async def spawn_then_hold_the_loop(*args, **kwargs):  # type: ignore[no-untyped-def]
        proc = await real(*args, **kwargs)
        deadline = time.monotonic() + 60  # a hang guard, not a timing
        while not verdict.exists() and time.monotonic() < deadline:
            time.sleep(0.01)  # holds the loop, as a blocking call in a target would
        return proc

    monkeypatch.setattr(asyncio, "create_subprocess_exec", spawn_then_hold_the_loop)
    for text in ("the prompt\n", "x" * 3_000_000):
        verdict.unlink(missing_ok=True)
        out = await run_group([sys.executable, "-c", look], cwd=tmp_path, env=ENV, stdin_text=text, timeout=120)
        assert verdict.read_text() == "ready"
        assert out.returncode == 0 and out.stdout_bytes == len(text)
