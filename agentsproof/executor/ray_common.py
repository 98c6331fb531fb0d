"""What the driver and the nodes of ``--executor ray`` share (agentsproof.executor.ray_trials,
agentsproof.executor.ray_nodes): the resources a node offers, what a trial task is given and
sends back, the run's one budget and the provider client a node builds."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentsproof.model.results import TrialResult

if TYPE_CHECKING:
    from agentsproof.llm.base import ChatRequest, ChatResponse
    from agentsproof.llm.budget import Budget

__all__ = ["DOCKER_RESOURCE", "MAX_RETRIES", "RESOURCE", "BudgetGate", "NodeOutcome", "NodeRun", "forwarded_env", "node_client", "panel_of"]

RESOURCE = "agentsproof_trial"
"""The custom resource a node offers, one per trial it runs at once (``ray start --resources '{"agentsproof_trial": 4}'``)."""
DOCKER_RESOURCE = "docker"
"""Offered by nodes with a container engine; container trials ask for it too."""
MAX_RETRIES = 3
"""How often the driver sends a trial again whose node or worker died under it (a trial that raised is not re-run: its error is its result)."""


@contextmanager
def node_env(env: dict[str, str]) -> Iterator[None]:
    """The driver's forwarded settings in this node process's environment for one piece of
    work, registered with the scrubber first (no secret among them reaches a result); what
    they replaced is put back after (a variable that was not set is unset again)."""
    from agentsproof.core import scrub

    scrub.register_environment(env)
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


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
    panel: tuple[int, int] | None = None
    """The item's judge panel on this trial (eval.yaml ``judge_models``): (verdicts, disagreements), added to the driver's tally."""
    files: dict[str, bytes] = field(default_factory=dict)
    """The produced files' contents by digest (an agent trial of a run that keeps a flight record)."""


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


def node_client(run: NodeRun, gate: Any, stops: list[str]) -> Any:
    """The run's provider client built on this node: the budget's gate, then the response cache, as locally."""
    from agentsproof.llm.registry import build_layers

    client, _ = build_layers(run.provider, prompt_cache=run.prompt_cache)
    if gate is not None:
        client = _gated(client, gate, stops)
    if run.cache_dir is not None:
        from agentsproof.llm.cache import CachingClient, ResponseCache

        client = CachingClient(client, ResponseCache(Path(run.cache_dir)))
    return client


def panel_of(runner: Any, item: Any) -> tuple[int, int] | None:
    """(verdicts, disagreements) of ``item``'s judge panel in a node's runner (one trial's); None without a panel."""
    tally = runner._panel_tallies.get(item.id)
    return (tally.verdicts, tally.disagreements) if tally is not None else None
