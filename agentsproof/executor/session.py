"""One command's run: build the provider, run the items, grade, return the RunResult."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Sequence, TypeVar

from agentsproof.errors import ProviderUnavailable
from agentsproof.executor.results import build_run, finalize_item
from agentsproof.executor.runner import BatchPolicy, DualArmRunner, EvalItem, ItemRun, RunOptions, run_all_at_once
from agentsproof.llm.base import LLMClient
from agentsproof.llm.registry import build_client, resolve_models, resolve_provider_name
from agentsproof.pipeline.grader import Judge, needs_judge
from agentsproof.schemas.artifacts import RunResult, TrialResult

T = TypeVar("T")


@dataclass
class SessionOptions:
    provider: str | None = None
    model: str | None = None
    judge_model: str | None = None
    parallel: int = 1
    abort_after: int = 5
    policy: BatchPolicy = run_all_at_once
    settings: dict[str, Any] = field(default_factory=dict)
    on_trial: Callable[[EvalItem, TrialResult], None] | None = None
    on_item: Callable[[ItemRun], None] | None = None


@dataclass
class PreparedProvider:
    provider: str
    model: str
    judge_model: str
    client: LLMClient


def prepare_provider(provider: str | None, model: str | None, judge_model: str | None) -> PreparedProvider:
    name = resolve_provider_name(provider)
    choice = resolve_models(name, model, judge_model)
    client = build_client(name)
    return PreparedProvider(provider=name, model=choice.model, judge_model=choice.judge_model, client=client)


async def run_items_async(
    command: str, plugin: str, items: Sequence[EvalItem], opts: SessionOptions, prepared: PreparedProvider
) -> RunResult:
    started = time.perf_counter()
    client = prepared.client
    judge = Judge(client=client, model=prepared.judge_model) if any(needs_judge(i.graders) for i in items) else None
    runner = DualArmRunner(
        client,
        RunOptions(model=prepared.model, parallel=opts.parallel, abort_after=opts.abort_after),
        judge,
        policy=opts.policy,
        on_trial=opts.on_trial,
        on_item=opts.on_item,
    )
    try:
        runs = await runner.run(items)
    finally:
        await client.aclose()
    results = [finalize_item(r) for r in runs]
    settings = {"parallel": opts.parallel, "abort_after": opts.abort_after, **opts.settings}
    settings.update({k: v for k, v in client.describe().items() if k != "provider"})
    return build_run(
        command,
        plugin,
        results,
        provider=prepared.provider,
        model=prepared.model,
        judge_model=prepared.judge_model,
        settings=settings,
        incomplete_reason=runner.state.abort_reason,
        duration_s=time.perf_counter() - started,
    )


class _Boxed:
    """Holds a coroutine's result behind a cheap repr (see run_sync)."""

    __slots__ = ("value",)

    def __init__(self, value: Any):
        self.value = value

    def __repr__(self) -> str:
        return "<result>"


def run_sync(coro: Awaitable[T]) -> T:
    """``asyncio.run`` for a coroutine with a large result.

    On CPython 3.11, asyncio.run's SIGINT clean-up formats the finished main task with
    repr(), result included; for a run of 1,000 trials that repr alone costs ~0.3 s.
    Boxing the result keeps that repr short.
    """

    async def main() -> _Boxed:
        return _Boxed(await coro)

    return asyncio.run(main()).value


def run_items(command: str, plugin: str, items: Sequence[EvalItem], opts: SessionOptions) -> RunResult:
    if not items:
        raise ProviderUnavailable("nothing to run")
    prepared = prepare_provider(opts.provider, opts.model, opts.judge_model)
    return run_sync(run_items_async(command, plugin, items, opts, prepared))
