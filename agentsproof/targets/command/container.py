"""The command target inside a trial's container (the item has an ``environment:``).

The same command line, placeholders and answer rules as on the host
(:mod:`agentsproof.targets.command.target`), with container paths: ``{workspace}`` and
``AGENTSPROOF_WORKSPACE`` are the container's workdir, ``{skill_file}`` the skill installed
below it (the runner copied the host workspace, skill included, in before the agent
starts). The command's environment is the image's own plus the target's ``env`` and the
``AGENTSPROOF_*`` variables (never the host's: its PATH and HOME mean nothing in the
image). The trace goes to ``/var/tmp/agentsproof/trace.jsonl`` inside (or ``trace_file`` in the
workdir); it and the answer file are read out of the container before the runner copies the
workdir back. The command's exec carries the workdir and the trace out as it ends
(``keep``: :attr:`agentsproof.isolation.container.Container.kept`), so those reads and the
runner's copy ask the engine nothing more when the image can. The container replaces the bubblewrap sandbox: ``sandbox`` is not used there.
"""

from __future__ import annotations

import re
import tempfile
from collections import deque
from collections.abc import Callable
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from agentsproof.core.errors import TargetError
from agentsproof.core.procgroup import LINE_CHARS, MAX_OUTPUT_BYTES, STDERR_LINES, Outcome
from agentsproof.core.rmtree import remove_tree
from agentsproof.core.safepath import write_file

if TYPE_CHECKING:
    from agentsproof.model.environment import ExecResult
    from agentsproof.targets.base import TrialInput, TrialRecord

TRACE_IN_CONTAINER = "/var/tmp/agentsproof/trace.jsonl"
TRACE_CAP = 16 * 1024 * 1024
TRACE_MARK = b"@@agentsproof-trace-written@@"
WRAPPER = [
    "/bin/sh",
    "-c",
    'mkdir -p "${AGENTSPROOF_TRACE_FILE%/*}" 2>/dev/null; "$@"; rc=$?; [ -s "$AGENTSPROOF_TRACE_FILE" ] && printf "\\n%s\\n" "'
    + TRACE_MARK.decode()
    + '" >&2; exit $rc',
    "sh",
]
"""The agent's command run by the image's ``/bin/sh``: the trace's folder made first, and a
line on stderr when a trace was written (read out only then: one engine call less per trial)."""


def outcome_of(res: ExecResult) -> Outcome:
    """An :class:`~agentsproof.core.procgroup.Outcome` from a container command's result (for the shared answer rules)."""
    lines = [ln[:LINE_CHARS] for ln in res.stderr.decode("utf-8", "replace").splitlines()]
    stderr: deque[tuple[float, str]] = deque(((res.latency_s, ln) for ln in lines), maxlen=STDERR_LINES)
    cut = len(res.stdout) > MAX_OUTPUT_BYTES
    notes = [f"the container was stopped: {res.limit}"] if res.limit else []
    return Outcome(res.returncode, res.stdout[:MAX_OUTPUT_BYTES], cut, stderr, res.latency_s, res.timed_out, notes)


Record = Callable[[Outcome, "TrialInput", Path, Path, "Path | None", float], "TrialRecord"]


async def run_in_container(spec: Any, model: str | None, placeholder: re.Pattern[str], record: Record, trial: TrialInput, timeout: float) -> TrialRecord:
    """One trial of the command target ``spec`` in ``trial.environment`` (see the module
    docstring); ``record`` is the target's own answer rule, read from a host view of the
    answer and trace files."""
    box = trial.environment
    assert box is not None
    work = PurePosixPath(box.workdir)
    harness = Path(tempfile.mkdtemp(prefix="agentsproof-trial-"))
    view = harness / "view"
    try:
        view.mkdir()
        skill_rel = spec.skill_path.replace("{name}", trial.skill.name) if trial.skill is not None else None
        skill_in = str(work / skill_rel) if skill_rel else ""
        trace_in = str(work / spec.trace_file) if spec.trace_file else TRACE_IN_CONTAINER
        values = {"prompt": trial.prompt, "workspace": str(work), "skill_file": skill_in, "model": model or ""}
        argv = [placeholder.sub(lambda m: values[m.group(1)], arg) for arg in spec.command]
        on_stdin = spec.stdin or not any("{prompt}" in arg for arg in spec.command)
        env = dict(spec.env)
        env.update(AGENTSPROOF_WORKSPACE=str(work), AGENTSPROOF_ARM=trial.arm, AGENTSPROOF_TRACE_FILE=trace_in)
        if trial.skill is not None and skill_rel:
            env.update(AGENTSPROOF_SKILL_FILE=skill_in, AGENTSPROOF_SKILL_NAME=trial.skill.name)
        stdin = trial.prompt.encode("utf-8") if on_stdin else b""
        # the one command: the workdir (and the trace) come back out with it when the image can
        res = await box.exec([*WRAPPER, *argv], env=env, timeout=timeout, stdin=stdin, keep=(trace_in,))
        wrote_trace = TRACE_MARK in res.stderr
        res.stderr = res.stderr.replace(b"\n" + TRACE_MARK + b"\n", b"").replace(TRACE_MARK + b"\n", b"")
        if res.limit:
            raise TargetError(f"the trial's container hit a limit: {res.limit}", kind="limit")
        trace_view = view / spec.trace_file if spec.trace_file else harness / "trace.jsonl"
        data = await box.read_file(trace_in, cap_bytes=TRACE_CAP) if wrote_trace else None
        if data is not None:
            write_file(trace_view.parent, trace_view.name, data)
        if spec.answer_file and res.returncode == 0 and not res.timed_out:
            answer = await box.read_file(str(work / spec.answer_file), cap_bytes=MAX_OUTPUT_BYTES + 1)
            if answer is not None:
                write_file(view, spec.answer_file, answer)
        skill_view = view / skill_rel if skill_rel else None
        return record(outcome_of(res), trial, view, trace_view, skill_view, timeout)
    finally:
        remove_tree(harness)
