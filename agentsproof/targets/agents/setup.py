"""Running an item's set-up commands (:mod:`agentsproof.model.setup`) around an agent trial.

Each command runs under bubblewrap as a command target does (:mod:`agentsproof.isolation.sandbox`):
the whole file system read-only, the eval's project visible (read-only) even under the
masked ``/tmp``, no network, the other trials' workspaces hidden, and the trial's own
workspace read-write — at its own path, or at ``mount_at`` (agentv's ``workdir``, so that
``../scripts/x.sh`` from it resolves in the project as in agentv). Without bubblewrap a
set-up command does not run and the trial errors, saying why.

What it prints (stdout and stderr, the last lines) goes into the trial log, with every
registered secret masked. A ``before`` command that fails (non-zero exit, timeout, cannot
start) errors the trial with the reason; an ``after`` one is a note.
"""

from __future__ import annotations

import dataclasses
import json
import os
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING

from agentsproof.core.bun import runtime_env
from agentsproof.core.procgroup import run_group
from agentsproof.core.scrub import clip, scrub
from agentsproof.core.units import seconds
from agentsproof.model.results import LogEvent
from agentsproof.model.setup import SetupCommand

if TYPE_CHECKING:
    from agentsproof.model.results import TrialResult
    from agentsproof.targets.base import TrialInput

MAX_LOG_LINES = 40
LINE_CHARS = 400
_VARS = ("workspace_path", "test_id", "eval_run_id", "case_input", "case_metadata")


def _fill(arg: str, values: dict[str, str]) -> str:
    import re

    return re.sub(r"\{\{\s*(\w+)\s*\}\}", lambda m: values.get(m.group(1), m.group(0)), arg)


def _stdin(cmd: SetupCommand, values: dict[str, str]) -> str | None:
    if cmd.stdin == "workspace":
        return json.dumps({k: values.get(k) or None for k in _VARS})
    if cmd.stdin == "environment":
        return json.dumps({"environment": {"type": "host", "workdir": values["workspace_path"]}}, indent=2)
    if cmd.stdin == "extension":
        hook = cmd.label.rsplit(":", 1)[-1]
        return json.dumps(
            {
                "hook_name": hook,
                "workspace_path": values["workspace_path"],
                "test_id": values["test_id"],
                "eval_run_id": values["eval_run_id"],
                "eval_dir": cmd.eval_dir,
                "case_input": values["case_input"] or None,
            }
        )
    return None


def _bwrap_argv(cmd: SetupCommand, argv: list[str], workspace: Path) -> list[str] | str:
    """The command line under bubblewrap, or why it cannot run confined."""
    from agentsproof.core.errors import InputError
    from agentsproof.isolation.sandbox import MASKED, _base_flags, find_bwrap, runtime_paths
    from agentsproof.isolation.workspace import covered_root

    try:
        bw = find_bwrap(cmd.label, cmd.label)
    except InputError as err:
        return err.message
    root = covered_root(workspace)
    out = [bw.path, *_base_flags(bw.unshare_pid)]
    project = Path(cmd.project)
    mounted = runtime_paths([*argv, cmd.cwd], root)
    if any(project != Path(m) and project.is_relative_to(m) for m in MASKED) or str(project) in MASKED:
        mounted = [str(project), *[m for m in mounted if not Path(m).is_relative_to(project)]]
    for path in mounted:
        out += ["--ro-bind", path, path]
    if root != Path("/"):
        out += ["--tmpfs", str(root)]
    seen = cmd.mount_at or str(workspace)
    out += ["--bind", str(workspace), seen, "--chdir", cmd.cwd, "--", *argv]
    return out


async def run_setup(
    commands: tuple[SetupCommand, ...],
    when: str,
    *,
    workspace: Path,
    test_id: str,
    run_id: str,
    case_input: str,
    log: list[LogEvent],
    t0: float,
) -> str | None:
    """Run the ``when`` (``before``/``after``) commands in order; the reason the trial errors
    (a failed ``before`` command), else None. Their output goes into ``log``."""
    for cmd in (c for c in commands if c.when == when):
        ws = workspace.resolve()
        seen = cmd.mount_at if cmd.mount_at and Path(cmd.mount_at).is_dir() else str(ws)
        cmd = _at(cmd, seen, ws)
        values = {"workspace_path": seen, "test_id": cmd.test_id or test_id, "eval_run_id": run_id, "case_input": case_input, "case_metadata": ""}
        argv = [_fill(a, values) for a in cmd.argv]
        cmd = dataclasses.replace(cmd, cwd=os.path.normpath(_fill(cmd.cwd, values)))
        env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTSPROOF_")}
        env.update(dict(cmd.env))
        env.update(AGENTV_ENVIRONMENT_WORKDIR=seen, AGENTV_WORKSPACE_PATH=seen, HOME=seen)
        env = runtime_env(env)  # a hook that runs `bun x.ts` finds bun and our agentv module
        wrapped = _bwrap_argv(cmd, argv, ws)
        stamp = time.perf_counter() - t0
        if isinstance(wrapped, str):
            reason = f"{cmd.label}: cannot run it confined: {wrapped}"
            log.append(LogEvent(t=stamp, role="error", text=reason))
            if cmd.fatal:
                return reason
            continue
        shown = " ".join(a if len(a) <= 120 else "<script>" for a in argv)
        log.append(LogEvent(t=stamp, role="info", text=scrub(f"{cmd.label}: running {shown} in {cmd.cwd}")))
        try:
            out = await run_group(wrapped, cwd=ws, env=env, stdin_text=_stdin(cmd, values), timeout=cmd.timeout)
        except OSError as exc:
            reason = f"{cmd.label}: cannot start bubblewrap: {exc.strerror or exc}"
        else:
            lines = out.stdout.decode("utf-8", "replace").splitlines()[-MAX_LOG_LINES:] + [line for _, line in list(out.stderr)[-MAX_LOG_LINES:]]
            for line in lines:
                log.append(LogEvent(t=time.perf_counter() - t0, role="info", text=clip(f"{cmd.label}: {line}", LINE_CHARS)))
            if out.timed_out:
                reason = f"{cmd.label} timed out after {seconds(cmd.timeout)}"
            elif out.returncode != 0:
                tail = next((ln for ln in reversed(lines) if ln.strip()), "")
                reason = f"{cmd.label} ({shown[:200]}) exited with code {out.returncode}" + (f": {tail.strip()}" if tail else "")
            else:
                continue
        reason = clip(reason, 600)
        log.append(LogEvent(t=time.perf_counter() - t0, role="error" if cmd.fatal else "info", text=reason))
        if cmd.fatal:
            return reason
    return None


def _at(cmd: SetupCommand, seen: str, workspace: Path) -> SetupCommand:
    """The command with its folder fixed for this trial: a ``mount_at`` that does not exist
    is dropped (the workspace is seen at its own path, the cwd follows it)."""
    import dataclasses

    if cmd.mount_at and seen != cmd.mount_at:
        cwd = cmd.cwd
        if Path(cwd).is_relative_to(cmd.mount_at):
            cwd = str(workspace / Path(cwd).relative_to(cmd.mount_at))
        return dataclasses.replace(cmd, mount_at=None, cwd=cwd)
    return cmd


async def around(trial: TrialInput, folder: Path, log: list[LogEvent], t0: float, run: Callable[[], Awaitable[TrialResult]]) -> TrialResult:
    """``run()`` (the trial, graded) with the item's ``before`` commands first (one that fails:
    the trial errored, with its reason) and its ``after`` commands last (their output in its log);
    just ``run()`` for an item without set-up."""
    from agentsproof.core.phases import phase
    from agentsproof.model.results import TrialResult

    item = trial.item
    if not item.setup:
        return await run()
    case_input = item.case_at(trial.index).prompt
    with phase("setup"):
        reason = await run_setup(item.setup, "before", workspace=folder, test_id=item.task_name, run_id=item.id, case_input=case_input, log=log, t0=t0)
    if reason is not None:
        return TrialResult(index=trial.index, arm=trial.arm, status="errored", error=reason, latency_s=time.perf_counter() - t0, log=log)
    result = await run()
    with phase("setup"):
        await run_setup(item.setup, "after", workspace=folder, test_id=item.task_name, run_id=item.id, case_input=case_input, log=result.log, t0=t0)
    return result
