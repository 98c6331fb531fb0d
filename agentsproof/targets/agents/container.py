"""The built-in agent CLIs (``claude-code``, ``codex``) inside a trial's container.

The seam is :func:`agentsproof.targets.agents.kit.run_cli`: with ``CliCall.environment``
set, the same command runs through the container instead of bubblewrap. How the CLI gets
into an arbitrary image without network at trial time: its installed package folder on the
host (the folder holding its ``node_modules``, e.g. ``.venv/codex-cli``) is mounted
read-only at the same path (:func:`cli_mounts`, read by the runner as the container starts),
and the native binary is run, not the Node wrapper: Codex's static musl ``codex`` binary,
Claude Code's ``claude.exe`` (glibc: Debian and Ubuntu images). The trial's hermetic
harness (home, config with the staged skills, tmp) is copied into the container at its host
path once per trial, so every path the target wrote into the CLI's arguments and
environment holds inside too; the workspace's host path is replaced by the container's
workdir. The CLI's JSON stream is copied back out to the harness after each turn: carried
out by the turn's own exec with the workdir when the image can (``keep``), so neither the
stream nor the runner's copy of the workdir after the last turn asks the engine again.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from agentsproof.core.procgroup import LINE_CHARS, STDERR_LINES, Outcome
from agentsproof.core.safepath import write_file
from agentsproof.targets.base import NativeLauncher

if TYPE_CHECKING:
    from agentsproof.model.environment import TrialEnvironment

CONTAINER_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
MAX_STREAM_BYTES = 64 * 1024 * 1024


def cli_mounts(program: str) -> list[Path]:
    """Host folders to mount read-only (same path) for ``program``: its package folder (the parent of its ``node_modules``)."""
    real = Path(os.path.realpath(program))
    for parent in real.parents:
        if parent.name == "node_modules":
            return [parent.parent]
    return [real.parent]


def native_program(program: str, launchers: Sequence[NativeLauncher] = ()) -> str:
    """The binary to run in a container: the native binary one of the target kind's
    ``launchers`` (its registry entry's ``native_launchers``) finds beside the Node wrapper
    ``program`` resolves to (Codex's ``codex.js``, codex-acp's ``codex-acp.js``), else
    ``program`` as it resolves."""
    real = Path(os.path.realpath(program))
    for launcher in launchers:
        if launcher.wrapper == real.name:
            found = launcher.binary(real)
            if found is not None:
                return str(found)
    return str(real)


def inside(text: str, host_ws: str, workdir: str) -> str:
    """``text`` with the workspace's host path ``host_ws`` replaced by the container's ``workdir``."""
    return workdir + text[len(host_ws) :] if text == host_ws or text.startswith(host_ws + "/") else text


def container_env(env: dict[str, str], host_ws: str, workdir: str) -> dict[str, str]:
    """An agent's environment as the container sees it: workspace paths mapped, the image's PATH."""
    return {**{k: inside(v, host_ws, workdir) for k, v in env.items()}, "PATH": CONTAINER_PATH}


async def run_in_container(
    box: TrialEnvironment,
    argv: list[str],
    *,
    workspace: Path,
    harness_root: Path,
    stream_file: Path,
    env: dict[str, str],
    timeout: float,
    stdin_text: str | None,
    launchers: Sequence[NativeLauncher] = (),
) -> Outcome:
    """One turn of the CLI in ``box`` (see the module docstring; the fields of
    :class:`agentsproof.targets.agents.kit.CliCall`); stdout is in ``stream_file``."""
    await box.copy_in_once(harness_root, str(harness_root))  # a later turn keeps the session's state
    host_ws = str(workspace)
    argv = [native_program(argv[0], launchers), *(inside(a, host_ws, box.workdir) for a in argv[1:])]
    env = container_env(env, host_ws, box.workdir)
    stream = str(stream_file)
    wrapped = ["/bin/sh", "-c", 'out=$1; shift; exec "$@" > "$out"', "sh", stream, *argv]
    stdin = stdin_text.encode("utf-8") if stdin_text is not None else b""
    # the turn's exec carries the stream (and the workdir, for the runner) back out when the image can: no copy out after it
    res = await box.exec(wrapped, env=env, timeout=timeout, stdin=stdin, keep=(stream,))
    data = await box.read_file(stream, cap_bytes=MAX_STREAM_BYTES) if not res.limit else None
    write_file(stream_file.parent, stream_file.name, data or b"")
    lines = [ln[:LINE_CHARS] for ln in res.stderr.decode("utf-8", "replace").splitlines()]
    stderr: deque[tuple[float, str]] = deque(((res.latency_s, ln) for ln in lines), maxlen=STDERR_LINES)
    if res.limit:
        from agentsproof.core.errors import TargetError

        raise TargetError(f"the trial's container hit a limit: {res.limit}", kind="limit")
    return Outcome(res.returncode, b"", False, stderr, res.latency_s, res.timed_out, [])
