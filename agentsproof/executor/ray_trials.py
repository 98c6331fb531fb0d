"""Trials on a Ray cluster (``--executor ray``).

The driver (the machine that runs the command) keeps everything a run decides: the
scheduling and ``--parallel``, the journal, ``--adaptive``, the reports. Only the trial
itself — the target's call and the graders — runs on a node, as one Ray task that asks for
the custom resource ``agentsproof_trial`` (a node offers as many as it runs at once). The
node builds its own provider client from the run's resolved provider and models; the
provider's key and URL travel as one object in Ray's object store (``ray.put``), handed to
each task as an argument: never in ``runtime_env``, so never in Ray's dashboard, its job
listings or its logs. ``--max-calls`` / ``--max-cost`` are kept by one budget, a small actor
every node asks before each call, below the response cache (a cached reply costs nothing),
exactly as the local stack does.

Faults: a trial that raises on the node is an errored trial carrying the node's reason; a
node that dies mid-trial has its trials re-run elsewhere by Ray (``max_retries``), and the
driver records each trial once, when its one result comes back; an interrupted driver
cancels the trials still out (``ray.cancel``).
"""

from __future__ import annotations

import asyncio
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentsproof.core.scrub import clip, scrub
from agentsproof.core.threads import to_thread
from agentsproof.model.results import LogEvent, TrialResult

if TYPE_CHECKING:
    from agentsproof.executor.runner import DualArmRunner
    from agentsproof.llm.base import ChatRequest, ChatResponse
    from agentsproof.llm.budget import Budget
    from agentsproof.llm.stack import ClientStack
    from agentsproof.model.items import EvalItem
    from agentsproof.model.results import Arm

__all__ = ["DOCKER_RESOURCE", "MAX_RETRIES", "RESOURCE", "RayTrials", "forwarded_env"]

RESOURCE = "agentsproof_trial"
"""The custom resource a node offers, one per trial it runs at once (``ray start --resources '{"agentsproof_trial": 4}'``)."""
DOCKER_RESOURCE = "docker"
"""Offered by nodes with a container engine; container trials ask for it too."""
MAX_RETRIES = 3
"""How often Ray re-runs a trial whose node or worker died (a trial that raised is not re-run: its error is its result)."""


def forwarded_env(environ: dict[str, str] | None = None) -> dict[str, str]:
    """What a node needs of the driver's environment to call the run's provider: the
    providers' key and URL variables and the ``AGENTSPROOF_*`` settings. Sent through the
    object store, never through ``runtime_env``."""
    from agentsproof.llm.registry import all_entries

    env = os.environ if environ is None else environ
    names = {n for s in all_entries() for n in (*s.secret_envs, *s.url_envs)}
    return {k: v for k, v in env.items() if k in names or k.startswith("AGENTSPROOF_")}


@dataclass(frozen=True)
class NodeRun:
    """What every trial of the run needs on a node besides its item: the resolved provider
    and models and the run's options (never a secret)."""

    provider: str
    model: str
    judge_model: str
    prompt_cache: bool = True
    cache_dir: str | None = None
    judge: bool = False
    """The run has a judge (some item's graders, or a simulated user, ask for one)."""


@dataclass
class NodeOutcome:
    """What a node sends back for one trial."""

    trial: TrialResult
    node: str = ""
    fatal: str | None = None
    """A failure every trial would repeat (agentsproof.executor.fatal), seen on the node."""
    budget_stop: str | None = None
    """The run's budget refused a call of this trial: the run stops, this trial counts as not run."""


class BudgetGate:
    """The run's one budget, as a Ray actor: every node's calls are admitted and settled here."""

    def __init__(self, budget: Budget):
        self.budget = budget

    def admit(self, request: ChatRequest) -> tuple[float, str | None]:
        """(reserved cost, None), or (0, why) when the budget refuses the call."""
        from agentsproof.llm.budget import BudgetExhausted

        try:
            return self.budget.admit(request), None
        except BudgetExhausted as err:
            return 0.0, str(err)

    def settle(self, reserved: float, response: ChatResponse | None, model: str) -> None:
        """A call's reservation freed and its cost added."""
        self.budget.settle(reserved, response, model)

    def state(self) -> tuple[int, float, str | None]:
        """(calls, USD spent, why it stopped)."""
        return self.budget.calls, self.budget.spent, self.budget.stopped


def _gated(inner: Any, gate: Any, stops: list[str]) -> Any:
    """A client whose calls are admitted by the run's :class:`BudgetGate` first (``stops``: the refusals seen)."""
    from agentsproof.llm.base import ChatRequest, LLMClient
    from agentsproof.llm.budget import BudgetExhausted

    class GateClient(LLMClient):
        def __init__(self) -> None:
            self.inner = inner
            self.name = inner.name
            self.max_concurrency = inner.max_concurrency

        async def complete(self, request: ChatRequest) -> ChatResponse:
            reserved, why = await gate.admit.remote(request)
            if why is not None:
                stops.append(why)
                raise BudgetExhausted(why)
            reply = None
            try:
                reply = await inner.complete(request)
                return reply  # type: ignore[no-any-return]
            finally:
                await gate.settle.remote(reserved, reply, request.model)

        async def embed(self, texts: list[str], model: str, timeout: float | None = None) -> list[list[float]]:
            probe = ChatRequest(messages=[{"role": "user", "content": t} for t in texts], model=model, max_tokens=1)
            reserved, why = await gate.admit.remote(probe)
            if why is not None:
                stops.append(why)
                raise BudgetExhausted(why)
            try:
                return await inner.embed(texts, model, timeout)  # type: ignore[no-any-return]
            finally:
                await gate.settle.remote(reserved, None, model)

        async def aclose(self) -> None:
            await inner.aclose()

        def describe(self) -> dict[str, Any]:
            return inner.describe()  # type: ignore[no-any-return]

    return GateClient()


async def _on_node(run: NodeRun, gate: Any, item: EvalItem, arm: Arm, index: int) -> NodeOutcome:
    """One trial run and graded here, on a node, as the local runner runs it."""
    from agentsproof.executor.runner import DualArmRunner, Scheduling
    from agentsproof.grading.grade import Judge
    from agentsproof.llm.registry import build_layers
    from agentsproof.targets.chat.target import ChatTarget

    client, _ = build_layers(run.provider, prompt_cache=run.prompt_cache)
    stops: list[str] = []
    if gate is not None:
        client = _gated(client, gate, stops)
    if run.cache_dir is not None:
        from agentsproof.llm.cache import CachingClient, ResponseCache

        client = CachingClient(client, ResponseCache(Path(run.cache_dir)))
    target = ChatTarget(client, run.model)
    judge = Judge(client=client, model=run.judge_model) if run.judge else None
    runner = DualArmRunner({"chat": target}, Scheduling(parallel=1), judge)
    try:
        trial = await runner._trial(item, arm, index)
    finally:
        try:
            await target.aclose()
        finally:
            await client.aclose()
    return NodeOutcome(trial=trial, fatal=runner.state.fatal, budget_stop=stops[0] if stops else None)


def node_trial(run: NodeRun, env: dict[str, str], gate: Any, item: EvalItem, arm: Arm, index: int) -> NodeOutcome:
    """The Ray task: one trial on this node. ``env`` (the provider's key and URL, the
    settings) is set for the trial only and registered with the scrubber first."""
    from agentsproof.core import scrub as scrubber

    scrubber.register_environment(env)
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        outcome = asyncio.run(_on_node(run, gate, item, arm, index))
    except Exception as err:  # noqa: BLE001 - anything the runner let through: an errored trial with the node's reason
        reason = f"the trial failed on its Ray node: {type(err).__name__}: {clip(' '.join(scrub(str(err)).split()), 300)}"
        trial = TrialResult(index=index, arm=arm, status="errored", error=reason, latency_s=0.0, log=[LogEvent(t=0.0, role="error", text=reason)])
        outcome = NodeOutcome(trial=trial)
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    try:
        import ray

        outcome.node = ray.get_runtime_context().get_node_id()
    except Exception:  # noqa: BLE001 - outside a Ray worker (called directly): no node id
        outcome.node = ""
    return outcome


@dataclass
class RayTrials:
    """The driver's side: connects to the cluster, sends each trial as a task, awaits its result."""

    address: str | None
    stack: ClientStack
    runner: DualArmRunner
    cache_dir: Path | None = None
    prompt_cache: bool = True
    refs: set[Any] = field(default_factory=set)
    """The trials out on the cluster now (their ObjectRefs)."""
    nodes: dict[str, int] = field(default_factory=dict)
    """Trials finished per node id."""
    _owned: bool = False
    _env_ref: Any = None
    _gate: Any = None
    _task: Any = None
    _run: NodeRun | None = None

    async def start(self) -> None:
        """Connect (off the loop) and check that some node offers the trial resource."""
        await to_thread(self._connect)

    def _connect(self) -> None:
        from agentsproof.core.errors import ProviderUnavailable
        from agentsproof.core.extras import install_line

        try:
            import ray
        except ImportError as err:
            raise ProviderUnavailable(f"--executor ray needs Ray: {install_line('ray')}") from err
        if not ray.is_initialized():
            kwargs: dict[str, Any] = {"log_to_driver": False, "logging_level": "WARNING", "configure_logging": True}
            if self.address:
                ray.init(address=self.address, **kwargs)
            else:  # no cluster named: a one-node Ray on this machine, on loopback
                ray.init(_node_ip_address="127.0.0.1", include_dashboard=False, resources={RESOURCE: max(1, self.runner.options.parallel)}, **kwargs)
            self._owned = True
        offered = ray.cluster_resources().get(RESOURCE, 0)
        if not offered:
            where = self.address or "this machine"
            raise ProviderUnavailable(
                f"no node of the Ray cluster at {where} offers the {RESOURCE!r} resource; start each node with "
                f"ray start --resources '{{\"{RESOURCE}\": N}}' (N: the trials it runs at once)"
            )
        self._env_ref = ray.put(forwarded_env())  # the key travels in the object store, never in runtime_env
        budget = self.stack.budget
        if budget is not None:
            from dataclasses import replace

            from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

            here = ray.get_runtime_context().get_node_id()
            actor = ray.remote(num_cpus=0, max_restarts=0)(BudgetGate)
            self._gate = actor.options(scheduling_strategy=NodeAffinitySchedulingStrategy(here, soft=True)).remote(replace(budget, on_exhausted=None))
        self._task = ray.remote(num_cpus=0, max_retries=MAX_RETRIES, retry_exceptions=False, scheduling_strategy="SPREAD")(node_trial)
        self._run = NodeRun(
            provider=self.stack.provider,
            model=self.stack.model,
            judge_model=self.stack.judge_model,
            prompt_cache=self.prompt_cache,
            cache_dir=str(self.cache_dir) if self.cache_dir is not None else None,
            judge=self.runner.judge is not None,
        )

    async def __call__(self, item: EvalItem, arm: Arm, index: int) -> TrialResult:
        """One trial, sent to a node that offers its resources, its result awaited without holding the loop."""
        import ray

        resources = {RESOURCE: 1.0, **({DOCKER_RESOURCE: 1.0} if item.environment is not None else {})}
        t0 = time.perf_counter()
        ref = self._task.options(resources=resources).remote(self._run, self._env_ref, self._gate, item, arm, index)
        self.refs.add(ref)
        try:
            outcome: NodeOutcome = await ref
        except asyncio.CancelledError:
            ray.cancel(ref, force=True)  # the driver stopped: the trial's worker is ended on its node (a blocked asyncio loop ignores a soft cancel)
            raise
        except Exception as err:  # noqa: BLE001 - the task itself failed (retries spent, a worker that could not start): errored, never lost
            text = clip(" ".join(scrub(str(err)).split()), 400)
            reason = f"the trial could not run on the Ray cluster: {type(err).__name__}: {text}"
            return TrialResult(
                index=index, arm=arm, status="errored", error=reason, latency_s=time.perf_counter() - t0, log=[LogEvent(t=0.0, role="error", text=reason)]
            )
        finally:
            self.refs.discard(ref)
        self.nodes[outcome.node] = self.nodes.get(outcome.node, 0) + 1
        outcome.trial.log.append(LogEvent(t=outcome.trial.latency_s, role="info", text=f"ran on Ray node {outcome.node[:12]}"))
        if outcome.budget_stop is not None:
            budget = self.stack.budget
            if budget is not None and budget.stopped is None:
                budget.stopped = outcome.budget_stop
                if budget.on_exhausted is not None:
                    budget.on_exhausted(outcome.budget_stop)  # interrupts the run, this trial included
            await asyncio.sleep(0)  # cancelled by the interrupt: this trial counts as not run
        if outcome.fatal is not None and self.runner.state.fatal is None:
            self.runner.state.fatal = outcome.fatal
        return outcome.trial

    async def close(self) -> None:
        """The budget's count brought back to the driver's report, and the connection closed when this run opened it."""
        await to_thread(self._close)

    def _close(self) -> None:
        import ray

        if not ray.is_initialized():
            return
        try:
            for ref in list(self.refs):
                ray.cancel(ref, force=True)
            if self._gate is not None and self.stack.budget is not None:
                calls, spent, stopped = ray.get(self._gate.state.remote(), timeout=60)
                budget = self.stack.budget
                budget.calls, budget.spent = calls, spent
                budget.stopped = budget.stopped or stopped
                ray.kill(self._gate)
        finally:
            if self._owned:
                ray.shutdown()
