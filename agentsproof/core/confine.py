"""Every program an eval file names runs confined: script graders, promptfoo's ``python`` and
``javascript`` assertions, transforms and provider programs.

They get the command target's sandbox (:mod:`agentsproof.isolation.sandbox`): bubblewrap with
the whole file system read-only, a private empty ``/tmp`` and ``/run``, no network but its own
loopback, its own processes; writable are only the folders it is given (its workspace, the
folder holding the answer file). The folders it must read that live under the masked ``/tmp``
(the eval's folder, the program file) are mounted back read-only. So such a program reads the
project but writes nothing outside its own workspace.

``AGENTSPROOF_UNCONFINED_PROGRAMS=1`` runs them unconfined (said once), for a machine without
bubblewrap (macOS); without it and without a working ``bwrap`` the program does not run: the
grader or trial is errored with the reason.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

OPT_OUT = "AGENTSPROOF_UNCONFINED_PROGRAMS"
FALLBACK_BWRAP = "/usr/bin/bwrap"
MASKED = (Path("/tmp"), Path("/run"))
PROBE_TIMEOUT_S = 15.0

_lock = threading.Lock()
_found: list[tuple[str, bool] | str] = []


if TYPE_CHECKING:
    from agentsproof.core.procgroup import Outcome


def base_flags(unshare_pid: bool) -> list[str]:
    """bubblewrap's flags for a confined program and for a command target's sandbox
    (:mod:`agentsproof.isolation.sandbox` uses this list): read-only root, fresh /dev, /tmp and
    /run, no network, no IPC, its own PIDs when the kernel allows."""
    proc = ["--proc", "/proc"] if unshare_pid else ["--ro-bind", "/proc", "/proc"]
    return [
        "--ro-bind",
        "/",
        "/",
        "--dev",
        "/dev",
        *proc,
        "--tmpfs",
        "/tmp",
        "--tmpfs",
        "/run",
        "--unshare-net",
        "--unshare-ipc",
        *(["--unshare-pid"] if unshare_pid else []),
        "--die-with-parent",
    ]


def unconfined() -> bool:
    """True when the user asked for eval-file programs to run unconfined."""
    return os.environ.get(OPT_OUT, "").strip().lower() in ("1", "true", "yes", "on")


def _probe() -> tuple[str, bool] | str:
    path = shutil.which("bwrap") or (FALLBACK_BWRAP if os.access(FALLBACK_BWRAP, os.X_OK) else None)
    if path is None:
        return "bubblewrap ('bwrap') is not installed"
    reason = "it did not start"
    for unshare_pid in (True, False):
        try:
            done = subprocess.run([path, *base_flags(unshare_pid), "--", "true"], stdin=subprocess.DEVNULL, capture_output=True, timeout=PROBE_TIMEOUT_S)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return f"{path} cannot start: {type(exc).__name__}: {exc}"
        if done.returncode == 0:
            return (path, unshare_pid)
        lines = done.stderr.decode("utf-8", "replace").strip().splitlines()
        reason = lines[-1][:200] if lines else f"exit code {done.returncode}"
    return f"{path} cannot start a sandbox here: {reason}"


def bwrap() -> tuple[str, bool] | str:
    """(bwrap's path, whether it gets its own PID namespace), probed once; or why it cannot run (blocking: call in a thread)."""
    with _lock:
        if not _found:
            _found.append(_probe())
        return _found[0]


PROJECT_MARKERS = (".git", ".agentv", ".agentsproof")


def project_of(folder: Path) -> Path:
    """The project a folder belongs to: the nearest folder upward holding ``.git``, ``.agentv/`` or
    ``.agentsproof/`` (else the folder itself): what a confined program may read under a masked /tmp."""
    start = Path(os.path.abspath(folder))
    for candidate in (start, *start.parents):
        if any((candidate / m).exists() for m in PROJECT_MARKERS):
            return candidate
    return start


def _under_masked(p: Path) -> bool:
    return any(p != m and p.is_relative_to(m) for m in MASKED)


def _visible(paths: list[Path], writable: list[Path]) -> list[str]:
    """The read-only mounts that bring back what the program must read under the masked /tmp and /run."""
    out: list[str] = []
    for c in sorted({Path(os.path.abspath(p)) for p in paths}, key=lambda p: len(p.parts)):
        if not _under_masked(c) or not c.exists():
            continue
        if any(w.is_relative_to(c) for w in writable):  # would show the writable folders' neighbours: their own binds do
            continue
        if str(c) not in out and not any(c.is_relative_to(Path(o)) for o in out):
            out.append(str(c))
    return out


def confined_argv(argv: list[str], *, cwd: Path, writable: list[Path], readable: list[Path]) -> list[str]:
    """``argv`` wrapped in bubblewrap: read-only everywhere, ``writable`` (``cwd`` among them)
    read-write, ``readable`` (and the absolute paths ``argv`` names, and the running Python)
    mounted back read-only where /tmp or /run hide them. TargetError when no sandbox can start
    and the user has not opted out (then ``argv`` is returned as it is)."""
    from agentsproof.core.errors import TargetError

    program = argv[0] if argv else ""
    found_program = os.path.isfile(program) if "/" in program else shutil.which(program) is not None
    if "/" in program and not os.path.isabs(program):
        found_program = (cwd / program).is_file()
    if not found_program:
        raise TargetError(f"cannot run {program!r}: No such file or directory")
    if unconfined():
        from agentsproof.core.notice import note_once

        note_once(f"{OPT_OUT} is set: the programs eval files name (scripts, assertions, transforms, providers) run unconfined", key=("unconfined",))
        return argv
    found = bwrap()
    if isinstance(found, str):
        raise TargetError(f"this program runs confined and {found} (install bubblewrap, or set {OPT_OUT}=1 to run eval-file programs unconfined)")
    path, unshare_pid = found
    named = [Path(a) for a in argv if os.path.isabs(a) and os.path.exists(a)]
    runtime = [Path(sys.prefix), Path(sys.base_prefix), Path(sys.exec_prefix)]
    resolved = []
    for p in named:
        try:
            resolved.append(p.resolve())
        except OSError:
            continue
    rw = [Path(os.path.abspath(w)) for w in writable]
    out = [path, *base_flags(unshare_pid)]
    for mount in _visible([*runtime, *named, *resolved, *readable], rw):
        out += ["--ro-bind", mount, mount]
    for w in rw:
        out += ["--bind", str(w), str(w)]
    return [*out, "--chdir", str(cwd), "--", *argv]


async def run_in_scratch(
    argv: list[str], *, prefix: str, readable: list[Path], stdin_text: str | None, timeout: float, env: Callable[[Path], dict[str, str]] | None = None
) -> Outcome:
    """``argv`` run confined in a fresh empty folder of its own (its cwd and the one place it
    may write; removed after, off the loop), ``stdin_text`` on its stdin. ``env`` gives its
    environment from that folder (default: ours). TargetError when bubblewrap cannot start."""
    import asyncio
    import tempfile

    from agentsproof.core.procgroup import run_group
    from agentsproof.core.rmtree import remove_tree

    await asyncio.to_thread(bwrap)
    tmp = Path(await asyncio.to_thread(tempfile.mkdtemp, prefix=prefix))
    try:
        wrapped = confined_argv(argv, cwd=tmp, writable=[tmp], readable=readable)
        return await run_group(wrapped, cwd=tmp, env=env(tmp) if env else dict(os.environ), stdin_text=stdin_text, timeout=timeout)
    finally:
        await asyncio.to_thread(remove_tree, tmp)


def failure_line(run: Outcome) -> str:
    """What a program that failed said last on stderr (clipped), else its exit code."""
    return run.stderr[-1][1].strip()[:300] if run.stderr else f"exit code {run.returncode}"


async def transform_answer(argv: list[str], answer: str, *, readable: list[Path], timeout: float) -> str:
    """An answer as a transform program (``EvalItem.transform``) returns it, run confined in a fresh empty
    folder: ``{"output": answer}`` on stdin, ``{"result": …}`` on stdout (text as it is, any other value as
    JSON). TargetError with its reason when it fails: the trial is errored, never graded on the raw answer."""
    import json

    from agentsproof.core.errors import TargetError

    run = await run_in_scratch(argv, prefix="agentsproof-transform-", readable=readable, stdin_text=json.dumps({"output": answer}), timeout=timeout)
    if run.timed_out:
        raise TargetError(f"the output transform timed out after {timeout:g} s")
    if run.returncode != 0:
        raise TargetError(f"the output transform failed: {failure_line(run)}")
    try:
        result = json.loads(run.stdout.decode("utf-8", "replace"))["result"]
    except (ValueError, KeyError, TypeError):
        raise TargetError("the output transform printed no result") from None
    return result if isinstance(result, str) else json.dumps(result)
