"""The dual-arm runner.

For every item, N trials run with the skill/agent (as the system prompt, or installed for
an agent) and N without it. A trial is run by the item's *target* (a chat call, or a real
agent in a fresh workspace: see :mod:`agentsproof.targets`), then graded. All trials of
all items in one command share one semaphore (``parallel``). A target failure or timeout
makes a trial *errored*: it keeps its reason, is left out of the arm's scores and is
counted in every report.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentsproof.core import phases
from agentsproof.core.errors import TrialError
from agentsproof.core.phases import phase
from agentsproof.core.scrub import scrub_model
from agentsproof.core.threads import to_thread
from agentsproof.core.units import seconds
from agentsproof.executor.armscores import arm_scores, case_scores, logged, panel_record
from agentsproof.executor.fatal import fatal_reason, stop_at
from agentsproof.executor.trialsteps import apply_transform, trajectory_events, unexpected
from agentsproof.grading.grade import Judge, TrialContext, combine, failed_gate, grade_all
from agentsproof.grading.skill_used import chat_skills
from agentsproof.llm.base import LLMError
from agentsproof.model.items import BASELINE_SYSTEM_PROMPT, EvalItem
from agentsproof.model.results import Arm, ArmResult, FileRecord, LogEvent, TrialResult
from agentsproof.targets.base import Target, TrialInput
from agentsproof.targets.chat.target import TIMEOUT_GRACE_S
from agentsproof.targets.registry import is_agent

if TYPE_CHECKING:
    from collections.abc import Awaitable

    from agentsproof.executor.simulator import UserSimulator
    from agentsproof.grading.judge import PanelTally
    from agentsproof.isolation.container import Container
    from agentsproof.isolation.environments import Environments
    from agentsproof.isolation.workspace import Snapshot, Workspaces
    from agentsproof.model.items import Case

__all__ = ["DualArmRunner", "ItemRun", "Scheduling"]


@dataclass
class Scheduling:
    """How the runner schedules trials."""

    parallel: int = 1
    abort_after: int = 0
    """Stop the whole run after this many errored trials in a row (0: never)."""


# A stopping rule gets (with-arm scores, without-arm scores, trials done per arm, cap; ``cases=`` per case for several cases)
# and returns how many more trials per arm to run (0 = stop). The default runs all at once.
BatchPolicy = Callable[..., int]


def run_all_at_once(with_scores: list[float], without_scores: list[float], done: int, cap: int, **_: object) -> int:
    return cap - done


class Aborted(Exception):
    pass


@dataclass
class _RunState:
    consecutive_errors: int = 0
    aborted: bool = False
    abort_reason: str | None = None
    last_error: str | None = None
    fatal: str | None = None
    """A failure every trial would repeat (agentsproof.executor.fatal): the run stops at it."""
    on_trial: Callable[[EvalItem, TrialResult], None] | None = None


@dataclass
class ItemRun:
    """One item's finished arms as the runner leaves them (:func:`agentsproof.executor.finalize.finalize_item` grades it)."""

    item: EvalItem
    with_arm: ArmResult
    without_arm: ArmResult
    incomplete: bool = False
    plugin_arm: ArmResult | None = None
    """The plugin arm (``"plugin" in item.arms``)."""
    adaptive_stop: dict[str, Any] | None = None
    """``--adaptive``: why the item stopped (``AdaptivePolicy.stop_label``)."""
    judge_panel: dict[str, Any] | None = None
    """eval.yaml ``judge_models``: the panel, its verdicts and disagreements."""


class DualArmRunner:
    """Runs each item's trials in every arm it has (with and without the skill, the plugin arm when asked),
    at most ``parallel`` at a time, each trial graded as it finishes."""

    def __init__(
        self,
        targets: dict[str, Target],
        options: Scheduling,
        judge: Judge | None,
        policy: BatchPolicy = run_all_at_once,
        on_trial: Callable[[EvalItem, TrialResult], None] | None = None,
        on_item: Callable[[ItemRun], Awaitable[None] | None] | None = None,
        prior: dict[tuple[str, str, int], TrialResult] | None = None,
        workspaces: Workspaces | None = None,
        recorder: Callable[[Path, list[FileRecord]], None] | None = None,
        environments: Environments | None = None,
    ):
        self.targets = targets
        self.workspaces = workspaces
        self.environments = environments
        """The run's trial containers (items with an ``environment:``); None: made on first use."""
        """Where agent trials get their folders (None: a private temporary folder)."""
        self.recorder = recorder
        """The flight recorder (agentsproof.executor.recorder): keeps each agent trial's produced files."""
        self.prior = prior or {}
        """Trials already finished (resume, retry): used as they are, never run again."""
        self.reused = 0
        self.options = options
        self.judge = judge
        self._simulator: UserSimulator | None = None
        self._panel_tallies: dict[str, PanelTally] = {}
        self.policy = policy
        parallel = max(1, options.parallel)
        limits = [t.max_concurrency for t in targets.values() if t.max_concurrency]
        if limits and len(targets) == 1:
            parallel = min(parallel, limits[0])
        self._sem = asyncio.Semaphore(parallel)
        # Trials are started as slots free up, one item after another: at most a few more
        # tasks exist than run at once, and items finish in order (their trials can then
        # leave memory: agentsproof.executor.spill), however many trials a run has.
        self._started = asyncio.Semaphore(parallel + max(parallel, 16))
        self._launching = asyncio.Lock()
        self.state = _RunState(on_trial=on_trial)
        self.on_item = on_item
        self._tasks: set[asyncio.Task[TrialResult]] = set()
        self.remote: Callable[[EvalItem, Arm, int], Awaitable[TrialResult]] | None = None  # issue 48: --executor ray (executor.ray_trials)

    def interrupt(self, reason: str, *, keep_current: bool = False) -> None:
        """Stop the run now: no new calls, in-flight trials cancelled (they count as not
        run), every finished trial kept for the incomplete report (``keep_current``: the
        trial calling this too, when it is one)."""
        st = self.state
        if not st.aborted:
            st.aborted = True
            st.abort_reason = reason
        current = asyncio.current_task() if keep_current else None
        for task in list(self._tasks):
            if task is not current:  # a trial that stops the run by its own error (_record) is kept, not cancelled
                task.cancel()

    def start_trial(self, item: EvalItem, arm: Arm, index: int) -> asyncio.Task[TrialResult]:
        """``run_trial`` as a task that :meth:`interrupt` can cancel."""
        task = asyncio.ensure_future(self.run_trial(item, arm, index))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def run_trial(self, item: EvalItem, arm: Arm, index: int) -> TrialResult:
        """One trial, once a slot is free, graded; :class:`Aborted` when the run stopped before it started."""
        timed = None
        try:
            async with self._sem:
                if self.state.aborted:
                    raise Aborted()
                timed = phases.begin(item=item.id, arm=arm, index=index, target=item.target)
                trial = await (self._trial(item, arm, index) if self.remote is None else self.remote(item, arm, index))
            if item.cases:
                trial.case = item.case_at(index).name
            with phase("journal"):
                scrub_model(trial)  # no secret an agent echoed reaches the journal, a report or the console
                self._record(item, trial)
            return trial
        finally:
            phases.end(timed)

    def _user(self, case: Case, slot: tuple[str, str, int]) -> Callable[[list[dict[str, str]]], Awaitable[str | None]] | None:
        """The simulated user of a multi-turn case (``user:``), played by the judge; None without one."""
        if case.user is None:
            return None
        if self.judge is None:

            async def no_judge(conversation: list[dict[str, str]]) -> str | None:
                raise LLMError("a simulated user (user:) needs a model for the judge; set --provider / --judge-model")

            return no_judge
        if self._simulator is None:
            from agentsproof.executor.simulator import UserSimulator

            self._simulator = UserSimulator(self.judge)
        return self._simulator.for_user(case.user, slot)

    def _workspaces(self) -> Workspaces:
        if self.workspaces is None:
            from agentsproof.isolation.workspace import Workspaces

            self.workspaces = Workspaces()
        return self.workspaces

    async def _trial(self, item: EvalItem, arm: Arm, index: int) -> TrialResult:
        target = self.targets[item.target]
        system = item.system_prompt if arm == "with" or (arm == "plugin" and item.kind == "agent") else BASELINE_SYSTEM_PROMPT
        # the plugin arm: every skill of the plugin; a with-arm of several skills (a Harbor task's): all of them
        skills = list(item.plugin_skills) if arm == "plugin" else list(item.with_skills) if arm == "with" else []
        case = item.case_at(index)
        slot = (item.id, arm, index)  # every call made for this trial carries it: the response cache's key
        t0 = time.perf_counter()
        log = [LogEvent(t=0.0, role="system", text=system), LogEvent(t=0.0, role="user", text=case.prompt)]
        limit = target.timeout or item.timeout
        if item.load_error:  # the case could not be built (a missing fixture): errored, never run
            log.append(LogEvent(t=0.0, role="error", text=item.load_error))
            return TrialResult(index=index, arm=arm, status="errored", error=item.load_error, latency_s=0.0, log=log)
        if skills and not target.offers_skills:  # never a plugin arm run as if its skills were there
            reason = (
                f"the {target.kind} target cannot offer the plugin's skills to its agent, so it cannot run the plugin arm"
                if arm == "plugin"
                else f"the {target.kind} target cannot offer several skills to its agent, so it cannot run this item's with-arm"
            )
            log.append(LogEvent(t=0.0, role="error", text=reason))
            return TrialResult(index=index, arm=arm, status="errored", error=reason, latency_s=0.0, log=log)
        trial = TrialInput(
            item=item,
            arm=arm,
            index=index,
            system=system,
            prompt=case.prompt,
            timeout=limit,
            skills=skills,
            skill=item.skill if arm == "plugin" else None,
            turns=list(case.turns),
            next_turn=self._user(case, slot),
            slot=slot,
        )
        if not target.uses_workspace:
            return await self._run_and_grade(target, trial, log, t0, None)

        spaces = self._workspaces()
        try:
            # file work (the seed's copy, the snapshots, the deletion) runs in a thread: never on the loop
            with phase("seed"):
                folder = await to_thread(spaces.create, item.id, arm, index, case.workspace_seed, list(item.workspace_files))
        except TrialError as err:  # a seed that cannot be copied, a full disk: this trial errored
            log.append(LogEvent(t=time.perf_counter() - t0, role="error", text=str(err)))
            return TrialResult(index=index, arm=arm, status="errored", error=str(err), latency_s=time.perf_counter() - t0, log=log)
        try:
            # an agent in a workspace gets the skill in the with-arm too (installed there by prepare())
            trial = dataclasses.replace(trial, workspace=folder, skill=item.skill if arm in ("with", "plugin") else None)
            try:
                with phase("prepare"):
                    await target.prepare(trial)
            except Exception as err:  # noqa: BLE001 - an errored trial, never the end of the run
                reason = str(err) if isinstance(err, TrialError) else unexpected(f"setting up the {target.kind} target", err)
                log.append(LogEvent(t=time.perf_counter() - t0, role="error", text=reason))
                result = TrialResult(index=index, arm=arm, status="errored", error=reason, latency_s=time.perf_counter() - t0, log=log)
            else:
                from agentsproof.targets.agents.setup import around  # the item's set-up (agentv's hooks) around the trial, in its workspace

                result = await around(trial, folder, log, t0, lambda: self._in_environment(target, trial, log, t0, folder))
        finally:
            with phase("finish"):
                kept = await to_thread(spaces.finish, folder)  # deleted after grading unless --keep-workspaces
        result.workspace = kept
        return result

    async def _in_environment(self, target: Target, trial: TrialInput, log: list[LogEvent], t0: float, folder: Path) -> TrialResult:
        """The trial run and graded, in a fresh container of the item's environment when it has one (removed after grading)."""
        env = trial.item.environment
        if env is None:
            return await self._run_and_grade(target, trial, log, t0, folder)
        if self.environments is None:
            from agentsproof.isolation.environments import Environments

            self.environments = Environments()
        box: Container | None = None
        try:
            try:
                where = f"{trial.item.id}/{trial.arm}/{trial.index}"
                box = await self.environments.start(
                    env, trial=where, workspace=folder, baseline=trial.arm == "without", ports=target.loopback_ports(), mounts=target.container_mounts()
                )
            except TrialError as err:  # the engine could not start or seed it: this trial errored
                log.append(LogEvent(t=time.perf_counter() - t0, role="error", text=str(err)))
                return TrialResult(index=trial.index, arm=trial.arm, status="errored", error=str(err), latency_s=time.perf_counter() - t0, log=log)
            # snapshot after start: the image's own workdir files are not the agent's
            return await self._run_and_grade(target, dataclasses.replace(trial, environment=box), log, t0, folder)
        finally:
            if box is not None:
                await self.environments.remove(box)

    async def _run_and_grade(self, target: Target, trial: TrialInput, log: list[LogEvent], t0: float, folder: Path | None) -> TrialResult:
        """The trial run and graded; ``folder``: its workspace, snapshot first (the files the agent produces are the change from it)."""
        item, arm, index = trial.item, trial.arm, trial.index
        before = None
        if folder is not None:
            from agentsproof.isolation import workspace as ws

            with phase("snapshot"):
                before = await to_thread(ws.snapshot, folder)
        case = item.case_at(index)
        try:
            # A target keeps its own work within the trial's timeout; this outer bound only
            # catches one that ignores it.
            with phase("target"):
                async with asyncio.timeout(trial.timeout + 2 * TIMEOUT_GRACE_S):  # in this task: no extra task per trial
                    rec = await target.run(trial)
            if not isinstance(rec.answer, str):
                raise LLMError(f"the target's reply has no text ({type(rec.answer).__name__})")
            if item.transform:  # promptfoo's options.transform: the answer as the file's code returns it
                await apply_transform(item, rec, t0)
            if trial.environment is not None and trial.workspace is not None and self.environments is not None:
                box: Any = trial.environment  # the container's workdir becomes the host copy the graders and the recorder read
                for note in await self.environments.collect(box, trial.workspace):
                    rec.log.append(LogEvent(t=time.perf_counter() - t0, role="info", text=note))
        except Exception as err:  # noqa: BLE001 - LLMError and timeouts, or anything a target should not raise
            if isinstance(err, TrialError):
                reason = str(err)
            elif isinstance(err, asyncio.TimeoutError):
                reason = f"trial timed out after {seconds(trial.timeout)}"
            else:
                reason = unexpected(f"the {target.kind} target" if is_agent(target.kind) else "the provider call", err)
            if self.state.fatal is None:
                self.state.fatal = fatal_reason(err)  # a failure every trial would repeat: the run stops once it is recorded
            log.append(LogEvent(t=time.perf_counter() - t0, role="error", text=reason))
            return TrialResult(index=index, arm=arm, status="errored", error=reason, latency_s=time.perf_counter() - t0, log=log)
        files: list[FileRecord] = []
        if trial.workspace is not None and before is not None:
            with phase("snapshot"):
                swapped, files = await to_thread(self._produced, trial.workspace, before)
            if swapped:  # replaced by a symlink: nothing there is the agent's work to grade
                log.append(LogEvent(t=time.perf_counter() - t0, role="error", text=swapped))
                return TrialResult(index=index, arm=arm, status="errored", error=swapped, latency_s=time.perf_counter() - t0, log=log)
        log.extend(rec.log)
        log.extend(trajectory_events(rec.trajectory, time.perf_counter() - t0))
        log.append(LogEvent(t=time.perf_counter() - t0, role="assistant", text=rec.answer))
        replies = list(rec.replies) or [rec.answer]
        context = TrialContext(
            answer=rec.answer,
            replies=replies,
            workspace=trial.workspace,
            files=files,
            trajectory=rec.trajectory,
            skill_used=rec.skill_used,
            skills_invoked=rec.skills_invoked if rec.skills_invoked is not None or is_agent(target.kind) else chat_skills(item.skill, arm),
            skill_name=item.skill.name if item.skill else item.name,
            timeout=item.timeout,
            eval_dir=Path(item.eval_path).parent if item.eval_path else None,
            environment=trial.environment,
            usage=rec.usage,
            latency_s=rec.latency_s or (time.perf_counter() - t0),
            cost_usd=rec.cost_usd,
            llm_calls=len(replies) if not is_agent(target.kind) else None,
        )
        base = dict(
            index=index,
            arm=arm,
            response=rec.answer,
            latency_s=rec.latency_s or (time.perf_counter() - t0),
            usage=rec.usage,
            cost_usd=rec.cost_usd,
            tool_calls=rec.raw_tool_calls,
            log=log,
            cached=rec.cached,
            trajectory=rec.trajectory,
            files=files,
            skill_used=rec.skill_used,
            skills_invoked=rec.skills_invoked,
            replies=replies if len(replies) > 1 else None,
        )
        try:
            with phase("graders"):
                graders = await grade_all(
                    rec.answer, case.graders, self._judge_for(item, (item.id, arm, index)), case.prompt, timeout=item.timeout, context=context
                )
        except Exception as err:  # noqa: BLE001 - a grader must never end the run
            reason = unexpected("grading", err)
            log.append(LogEvent(t=time.perf_counter() - t0, role="error", text=reason))
            return TrialResult(status="errored", error=reason, **base)
        for g in graders:
            if logged(g.type):
                detail = str(g.error) if g.errored else f"score {g.score:.2f}: {g.reasoning or ''}".strip()
                log.append(LogEvent(t=time.perf_counter() - t0, role="judge", text=f"{g.type}: {detail}"))
        score = combine(graders)
        if score is None:
            bad = [g for g in graders if g.errored]
            reason = "; ".join(f"grader {g.type} errored: {g.error}" for g in bad)
            return TrialResult(status="errored", error=reason, graders=graders, **base)
        passed = score >= item.threshold - 1e-9 and not failed_gate(case.graders, graders)
        return TrialResult(status="scored", score=score, passed=passed, graders=graders, **base)

    def _produced(self, workspace: Path, before: Snapshot) -> tuple[str | None, list[FileRecord]]:
        """(why the workspace cannot be graded, or None; the files the agent produced, kept by
        the flight recorder): file work, run in a thread."""
        from agentsproof.isolation.workspace import changes

        swapped = self.workspaces.check(workspace) if self.workspaces is not None else None
        if swapped:
            return swapped, []
        files = changes(workspace, before)
        if self.recorder is not None:
            self.recorder(workspace, files)
        return None, files

    def _record(self, item: EvalItem, trial: TrialResult) -> None:
        st = self.state
        if trial.status == "errored" and not item.load_error:  # a case that cannot be built says nothing of the others
            st.consecutive_errors += 1
            st.last_error = trial.error
            if self.options.abort_after and st.consecutive_errors >= self.options.abort_after and not st.aborted:
                st.aborted = True
                st.abort_reason = f"stopped after {st.consecutive_errors} errored trials in a row; last error: {trial.error}"
        else:
            st.consecutive_errors = 0
        if st.on_trial is not None:
            st.on_trial(item, trial)
        if st.fatal is not None and not st.aborted:  # no await follows: this trial is kept, the others are cancelled
            stop_at(self, st.fatal)

    def _judge_for(self, item: EvalItem, slot: tuple[str, str, int]) -> Judge | None:
        """The run's judge, or the item's judge panel (eval.yaml ``judge_models``), for the trial ``slot``."""
        if self.judge is None:
            return None
        if not item.judge_models:
            return self.judge.for_slot(slot)
        from agentsproof.grading.judge import PanelTally

        tally = self._panel_tallies.setdefault(item.id, PanelTally())
        return self.judge.with_panel(tuple(item.judge_models), item.judge_combine, tally).for_slot(slot)

    async def run_item(self, item: EvalItem) -> ItemRun:
        """All of an item's trials, in the batches the stopping rule asks for, until it stops or the run is aborted."""
        with_arm = ArmResult(arm="with", system_prompt_kind=item.kind if item.kind != "case" else "skill")
        without_arm = ArmResult(arm="without", system_prompt_kind="baseline")
        plugin_arm = ArmResult(arm="plugin", system_prompt_kind="plugin") if "plugin" in item.arms else None
        arms = {"with": with_arm, "without": without_arm, **({"plugin": plugin_arm} if plugin_arm else {})}
        done = 0
        incomplete = False
        while done < item.trials and not self.state.aborted:
            extra = {"cases": case_scores(item, with_arm, without_arm)} if item.cases else {}
            more = self.policy(arm_scores(with_arm), arm_scores(without_arm), done, item.trials, **extra)
            more = max(0, min(more, item.trials - done))
            if more == 0:
                break
            tasks = []
            reused: list[TrialResult] = []
            async with self._launching:
                for i in range(done, done + more):
                    for arm in item.arms:
                        earlier = self.prior.get((item.id, arm, i))
                        if earlier is not None:
                            reused.append(earlier)
                            continue
                        await self._started.acquire()
                        task = self.start_trial(item, arm, i)
                        task.add_done_callback(lambda _t: self._started.release())
                        tasks.append(task)
            self.reused += len(reused)
            results = reused + list(await asyncio.gather(*tasks, return_exceptions=True))
            for res in results:
                if isinstance(res, (Aborted, asyncio.CancelledError)) and self.state.aborted:
                    incomplete = True
                    continue
                if isinstance(res, BaseException):
                    raise res
                arms[res.arm].trials.append(res)
            done += more
        if self.state.aborted:
            incomplete = incomplete or done < item.trials
        for each in arms.values():
            each.trials.sort(key=lambda t: t.index)
        run = ItemRun(
            item=item,
            with_arm=with_arm.summarize(),
            without_arm=without_arm.summarize(),
            incomplete=incomplete,
            plugin_arm=plugin_arm.summarize() if plugin_arm else None,
        )
        if item.judge_models and self.judge is not None:
            run.judge_panel = panel_record(item, self._panel_tallies.get(item.id))
        stop_label = getattr(self.policy, "stop_label", None)
        if stop_label is not None and done:
            extra = {"cases": case_scores(item, with_arm, without_arm)} if item.cases else {}
            run.adaptive_stop = stop_label(arm_scores(with_arm), arm_scores(without_arm), done, item.trials, **extra)
        if self.on_item is not None:
            pending = self.on_item(run)  # a coroutine function's is awaited (the session grades the item in a thread)
            if pending is not None:
                await pending
        return run

    async def run(self, items: Sequence[EvalItem]) -> list[ItemRun]:
        """Every item, in order (their trials share the runner's slots)."""
        return list(await asyncio.gather(*(self.run_item(it) for it in items)))
