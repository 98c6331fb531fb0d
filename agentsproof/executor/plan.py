"""One run, decided before its first trial: the typed :class:`RunPlan` the session runs.

A command (``eval``, ``eval-all``, ``tc-eval``, ``ablate``, ``--retry-errors``) makes its
plan with :func:`agentsproof.commands.plan.plan_run` and nothing else: the items as they
will run (the ``--target`` matrix expanded, the arms chosen, the trial counts set, each
agent target's default environment applied), every agent target the items name resolved
once from targets.yaml, the report paths, the settings the report records and the stopping
rule. The plan is frozen and its items are new values: nothing edits a loaded item. The
session (:func:`agentsproof.executor.session.run_plan`) reads the plan and gives the
runner its own small :class:`~agentsproof.executor.runner.Scheduling`: from the command
line to the runner there are three option objects (``RunFlags`` -> ``RunPlan`` -> ``Scheduling``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from agentsproof.executor.runner import BatchPolicy, ItemRun, run_all_at_once
from agentsproof.model.items import EvalItem
from agentsproof.model.options import RunFlags
from agentsproof.model.results import RunResult, TrialResult
from agentsproof.model.settings import RunSettings

if TYPE_CHECKING:
    from agentsproof.targets.base import TargetDef

PriorTrials = Mapping[tuple[str, str, int], TrialResult]
"""Finished trials a run keeps rather than runs, by (item id, arm, index)."""


@dataclass(frozen=True)
class RunPlan:
    """One run as the session runs it (see the module docstring); every field is settled
    before the first trial."""

    command: str = "eval"
    """The report's command: ``eval``, ``eval-all`` or ``tc-eval``."""
    plugin: str = ""
    """The report's plugin name."""
    items: tuple[EvalItem, ...] = ()
    """The items as they run (arms, trials, targets and environments settled)."""
    name: str = ""
    """The report's file stem (an eval's item name, eval-all's plugin)."""
    run: RunFlags = field(default_factory=RunFlags)
    """The command line's options. The session reads provider, model, judge_model,
    parallel, abort_after, resume, cache, cache_dir, prompt_cache, max_calls, max_cost,
    ci_rule, executor and ray_address."""
    settings: RunSettings = field(default_factory=RunSettings)
    """What the command records of its options; the session adds the rest (``RunResult.settings``)."""
    policy: BatchPolicy = run_all_at_once
    """The stopping rule (``--adaptive``: agentsproof.stats.adaptive); by default all trials at once."""
    target_defs: Mapping[str, TargetDef] = field(default_factory=dict)
    """Every agent target the items name, by name, resolved once from targets.yaml."""
    reports: Mapping[str, Path] = field(default_factory=dict)
    """The report files, by kind (``json``, ``html``, ...): checked writable; empty for ``--plan``."""
    prior: PriorTrials = field(default_factory=dict)
    """Finished trials to keep (``--retry-errors``; ``--resume`` adds the journal's): they are not run again."""
    base_duration_s: float = 0.0
    """Time already spent (a retried run's)."""
    retried: bool = False
    """A ``--retry-errors`` run: its items and settings are the saved run's."""
    after: Callable[[RunResult], None] | None = None
    """What the items' formats do to the result before the reports are written."""
    journal: Path | None = None
    """Where every finished trial is journalled (for ``--resume``); None: no journal."""
    record_dir: Path | None = None
    """The flight recorder's file store for agent trials' produced files (None: not kept)."""
    workspaces_dir: Path | None = None
    """Keep every agent trial's workspace below this folder (None: delete after grading)."""
    spill: bool = True
    """Large runs keep finished items' trials in the journal, not in memory (agentsproof.executor.spill)."""
    on_trial: Callable[[EvalItem, TrialResult], None] | None = None
    """Told of every finished trial (the progress lines)."""
    on_item: Callable[[ItemRun], None] | None = None
    """Told of every finished item."""

    @property
    def caps(self) -> list[int]:
        """Each item's trials per arm (the runner's cap)."""
        return [it.trials for it in self.items]
