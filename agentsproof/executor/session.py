"""One command's run: build the provider, run the items, grade, return the RunResult."""

from __future__ import annotations

import asyncio
import dataclasses
import os
import signal
import sys
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from agentsproof.core.errors import ProviderUnavailable
from agentsproof.executor.results import build_run, finalize_item
from agentsproof.executor.runner import BatchPolicy, DualArmRunner, ItemRun, RunOptions, run_all_at_once
from agentsproof.grading.grade import Judge, needs_judge
from agentsproof.llm.base import LLMClient
from agentsproof.llm.registry import build_client, resolve_models, resolve_provider_name
from agentsproof.model.items import EvalItem
from agentsproof.model.options import RunConfig
from agentsproof.model.results import ItemResult, RunResult, TrialResult
from agentsproof.model.settings import RunSettings
from agentsproof.targets.base import Target
from agentsproof.targets.chat import ChatTarget

if TYPE_CHECKING:
    from agentsproof.targets.spec import TargetDef

T = TypeVar("T")


@dataclass
class SessionOptions:
    """What one run needs besides its items: the command's :class:`RunConfig` and what the
    command worked out for this run (the settings to record, the policy, journal, kept trials)."""

    run: RunConfig = field(default_factory=RunConfig)
    """The command's options. The session reads provider, model, judge_model, parallel,
    abort_after, resume (load the journal at ``journal`` and keep its trials, same
    configuration only), cache, cache_dir, prompt_cache, max_calls and max_cost."""
    policy: BatchPolicy = run_all_at_once
    settings: RunSettings = field(default_factory=RunSettings)
    """What the command records of its options; the session adds the rest (``RunResult.settings``)."""
    on_trial: Callable[[EvalItem, TrialResult], None] | None = None
    on_item: Callable[[ItemRun], None] | None = None
    prior: dict[tuple[str, str, int], TrialResult] = field(default_factory=dict)
    """Finished trials to keep (--resume, --retry-errors): they are not run again."""
    journal: Path | None = None
    """Where to journal every finished trial (for --resume); None: no journal."""
    base_duration_s: float = 0.0
    target_defs: dict[str, TargetDef] = field(default_factory=dict)
    """Agent targets the items name, by name, resolved by the command."""
    workspaces_dir: Path | None = None
    """Keep every agent trial's workspace below this folder (None: delete after grading)."""
    spill: bool = True
    """Large runs keep finished items' trials in the journal, not in memory (agentsproof.executor.spill)."""
    record_dir: Path | None = None
    """The flight recorder's file store for agent trials' produced files (None: not kept)."""


@dataclass
class PreparedProvider:
    provider: str
    model: str
    judge_model: str
    client: LLMClient | None
    """None when nothing in the run calls a model (agent targets graded without a judge)."""


def prepare_provider(provider: str | None, model: str | None, judge_model: str | None, *, prompt_cache: bool = True) -> PreparedProvider:
    name = resolve_provider_name(provider)
    choice = resolve_models(name, model, judge_model)
    client = build_client(name, prompt_cache=prompt_cache)
    return PreparedProvider(provider=name, model=choice.model, judge_model=choice.judge_model, client=client)


INTERRUPT_SIGNALS = ("SIGINT", "SIGTERM")


@contextmanager
def interruptible(runner: DualArmRunner) -> Iterator[None]:
    """While the run is on, SIGINT and SIGTERM stop it cleanly: no new calls, in-flight
    trials cancelled, every finished trial kept; the command then writes an incomplete
    report and exits 30. A second signal exits 30 at once, without a report."""
    loop = asyncio.get_running_loop()
    installed: list[tuple[signal.Signals, Any]] = []

    def on_signal(name: str) -> None:
        if runner.state.aborted and runner.state.abort_reason and runner.state.abort_reason.startswith("interrupted"):
            sys.stderr.write(f"\ninterrupted again ({name}): exiting without a report\n")
            sys.stderr.flush()
            os._exit(30)
        sys.stderr.write(f"\n{name}: stopping; finished trials go into an incomplete report (again to quit at once)\n")
        sys.stderr.flush()
        runner.interrupt(f"interrupted by {name}; trials that had not finished were not run")

    for name in INTERRUPT_SIGNALS:
        sig = getattr(signal, name, None)
        if sig is None:
            continue
        try:
            previous = signal.getsignal(sig)
            loop.add_signal_handler(sig, on_signal, name)
        except (NotImplementedError, RuntimeError, ValueError):  # not the main thread, or no signals here
            continue
        installed.append((sig, previous))
    try:
        yield
    finally:
        for sig, previous in installed:
            loop.remove_signal_handler(sig)
            try:
                signal.signal(sig, previous if previous is not None else signal.SIG_DFL)
            except (ValueError, TypeError):
                pass


async def run_items_async(
    command: str,
    plugin: str,
    items: Sequence[EvalItem],
    opts: SessionOptions,
    prepared: PreparedProvider,
    targets: dict[str, Target] | None = None,
) -> RunResult:
    from agentsproof.executor import journal as jr

    started = time.perf_counter()
    cfg = opts.run
    targets = dict(targets or {})
    client = prepared.client
    describe = {k: v for k, v in client.describe().items() if k != "provider"} if client is not None else {}
    throttle = _find_layer(client, "limiter")
    if throttle is not None:
        throttle.limiter.set_maximum(cfg.parallel)
    budget = None
    if client is not None and (cfg.max_calls is not None or cfg.max_cost is not None):
        from agentsproof.llm.budget import budget_for

        budget, client = budget_for(client, prepared, cfg.max_calls, cfg.max_cost)
    cache = None
    if cfg.cache and client is not None:
        from agentsproof.llm.cache import CachingClient, ResponseCache, default_cache_dir

        cache = ResponseCache(cfg.cache_dir or default_cache_dir())
        client = CachingClient(client, cache)
    prior = dict(opts.prior)
    book = None
    if opts.journal is not None:
        resuming = cfg.resume and opts.journal.exists()
        fingerprint = jr.run_fingerprint(
            command, prepared.provider, prepared.model, prepared.judge_model, describe, items,
            {name: t.describe() for name, t in targets.items()},
            _var_digests(opts.target_defs, jr.header_salt(opts.journal) if resuming else None),
        )
        if resuming:
            prior.update(jr.load(opts.journal, fingerprint))
        book = jr.start(opts.journal, fingerprint, prior)
    progress = opts.on_trial
    spiller = None
    # Pairwise judging reads both arms' answers after the run: items with it stay in memory.
    if book is not None and opts.spill and not any(g.type == "pairwise" for it in items for g in _all_graders(it)):
        from agentsproof.executor.spill import Spiller, spill_after

        spiller = Spiller(book.path, spill_after(), book.prior_spans)

    def journal_and_progress(item: EvalItem, trial: TrialResult) -> None:
        if book is not None:
            span = book.append(item.id, trial.arm, trial.index, trial)
            if spiller is not None:
                spiller.note(item.id, trial.arm, trial.index, span)
        if progress is not None:
            progress(item, trial)

    finalized: dict[int, ItemResult] = {}

    def item_done(run: ItemRun) -> None:
        if opts.on_item is not None:
            opts.on_item(run)
        if spiller is not None:  # graded while its trials are at hand, then spilled when the run is large
            finalized[id(run)] = finalize_item(run, cfg.ci_rule)
            spiller.item_done(run.item.id, [run.with_arm, run.without_arm])

    judge = Judge(client=client, model=prepared.judge_model) if client is not None and any(_needs_judge(i) for i in items) else None
    if client is not None:
        targets["chat"] = ChatTarget(client, prepared.model)
    spaces = None
    if any(t.uses_workspace for t in targets.values()):
        from agentsproof.targets.workspace import Workspaces

        spaces = Workspaces(opts.workspaces_dir)
    runner = DualArmRunner(
        targets,
        RunOptions(parallel=cfg.parallel, abort_after=cfg.abort_after),
        judge,
        policy=opts.policy,
        on_trial=journal_and_progress,
        on_item=item_done,
        prior=prior,
        workspaces=spaces,
    )
    if budget is not None:
        budget.on_exhausted = runner.interrupt
    if opts.record_dir is not None and spaces is not None:
        from agentsproof.executor.recorder import FileStore

        runner.recorder = FileStore(opts.record_dir).keep
    pairwise: dict[str, dict[str, Any]] = {}
    try:
        with interruptible(runner):
            runs = await runner.run(items)
            if not runner.state.aborted:
                from agentsproof.executor.pairwise import pairwise_pass

                pairwise = await pairwise_pass(runs, judge, cfg.parallel)
    finally:
        try:
            for target in targets.values():
                try:
                    await target.aclose()
                except Exception:  # noqa: BLE001 - closing one target must not hide the others or the results
                    pass
            if client is not None:
                await client.aclose()
        finally:
            if book is not None:
                book.close()
            if spaces is not None:
                spaces.close()
    results = [finalized.pop(id(r)) if id(r) in finalized else finalize_item(r, cfg.ci_rule) for r in runs]
    for res in results:
        if res.id in pairwise:
            res.stats["pairwise"] = pairwise[res.id]
    recorded = opts.settings  # a retry's: the saved run's, which keep their values unless this run has new ones
    agents = {name: t.describe() for name, t in targets.items() if name != "chat"}
    cached = sum(1 for r in runs for arm in (r.with_arm, r.without_arm) for t in arm.trials if t.cached) if cache is not None else 0
    settings = dataclasses.replace(
        recorded,
        parallel=cfg.parallel if recorded.parallel is None else recorded.parallel,
        abort_after=cfg.abort_after if recorded.abort_after is None else recorded.abort_after,
        client={**recorded.client, **describe},
        targets=agents or recorded.targets,
        workspaces=str(opts.workspaces_dir) if opts.workspaces_dir is not None and spaces is not None else recorded.workspaces,
        reused_trials=runner.reused or recorded.reused_trials,
        budget=budget.describe() if budget is not None else recorded.budget,
        throttle=throttle.stats() if throttle is not None and throttle.limiter.decreases else recorded.throttle,
        cache={"cached_trials": cached, "hits": cache.hits, "calls": cache.misses} if cache is not None else recorded.cache,
    )
    return build_run(
        command,
        plugin,
        results,
        provider=prepared.provider,
        model=prepared.model,
        judge_model=prepared.judge_model,
        settings=settings,
        incomplete_reason=runner.state.abort_reason,
        duration_s=opts.base_duration_s + time.perf_counter() - started,
    )


def _var_digests(defs: dict[str, TargetDef], salt: str | None) -> dict[str, Any]:
    """Salted digests of the values the run's targets' ``${VAR}`` references expanded to
    (for the journal: ``--resume`` with another value is refused naming the variable)."""
    import json
    import secrets

    from agentsproof.core.scrub import var_digests
    from agentsproof.targets.spec import ENV_REF

    names = {n for d in defs.values() for n in ENV_REF.findall(json.dumps(d.spec.model_dump(mode="json"), default=str))}
    salt = salt or secrets.token_hex(16)
    return {"salt": salt, "digests": var_digests(salt, names)}
def _needs_judge(item: EvalItem) -> bool:
    """A grader asks the judge, or a case has a simulated user (the judge plays it)."""
    return needs_judge(_all_graders(item)) or any(c.user is not None for c in (item.cases or (item.case_at(0),)))


def _all_graders(item: EvalItem) -> list[Any]:
    """The graders of every case of an item (the first case's are ``item.graders``)."""
    return [g for c in (item.cases or (item.case_at(0),)) for g in c.graders]


def _find_layer(client: Any, attribute: str) -> Any:
    """The wrapper in a client chain (retry → throttle → provider) that has ``attribute``."""
    seen = 0
    while client is not None and seen < 10:
        if hasattr(client, attribute):
            return client
        client = getattr(client, "inner", None)
        seen += 1
    return None


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
    if opts.run.cache and os.environ.get("AGENTSPROOF_NO_CACHE", "").strip() not in ("", "0"):
        opts = dataclasses.replace(opts, run=opts.run.replace(cache=False))
    from agentsproof.grading.regex import time_limit

    time_limit()  # a malformed AGENTSPROOF_REGEX_TIME_LIMIT is refused before the first call
    from agentsproof.executor.spill import spill_after
    from agentsproof.report.lazy import lazy_after

    spill_after(), lazy_after()  # and so are AGENTSPROOF_SPILL_AFTER and AGENTSPROOF_HTML_LAZY_AFTER
    agents = build_targets(items, opts)
    if any(it.target == "chat" for it in items) or any(_needs_judge(it) for it in items):
        cfg = opts.run
        prepared = prepare_provider(cfg.provider, cfg.model, cfg.judge_model, prompt_cache=cfg.prompt_cache)
    else:  # agents graded without a judge: no model is called by the harness itself
        prepared = PreparedProvider(provider="none", model=opts.run.model or "", judge_model="", client=None)
    return run_sync(run_items_async(command, plugin, items, opts, prepared, agents))


def build_targets(items: Sequence[EvalItem], opts: SessionOptions) -> dict[str, Target]:
    """The agent targets the items name, built (``${VAR}`` expanded, sandbox checked) before
    the first call: a problem is an input error, exit 30."""
    names = sorted({it.target for it in items} - {"chat"})
    if not names:
        return {}  # a chat-only run imports no target module
    from agentsproof.targets.registry import build_target

    missing = [n for n in names if n not in opts.target_defs]
    if missing:
        raise ProviderUnavailable(f"target {missing[0]!r} was not resolved")  # a programming error, said plainly
    return {name: build_target(opts.target_defs[name], model=opts.run.model) for name in names}
