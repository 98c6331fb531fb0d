"""The oracle preflight of a run: an eval.yaml's ``oracle:`` graded before any trial
(agentsproof.executor.oracle); a failing oracle refuses the run."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentsproof.core.errors import InputError
from agentsproof.formats.base import Loaded
from agentsproof.model.options import RunConfig
from agentsproof.model.results import RunResult

if TYPE_CHECKING:
    from agentsproof.executor.oracle import OracleOutcome, OracleTask

MAX_SHOWN = 3


def preflight(loaded: Loaded, cfg: RunConfig) -> dict[str, dict[str, Any]]:
    """Per item id, the oracle's result; InputError (one line: the oracle's field, the failing
    checks) when the oracle fails a grader. Empty when there is no oracle or ``--no-oracle``.
    The eval file is the one the run loaded (``loaded.eval_file``), not read again."""
    ev = loaded.eval_file
    if cfg.no_oracle or (ev is None and loaded.oracle_plan is None) or not loaded.items:
        return {}
    item = loaded.items[0]
    if loaded.oracle_plan is not None:  # the format's own (a Harbor task's solution/solve.sh)
        plan = loaded.oracle_plan
    else:
        from agentsproof.formats.eval_yaml.oracle import oracle_plan

        assert ev is not None
        plan = oracle_plan(ev, agent=item.target != "chat", all_tasks=cfg.all_tasks)
    if not plan.tasks:
        return {}
    threshold = cfg.threshold if cfg.threshold is not None else plan.threshold
    outcomes = asyncio.run(_check_all(plan.tasks, plan.eval_dir, cfg, threshold, plan.timeout))
    for out in outcomes:
        if out.failing:
            shown = "; ".join(out.failing[:MAX_SHOWN]) + (f"; and {len(out.failing) - MAX_SHOWN} more" if len(out.failing) > MAX_SHOWN else "")
            raise InputError(
                plan.source,
                out.field,
                f"the oracle of task {out.task!r} fails {len(out.failing)} check(s): {shown} (fix the check or the oracle; --no-oracle skips this preflight)",
            )
    scores = [o.score for o in outcomes if o.score is not None]
    return {item.id: {"score": sum(scores) / len(scores) if scores else None, "tasks": [o.as_json() for o in outcomes]}}


async def _check_all(tasks: list[OracleTask], eval_dir: Path, cfg: RunConfig, threshold: float, timeout: float) -> list[OracleOutcome]:
    from agentsproof.executor.oracle import check_oracle
    from agentsproof.grading.grade import needs_judge

    judge = None
    client = None
    if any(needs_judge(t.graders) for t in tasks):
        from agentsproof.grading.judge import Judge
        from agentsproof.llm.stack import StackOptions, build_stack

        cache_dir = None
        if cfg.cache and not _no_cache():
            from agentsproof.llm.cache import default_cache_dir

            cache_dir = cfg.cache_dir or default_cache_dir()
        stack = build_stack(cfg.provider, cfg.model, cfg.judge_model, StackOptions(prompt_cache=cfg.prompt_cache, cache_dir=cache_dir))
        client = stack.client
        judge = Judge(client=client, model=stack.judge_model) if client is not None else None
    try:
        from agentsproof.executor.container_oracle import check_in_container

        return [
            await (check_in_container if t.environment is not None else check_oracle)(t, eval_dir=eval_dir, judge=judge, threshold=threshold, timeout=timeout)
            for t in tasks
        ]
    finally:
        if client is not None:
            await client.aclose()


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
