"""The oracle preflight of a run: an eval.yaml's ``oracle:`` graded before any trial
(agentsproof.executor.oracle); a failing oracle refuses the run."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from agentsproof.core.errors import InputError
from agentsproof.formats.base import Loaded
from agentsproof.model.options import RunFlags
from agentsproof.model.results import RunResult
from agentsproof.targets.registry import is_agent

if TYPE_CHECKING:
    from agentsproof.executor.oracle import OracleOutcome, OracleTask
    from agentsproof.executor.ray_oracle import OracleCluster

MAX_SHOWN = 3


def preflight(loaded: Loaded, cfg: RunFlags) -> dict[str, dict[str, Any]]:
    """Per item id, the oracle's result; InputError (one line: the oracle's field, the failing
    checks) when the oracle fails a grader. Empty when there is no oracle or ``--no-oracle``.
    The eval file is the one the run loaded (``loaded.eval_file``), not read again."""
    (found,) = preflight_all([loaded], cfg)
    if isinstance(found, InputError):
        raise found
    return found


def preflight_all(files: list[Loaded], cfg: RunFlags) -> list[dict[str, dict[str, Any]] | InputError]:
    """The oracle preflight of every file, in file order: its result, or the InputError that
    refuses it. Every oracle task of every file runs at once, at most ``--parallel`` at a time
    (container oracles included), as trials do; one judge client serves them all."""
    plans = [_plan(f, cfg) for f in files]
    tasks = [(k, t) for k, plan in enumerate(plans) if plan is not None for t in plan.tasks]
    if not tasks:
        return [{} for _ in files]
    outcomes = asyncio.run(_check_all(tasks, plans, cfg))
    results: list[dict[str, dict[str, Any]] | InputError] = []
    for k, (loaded, plan) in enumerate(zip(files, plans, strict=True)):
        mine = [o for (j, _t), o in zip(tasks, outcomes, strict=True) if j == k]
        if plan is None or not mine:
            results.append({})
            continue
        failing = next((o for o in mine if o.failing), None)
        if failing is not None:
            shown = "; ".join(failing.failing[:MAX_SHOWN]) + (f"; and {len(failing.failing) - MAX_SHOWN} more" if len(failing.failing) > MAX_SHOWN else "")
            results.append(
                InputError(
                    plan.source,
                    failing.field,
                    f"the oracle of task {failing.task!r} fails {len(failing.failing)} check(s): {shown} (fix the check or the oracle; --no-oracle skips this preflight)",
                )
            )
            continue
        scores = [o.score for o in mine if o.score is not None]
        results.append({loaded.items[0].id: {"score": sum(scores) / len(scores) if scores else None, "tasks": [o.as_json() for o in mine]}})
    return results


def _plan(loaded: Loaded, cfg: RunFlags) -> Any:
    """The file's oracle plan (None: no oracle, ``--no-oracle``, or no task to check)."""
    ev = loaded.eval_file
    if cfg.no_oracle or (ev is None and loaded.oracle_plan is None) or not loaded.items:
        return None
    item = loaded.items[0]
    if loaded.oracle_plan is not None:  # the format's own (a Harbor task's solution/solve.sh)
        plan = loaded.oracle_plan
    else:
        from agentsproof.formats.eval_yaml.oracle import oracle_plan

        assert ev is not None
        plan = oracle_plan(ev, agent=is_agent(item.target), all_tasks=cfg.all_tasks)
    return plan if plan.tasks else None


async def _check_all(tasks: list[tuple[int, OracleTask]], plans: list[Any], cfg: RunFlags) -> list[OracleOutcome]:
    from agentsproof.executor.oracle import check_oracle
    from agentsproof.grading.grade import needs_judge

    judge = None
    client = None
    stack = None
    if any(needs_judge(t.graders) for _k, t in tasks):
        from agentsproof.grading.judge import Judge
        from agentsproof.llm.stack import StackOptions, build_stack

        cache_dir = None
        if cfg.cache and not _no_cache():
            from agentsproof.llm.cache import default_cache_dir

            cache_dir = cfg.cache_dir or default_cache_dir()
        stack = build_stack(cfg.provider, cfg.model, cfg.judge_model, StackOptions(prompt_cache=cfg.prompt_cache, cache_dir=cache_dir))
        client = stack.client
        judge = Judge(client=client, model=stack.judge_model) if client is not None else None
    slots = asyncio.Semaphore(max(1, cfg.parallel))
    cluster = await _cluster(cfg, stack) if cfg.executor == "ray" else None  # issue 48: the preflights on the cluster's nodes
    envs = None
    if cluster is None and any(t.environment is not None for _k, t in tasks):
        # one engine session for every container preflight: leftovers reaped once, each image
        # looked up once, containers removed in the background, one sweep at the end
        from agentsproof.isolation.engine import relay_binary
        from agentsproof.isolation.environments import Environments

        envs = Environments()
        await envs.reap()
        await relay_binary()

    async def one(k: int, t: OracleTask) -> OracleOutcome:
        from agentsproof.executor.container_oracle import check_in_container

        plan = plans[k]
        threshold = cfg.threshold if cfg.threshold is not None else plan.threshold
        async with slots:
            if cluster is not None:
                return await cluster.check(t, eval_dir=plan.eval_dir, threshold=threshold, timeout=plan.timeout)
            if t.environment is not None:
                return await check_in_container(t, eval_dir=plan.eval_dir, judge=judge, threshold=threshold, timeout=plan.timeout, envs=envs)
            return await check_oracle(t, eval_dir=plan.eval_dir, judge=judge, threshold=threshold, timeout=plan.timeout)

    try:
        return list(await asyncio.gather(*(one(k, t) for k, t in tasks)))
    finally:
        if envs is not None:
            await envs.close()
        if client is not None:
            await client.aclose()
        if cluster is not None:
            await cluster.close()


async def _cluster(cfg: RunFlags, stack: Any) -> OracleCluster:
    """``--executor ray``: the cluster the checks go to (the judge's provider, when a grader needs one, built on each node)."""
    from agentsproof.executor.ray_common import NodeRun
    from agentsproof.executor.ray_oracle import OracleCluster

    run = None
    if stack is not None and stack.client is not None:
        cache = stack.cache.directory if stack.cache is not None else None
        run = NodeRun(
            provider=stack.provider, model=stack.model, judge_model=stack.judge_model, prompt_cache=cfg.prompt_cache, cache_dir=str(cache) if cache else None
        )
    cluster = OracleCluster(cfg.ray_address, cfg.parallel, run)
    await cluster.start()
    return cluster


def _no_cache() -> bool:
    import os

    return os.environ.get("AGENTSPROOF_NO_CACHE", "").strip() not in ("", "0")


def attach(oracle: dict[str, dict[str, Any]], after: Callable[[RunResult], None] | None) -> Callable[[RunResult], None] | None:
    """``after`` with the oracle's results written onto the run's items (for the reports)."""
    if not oracle:
        return after

    def hook(run: RunResult) -> None:
        for it in run.items:
            if it.id in oracle:
                it.oracle = oracle[it.id]
        if after is not None:
            after(run)

    return hook
