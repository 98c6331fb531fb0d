"""One run of a plan: build the client stack (agentsproof.llm.stack), run the plan's items
in a :class:`RunSession`, grade, return the RunResult (:func:`run_plan`)."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import signal
import sys
import time
from collections.abc import Awaitable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from agentsproof.core.errors import ProviderUnavailable
from agentsproof.core.threads import to_thread
from agentsproof.executor.finalize import build_run, finalize_item
from agentsproof.executor.plan import RunPlan
from agentsproof.executor.runner import DualArmRunner, ItemRun, Scheduling
from agentsproof.grading.grade import Judge, needs_judge
from agentsproof.grading.registry import entry
from agentsproof.llm.stack import ClientStack, StackOptions, build_stack, no_model
from agentsproof.model.graders import GraderSpec
from agentsproof.model.items import EvalItem
from agentsproof.model.options import RunFlags
from agentsproof.model.results import ItemResult, RunResult, TrialResult
from agentsproof.model.settings import RunSettings
from agentsproof.targets.base import Target
from agentsproof.targets.chat.target import ChatTarget
from agentsproof.targets.registry import CHAT, MODEL_KINDS, is_agent

if TYPE_CHECKING:
    from agentsproof.executor.journal import Journal
    from agentsproof.executor.ray_trials import RayTrials
    from agentsproof.executor.spill import Spiller
    from agentsproof.isolation.environments import Environments
    from agentsproof.isolation.workspace import Workspaces
    from agentsproof.targets.base import TargetDef

T = TypeVar("T")


PreparedProvider = ClientStack
"""What a command that calls a model gets: the models and the client stack (agentsproof.llm.stack)."""


def prepare_provider(provider: str | None, model: str | None, judge_model: str | None, *, prompt_cache: bool = True) -> ClientStack:
    """The provider and its models resolved, and its client built (no budget, no response cache)."""
    return build_stack(provider, model, judge_model, StackOptions(prompt_cache=prompt_cache))


def stack_options(cfg: RunFlags) -> StackOptions:
    """The client stack a run's options ask for (``run_items`` has already turned the cache
    off under ``AGENTSPROOF_NO_CACHE``)."""
    cache_dir = None
    if cfg.cache:
        from agentsproof.llm.cache import default_cache_dir

        cache_dir = cfg.cache_dir or default_cache_dir()
    return StackOptions(
        prompt_cache=cfg.prompt_cache,
        parallel=cfg.parallel,
        max_calls=cfg.max_calls,
        max_cost=cfg.max_cost,
        cache_dir=cache_dir,
    )


INTERRUPT_SIGNALS = ("SIGINT", "SIGTERM")


@contextmanager
def interruptible(runner: DualArmRunner) -> Iterator[None]:
    """While the run is on, SIGINT and SIGTERM stop it cleanly: no new calls, in-flight
    trials cancelled, every finished trial kept; the command then writes an incomplete
    report and exits 30. A second signal takes the path of any interrupt outside a run
    (KeyboardInterrupt: the CLI says "interrupted" and exits 30), without a report; the
    journal keeps the finished trials for ``--resume``."""
    loop = asyncio.get_running_loop()
    installed: list[tuple[signal.Signals, Any]] = []

    def restore() -> None:
        while installed:
            sig, previous = installed.pop()
            loop.remove_signal_handler(sig)
            with contextlib.suppress(ValueError, TypeError):
                signal.signal(sig, previous if previous is not None else signal.SIG_DFL)

    def on_signal(name: str) -> None:
        if runner.state.aborted and runner.state.abort_reason and runner.state.abort_reason.startswith("interrupted"):
            sys.stderr.write(f"\ninterrupted again ({name}): exiting without a report\n")
            sys.stderr.flush()
            restore()  # before asyncio.run's own clean-up, which then puts back the default handler
            raise KeyboardInterrupt
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
        restore()


class RunSession:
    """One run of items, as small steps in the order :meth:`run` takes them: the journal
    opened (resumed), the judge and the chat target made, the runner built with all it
    needs, the trials (and pairwise judging) run, everything closed, the results graded
    and recorded."""

    def __init__(self, command: str, plugin: str, items: Sequence[EvalItem], opts: RunPlan, stack: ClientStack, targets: dict[str, Target] | None = None):
        self.command = command
        self.plugin = plugin
        self.items = items
        self.opts = opts
        self.stack = stack
        self.targets = dict(targets or {})
        self.prior = dict(opts.prior)
        self.book: Journal | None = None
        self.spiller: Spiller | None = None
        self.spaces: Workspaces | None = None
        self.envs: Environments | None = None
        self.ray: RayTrials | None = None
        self.finalized: dict[int, ItemResult] = {}
        self.started = time.perf_counter()

    async def run(self) -> RunResult:
        """The whole run: journal, judge, runner, trials, close, then the graded result."""
        self._open_journal()
        judge = self._judge()
        if self.stack.client is not None:
            self.targets[CHAT] = ChatTarget(self.stack.client, self.stack.model)
        runner = self._runner(judge)
        try:
            await self._remote(runner)
            await self._environments(runner)
            runs, pairwise = await self._trials(runner, judge)
        finally:
            await self._close()
        return self._result(self._graded(runs, pairwise), runs, runner)

    def _open_journal(self) -> None:
        """Every finished trial is journalled (for --resume); a resumed run keeps the journal's trials."""
        path = self.opts.journal
        if path is None:
            return
        from agentsproof.executor import journal as jr

        resuming = self.opts.run.resume and path.exists()
        agents = {name: t.describe() for name, t in self.targets.items()}
        stack = self.stack
        fingerprint = jr.run_fingerprint(
            self.command,
            stack.provider,
            stack.model,
            stack.judge_model,
            stack.described,
            self.items,
            agents,
            _var_digests(self.opts.target_defs, jr.header_salt(path) if resuming else None),
        )
        if resuming:
            self.prior.update(jr.load(path, fingerprint))
        self.book = jr.start(path, fingerprint, self.prior)
        # A per-pair grader (pairwise) reads both arms' answers after the run: items with one stay in memory.
        if self.opts.spill and not any(entry(g.type).per_pair for it in self.items for g in _all_graders(it)):
            from agentsproof.executor.spill import Spiller, spill_after

            self.spiller = Spiller(self.book.path, spill_after(), self.book.prior_spans)

    def _judge(self) -> Judge | None:
        client = self.stack.client
        if client is None or not any(_needs_judge(i) for i in self.items):
            return None
        return Judge(client=client, model=self.stack.judge_model)

    def _runner(self, judge: Judge | None) -> DualArmRunner:
        """The runner, given everything at construction (workspaces, recorder, callbacks)."""
        recorder = None
        if any(t.uses_workspace for t in self.targets.values()):
            from agentsproof.isolation.workspace import Workspaces

            self.spaces = Workspaces(self.opts.workspaces_dir)
            if self.opts.record_dir is not None:
                from agentsproof.executor.recorder import FileStore

                recorder = FileStore(self.opts.record_dir).keep
        cfg = self.opts.run
        runner = DualArmRunner(
            self.targets,
            Scheduling(parallel=cfg.parallel, abort_after=cfg.abort_after),
            judge,
            policy=self.opts.policy,
            on_trial=self._trial_done,
            on_item=self._item_done,
            prior=self.prior,
            workspaces=self.spaces,
            recorder=recorder,
        )
        if self.stack.budget is not None:
            self.stack.budget.on_exhausted = runner.interrupt  # a spent budget stops the run like an interrupt
        return runner

    async def _remote(self, runner: DualArmRunner) -> None:
        """issue 48 hook: ``--executor ray`` sends every trial to a Ray cluster's node (agentsproof.executor.ray_trials)."""
        cfg = self.opts.run
        if cfg.executor != "ray":
            return
        from agentsproof.executor.ray_trials import RayTrials
        from agentsproof.executor.recorder import FileStore

        cache_dir = stack_options(cfg).cache_dir if self.stack.cache is not None else None
        store = getattr(runner.recorder, "__self__", None)  # the flight recorder's store: it keeps what the nodes send back
        self.ray = RayTrials(
            cfg.ray_address,
            self.stack,
            runner,
            cache_dir=cache_dir,
            prompt_cache=cfg.prompt_cache,
            items=self.items,
            target_defs=dict(self.opts.target_defs),
            store=store if isinstance(store, FileStore) else None,
        )
        runner.remote = self.ray
        await self.ray.start()

    async def _environments(self, runner: DualArmRunner) -> None:
        """Items with an ``environment:``: dead runs' containers removed, every image built
        or found before the first trial (a failed build is one line, exit 30)."""
        envs = list({id(it.environment): it.environment for it in self.items if it.environment is not None}.values())
        if not envs or self.ray is not None:  # on a cluster each node builds its own (agentsproof.executor.ray_nodes)
            return
        from agentsproof.isolation.environments import Environments

        logs = self.opts.journal.parent if self.opts.journal is not None else self.opts.record_dir
        self.envs = runner.environments = Environments(log_dir=logs)
        await self.envs.prepare([e for e in envs if e is not None])

    def _trial_done(self, item: EvalItem, trial: TrialResult) -> None:
        if self.book is not None:
            span = self.book.append(item.id, trial.arm, trial.index, trial)
            if self.spiller is not None:
                self.spiller.note(item.id, trial.arm, trial.index, span)
        if self.opts.on_trial is not None:
            self.opts.on_trial(item, trial)

    async def _item_done(self, run: ItemRun) -> None:
        if self.opts.on_item is not None:
            self.opts.on_item(run)
        if self.spiller is not None:  # graded while its trials are at hand, then spilled when the run is large
            # the statistics take CPU (and their first import seconds): in a thread, never holding the loop
            self.finalized[id(run)] = await to_thread(finalize_item, run, self.opts.run.ci_rule)
            self.spiller.item_done(run.item.id, [run.with_arm, run.without_arm])

    async def _trials(self, runner: DualArmRunner, judge: Judge | None) -> tuple[list[ItemRun], dict[str, dict[str, Any]]]:
        with interruptible(runner):
            runs = await runner.run(self.items)
            if runner.state.aborted:
                return runs, {}
            from agentsproof.executor.pairwise import pairwise_pass

            return runs, await pairwise_pass(runs, judge, self.opts.run.parallel)

    async def _close(self) -> None:
        """Targets, then the client, then the journal and the workspaces, whatever fails."""
        try:
            for target in self.targets.values():
                with contextlib.suppress(Exception):  # closing one target must not hide the others or the results
                    await target.aclose()
            if self.stack.client is not None:
                await self.stack.client.aclose()
        finally:
            if self.ray is not None:
                with contextlib.suppress(Exception):  # the cluster gone: the finished trials still make the report
                    await self.ray.close()
            if self.book is not None:
                self.book.close()
            if self.envs is not None:
                await self.envs.close()
            if self.spaces is not None:
                self.spaces.close()

    def _graded(self, runs: list[ItemRun], pairwise: dict[str, dict[str, Any]]) -> list[ItemResult]:
        results = [self.finalized.pop(id(r)) if id(r) in self.finalized else finalize_item(r, self.opts.run.ci_rule) for r in runs]
        for res in results:
            if res.id in pairwise:
                res.stats["pairwise"] = pairwise[res.id]
        return results

    def _observed(self, runs: list[ItemRun], runner: DualArmRunner) -> RunSettings:
        """What the run saw of itself, for :meth:`RunSettings.observed`."""
        stack, cfg = self.stack, self.opts.run
        cache = None
        if stack.cache is not None:
            cached = sum(1 for r in runs for arm in (r.with_arm, r.without_arm) for t in arm.trials if t.cached)
            cache = {"cached_trials": cached, "hits": stack.cache.hits, "calls": stack.cache.misses}
        agents = {name: t.describe() for name, t in self.targets.items() if is_agent(name)}
        return RunSettings(
            parallel=cfg.parallel,
            abort_after=cfg.abort_after,
            client=stack.described,
            targets=agents or None,
            workspaces=str(self.opts.workspaces_dir) if self.opts.workspaces_dir is not None and self.spaces is not None else None,
            reused_trials=runner.reused or None,
            budget=stack.budget.describe() if stack.budget is not None else None,
            throttle=stack.throttle_stats(),
            cache=cache,
        )

    def _result(self, results: list[ItemResult], runs: list[ItemRun], runner: DualArmRunner) -> RunResult:
        stack = self.stack
        return build_run(
            self.command,
            self.plugin,
            results,
            provider=stack.provider,
            model=stack.model,
            judge_model=stack.judge_model,
            settings=self.opts.settings.observed(self._observed(runs, runner)),  # a retry's: the saved run's, with what this run saw
            incomplete_reason=runner.state.abort_reason,
            duration_s=self.opts.base_duration_s + time.perf_counter() - self.started,
        )


def _var_digests(defs: Mapping[str, TargetDef], salt: str | None) -> dict[str, Any]:
    """Salted digests of the values the run's targets' ``${VAR}`` references expanded to
    (for the journal: ``--resume`` with another value is refused naming the variable)."""
    import json
    import secrets

    from agentsproof.core.scrub import var_digests
    from agentsproof.targets.base import ENV_REF

    names = {n for d in defs.values() for n in ENV_REF.findall(json.dumps(d.spec.model_dump(mode="json"), default=str))}
    salt = salt or secrets.token_hex(16)
    return {"salt": salt, "digests": var_digests(salt, names)}


def _needs_judge(item: EvalItem) -> bool:
    """A grader asks the judge, or a case has a simulated user (the judge plays it)."""
    return needs_judge(_all_graders(item)) or any(c.user is not None for c in (item.cases or (item.case_at(0),)))


def _all_graders(item: EvalItem) -> list[GraderSpec]:
    """The graders of every case of an item (the first case's are ``item.graders``)."""
    return [g for c in (item.cases or (item.case_at(0),)) for g in c.graders]


class _Boxed(Generic[T]):
    """Holds a coroutine's result behind a cheap repr (see run_sync)."""

    __slots__ = ("value",)

    def __init__(self, value: T):
        self.value = value

    def __repr__(self) -> str:
        return "<result>"


def run_sync(coro: Awaitable[T]) -> T:
    """``asyncio.run`` for a coroutine with a large result.

    On CPython 3.11, asyncio.run's SIGINT clean-up formats the finished main task with
    repr(), result included; for a run of 1,000 trials that repr alone costs ~0.3 s.
    Boxing the result keeps that repr short.
    """

    async def main() -> _Boxed[T]:
        return _Boxed(await coro)

    return asyncio.run(main()).value


def run_items(command: str, plugin: str, items: Sequence[EvalItem], opts: RunPlan) -> RunResult:
    """:func:`run_plan` of ``opts`` with these items (for callers that build no report: the
    generator's check, tests)."""
    return run_plan(dataclasses.replace(opts, command=command, plugin=plugin, items=tuple(items)))


def run_plan(plan: RunPlan) -> RunResult:
    """Run the plan's items to the end and return the run's result; ProviderUnavailable when
    there is nothing to run, a malformed ``AGENTSPROOF_*`` setting refused before the first call."""
    if not plan.items:
        raise ProviderUnavailable("nothing to run")
    if plan.run.cache and os.environ.get("AGENTSPROOF_NO_CACHE", "").strip() not in ("", "0"):
        plan = dataclasses.replace(plan, run=plan.run.replace(cache=False))
    from agentsproof.grading.regex import time_limit

    time_limit()  # a malformed AGENTSPROOF_REGEX_TIME_LIMIT is refused before the first call
    from agentsproof.executor.spill import spill_after
    from agentsproof.report.lazy import lazy_after

    spill_after(), lazy_after()  # and so are AGENTSPROOF_SPILL_AFTER and AGENTSPROOF_HTML_LAZY_AFTER
    items = plan.items
    agents = build_targets(items, plan)
    cfg = plan.run
    if any(not is_agent(it.target) for it in items) or any(_needs_judge(it) for it in items):
        stack = build_stack(cfg.provider, cfg.model, cfg.judge_model, stack_options(cfg))
    else:  # agents graded without a judge: no model is called by the harness itself
        stack = no_model(cfg.model)
    return run_sync(RunSession(plan.command, plan.plugin, items, plan, stack, agents).run())


def build_targets(items: Sequence[EvalItem], opts: RunPlan) -> dict[str, Target]:
    """The agent targets the items name, built (``${VAR}`` expanded, sandbox checked) before
    the first call: a problem is an input error, exit 30."""
    names = sorted({it.target for it in items} - set(MODEL_KINDS))
    if not names:
        return {}  # a chat-only run imports no target module
    from agentsproof.targets.registry import build_target

    missing = [n for n in names if n not in opts.target_defs]
    if missing:
        raise ProviderUnavailable(f"target {missing[0]!r} was not resolved")  # a programming error, said plainly
    return {name: build_target(opts.target_defs[name], model=opts.run.model) for name in names}
