"""A Harbor task's oracle preflight: ``solution/solve.sh`` applied in a fresh container, then the verifier.

Harbor's oracle agent copies ``solution/`` to ``/solution`` and runs ``bash
/solution/solve.sh`` (with ``[solution] env``); the verifier then runs as after any agent.
The reward must be the maximum (1): a task whose own solution does not pass its own tests
is refused before any trial (``--no-oracle`` skips the check).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentsproof.formats.harbor.task import HarborTask
from agentsproof.model.items import EvalItem

if TYPE_CHECKING:
    from agentsproof.executor.oracle import OraclePlan

MAX_SOLUTION_TIMEOUT = 3600.0
"""The oracle model's cap on a reference command's seconds."""


def oracle_plan(task: HarborTask, item: EvalItem) -> OraclePlan:
    """The task's oracle as the preflight checks it (threshold 1: the full reward)."""
    from agentsproof.executor.oracle import OraclePlan, OracleTask
    from agentsproof.model.oracle import Oracle

    assert task.solution is not None
    timeout = min(item.timeout, MAX_SOLUTION_TIMEOUT)
    oracle = Oracle(script="solution/solve.sh", timeout=timeout)
    one = OracleTask(
        name=item.name,
        field="solution/solve.sh",
        instruction=item.prompt,
        graders=list(item.graders),
        oracle=oracle,
        agent=True,
        environment=item.environment,
        env=dict(task.solution_env),
    )
    return OraclePlan(source=task.source, eval_dir=task.folder.resolve(), tasks=[one], threshold=1.0, timeout=item.timeout)
