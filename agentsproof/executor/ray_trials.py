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
node that dies mid-trial has its trials sent again by the driver (at most ``MAX_RETRIES``
times, each such trial's log saying so), and the driver records each trial once, when its
one result comes back; an interrupted driver cancels the trials still out (``ray.cancel``)
and removes their containers on every node. Agent and container trials run on the nodes
too (agentsproof.executor.ray_nodes).
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentsproof.core.scrub import clip, scrub
from agentsproof.core.threads import to_thread
from agentsproof.executor.ray_common import (
    DOCKER_RESOURCE,
    MAX_RETRIES,
    RESOURCE,
    BudgetGate,
    NodeOutcome,
    NodeRun,
    forwarded_env,
    node_client,
    node_env,
    panel_of,
)
from agentsproof.model.results import LogEvent, TrialResult
from agentsproof.targets.registry import CHAT, MODEL_KINDS, is_agent

if TYPE_CHECKING:
    from collections.abc import Sequence

    from agentsproof.executor.ray_nodes import AgentRun
    from agentsproof.executor.recorder import FileStore
    from agentsproof.executor.runner import DualArmRunner
    from agentsproof.llm.stack import ClientStack
    from agentsproof.model.items import EvalItem
    from agentsproof.model.results import Arm
    from agentsproof.targets.base import TargetDef

__all__ = ["DOCKER_RESOURCE", "MAX_RETRIES", "RESOURCE", "RayTrials", "forwarded_env"]


async def _on_node(run: NodeRun, gate: Any, item: EvalItem, arm: Arm, index: int) -> NodeOutcome:
    """One trial run and graded here, on a node, as the local runner runs it."""
    from agentsproof.executor.runner import DualArmRunner, Scheduling
    from agentsproof.grading.grade import Judge
    from agentsproof.targets.chat.target import ChatTarget

    stops: list[str] = []
    client = node_client(run, gate, stops)
    target = ChatTarget(client, run.model)
    judge = Judge(client=client, model=run.judge_model) if run.judge else None
    runner = DualArmRunner({CHAT: target}, Scheduling(parallel=1), judge)
    try:
        trial = await runner._trial(item, arm, index)
    finally:
        try:
            await target.aclose()
        finally:
            await client.aclose()
    return NodeOutcome(trial=trial, fatal=runner.state.fatal, budget_stop=stops[0] if stops else None, panel=panel_of(runner, item))


def node_trial(run: NodeRun, env: dict[str, str], gate: Any, item: EvalItem, arm: Arm, index: int, agents: AgentRun | None = None) -> NodeOutcome:
    """The Ray task: one trial on this node. ``env`` (the provider's key and URL, the
    settings) is set for the trial only and registered with the scrubber first. ``agents``:
    an agent or container trial (agentsproof.executor.ray_nodes), run on this worker's own loop."""
    with node_env(env):
        try:
            if agents is None:
                outcome = asyncio.run(_on_node(run, gate, item, arm, index))
            else:
                from agentsproof.executor.ray_nodes import agent_trial_on_node, on_node_loop

                outcome = on_node_loop(agent_trial_on_node(run, agents, gate, item, arm, index))
        except Exception as err:  # noqa: BLE001 - anything the runner let through: an errored trial with the node's reason
            reason = f"the trial failed on its Ray node: {type(err).__name__}: {clip(' '.join(scrub(str(err)).split()), 300)}"
            trial = TrialResult(index=index, arm=arm, status="errored", error=reason, latency_s=0.0, log=[LogEvent(t=0.0, role="error", text=reason)])
            outcome = NodeOutcome(trial=trial)
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
    items: Sequence[EvalItem] = ()
    """The run's items: agent and container ones are checked on every node before the first trial."""
    target_defs: dict[str, TargetDef] = field(default_factory=dict)
    store: FileStore | None = None
    """The driver's flight recorder (None: produced files are not kept): it stores what the nodes send back."""
    refs: set[Any] = field(default_factory=set)
    """The trials out on the cluster now (their ObjectRefs)."""
    nodes: dict[str, int] = field(default_factory=dict)
    """Trials finished per node id."""
    reruns: int = 0
    """Trials sent again because their node (or its worker) died under them."""
    notes: list[str] = field(default_factory=list)
    """The lines said at start about nodes that run none of the agent trials."""
    _owned: bool = False
    _env_ref: Any = None
    _gate: Any = None
    _task: Any = None
    _run: NodeRun | None = None
    _agents: Any = None
    _agent_run_id: str = ""
    _docker_nodes: set[str] = field(default_factory=set)
    _good: set[str] | None = None
    """Nodes that passed the agent check, when some did not (None: every node can run every trial)."""
    _load: dict[str, int] = field(default_factory=dict)

    async def start(self) -> None:
        """Connect (off the loop), check that some node offers the trial resource, and check
        every node for the agent trials (their images built there)."""
        await to_thread(self._connect)

    def _connect(self) -> None:
        import ray

        self._owned = connect(self.address, self.runner.options.parallel)
        self._env_ref = ray.put(forwarded_env())  # the key travels in the object store, never in runtime_env
        budget = self.stack.budget
        if budget is not None:
            from dataclasses import replace

            from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

            here = ray.get_runtime_context().get_node_id()
            actor = ray.remote(num_cpus=0, max_restarts=0)(BudgetGate)
            self._gate = actor.options(scheduling_strategy=NodeAffinitySchedulingStrategy(here, soft=True)).remote(replace(budget, on_exhausted=None))
        # retried here, not by Ray: the driver knows (and the trial's log says) that it ran again
        self._task = ray.remote(num_cpus=0, max_retries=0, retry_exceptions=False)(node_trial)
        self._run = NodeRun(
            provider=self.stack.provider,
            model=self.stack.model,
            judge_model=self.stack.judge_model,
            prompt_cache=self.prompt_cache,
            cache_dir=str(self.cache_dir) if self.cache_dir is not None else None,
            judge=self.runner.judge is not None,
        )
        agent_items = [it for it in self.items if _is_agent(it)]
        if agent_items:
            self._check_nodes(ray, agent_items)

    def _check_nodes(self, ray: Any, items: list[EvalItem]) -> None:
        """Every node checked for the agent trials and their images built there; the nodes that
        cannot run them named in one line each (their trials go elsewhere)."""
        import uuid

        from agentsproof.core.errors import ProviderUnavailable
        from agentsproof.core.notice import note
        from agentsproof.executor.ray_nodes import AgentRun, alive_trial_nodes, probe_nodes

        assert self._run is not None
        docker_nodes = {n["NodeID"] for n in ray.nodes() if n.get("Alive") and n.get("Resources", {}).get(DOCKER_RESOURCE, 0) > 0}
        boxed = next((it for it in items if it.environment is not None), None)
        if boxed is not None and not docker_nodes:  # its trials could never be placed: said now, not a run that waits forever
            raise ProviderUnavailable(
                f"{boxed.id} runs in a container, and no node of the Ray cluster offers the {DOCKER_RESOURCE!r} resource; start each node "
                f'that has a container engine with ray start --resources \'{{"{RESOURCE}": N, "{DOCKER_RESOURCE}": N}}\''
            )
        self._docker_nodes = docker_nodes
        names = sorted({it.target for it in items} - set(MODEL_KINDS))
        targets = {n: (self.target_defs[n], self.target_defs[n].expanded()) for n in names}
        envs = tuple({id(it.environment): it.environment for it in items if it.environment is not None}.values())
        folders = sorted({str(Path(it.eval_path).parent) for it in items if it.eval_path})
        agents = AgentRun(run_id=uuid.uuid4().hex[:12], targets=targets, record=self.store is not None, environments=envs, folders=tuple(folders))
        self._agents = ray.put(agents)  # the targets' expanded values (secrets among them) travel in the object store, like the key
        self._agent_run_id = agents.run_id
        good, lines, _ = probe_nodes(ray, self._run, self._env_ref, self._agents)
        for line in lines:
            note(line)
        self.notes = lines
        if not good:
            raise ProviderUnavailable(f"no node of the Ray cluster can run this run's agent trials ({lines[0] if lines else 'no trial node'})")
        if set(good) != set(alive_trial_nodes(ray)):
            self._good = set(good)

    def _pick(self, agent: bool, boxed: bool) -> str | None:
        """The node an agent trial goes to when some nodes cannot run it (the least busy of those
        that can, with an engine for a container trial); None: Ray spreads it; "": none can."""
        if not agent or self._good is None:
            return None
        able = sorted(n for n in self._good if not boxed or n in self._docker_nodes)
        if not able:
            return ""
        return min(able, key=lambda n: self._load.get(n, 0))

    async def __call__(self, item: EvalItem, arm: Arm, index: int) -> TrialResult:
        """One trial, sent to a node that offers its resources, its result awaited without holding
        the loop; sent again (at most :data:`MAX_RETRIES` times) when its node dies under it."""
        import ray
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        agent = _is_agent(item)
        resources = {RESOURCE: 1.0, **({DOCKER_RESOURCE: 1.0} if item.environment is not None else {})}
        t0 = time.perf_counter()
        lost: list[str] = []
        outcome: NodeOutcome | None = None
        while outcome is None:
            node = self._pick(agent, item.environment is not None)
            if node == "" or len(lost) > MAX_RETRIES:
                return _errored(index, arm, f"the trial lost its Ray node {len(lost)} time(s); last: {lost[-1] if lost else 'no node can run it'}", t0)
            strategy: Any = "SPREAD" if node is None else NodeAffinitySchedulingStrategy(node, soft=False)
            args = (self._run, self._env_ref, self._gate, item, arm, index, self._agents if agent else None)
            ref = self._task.options(resources=resources, scheduling_strategy=strategy).remote(*args)
            self.refs.add(ref)
            if node:
                self._load[node] = self._load.get(node, 0) + 1
            try:
                outcome = await ref
            except asyncio.CancelledError:
                ray.cancel(ref, force=True)  # the driver stopped: the trial's worker is ended on its node (a blocked asyncio loop ignores a soft cancel)
                raise
            except node_lost() as err:  # the node or its worker died under the trial: sent again
                lost.append(f"{type(err).__name__}: {clip(' '.join(scrub(str(err)).split()), 200)}")
                if node and self._good is not None and node not in await to_thread(_alive, ray):
                    self._good.discard(node)
            except Exception as err:  # noqa: BLE001 - the task itself failed (a worker that could not start): errored, never lost
                text = clip(" ".join(scrub(str(err)).split()), 400)
                return _errored(index, arm, f"the trial could not run on the Ray cluster: {type(err).__name__}: {text}", t0)
            finally:
                self.refs.discard(ref)
                if node:
                    self._load[node] -= 1
        self.nodes[outcome.node] = self.nodes.get(outcome.node, 0) + 1
        if lost:
            self.reruns += 1
            outcome.trial.log.append(LogEvent(t=outcome.trial.latency_s, role="info", text=f"re-run after its Ray node died ({len(lost)}x; {lost[-1]})"))
        outcome.trial.log.append(LogEvent(t=outcome.trial.latency_s, role="info", text=f"ran on Ray node {outcome.node[:12]}"))
        if outcome.panel is not None:  # the panel's record gathered from every node (armscores.panel_record)
            from agentsproof.grading.judge import PanelTally

            tally = self.runner._panel_tallies.setdefault(item.id, PanelTally())
            tally.verdicts += outcome.panel[0]
            tally.disagreements += outcome.panel[1]
        if outcome.files and self.store is not None:
            await to_thread(_keep_files, self.store, outcome.files)
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
        """The budget's count brought back to the driver's report, the run's containers removed on
        every node, and the connection closed when this run opened it."""
        await to_thread(self._close)

    def _close(self) -> None:
        import ray

        if not ray.is_initialized():
            return
        try:
            for ref in list(self.refs):
                ray.cancel(ref, force=True)
            if self._agents is not None and any(it.environment is not None for it in self.items):
                from agentsproof.executor.ray_nodes import sweep_nodes

                sweep_nodes(ray, self._agent_run_id)
            if self._gate is not None and self.stack.budget is not None:
                calls, spent, stopped = ray.get(self._gate.state.remote(), timeout=60)
                budget = self.stack.budget
                budget.calls, budget.spent = calls, spent
                budget.stopped = budget.stopped or stopped
                ray.kill(self._gate)
        finally:
            if self._owned:
                ray.shutdown()


def _is_agent(item: EvalItem) -> bool:
    """An agent target's trial or one in a container (agentsproof.executor.ray_nodes), not a chat call."""
    return is_agent(item.target) or item.environment is not None


def node_lost() -> tuple[type[Exception], ...]:
    """Ray's errors for a trial whose node or worker died under it (the trial itself never raised)."""
    from ray import exceptions as rx

    return (rx.NodeDiedError, rx.WorkerCrashedError, rx.LocalRayletDiedError, rx.TaskUnschedulableError, rx.ObjectLostError, rx.RaySystemError)


def _alive(ray: Any) -> set[str]:
    from agentsproof.executor.ray_nodes import alive_trial_nodes

    return set(alive_trial_nodes(ray))


def _errored(index: int, arm: Arm, reason: str, t0: float) -> TrialResult:
    return TrialResult(
        index=index, arm=arm, status="errored", error=reason, latency_s=time.perf_counter() - t0, log=[LogEvent(t=0.0, role="error", text=reason)]
    )


def _keep_files(store: FileStore, files: dict[str, bytes]) -> None:
    """A node's produced files put into the driver's file store (the digests the trial's records name)."""
    for data in files.values():
        try:
            store.put(data)
        except OSError as err:
            store._warn(f"the flight recorder cannot store produced files: {err.strerror or err}")
            return


def _quiet_sigterm_warning() -> None:
    """Ray connects from a thread (never holding the loop) and then warns that it cannot set its
    SIGTERM handler there: agentsproof handles SIGTERM itself (executor.session.interruptible),
    so that line is dropped (once installed, idempotent)."""
    import logging

    log = logging.getLogger("ray._private.worker")
    if not any(isinstance(f, _NoSigtermNote) for f in log.filters):
        log.addFilter(_NoSigtermNote())


class _NoSigtermNote:
    """A logging filter: every record but Ray's "SIGTERM handler is not set" warning."""

    def filter(self, record: Any) -> bool:
        """False for that one warning."""
        return "SIGTERM handler is not set" not in str(record.msg)


def connect(address: str | None, slots: int) -> bool:
    """Join the cluster at ``address`` (None: a one-node Ray on this machine, on loopback, with
    ``slots`` trial slots) unless this process already has; check that some node offers the
    trial resource. True when this call connected (the caller shuts it down)."""
    from agentsproof.core.errors import ProviderUnavailable
    from agentsproof.core.extras import install_line

    try:
        import ray
    except ImportError as err:
        raise ProviderUnavailable(f"--executor ray needs Ray: {install_line('ray')}") from err
    owned = False
    if not ray.is_initialized():
        _quiet_sigterm_warning()
        kwargs: dict[str, Any] = {"log_to_driver": False, "logging_level": "WARNING", "configure_logging": True}
        if address:
            ray.init(address=address, **kwargs)
        else:  # no cluster named: a one-node Ray on this machine, on loopback
            # its container trials too: a machine without an engine is told so by the node check, in one line
            ray.init(_node_ip_address="127.0.0.1", include_dashboard=False, resources={RESOURCE: max(1, slots), DOCKER_RESOURCE: max(1, slots)}, **kwargs)
        owned = True
    if not ray.cluster_resources().get(RESOURCE, 0):
        if owned:
            ray.shutdown()
        raise ProviderUnavailable(
            f"no node of the Ray cluster at {address or 'this machine'} offers the {RESOURCE!r} resource; start each node with "
            f"ray start --resources '{{\"{RESOURCE}\": N}}' (N: the trials it runs at once)"
        )
    return owned
