"""Agent and container trials on a Ray node (issue 48, item 3), and the driver's checks and
clean-up of the nodes that run them.

An agent trial runs on its node exactly as the local runner runs it: its workspace is made
there (bubblewrap, the agent CLI of that node), its container started in that node's engine
(``DOCKER_HOST`` as the node sees it), the graders read the workspace there. What comes back
is the :class:`~agentsproof.model.results.TrialResult` (answer, grades, trajectory, the list of
produced files) and, when the driver keeps a flight record, the produced files' contents (the
driver stores them in its report's file store, as locally).

**Images, once per node.** Before the first trial, :func:`probe_nodes` sends one check to every
node offering ``agentsproof_trial``: it finds the engine, builds (or finds) every image the
items need there, builds each agent target and looks for its program, and checks that the eval
folders are there. A node that fails a check is named in one line and gets none of the run's
agent trials; a failed build is the same one line, exit 30, as locally. A node's worker keeps
its :class:`~agentsproof.isolation.environments.Environments` for the run (its images, probes
and containers started ahead), on one event loop of its own, so nothing is built per trial.

**Clean-up.** Every container a node starts carries the run's label (the driver's run id);
:func:`sweep_nodes` removes them on every node when the run ends, interrupted or not (a trial
cancelled by the driver is ended with its worker, which cannot remove its own container).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import itertools
import os
import shutil
import threading
import time
import uuid
from collections.abc import Coroutine, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from agentsproof.executor.recorder import FileStore

if TYPE_CHECKING:
    from agentsproof.executor.ray_common import NodeOutcome, NodeRun
    from agentsproof.isolation.environments import Environments
    from agentsproof.model.environment import Environment
    from agentsproof.model.items import EvalItem
    from agentsproof.model.results import Arm
    from agentsproof.targets.base import Target, TargetDef

__all__ = ["AgentRun", "CarryStore", "NodeCheck", "agent_trial_on_node", "node_check", "probe_nodes", "sweep_nodes"]

T = TypeVar("T")
PROBE_S = 3600.0
"""Seconds a node's check may take at most (it builds the images)."""
SWEEP_S = 60.0


@dataclass(frozen=True)
class AgentRun:
    """What a node needs to run the run's agent trials: the targets (as defined, and expanded
    on the driver: their ``${VAR}`` values travel in the object store, like the key), the
    run's id (the label of its containers), whether produced files come back."""

    run_id: str
    targets: dict[str, tuple[TargetDef, Any]] = field(default_factory=dict)
    record: bool = False
    environments: tuple[Environment, ...] = ()
    folders: tuple[str, ...] = ()
    """Folders the items read (their evals, seeds, build contexts): a node must see them at the same path."""


@dataclass
class NodeCheck:
    """A node's answer to :func:`node_check`."""

    node: str
    problem: str | None = None
    """Why this node cannot run the run's agent trials (one line); None: it can."""
    build_error: str | None = None
    """A failed image build (the one line a local run would say): the run stops, exit 30."""
    built: list[str] = field(default_factory=list)
    reused: list[str] = field(default_factory=list)


class CarryStore(FileStore):
    """The flight recorder on a node: produced files' contents kept in memory (same caps, masked,
    never read through a symlink) and sent back with the trial; the driver stores them."""

    def __init__(self) -> None:
        super().__init__(Path("/nonexistent"))
        self.blobs: dict[str, bytes] = {}

    def put(self, data: bytes) -> str:
        """Keep ``data`` to send back; its digest."""
        digest = hashlib.sha256(data).hexdigest()
        self.blobs[digest] = data
        return digest


# --- on the node: one event loop per worker process, the run's containers on it ---

_loop: asyncio.AbstractEventLoop | None = None
_loop_lock = threading.Lock()
_envs: dict[str, Environments] = {}


def _node_loop() -> asyncio.AbstractEventLoop:
    """This worker's own event loop, running in a daemon thread (started once)."""
    global _loop
    with _loop_lock:
        if _loop is None:
            loop = asyncio.new_event_loop()
            threading.Thread(target=loop.run_forever, name="agentsproof-node-loop", daemon=True).start()
            _loop = loop
        return _loop


def on_node_loop(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` on this worker's loop and wait for it (the Ray task's thread blocks, the loop does not)."""
    return asyncio.run_coroutine_threadsafe(coro, _node_loop()).result()


async def _environments(run_id: str) -> Environments:
    """This worker's containers of run ``run_id`` (labelled with it); a finished run's let go."""
    from agentsproof.isolation.environments import Environments

    for old in [k for k in _envs if k != run_id]:
        with contextlib.suppress(Exception):
            await _envs.pop(old).close()
    if run_id not in _envs:
        envs = Environments()
        envs.run_id = run_id  # every node's containers of this run carry the driver's run id: one sweep finds them all
        envs._reaped = True  # the node's check reaped dead runs' leftovers once
        # container names are run id + a counter: each worker (on every node, one engine perhaps) counts from its own random start
        envs._counter = itertools.count(1 + (uuid.uuid4().int % 10**8) * 10**5)
        _envs[run_id] = envs
    return _envs[run_id]


def _build_target(defn: TargetDef, spec: Any, model: str) -> Target:
    from typing import cast

    from agentsproof.targets.base import TargetFactory
    from agentsproof.targets.registry import target_class

    cls = cast(TargetFactory, target_class(defn.spec.type))
    return cls(defn.name, spec, defn.spec, model=model or None, source=defn.source)


def _program_missing(target: Target) -> str | None:
    """The agent program this node lacks, in one line; None when it has it (or it runs in a container)."""
    program = getattr(target, "program", None)
    if isinstance(program, str) and program and not (os.path.isfile(program) and os.access(program, os.X_OK)):
        return f"{target.name}: {program} is not an executable file"
    spec = getattr(target, "spec", None)
    command = getattr(spec, "command", None)
    if target.kind == "command" and isinstance(command, list) and command:
        first = str(command[0])
        found = first if os.sep in first and os.access(first, os.X_OK) else shutil.which(first)
        if not found:
            return f"{target.name}: {first} was not found"
    return None


async def _check(run: NodeRun, agents: AgentRun, node: str) -> NodeCheck:
    from agentsproof.core.errors import AgentsproofError, InputError
    from agentsproof.isolation.engine import docker

    check = NodeCheck(node=node)
    for folder in agents.folders:
        if not Path(folder).is_dir():
            check.problem = f"{folder} is not there (nodes must see the evals at the driver's paths)"
            return check
    for name, (defn, spec) in agents.targets.items():
        try:
            target = _build_target(defn, spec, run.model)
        except (AgentsproofError, OSError) as err:
            from agentsproof.core.scrub import scrub

            check.problem = f"{name}: {' '.join(scrub(str(err)).split())}"
            return check
        try:
            missing = _program_missing(target) if not agents.environments else None
        finally:
            with contextlib.suppress(Exception):
                await target.aclose()
        if missing:
            check.problem = missing
            return check
    if agents.environments:
        try:
            got = await docker(["version", "--format", "{{.Server.Version}}"], timeout=30)
            reason = None if got.returncode == 0 else got.reason()
        except OSError as err:
            reason = str(err.strerror or err)
        if reason is not None:
            check.problem = f"no container engine ({reason})"
            return check
        envs = await _environments(agents.run_id)
        envs._reaped, before, known = False, len(envs.built), set(envs._images)
        try:
            await envs.prepare(list(agents.environments))
        except InputError as err:
            check.build_error = err.format()
            return check
        check.built = envs.built[before:]
        check.reused = sorted({tag for key, (tag, _) in envs._images.items() if key not in known} - set(check.built))
    return check


def node_check(run: NodeRun, env: dict[str, str], agents: AgentRun) -> NodeCheck:
    """The Ray task of :func:`probe_nodes`: can this node run the run's agent trials? Builds the images."""
    import ray

    from agentsproof.executor.ray_common import node_env

    node = ray.get_runtime_context().get_node_id()
    with node_env(env):  # for the check only (a target reads its settings when it is built)
        try:
            return on_node_loop(_check(run, agents, node))
        except Exception as err:  # noqa: BLE001 - a node that cannot even check itself runs none of the trials
            from agentsproof.core.scrub import clip, scrub

            return NodeCheck(node=node, problem=f"its check failed: {type(err).__name__}: {clip(' '.join(scrub(str(err)).split()), 200)}")


async def agent_trial_on_node(run: NodeRun, agents: AgentRun, gate: Any, item: EvalItem, arm: Arm, index: int) -> NodeOutcome:
    """One agent (or container) trial run and graded here, as the local runner runs it."""
    from agentsproof.executor.ray_common import NodeOutcome, node_client, panel_of
    from agentsproof.executor.runner import DualArmRunner, Scheduling
    from agentsproof.grading.grade import Judge
    from agentsproof.isolation.workspace import Workspaces

    defn, spec = agents.targets[item.target]
    target = _build_target(defn, spec, run.model)
    stops: list[str] = []
    client = node_client(run, gate, stops) if run.judge else None
    judge = Judge(client=client, model=run.judge_model) if client is not None else None
    store = CarryStore() if agents.record else None
    envs = await _environments(agents.run_id) if item.environment is not None else None
    spaces = Workspaces()
    runner = DualArmRunner({item.target: target}, Scheduling(parallel=1), judge, workspaces=spaces, recorder=store.keep if store else None, environments=envs)
    try:
        trial = await runner._trial(item, arm, index)
    finally:
        try:
            await target.aclose()
        finally:
            spaces.close()
            if client is not None:
                await client.aclose()
    trial.workspace = None  # the folder was on the node (and is gone)
    return NodeOutcome(
        trial=trial, fatal=runner.state.fatal, budget_stop=stops[0] if stops else None, panel=panel_of(runner, item), files=store.blobs if store else {}
    )


# --- on the driver ---


def alive_trial_nodes(ray: Any) -> list[str]:
    """The ids of the live nodes that offer ``agentsproof_trial``."""
    from agentsproof.executor.ray_common import RESOURCE

    return [n["NodeID"] for n in ray.nodes() if n.get("Alive") and n.get("Resources", {}).get(RESOURCE, 0) > 0]


def probe_nodes(ray: Any, run: NodeRun, env_ref: Any, agents: AgentRun) -> tuple[list[str], list[str], list[NodeCheck]]:
    """Every trial node checked (and its images built), all at once: (the nodes that can run the
    agent trials, one line per node that cannot, every node's answer). InputError: an image that does not build."""
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    from agentsproof.core.errors import InputError

    task = ray.remote(num_cpus=0, max_retries=0)(node_check)
    nodes = alive_trial_nodes(ray)
    refs = [task.options(scheduling_strategy=NodeAffinitySchedulingStrategy(n, soft=False)).remote(run, env_ref, agents) for n in nodes]
    good: list[str] = []
    lines: list[str] = []
    checks: list[NodeCheck] = []
    for node, ref in zip(nodes, refs, strict=True):
        try:
            check: NodeCheck = ray.get(ref, timeout=PROBE_S)
        except Exception as err:  # noqa: BLE001 - a node gone during its check runs nothing
            lines.append(f"Ray node {node[:12]} runs none of this run's agent trials: its check did not finish ({type(err).__name__})")
            continue
        checks.append(check)
        if check.build_error is not None:
            raise InputError(None, None, check.build_error)
        if check.problem is not None:
            lines.append(f"Ray node {node[:12]} runs none of this run's agent trials: {check.problem}")
        else:
            good.append(node)
    return good, lines, checks


def _launching(run_id: str) -> bool:
    """A ``docker run`` of this run still under way on this host (a worker's, or a killed worker's orphan)."""
    mark = f"org.agentsproof.run={run_id}".encode()
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                if mark in (proc / "cmdline").read_bytes():
                    return True
            except OSError:
                continue
    return False


def _sweep(run_id: str) -> int:
    """On a node: remove this run's containers (by label) until none is left and no ``docker
    run`` of the run is under way (a container started ahead, or by a cancelled trial's
    worker, may still land); how many."""
    from agentsproof.isolation.environments import LABEL_RUN

    async def once() -> int:
        from agentsproof.isolation.engine import docker

        got = await docker(["ps", "-aq", "--filter", f"label={LABEL_RUN}={run_id}"], timeout=60)
        ids = got.stdout.decode().split() if got.returncode == 0 else []
        if ids:
            await docker(["rm", "-f", "-v", *ids], timeout=120)
        return len(ids)

    removed, deadline = 0, time.monotonic() + SWEEP_S
    while time.monotonic() < deadline:
        pending = _launching(run_id)
        found = asyncio.run(once())
        removed += found
        if not pending and not found:
            break
        time.sleep(0.2)
    return removed


def sweep_nodes(ray: Any, run_id: str, *, nodes: Sequence[str] | None = None) -> int:
    """This run's containers removed on every live trial node (``nodes``: those, when known); how many."""
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    task = ray.remote(num_cpus=0, max_retries=0)(_sweep)
    alive = set(alive_trial_nodes(ray))
    targets = [n for n in (nodes if nodes is not None else alive) if n in alive]
    refs = [task.options(scheduling_strategy=NodeAffinitySchedulingStrategy(n, soft=False)).remote(run_id) for n in targets]
    removed = 0
    for ref in refs:
        with contextlib.suppress(Exception):
            removed += int(ray.get(ref, timeout=SWEEP_S + 60))
    return removed
