"""The oracle preflight of a task that runs in a container (a Harbor task's ``solution/solve.sh``).

One fresh container of the task's image (the with-arm's: the skills as the Dockerfile puts
them; the oracle installs none), the oracle applied there — a ``script`` has its folder
copied to ``/solution`` and ``/solution/<name>`` runs (Harbor's way: its ``#!`` line, bash
when it has none), a ``run``
command runs with ``sh -c`` — in the container's workdir, then every grader that can be
checked on it in that same container (the verifier: ``tests/`` copied to ``/tests``,
``test.sh`` run, the reward read). The container is removed whatever happens.
"""

from __future__ import annotations

import tempfile
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from agentsproof.core.errors import TrialError
from agentsproof.core.units import seconds

if TYPE_CHECKING:
    from agentsproof.executor.oracle import OracleOutcome, OracleTask
    from agentsproof.grading.judge import Judge
    from agentsproof.isolation.environments import Environments
    from agentsproof.model.environment import ExecResult, TrialEnvironment

SOLUTION_DIR = "/solution"


def _tail(out: ExecResult) -> str:
    text = (out.stderr or out.stdout).decode("utf-8", errors="replace").strip()
    return " | ".join(line.strip() for line in text.splitlines()[-3:] if line.strip())[:300]


async def _apply(task: OracleTask, box: TrialEnvironment, eval_dir: Path) -> tuple[str, str | None]:
    """(stdout, error) of the oracle run in the container."""
    oracle = task.oracle
    if oracle.script is not None:
        path = (eval_dir / oracle.script).resolve()
        if not path.is_relative_to(eval_dir.resolve()) or not path.is_file():
            return "", f"script {oracle.script!r} not found beside the eval file (or a symlink out of its folder)"
        got = await box.exec(
            ["sh", "-c", f"rm -rf {SOLUTION_DIR} && mkdir -p {SOLUTION_DIR} /logs/agent /logs/verifier /logs/artifacts"], timeout=60.0, user="root"
        )
        if got.returncode != 0:
            return "", f"cannot make {SOLUTION_DIR} in the container: {_tail(got)}"
        await box.copy_in(path.parent, SOLUTION_DIR)
        inside = str(PurePosixPath(SOLUTION_DIR) / path.name)
        await box.exec(["chmod", "+x", inside], timeout=60.0, user="root")
        argv = ["bash", "-c", '"$0"', inside]  # the script itself (its #! line), bash when it has none
    elif isinstance(oracle.run, str):
        argv = ["sh", "-c", oracle.run]
    elif isinstance(oracle.run, list):
        argv = list(oracle.run)
    else:
        return (oracle.answer or ""), None
    out = await box.exec(argv, env=dict(task.env), timeout=oracle.timeout)
    stdout = out.stdout.decode("utf-8", errors="replace")
    if out.timed_out:
        return stdout, f"the oracle timed out after {seconds(oracle.timeout)}"
    if out.returncode != 0:
        tail = _tail(out)
        return stdout, f"the oracle exited {out.returncode}" + (f": {tail}" if tail else "")
    return stdout, None


async def check_in_container(
    task: OracleTask, *, eval_dir: Path, judge: Judge | None, threshold: float, timeout: float | None, envs: Environments | None = None
) -> OracleOutcome:
    """``task``'s oracle applied in a fresh container of its environment, then its checked graders there.

    ``envs``: the run's engine session, shared by every preflight (prepared once, closed by the
    caller; the container is removed in the background); without it, one of its own."""
    from agentsproof.executor.oracle import OracleOutcome, _checked, _failures
    from agentsproof.grading.grade import TrialContext, combine, grade_all
    from agentsproof.isolation import workspace as ws
    from agentsproof.isolation.environments import Environments

    assert task.environment is not None
    index = [j for j, g in enumerate(task.graders) if _checked(g)]
    graders = [task.graders[j] for j in index]
    skipped = [f"graders[{j}] ({g.type})" for j, g in enumerate(task.graders) if j not in index]
    own = envs is None
    if envs is None:
        envs = Environments()
    with tempfile.TemporaryDirectory(prefix="agentsproof-oracle-") as tmp:
        folder = Path(tmp) / "workspace"
        folder.mkdir()
        box = None
        try:
            try:
                await envs.prepare([task.environment])  # a shared session reaps once and keeps each image it made
                box = await envs.start(task.environment, trial=f"oracle/{task.name}", workspace=folder)
                before = ws.snapshot(folder)
                stdout, error = await _apply(task, box, eval_dir)
            except TrialError as err:  # the container could not be started or run the oracle
                stdout, error = "", str(err)
            if error:
                return OracleOutcome(task.name, task.field, None, failing=[f"oracle: {error}"], skipped=skipped, error=error)
            assert box is not None
            await envs.collect(box, folder)
            answer = task.oracle.answer if task.oracle.answer is not None else stdout.strip()
            ctx = TrialContext(answer=answer, workspace=folder, files=ws.changes(folder, before), timeout=timeout, eval_dir=eval_dir, environment=box)
            results = await grade_all(answer, graders, judge, task.instruction, timeout=timeout, context=ctx)
        finally:
            if box is not None:
                await envs.remove(box)
            if own:
                await envs.close()
    failing = [line for j, spec, res in zip(index, graders, results, strict=True) for line in _failures(j, spec, res, threshold)]
    return OracleOutcome(task.name, task.field, combine(results), results, failing, skipped)
