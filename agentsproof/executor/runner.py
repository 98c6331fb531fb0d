"""The dual-arm runner.

For every item, N trials run with the skill/agent text as the system prompt and N with a
generic baseline prompt. All trials of all items in one command share one client and one
semaphore (``parallel``). A provider error or timeout makes a trial *errored*: it keeps its
reason, is left out of the arm's scores and is counted in every report.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Callable, Sequence

from agentsproof.config import GraderConfig
from agentsproof.llm.base import ChatRequest, LLMClient, LLMError
from agentsproof.pipeline.grader import Judge, combine, grade_all
from agentsproof.schemas.artifacts import ArmResult, LogEvent, TrialResult

BASELINE_SYSTEM_PROMPT = "You are a helpful assistant."
TIMEOUT_GRACE_S = 5.0
"""How far past the eval's timeout the runner waits for a provider that overruns its budget."""


@dataclass
class EvalItem:
    """What the runner needs to know about one skill/agent eval or tc-eval case."""

    id: str
    name: str
    kind: str  # skill | agent | case
    source_path: str
    system_prompt: str
    task_name: str
    prompt: str
    graders: Sequence[GraderConfig]
    trials: int
    timeout: float
    threshold: float
    eval_path: str | None = None
    source_sha256: str = ""
    warnings: tuple[str, ...] = ()
    """E.g. declared tools that cannot run in a chat trial (copied to ItemResult.warnings)."""


@dataclass
class RunOptions:
    model: str
    parallel: int = 1
    abort_after: int = 0
    """Stop the whole run after this many errored trials in a row (0: never)."""
    temperature: float | None = None
    max_tokens: int | None = None


# A stopping rule gets (with-arm scores, without-arm scores, trials done per arm, cap) and
# returns how many more trials per arm to run (0 = stop). The default runs all at once.
BatchPolicy = Callable[[list[float], list[float], int, int], int]


def run_all_at_once(with_scores: list[float], without_scores: list[float], done: int, cap: int) -> int:
    return cap - done


class Aborted(Exception):
    pass


@dataclass
class _RunState:
    consecutive_errors: int = 0
    aborted: bool = False
    abort_reason: str | None = None
    last_error: str | None = None
    on_trial: Callable[[EvalItem, TrialResult], None] | None = None


@dataclass
class ItemRun:
    item: EvalItem
    with_arm: ArmResult
    without_arm: ArmResult
    incomplete: bool = False


class DualArmRunner:
    def __init__(
        self,
        client: LLMClient,
        options: RunOptions,
        judge: Judge | None,
        policy: BatchPolicy = run_all_at_once,
        on_trial: Callable[[EvalItem, TrialResult], None] | None = None,
        on_item: Callable[[ItemRun], None] | None = None,
        prior: dict[tuple[str, str, int], TrialResult] | None = None,
    ):
        self.client = client
        self.prior = prior or {}
        """Trials already finished (resume, retry): used as they are, never run again."""
        self.reused = 0
        self.options = options
        self.judge = judge
        self.policy = policy
        parallel = max(1, options.parallel)
        if client.max_concurrency:
            parallel = min(parallel, client.max_concurrency)
        self._sem = asyncio.Semaphore(parallel)
        self.state = _RunState(on_trial=on_trial)
        self.on_item = on_item
        self._tasks: set[asyncio.Task[TrialResult]] = set()

    def interrupt(self, reason: str) -> None:
        """Stop the run now: no new calls, in-flight trials cancelled (they count as not
        run), every finished trial kept for the incomplete report."""
        st = self.state
        if not st.aborted:
            st.aborted = True
            st.abort_reason = reason
        for task in list(self._tasks):
            task.cancel()

    def start_trial(self, item: EvalItem, arm: str, index: int) -> "asyncio.Task[TrialResult]":
        """``run_trial`` as a task that :meth:`interrupt` can cancel."""
        task = asyncio.ensure_future(self.run_trial(item, arm, index))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def run_trial(self, item: EvalItem, arm: str, index: int) -> TrialResult:
        from agentsproof.llm.cache import trial_slot

        system = item.system_prompt if arm == "with" else BASELINE_SYSTEM_PROMPT
        trial_slot.set((item.id, arm, index))  # this task's context only: keys its cached calls
        async with self._sem:
            if self.state.aborted:
                raise Aborted()
            trial = await self._trial(item, arm, index, system)
        self._record(item, trial)
        return trial

    @staticmethod
    def _unexpected(where: str, err: Exception) -> str:
        """The reason for an errored trial when something below raised what it should not:
        one line, bounded, no traceback (AGENTSPROOF_DEBUG=1 still shows nothing here; the
        exception type names the layer)."""
        text = " ".join(str(err).split())
        if len(text) > 300:
            text = text[:299] + "…"
        return f"{where} failed unexpectedly: {type(err).__name__}: {text}" if text else f"{where} failed unexpectedly: {type(err).__name__}"

    async def _trial(self, item: EvalItem, arm: str, index: int, system: str) -> TrialResult:
        t0 = time.perf_counter()
        log = [
            LogEvent(t=0.0, role="system", text=system),
            LogEvent(t=0.0, role="user", text=item.prompt),
        ]
        req = ChatRequest(
            messages=[{"role": "system", "content": system}, {"role": "user", "content": item.prompt}],
            model=self.options.model,
            temperature=self.options.temperature,
            max_tokens=self.options.max_tokens,
            timeout=item.timeout,
            budget=item.timeout,
        )
        try:
            # The retry loop keeps every attempt and wait inside the budget and says why it
            # stopped; this outer bound only catches a provider that ignores it.
            resp = await asyncio.wait_for(self.client.complete(req), item.timeout + TIMEOUT_GRACE_S)
            if not isinstance(resp.text, str):
                raise LLMError(f"the provider's reply has no text ({type(resp.text).__name__})")
        except Exception as err:  # noqa: BLE001 - LLMError and timeouts, or anything a provider should not raise
            if isinstance(err, LLMError):
                reason = str(err)
            elif isinstance(err, asyncio.TimeoutError):
                reason = f"trial timed out after {item.timeout:g}s"
            else:
                reason = self._unexpected("the provider call", err)
            log.append(LogEvent(t=time.perf_counter() - t0, role="error", text=reason))
            return TrialResult(
                index=index, arm=arm, status="errored", error=reason, latency_s=time.perf_counter() - t0, log=log
            )
        log.append(LogEvent(t=time.perf_counter() - t0, role="assistant", text=resp.text))
        for call in resp.tool_calls:
            log.append(LogEvent(t=time.perf_counter() - t0, role="tool", text=f"{call.get('name', '')} {call.get('arguments', '')}".strip()))
        try:
            graders = await grade_all(resp.text, item.graders, self.judge, item.prompt, timeout=item.timeout)
        except Exception as err:  # noqa: BLE001 - a grader must never end the run
            reason = self._unexpected("grading", err)
            log.append(LogEvent(t=time.perf_counter() - t0, role="error", text=reason))
            return TrialResult(
                index=index, arm=arm, status="errored", error=reason, response=resp.text,
                latency_s=resp.latency_s, usage=resp.usage, log=log,
            )
        for g in graders:
            if g.type != "deterministic":
                detail = g.error if g.errored else f"score {g.score:.2f}: {g.reasoning or ''}".strip()
                log.append(LogEvent(t=time.perf_counter() - t0, role="judge", text=f"{g.type}: {detail}"))
        score = combine(graders)
        base = dict(
            index=index,
            arm=arm,
            response=resp.text,
            latency_s=resp.latency_s,
            usage=resp.usage,
            cost_usd=resp.cost_usd,
            graders=graders,
            tool_calls=resp.tool_calls,
            log=log,
            cached=resp.cached,
        )
        if score is None:
            bad = [g for g in graders if g.errored]
            reason = "; ".join(f"grader {g.type} errored: {g.error}" for g in bad)
            return TrialResult(status="errored", error=reason, **base)
        return TrialResult(status="scored", score=score, passed=score >= item.threshold - 1e-9, **base)

    def _record(self, item: EvalItem, trial: TrialResult) -> None:
        st = self.state
        if trial.status == "errored":
            st.consecutive_errors += 1
            st.last_error = trial.error
            if self.options.abort_after and st.consecutive_errors >= self.options.abort_after and not st.aborted:
                st.aborted = True
                st.abort_reason = (
                    f"stopped after {st.consecutive_errors} errored trials in a row; last error: {trial.error}"
                )
        else:
            st.consecutive_errors = 0
        if st.on_trial is not None:
            st.on_trial(item, trial)

    async def run_item(self, item: EvalItem) -> ItemRun:
        with_arm = ArmResult(arm="with", system_prompt_kind=item.kind if item.kind != "case" else "skill")
        without_arm = ArmResult(arm="without", system_prompt_kind="baseline")
        done = 0
        incomplete = False
        while done < item.trials and not self.state.aborted:
            more = self.policy(_scores(with_arm), _scores(without_arm), done, item.trials)
            more = max(0, min(more, item.trials - done))
            if more == 0:
                break
            tasks = []
            reused: list[TrialResult] = []
            for i in range(done, done + more):
                for arm in ("with", "without"):
                    earlier = self.prior.get((item.id, arm, i))
                    if earlier is not None:
                        reused.append(earlier)
                    else:
                        tasks.append(self.start_trial(item, arm, i))
            self.reused += len(reused)
            results = reused + list(await asyncio.gather(*tasks, return_exceptions=True))
            for res in results:
                if isinstance(res, (Aborted, asyncio.CancelledError)) and self.state.aborted:
                    incomplete = True
                    continue
                if isinstance(res, BaseException):
                    raise res
                (with_arm if res.arm == "with" else without_arm).trials.append(res)
            done += more
        if self.state.aborted:
            incomplete = incomplete or done < item.trials
        with_arm.trials.sort(key=lambda t: t.index)
        without_arm.trials.sort(key=lambda t: t.index)
        run = ItemRun(item=item, with_arm=with_arm.summarize(), without_arm=without_arm.summarize(), incomplete=incomplete)
        if self.on_item is not None:
            self.on_item(run)
        return run

    async def run(self, items: Sequence[EvalItem]) -> list[ItemRun]:
        return list(await asyncio.gather(*(self.run_item(it) for it in items)))


def _scores(arm: ArmResult) -> list[float]:
    return [t.score for t in arm.trials if t.status == "scored" and t.score is not None]
