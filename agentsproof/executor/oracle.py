"""The oracle preflight: every grader of a task runs on its oracle's output before any trial.

An oracle (:class:`agentsproof.model.oracle.Oracle`) is a reference answer, or a reference
command run in a fresh copy of the task's workspace seed (its changes are then what the
``files`` and ``script`` graders see, as after an agent trial). A grader *fails* the oracle
when it errors, when one of its checks fails, or when its score is below the eval's
threshold. Graders that read what only an agent leaves (``tool_calls``, ``skill_used``) and
pairwise graders are not checked: a command has no trajectory and loads no skill (each
grader says so itself: ``GraderEntry.checks_oracle`` in its registered entry).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field as _field
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from agentsproof.core.units import seconds
from agentsproof.grading.script import SCRIPT_INTERPRETERS  # the script grader's rule: a script is run by its extension
from agentsproof.model.graders import GraderSpec
from agentsproof.model.oracle import Oracle
from agentsproof.model.results import GraderResult

if TYPE_CHECKING:
    from agentsproof.grading.judge import Judge
    from agentsproof.model.environment import Environment


def _checked(spec: GraderSpec) -> bool:
    """The grader's registered entry says the oracle's output can be graded with it."""
    from agentsproof.grading.registry import entry

    return entry(spec.type).checks_oracle


@dataclass
class OracleTask:
    """One task with an oracle, as the preflight checks it: its instruction, graders, oracle and workspace seed."""

    name: str
    field: str
    """Where the oracle is in the file (``tasks[1].oracle`` or ``oracle``)."""
    instruction: str
    graders: Sequence[GraderSpec]
    oracle: Oracle
    seed: Path | None = None
    agent: bool = False
    environment: Environment | None = None
    """The task runs in a container: the oracle is applied and graded in a fresh one
    (:func:`agentsproof.executor.container_oracle.check_in_container`, not :func:`check_oracle`)."""
    env: dict[str, str] = _field(default_factory=dict)
    """Extra environment variables for the oracle's command (Harbor's ``[solution] env``)."""


@dataclass
class OraclePlan:
    """What the preflight of one eval file checks: its tasks with an oracle, built by the
    format from the file as loaded (``agentsproof.formats.eval_yaml.oracle``)."""

    source: str
    """The eval file, as messages name it."""
    eval_dir: Path
    tasks: list[OracleTask]
    threshold: float
    """The eval's default threshold (``--threshold`` replaces it)."""
    timeout: float


@dataclass
class OracleOutcome:
    """How one task's graders judged its oracle: the combined score, what failed, what was not checked."""

    task: str
    field: str
    score: float | None
    graders: list[GraderResult] = _field(default_factory=list)
    failing: list[str] = _field(default_factory=list)
    """One line per failing grader or check: ``graders[j] (type): what failed``."""
    skipped: list[str] = _field(default_factory=list)
    error: str | None = None

    def as_json(self) -> dict[str, Any]:
        """The task's line in the JSON the oracle command writes."""
        return {
            "task": self.task,
            "score": self.score,
            "passed": not self.failing and self.error is None,
            "failing": self.failing,
            "not_checked": self.skipped,
            "error": self.error,
        }


async def _run_command(oracle: Oracle, folder: Path, eval_dir: Path) -> tuple[str, str | None]:
    """(stdout, error) of the oracle's command, run with the workspace as its folder."""
    from agentsproof.core.procgroup import run_group

    if isinstance(oracle.run, str):
        argv = ["sh", "-c", oracle.run]
    elif isinstance(oracle.run, list):
        argv = list(oracle.run)
    else:
        assert oracle.script is not None
        from agentsproof.core.inputs import eval_root

        path = (eval_dir / oracle.script).resolve()
        if not path.is_relative_to(eval_root(eval_dir / "eval.yaml")):  # checked at load too: the script grader's rule
            return "", f"script {oracle.script!r} leads out of the eval's folder (a symlink); not run"
        if not path.is_file():
            return "", f"script {oracle.script!r} not found beside the eval file"
        interpreter = SCRIPT_INTERPRETERS.get(PurePosixPath(oracle.script).suffix.lower())
        argv = [interpreter, str(path)] if interpreter else [str(path)]
    env = {**os.environ, "AGENTSPROOF_WORKSPACE": str(folder), "AGENTSPROOF_EVAL_DIR": str(eval_dir)}
    try:
        out = await run_group(argv, cwd=folder, env=env, stdin_text=None, timeout=oracle.timeout)
    except OSError as err:
        return "", f"cannot run the oracle: {err.strerror or err}"
    stdout = out.stdout.decode("utf-8", errors="replace")
    if out.timed_out:
        return stdout, f"the oracle command timed out after {seconds(oracle.timeout)}"
    if out.returncode != 0:
        tail = " ".join(line for _, line in list(out.stderr)[-3:])[:300]
        return stdout, f"the oracle command exited {out.returncode}" + (f": {tail}" if tail else "")
    return stdout, None


def _failures(j: int, spec: GraderSpec, res: GraderResult, threshold: float) -> list[str]:
    at = f"graders[{j}] ({res.type})"
    if res.errored:
        return [f"{at}: errored: {res.error}"]
    bad = [f"{at}: {c.kind} {c.target!r}: {c.evidence}" for c in res.checks if not c.passed]
    if bad:
        return bad
    if res.score is not None and res.score < threshold - 1e-9:
        return [f"{at}: scored {res.score:.2f}, below the threshold {threshold:g}" + (f": {res.reasoning}" if res.reasoning else "")]
    return []


async def check_oracle(task: OracleTask, *, eval_dir: Path, judge: Judge | None, threshold: float, timeout: float | None) -> OracleOutcome:
    """Grade ``task``'s oracle with each of its graders that can be checked (its command run in a fresh workspace
    first); what fails, or its command's error. Never raises for a grader's failure: that is a failing line."""
    from agentsproof.grading.grade import TrialContext, combine, grade_all

    index = [j for j, g in enumerate(task.graders) if _checked(g)]
    graders = [task.graders[j] for j in index]
    skipped = [f"graders[{j}] ({g.type})" for j, g in enumerate(task.graders) if j not in index]
    answer = task.oracle.answer or ""
    folder = None
    spaces = None
    files: list[Any] = []
    try:
        if task.agent or task.oracle.runs_command:
            from agentsproof.isolation import workspace as ws

            spaces = ws.Workspaces()
            folder = spaces.create("oracle", "oracle", 0, task.seed)
            before = ws.snapshot(folder)
            if task.oracle.runs_command:
                stdout, error = await _run_command(task.oracle, folder, eval_dir)
                if error:
                    return OracleOutcome(task.name, task.field, None, failing=[f"oracle: {error}"], skipped=skipped, error=error)
                if task.oracle.answer is None:
                    answer = stdout.strip()
            files = ws.changes(folder, before)
        ctx = TrialContext(answer=answer, workspace=folder, files=files, timeout=timeout, eval_dir=eval_dir)
        results = await grade_all(answer, graders, judge, task.instruction, timeout=timeout, context=ctx)
    finally:
        if spaces is not None:
            spaces.close()
    failing = [line for j, spec, res in zip(index, graders, results, strict=True) for line in _failures(j, spec, res, threshold)]
    return OracleOutcome(task.name, task.field, combine(results), results, failing, skipped)


def answer_failures(answer: str, graders: Sequence[Any]) -> list[str]:
    """What the instant graders (those with a ``grade_answer`` hook: no judge, no workspace;
    the deterministic one) find wrong with a reference answer; eval-generate checks a
    generated oracle with it."""
    from agentsproof.grading.registry import entry

    out = []
    for j, g in enumerate(graders):
        instant = entry(g.type).grade_answer
        if instant is not None:
            res = instant(answer, g)
            out += [f"graders[{j}] ({g.type}): {c.kind} {c.target!r}: {c.evidence}" for c in res.checks if not c.passed]
    return out
