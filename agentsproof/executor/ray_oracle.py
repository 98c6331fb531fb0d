"""Oracle preflights on a Ray cluster's nodes (``--executor ray``, issue 48): each task's
oracle checked on a node as :mod:`agentsproof.commands.oracle` checks it here (a container
oracle in the node's own engine, which keeps the image for the trials that follow), at most
``--parallel`` out at once; the driver keeps the verdicts. A check whose node dies under it is
sent again (at most :data:`~agentsproof.executor.ray_common.MAX_RETRIES` times); one that
cannot run at all is an oracle error with Ray's reason, which refuses the file as locally.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentsproof.core.scrub import clip, scrub
from agentsproof.executor.ray_common import DOCKER_RESOURCE, MAX_RETRIES, RESOURCE, NodeRun, forwarded_env, node_client, node_env

if TYPE_CHECKING:
    from agentsproof.executor.oracle import OracleOutcome, OracleTask

__all__ = ["OracleCluster", "oracle_on_node"]


async def _check(task: OracleTask, run: NodeRun | None, eval_dir: Path, threshold: float, timeout: float | None) -> OracleOutcome:
    from agentsproof.executor.container_oracle import check_in_container
    from agentsproof.executor.oracle import check_oracle

    client = node_client(run, None, []) if run is not None else None
    judge = None
    if client is not None and run is not None:
        from agentsproof.grading.judge import Judge

        judge = Judge(client=client, model=run.judge_model)
    try:
        check = check_in_container if task.environment is not None else check_oracle
        return await check(task, eval_dir=eval_dir, judge=judge, threshold=threshold, timeout=timeout)
    finally:
        if client is not None:
            await client.aclose()


def oracle_on_node(task: OracleTask, run: NodeRun | None, env: dict[str, str], eval_dir: Path, threshold: float, timeout: float | None) -> OracleOutcome:
    """The Ray task: one oracle checked on this node (``run``: the judge's provider, when a grader needs one)."""
    with node_env(env):
        return asyncio.run(_check(task, run, eval_dir, threshold, timeout))


class OracleCluster:
    """The driver's side: joined once for the preflights (and left, when it joined), each check a task."""

    def __init__(self, address: str | None, parallel: int, run: NodeRun | None):
        self.address = address
        self.parallel = parallel
        self.run = run
        self._owned = False
        self._task: Any = None
        self._env: Any = None

    async def start(self) -> None:
        """Connect off the loop; the key goes to the object store once."""
        from agentsproof.core.threads import to_thread

        def connect() -> None:
            import ray

            from agentsproof.executor.ray_trials import connect as join

            self._owned = join(self.address, self.parallel)
            self._env = ray.put(forwarded_env())
            self._task = ray.remote(num_cpus=0, max_retries=0, retry_exceptions=False)(oracle_on_node)

        await to_thread(connect)

    async def check(self, task: OracleTask, *, eval_dir: Path, threshold: float, timeout: float | None) -> OracleOutcome:
        """``task``'s oracle checked on a node (one with an engine for a container oracle)."""
        import ray

        from agentsproof.executor.oracle import OracleOutcome
        from agentsproof.executor.ray_trials import node_lost

        resources = {RESOURCE: 1.0, **({DOCKER_RESOURCE: 1.0} if task.environment is not None else {})}
        lost = 0
        while True:
            ref = self._task.options(resources=resources, scheduling_strategy="SPREAD").remote(task, self.run, self._env, eval_dir, threshold, timeout)
            try:
                return await ref  # type: ignore[no-any-return]
            except asyncio.CancelledError:
                ray.cancel(ref, force=True)
                raise
            except node_lost() as err:
                lost += 1
                if lost > MAX_RETRIES:
                    why = f"its Ray node died {lost} times; last: {type(err).__name__}"
                    return OracleOutcome(task=task.name, field=task.field, score=None, error=why, failing=[f"the oracle could not be checked: {why}"])
            except Exception as err:  # noqa: BLE001 - the check could not run: a failing line with Ray's reason, never a pass
                why = f"the oracle could not be checked on the Ray cluster: {type(err).__name__}: {clip(' '.join(scrub(str(err)).split()), 300)}"
                return OracleOutcome(task=task.name, field=task.field, score=None, error=why, failing=[why])

    async def close(self) -> None:
        """Leave the cluster when this joined it (the run that follows joins again)."""
        if self._owned:
            import ray

            from agentsproof.core.threads import to_thread

            await to_thread(ray.shutdown)
