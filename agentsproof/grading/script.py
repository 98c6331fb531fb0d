"""Script grader: a command run in the trial's workspace after the agent finished.

The command runs with the workspace as its current folder (a chat trial, which has none,
gets a temporary folder holding only the answer file), stdin empty, and agentsproof's environment plus
``AGENTSPROOF_WORKSPACE`` (that folder) and ``AGENTSPROOF_ANSWER_FILE`` (the final answer,
UTF-8, in a temporary folder outside the workspace so that it is not one of the trial's
files). It runs in its own process group, as a command target's agent does (see
:func:`agentsproof.core.procgroup.run_group`): when it exits, times out or grading is
cancelled, every process it started is stopped (SIGTERM, then SIGKILL). Of its output,
the start of stdout and the last lines of stderr are kept.

Exit 0 passes (score 1) and any other exit fails (score 0), with the end of stderr (or
stdout) as evidence; but when the last non-empty line of stdout (or the whole of it) is a
JSON object with a ``score``, that score counts, with its ``details`` and ``checks``
(skillgrade's format). A score that is not a number from 0 to 1, a command that cannot be
started and a timeout error the grader.
"""

from __future__ import annotations

import json
import math
import os
import signal
import tempfile
from pathlib import Path
from typing import Any

from agentsproof.model.evalfile import ScriptGrader
from agentsproof.grading.context import TrialContext
from agentsproof.model.results import CheckResult, GraderResult

ANSWER_FILE = "answer.txt"
EVIDENCE_LINES = 15
EVIDENCE_CHARS = 1_500
MAX_SCRIPT_CHECKS = 100
_TEXT = 500


def _errored(spec: ScriptGrader, reason: str) -> GraderResult:
    return GraderResult(type="script", weight=spec.weight, errored=True, error=reason)


def _tail(text: str) -> str:
    lines = [line.rstrip() for line in text.strip().splitlines()][-EVIDENCE_LINES:]
    out = "\n".join(lines)
    return out if len(out) <= EVIDENCE_CHARS else "…" + out[-EVIDENCE_CHARS:]


def _clip(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    text = " ".join(text.split())
    return text if len(text) <= _TEXT else text[: _TEXT - 1] + "…"


def _verdict(stdout: str) -> dict[str, Any] | None:
    """The JSON object with a ``score`` the script ended its output with, if any."""
    lines = [line for line in stdout.splitlines() if line.strip()]
    candidates = [lines[-1]] if lines else []
    if stdout.strip().startswith("{") and len(lines) > 1:
        candidates.append(stdout)
    for text in candidates:
        try:
            obj = json.loads(text)
        except (ValueError, RecursionError):
            continue
        if isinstance(obj, dict) and "score" in obj:
            return obj
    return None


def _script_checks(raw: Any) -> list[CheckResult]:
    """skillgrade's ``checks``: ``[{"name", "passed", "message"}]`` (agentv's ``assertions``:
    ``[{"text", "passed", "evidence"}]``); other entries are skipped."""
    if not isinstance(raw, list):
        return []
    checks = []
    for i, item in enumerate(raw[:MAX_SCRIPT_CHECKS]):
        if not isinstance(item, dict):
            continue
        name = item.get("name", item.get("text"))
        checks.append(
            CheckResult(
                kind="script",
                target=_clip(name) if name not in (None, "") else f"check {i + 1}",
                passed=item.get("passed") is True,
                evidence=_clip(item.get("message") or item.get("details") or item.get("evidence") or ""),
            )
        )
    return checks


def _stdin(spec: ScriptGrader, answer: str) -> str | None:
    if spec.stdin == "answer":
        return answer
    if spec.stdin == "json":  # agentv's script-grader payload
        return json.dumps({"output": answer, "answer": answer}, ensure_ascii=False)
    return None


def _exit_text(code: int) -> str:
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit {code}"


def _from_json(spec: ScriptGrader, obj: dict[str, Any], code: int) -> GraderResult:
    score = obj["score"]
    if isinstance(score, bool) or not isinstance(score, (int, float)) or not math.isfinite(score) or not 0 <= score <= 1:
        return _errored(spec, f"the script printed score {_clip(score)}; a score must be a number from 0 to 1")
    details = _clip(obj["details"]) if obj.get("details") not in (None, "") else ""
    checks = _script_checks(obj.get("checks", obj.get("assertions")))
    if not checks:
        evidence = f"score {score:g}" + (f": {details}" if details else "") + f" ({_exit_text(code)})"
        checks = [CheckResult(kind="script", target=spec.shown(), passed=score >= 1, evidence=evidence)]
    return GraderResult(type="script", weight=spec.weight, score=float(score), checks=checks, reasoning=details or None)


def _from_exit(spec: ScriptGrader, code: int, stdout: str, stderr: str) -> GraderResult:
    output = _tail(stderr) or _tail(stdout)
    evidence = _exit_text(code) + (f": {output}" if output else " (no output)")
    check = CheckResult(kind="script", target=spec.shown(), passed=code == 0, evidence=evidence)
    return GraderResult(type="script", weight=spec.weight, score=1.0 if code == 0 else 0.0, checks=[check])


async def grade_script(spec: ScriptGrader, ctx: TrialContext) -> GraderResult:
    from agentsproof.core.errors import TargetError
    from agentsproof.core.procgroup import run_group

    timeout = spec.timeout if ctx.timeout is None else min(spec.timeout, ctx.timeout)
    with tempfile.TemporaryDirectory(prefix="agentsproof-grader-", ignore_cleanup_errors=True) as tmp:
        answer = Path(tmp) / ANSWER_FILE
        answer.write_text(ctx.answer, encoding="utf-8", errors="replace")
        folder = ctx.workspace if ctx.workspace is not None else Path(tmp)
        if not folder.is_dir():
            return _errored(spec, f"the trial's workspace {folder} is gone")
        folder = folder.resolve()
        env = {**os.environ, "AGENTSPROOF_WORKSPACE": str(folder), "AGENTSPROOF_ANSWER_FILE": str(answer)}
        if ctx.eval_dir is not None:
            env["AGENTSPROOF_EVAL_DIR"] = str(ctx.eval_dir)
        try:
            run = await run_group(spec.argv(ctx.eval_dir), cwd=folder, env=env, stdin_text=_stdin(spec, ctx.answer), timeout=timeout)
        except TargetError as err:
            return _errored(spec, f"{err} (from {spec.shown()})")
    if run.timed_out:
        return _errored(spec, f"timed out after {timeout:g}s; the command and every process it started were stopped")
    stdout = run.stdout.decode("utf-8", errors="replace")
    obj = _verdict(stdout)
    if obj is not None:
        return _from_json(spec, obj, run.returncode)
    return _from_exit(spec, run.returncode, stdout, "\n".join(line for _, line in run.stderr))
