"""The local provider's worker processes, for real: the installed llama.cpp runs here, a
worker killed with SIGSEGV fails only its own call and is restarted, repeated start-up
crashes stop with the fix, a timed-out call's worker is stopped, nothing is left behind.

Worker processes are found the way an operator would: a /proc scan for
``agentsproof.llm.local_worker`` command lines whose parent is this process.
"""

from __future__ import annotations

import asyncio
import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.local_model

from conftest import require_local_model  # noqa: E402

require_local_model()

from agentsproof.llm import local_pool  # noqa: E402
from agentsproof.llm.base import ChatRequest, LLMError  # noqa: E402
from agentsproof.llm.local import LocalClient, sampling_params  # noqa: E402
from agentsproof.llm.local_model import LocalSettings  # noqa: E402
from agentsproof.llm.local_worker import ENV_FAULT, encode_frame, read_frame  # noqa: E402


MODEL = "smollm2-135m-instruct"
LONG = "Write a very long story about a dragon who learns to bake bread, with many details."


def worker_processes(parent: int | None = None) -> dict[int, int]:
    """{pid: ppid} of live local-model workers (of ``parent`` only, when given)."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().split(b"\0")
            status = (entry / "status").read_text()
        except OSError:
            continue
        if b"agentsproof.llm.local_worker" not in cmdline:
            continue
        ppid = int(next(ln.split()[1] for ln in status.splitlines() if ln.startswith("PPid:")))
        if parent is None or ppid == parent:
            found[int(entry.name)] = ppid
    return found


def exited(pid: int, timeout: float = 5.0) -> bool:
    """Wait until the process has ended (its exit is visible to its parent)."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        return bool(select.select([fd], [], [], timeout)[0])
    finally:
        os.close(fd)


def comm(pid: int) -> str:
    """The process name; a worker shows its state in it (apw:loading, apw:idle, apw:busy)."""
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return ""


def wait_until(predicate, timeout: float = 10.0) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


@pytest.fixture(autouse=True)
def _clean(monkeypatch: pytest.MonkeyPatch):
    for var in ("AGENTSPROOF_LOCAL_MODEL", "AGENTSPROOF_LOCAL_N_CTX", "AGENTSPROOF_LOCAL_INSTANCES", ENV_FAULT):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("AGENTSPROOF_LOCAL_SEED", "7")
    monkeypatch.setenv("AGENTSPROOF_LOCAL_THREADS", "1")
    local_pool.shutdown_all()  # workers of earlier tests' clients
    yield
    local_pool.shutdown_all()
    assert wait_until(lambda: not worker_processes(os.getpid()), 5), worker_processes(os.getpid())


def _req(user: str, max_tokens: int = 8, **kw) -> ChatRequest:
    return ChatRequest(messages=[{"role": "user", "content": user}], model=MODEL, max_tokens=max_tokens, **kw)


def test_installed_llama_cpp_generates_in_a_worker_on_this_machine() -> None:
    """The CI check: the llama.cpp build runs on this CPU (a native-only build faults here)."""
    settings = LocalSettings.from_env()
    proc = subprocess.Popen(
        [sys.executable, "-m", "agentsproof.llm.local_worker", "--parent-pid", str(os.getpid())],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        init = {"model_path": str(settings.model_path), "n_ctx": 512, "threads": 1, "slot": 0, "spawn": 0}
        proc.stdin.write(encode_frame(init))
        proc.stdin.flush()
        ready = read_frame(proc.stdout)
        assert ready and ready["ok"] and ready["pid"] == proc.pid, (ready, proc.poll(), proc.stderr.read1())
        params = sampling_params(0.0, 5, 1)
        proc.stdin.write(encode_frame({"messages": [{"role": "user", "content": "Say hi."}], "params": params}))
        proc.stdin.flush()
        reply = read_frame(proc.stdout)
        assert reply and reply["ok"], reply
        assert 0 < reply["usage"]["completion_tokens"] <= 5 and reply["text"]
        proc.stdin.close()  # EOF ends the worker
        assert proc.wait(timeout=10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_the_harness_process_never_loads_llama_cpp() -> None:
    code = (
        "import asyncio, sys\n"
        "from agentsproof.llm.local import LocalClient\n"
        "from agentsproof.llm.base import ChatRequest\n"
        "async def main():\n"
        "    c = LocalClient.from_env()\n"
        "    r = await c.complete(ChatRequest(messages=[{'role': 'user', 'content': 'Hi'}], model='', max_tokens=2))\n"
        "    await c.aclose()\n"
        "    print(r.usage.completion_tokens, 'llama_cpp' in sys.modules, 'pydantic' in sys.modules)\n"
        "asyncio.run(main())\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    tokens, llama_loaded, _ = out.stdout.split()
    assert int(tokens) > 0 and llama_loaded == "False"


def test_the_worker_imports_none_of_the_harness() -> None:
    code = "import sys, agentsproof.llm.local_worker; print(' '.join(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    modules = set(out.stdout.split())
    assert {m for m in modules if m.startswith("agentsproof")} == {"agentsproof", "agentsproof.llm", "agentsproof.llm.local_worker"}
    assert not modules & {"pydantic", "numpy", "openai", "click", "jinja2", "llama_cpp"}


async def test_sigsegv_mid_call_fails_only_that_call_and_the_worker_restarts(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTSPROOF_LOCAL_INSTANCES", "2")
    client = LocalClient.from_env()
    try:
        await asyncio.gather(client.complete(_req("Hi", 1)), client.complete(_req("Hello", 1)))  # both workers up
        pids = sorted(client.worker_pids())
        assert sorted(worker_processes(os.getpid())) == pids and len(pids) == 2
        victim_req, other_req = _req(LONG, 160, temperature=0.0), _req(LONG, 48, temperature=0.0)
        calls = [asyncio.create_task(client.complete(victim_req)), asyncio.create_task(client.complete(other_req))]
        # both generating now (process name apw:busy until the reply is sent; each takes seconds)
        assert await asyncio.to_thread(wait_until, lambda: all(comm(p) == "apw:busy" for p in pids), 60)
        victim = pids[0]
        os.kill(victim, signal.SIGSEGV)
        results = await asyncio.gather(*calls, return_exceptions=True)
        errors = [r for r in results if isinstance(r, BaseException)]
        assert len(errors) == 1, results
        err = errors[0]
        assert isinstance(err, LLMError) and err.kind == "worker_crash" and not err.retryable
        assert "local model worker crashed (signal SIGSEGV) while generating; restarted" in str(err)
        assert "agentsproof doctor --provider local" in str(err)
        assert not any(isinstance(r, BaseException) for r in results if r is not err)
        assert victim not in worker_processes(os.getpid())
        # the next calls are served, by a new worker in the crashed one's slot
        again = await asyncio.gather(client.complete(_req("Hi", 2)), client.complete(_req("Yo", 2)))
        assert all(r.usage.completion_tokens > 0 for r in again)
        assert len(client.worker_pids()) == 2 and victim not in client.worker_pids()
        assert client._pool.crashes == 1 and client._pool.broken is None
    finally:
        await client.aclose()
    assert wait_until(lambda: not worker_processes(os.getpid()), 5)  # aclose ended them


async def test_a_worker_killed_while_idle_is_replaced_silently() -> None:
    client = LocalClient.from_env()
    try:
        await client.complete(_req("Hi", 1))
        (pid,) = client.worker_pids()
        os.kill(pid, signal.SIGKILL)
        assert exited(pid)
        resp = await client.complete(_req("Hi", 2))
        assert resp.usage.completion_tokens > 0 and client.worker_pids() != [pid]
    finally:
        await client.aclose()


async def test_workers_crashing_at_start_up_stop_after_the_bound_with_the_fix(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_FAULT, "segv-at-start")
    client = LocalClient.from_env()
    try:
        with pytest.raises(LLMError) as first:
            await client.complete(_req("Hi"))
        msg = str(first.value)
        assert first.value.kind == "worker_broken"
        assert "crashed (signal SIGSEGV) while starting" in msg
        assert f"{local_pool.MAX_START_CRASHES} workers in a row" in msg and "does not run on this CPU" in msg
        assert "GGML_NATIVE=OFF" in first.value.fix
        pool = client._pool
        assert pool.start_crashes == local_pool.MAX_START_CRASHES
        # every further call fails at once, without starting another worker
        with pytest.raises(LLMError, match="does not run on this CPU"):
            await client.complete(_req("Hi"))
        assert pool.start_crashes == local_pool.MAX_START_CRASHES and not worker_processes(os.getpid())
    finally:
        await client.aclose()


async def test_a_crash_below_the_bound_keeps_the_pool_serving(monkeypatch: pytest.MonkeyPatch) -> None:
    # The slot's first process faults in its first call (a start-up crash that counts
    # towards the bound); its successor serves, which resets the count.
    monkeypatch.setenv(ENV_FAULT, "segv-on-call:1")
    client = LocalClient.from_env()
    try:
        with pytest.raises(LLMError, match=r"crashed \(signal SIGSEGV\) while generating"):
            await client.complete(_req("Hi"))
        resp = await client.complete(_req("Hi", 2))
        assert resp.usage.completion_tokens > 0
        assert client._pool.start_crashes == 0  # reset by the served call
    finally:
        await client.aclose()


async def test_a_timed_out_call_stops_its_worker_and_the_pool_recovers() -> None:
    client = LocalClient.from_env()
    try:
        await client.complete(_req("Hi", 1))
        (pid,) = client.worker_pids()
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(client.complete(_req(LONG, 200, temperature=0.0)), 1.0)
        # the worker generating for nobody is stopped at once, not after 200 tokens
        assert wait_until(lambda: pid not in worker_processes(os.getpid()), 1.0)
        resp = await client.complete(_req("Hi", 2))
        assert resp.usage.completion_tokens > 0
        assert client.worker_pids() and pid not in client.worker_pids()
        assert client._pool.crashes == 0  # a stopped worker is not a crash
    finally:
        await client.aclose()


async def test_closing_while_a_worker_starts_leaves_no_process() -> None:
    client = LocalClient.from_env()
    call = asyncio.create_task(client.complete(_req("Hi", 2)))
    assert await asyncio.to_thread(wait_until, lambda: worker_processes(os.getpid()), 30)  # it is starting
    await client.aclose()
    with pytest.raises(LLMError, match="shut down"):
        await call
    assert wait_until(lambda: not worker_processes(os.getpid()), 5), worker_processes(os.getpid())


async def test_workers_ignore_sigint() -> None:
    client = LocalClient.from_env()
    try:
        await client.complete(_req("Hi", 1))
        (pid,) = client.worker_pids()
        assert comm(pid) == "apw:idle"
        os.kill(pid, signal.SIGINT)
        resp = await client.complete(_req("Hi", 2))
        assert resp.usage.completion_tokens > 0 and client.worker_pids() == [pid]
    finally:
        await client.aclose()


def test_workers_die_with_a_killed_harness() -> None:
    """SIGKILL leaves no clean-up to the harness: PR_SET_PDEATHSIG ends its workers."""
    code = (
        "import asyncio, os, signal\n"
        "from agentsproof.llm.local import LocalClient\n"
        "from agentsproof.llm.base import ChatRequest\n"
        "async def main():\n"
        "    c = LocalClient.from_env()\n"
        "    await c.complete(ChatRequest(messages=[{'role': 'user', 'content': 'Hi'}], model='', max_tokens=1))\n"
        "    print(*c.worker_pids(), flush=True)\n"
        "    os.kill(os.getpid(), signal.SIGKILL)\n"
        "asyncio.run(main())\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == -signal.SIGKILL, out.stderr
    pids = [int(p) for p in out.stdout.split()]
    assert pids
    assert wait_until(lambda: not set(pids) & set(worker_processes()), 5), worker_processes()
