"""``agentsproof activation --executor ray`` (issue 48): every activation trial a task on a
node of a Ray cluster, as :func:`agentsproof.executor.activation.run_activation` runs it here.

The driver keeps the jobs, ``--parallel`` (trials out at once across the cluster), the scores
and the reports; a node builds the target (the chat simulation from the run's resolved
provider and model, or the agent target from its definition, expanded on the driver and
sent through the object store with the provider's key), runs one trial with every skill of
the plugin installed, and sends back its :class:`~agentsproof.model.activation.ActivationTrial`.
A trial whose node dies under it is sent again (at most
:data:`~agentsproof.executor.ray_common.MAX_RETRIES` times); the driver interrupted cancels the
trials still out.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from agentsproof.core.scrub import clip, scrub
from agentsproof.core.threads import to_thread
from agentsproof.executor.activation import ActivationJob, jobs
from agentsproof.executor.ray_common import MAX_RETRIES, RESOURCE, NodeRun, forwarded_env, node_client, node_env

if TYPE_CHECKING:
    from agentsproof.model.activation import ActivationSuite, ActivationTrial
    from agentsproof.model.items import SkillFile
    from agentsproof.targets.base import Target, TargetDef

__all__ = ["ActivationTarget", "activation_on_node", "run_activation_on_ray"]


@dataclass(frozen=True)
class ActivationTarget:
    """What a node builds its target from: an agent target (its definition and expanded spec) or the chat simulation (``run``)."""

    run: NodeRun
    agent: tuple[TargetDef, Any] | None = None


def _target(spec: ActivationTarget) -> tuple[Target, Any]:
    """(the target, the chat client to close or None), built on this node."""
    if spec.agent is not None:
        from typing import cast

        from agentsproof.targets.base import TargetFactory
        from agentsproof.targets.registry import target_class

        defn, expanded = spec.agent
        cls = cast(TargetFactory, target_class(defn.spec.type))
        return cls(defn.name, expanded, defn.spec, model=spec.run.model or None, source=defn.source), None
    from agentsproof.targets.chat.target import ChatTarget

    client = node_client(spec.run, None, [])
    return ChatTarget(client, spec.run.model), client


async def _one(spec: ActivationTarget, job: ActivationJob, index: int, skills: list[SkillFile], timeout: float) -> ActivationTrial:
    from agentsproof.executor.activation import run_one
    from agentsproof.isolation.workspace import Workspaces

    target, client = _target(spec)
    spaces = Workspaces() if target.uses_workspace else None
    try:
        return await run_one(target, job, index, skills, timeout, spaces)
    finally:
        try:
            await target.aclose()
        finally:
            if spaces is not None:
                spaces.close()
            if client is not None:
                await client.aclose()


def activation_on_node(spec: ActivationTarget, env: dict[str, str], job: ActivationJob, index: int, skills: list[SkillFile], timeout: float) -> ActivationTrial:
    """The Ray task: one activation trial on this node (``env``: the provider's key and URL, set for the trial only)."""
    from agentsproof.model.activation import ActivationTrial

    with node_env(env):
        try:
            return asyncio.run(_one(spec, job, index, skills, timeout))
        except Exception as err:  # noqa: BLE001 - anything run_one let through (building the target): errored, with the node's reason
            reason = f"the trial failed on its Ray node: {type(err).__name__}: {clip(' '.join(scrub(str(err)).split()), 250)}"
            return ActivationTrial(job.skill, job.prompt, index, None, error=reason)


async def run_activation_on_ray(
    address: str | None,
    spec: ActivationTarget,
    suites: Sequence[ActivationSuite],
    skills: list[SkillFile],
    *,
    trials: int = 1,
    parallel: int = 1,
    timeout: float,
    on_trial: Callable[[ActivationTrial], None] | None = None,
) -> list[ActivationTrial]:
    """Every prompt of ``suites`` ``trials`` times, each trial a task on the cluster at ``address``, ``parallel`` out at once."""
    from agentsproof.executor.ray_trials import connect, node_lost

    owned = await to_thread(connect, address, parallel)
    import ray

    try:
        env_ref, spec_ref = await to_thread(lambda: (ray.put(forwarded_env()), ray.put(spec)))  # the key and the target's values: object store only
        task = ray.remote(num_cpus=0, max_retries=0, retry_exceptions=False)(activation_on_node)
        sem = asyncio.Semaphore(max(1, parallel))

        async def one(job: ActivationJob, index: int) -> ActivationTrial:
            from agentsproof.model.activation import ActivationTrial

            lost: list[str] = []
            async with sem:
                while True:
                    ref = task.options(resources={RESOURCE: 1.0}, scheduling_strategy="SPREAD").remote(spec_ref, env_ref, job, index, skills, timeout)
                    t0 = time.perf_counter()
                    try:
                        done: ActivationTrial = await ref
                        break
                    except asyncio.CancelledError:
                        ray.cancel(ref, force=True)
                        raise
                    except node_lost() as err:
                        lost.append(f"{type(err).__name__}: {clip(' '.join(scrub(str(err)).split()), 200)}")
                        if len(lost) > MAX_RETRIES:
                            done = ActivationTrial(job.skill, job.prompt, index, None, error=f"the trial lost its Ray node {len(lost)} times; last: {lost[-1]}")
                            break
                    except Exception as err:  # noqa: BLE001 - the task could not run: errored, never lost
                        why = f"the trial could not run on the Ray cluster: {type(err).__name__}: {clip(' '.join(scrub(str(err)).split()), 250)}"
                        done = ActivationTrial(job.skill, job.prompt, index, None, error=why, latency_s=time.perf_counter() - t0)
                        break
            if on_trial is not None:
                on_trial(done)
            return done

        return list(await asyncio.gather(*(one(j, i) for j in jobs(suites) for i in range(trials))))
    finally:
        if owned:
            await to_thread(ray.shutdown)
