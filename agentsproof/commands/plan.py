"""The one way a command makes its run plan: :func:`plan_run`.

``eval``, ``tc-eval``, ``eval-all``, ``ablate`` and ``--retry-errors`` load their items
(:mod:`agentsproof.commands.run`), decide the settings their report records
(:func:`run_settings`, :func:`tc_settings`, :func:`all_settings`) and call
:func:`plan_run`, which settles everything else before the first trial and returns a
frozen :class:`~agentsproof.executor.plan.RunPlan`: the ``--target`` matrix expanded, the
arms chosen (``--baseline none``, ``--aa``, ``--arms ...,plugin``), the trial counts set,
every agent target resolved once from targets.yaml (its default environment given to the
items that have none, as new items), the report paths checked writable, ``--sign``'s key
checked and the stopping rule (``--adaptive``). :func:`agentsproof.commands.run.execute`
runs a plan and writes its reports.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentsproof.core.errors import InputError
from agentsproof.executor.plan import PriorTrials, RunPlan
from agentsproof.executor.runner import BatchPolicy, run_all_at_once
from agentsproof.formats.base import ItemRequest
from agentsproof.model.items import EvalItem
from agentsproof.model.options import RunFlags
from agentsproof.model.results import RunResult
from agentsproof.model.settings import RunSettings
from agentsproof.report.files import prepare_output, report_targets
from agentsproof.targets.registry import is_agent, target_class

if TYPE_CHECKING:
    from agentsproof.targets.base import TargetDef


def plan_run(
    command: str,
    plugin: str,
    items: Sequence[EvalItem],
    cfg: RunFlags,
    name: str,
    settings: RunSettings,
    *,
    after: Callable[[RunResult], None] | None = None,
    prior: PriorTrials | None = None,
    base_duration_s: float = 0.0,
    kind: str | None = None,
) -> RunPlan:
    """The run of ``items`` as ``command`` (its report named ``name``), settled before any
    trial (see the module docstring). ``prior``: a retried run's finished trials, which
    makes this a ``--retry-errors`` plan: its items already have their arms and trial
    counts, and its trials all run at once. ``kind``: the report's item kind for an eval
    (default: the first item's). ``--plan``: the items settled, nothing resolved or checked
    on disk (the plan is printed, nothing runs)."""
    retried = prior is not None
    if retried:
        cfg = cfg.replace(adaptive=False)
        policy: BatchPolicy = run_all_at_once
        planned = list(items)
    else:
        from agentsproof.commands.per_target import expand

        planned = per_item_trials(choose_arms(expand(list(items), cfg.target), cfg), cfg)  # --target a,b,c: every item on each agent
        policy, settings = policy_for(cfg, settings, [it.trials for it in planned])
    base = RunPlan(
        command, plugin, tuple(planned), name, cfg, settings, policy, prior=prior or {}, base_duration_s=base_duration_s, retried=retried, after=after
    )
    if cfg.plan:
        return base
    target_defs, planned = resolve_targets(planned, cfg)
    if kind is None and command == "eval" and planned:
        kind = planned[0].kind
    reports = report_paths(command, cfg, plugin, name, kind if command == "eval" else None)
    check_writable(reports, cfg)
    from agentsproof.commands.proof import check_sign_key

    check_sign_key(cfg.sign)
    json_path = reports["json"]
    from agentsproof.executor.journal import journal_path
    from agentsproof.executor.recorder import store_dir

    return dataclasses.replace(
        base,
        items=tuple(planned),
        target_defs=target_defs,
        reports=reports,
        journal=journal_path(json_path),
        record_dir=store_dir(json_path),  # the flight recorder's store: ``<report>.files/``
        workspaces_dir=json_path.with_name(json_path.stem + ".workspaces") if cfg.keep_workspaces and target_defs else None,
        spill=after is None and cfg.atif is None,  # ``after`` edits the trials in memory (datasets), --atif writes them: they stay there
    )


def resolve_targets(items: Sequence[EvalItem], cfg: RunFlags) -> tuple[dict[str, TargetDef], list[EvalItem]]:
    """The definition of every agent target the items name (targets.yaml lookup from each
    eval file's folder, or the one the format already found), and the items with each
    target's default environment where they have none (new items; the eval's own
    ``environment:`` wins). One line naming where the name was given when one is unknown."""
    defs: dict[str, TargetDef] = {}
    out: list[EvalItem] = []
    for it in items:
        if not is_agent(it.target):
            out.append(it)
            continue
        from agentsproof.core.inputs import display
        from agentsproof.targets.config import find_target

        near = Path(it.eval_path) if it.eval_path else None
        try:
            found = it.target_def if it.target_def is not None else find_target(it.target, near, cfg.targets_file)
        except InputError as err:
            if err.source is not None:
                raise
            where = ("command line", "--target") if cfg.target else (display(Path(it.eval_path or "eval.yaml")), "execution.target")
            raise InputError(where[0], where[1], err.message) from None
        prev = defs.get(it.target)
        if prev is not None and prev.spec != found.spec:
            raise InputError(found.source, it.target, f"is defined differently in {prev.source}; one name must mean one target in a run")
        defs[it.target] = found
        if it.environment is None and found.environment is not None:  # the target's default image
            it = dataclasses.replace(it, environment=found.environment)
        if it.environment is not None:
            _check_runs_in_environment(it, found)
        out.append(it)
    return defs, out


def _check_runs_in_environment(item: EvalItem, found: TargetDef) -> None:
    """InputError (one line naming the file and ``environment``) when ``item`` asks for a
    container and its target's kind cannot run in one: it is never run on the host instead."""
    from agentsproof.core.inputs import display

    kind = found.spec.type
    if target_class(kind).runs_in_environment:
        return
    where = display(Path(item.eval_path)) if item.environment is not found.environment and item.eval_path else found.source
    raise InputError(
        where, "environment", f"target {item.target!r} (type {kind}) does not run in a container; drop the environment or run an agent target that does"
    )


def policy_for(cfg: RunFlags, settings: RunSettings, caps: Sequence[int] = ()) -> tuple[BatchPolicy, RunSettings]:
    """The runner's BatchPolicy for a command's options, and the settings that record it
    (``--adaptive``: the stopping rule, agentsproof.stats.adaptive). ``caps``: the items'
    trials per arm (the runner's cap of each item), whose looks the settings record."""
    if not cfg.adaptive:
        return run_all_at_once, settings
    from agentsproof.stats.adaptive import AdaptivePolicy

    policy = AdaptivePolicy()
    return policy, dataclasses.replace(settings, adaptive=policy.describe(caps))


def adaptive_defaults(cfg: RunFlags) -> RunFlags:
    """With --adaptive and no trial count, the cap is DEFAULT_CAP trials per arm per item."""
    if cfg.adaptive and cfg.trials is None and cfg.trials_per_item is None:
        from agentsproof.stats.adaptive import DEFAULT_CAP

        return cfg.replace(trials_per_item=DEFAULT_CAP)
    return cfg


def per_item_trials(items: list[EvalItem], cfg: RunFlags) -> list[EvalItem]:
    """``--smoke/--reliable/--regression`` (and the --adaptive cap): N trials per arm per
    item; the runner spreads them round robin over the cases, and an item with more cases
    than N runs one per case (``--plan`` says so)."""
    if cfg.trials_per_item is None:
        return items
    return [dataclasses.replace(it, trials=max(cfg.trials_per_item, len(it.cases) or 1)) for it in items]


def choose_arms(items: list[EvalItem], cfg: RunFlags) -> list[EvalItem]:
    """``--baseline none``: every item runs its with-arm only; ``--arms ...,plugin``: also
    the plugin arm (agentsproof.formats.activation.with_plugin_arm); ``--aa``: the with-arm
    runs the baseline too."""
    if cfg.aa:
        if cfg.baseline == "none":
            raise InputError("command line", "--aa", "runs the baseline against itself, and --baseline none has no baseline; give one of them")
        if cfg.arms and "plugin" in cfg.arms.replace(" ", "").split(","):
            raise InputError("command line", "--aa", "runs the baseline against itself, which has no plugin arm; drop --arms ...,plugin")
        from agentsproof.model.items import BASELINE_SYSTEM_PROMPT

        baked = next((it for it in items if it.environment is not None and it.environment.baseline_empty), None)
        if baked is not None:  # its with-arm's image holds the skills: that arm cannot be the baseline
            raise InputError(
                "command line", "--aa", f"{baked.name}'s image has its skills built in (only the baseline's is built without them); an A/A run cannot use it"
            )
        # A/A: the with-arm runs the baseline too (no skill text, no skill file for agents)
        return [dataclasses.replace(it, system_prompt=BASELINE_SYSTEM_PROMPT, skill=None, with_skills=()) for it in items]
    if cfg.arms:
        from agentsproof.formats.activation import parse_arms, with_plugin_arm

        if "plugin" in parse_arms(cfg.arms):
            if cfg.baseline == "none":
                raise InputError("command line", "--arms", "the plugin arm is compared with the skill alone and the baseline; drop --baseline none")
            items = with_plugin_arm(items)
    if cfg.baseline != "none":
        return items
    if cfg.adaptive:
        raise InputError("command line", "--adaptive", "stops once the grade is settled, and a single-arm run (--baseline none) has no grade; give one of them")
    return [dataclasses.replace(it, arms=("with",)) for it in items]


def run_settings(cfg: RunFlags, *, trials: int | None = None) -> RunSettings:
    """What eval (and ablate) record of their options (trials and threshold only when given;
    ``trials``: the per-item count that replaces --trials, when given)."""
    if trials is None:
        trials = cfg.trials if cfg.trials is not None else cfg.trials_per_item
    return RunSettings(
        trials=trials,
        threshold=cfg.threshold,
        shard=str(cfg.shard) if cfg.shard is not None else None,
        all_tasks=cfg.all_tasks,
        max_cost=cfg.max_cost,
        max_calls=cfg.max_calls,
        **_recorded(cfg),
    )


def all_settings(cfg: RunFlags) -> RunSettings:
    """What eval-all records: eval's, and how the items' p-values are adjusted."""
    return dataclasses.replace(run_settings(cfg), p_adjust=cfg.p_adjust)


def tc_settings(cfg: RunFlags, trials: int, threshold: float, timeout: float, *, eval_yaml: str | None = None, dataset: str | None = None) -> RunSettings:
    """What tc-eval records (an evals.json, an EVAL.yaml, a JSONL dataset): trials,
    threshold and timeout always."""
    return RunSettings(trials=trials, threshold=threshold, timeout=timeout, eval_yaml=eval_yaml, dataset=dataset, **_recorded(cfg))


def _recorded(cfg: RunFlags) -> dict[str, Any]:
    """The options every run command records when they differ from the default: ``--baseline
    none`` (``compare`` and ``--retry-errors`` read it), ``--config`` pairs (secret-looking
    values already redacted), ``--ci-rule interval``, ``--aa`` (its summary replaces this once
    the items are graded)."""
    return {
        "baseline": "none" if cfg.baseline == "none" else None,
        "config": dict(cfg.config) if cfg.config else None,
        "ci_rule": "interval" if cfg.ci_rule == "interval" else None,
        "aa": {"mode": "baseline against itself"} if cfg.aa else None,
    }


def item_request(cfg: RunFlags, *, in_plugin: bool = False) -> ItemRequest:
    """The options that shape a file's items (see agentsproof.formats.base.ItemRequest);
    a matrix's items are loaded for its first agent, then copied per agent by :func:`plan_run`."""
    from agentsproof.commands.per_target import first_target

    return ItemRequest(
        trials=cfg.trials,
        threshold=cfg.threshold,
        timeout=cfg.timeout,
        target=first_target(cfg.target),
        targets_file=cfg.targets_file,
        all_tasks=cfg.all_tasks,
        skill=cfg.skill,
        in_plugin=in_plugin,
        live_source=cfg.live_source,
    )


def report_paths(command: str, cfg: RunFlags, plugin: str, name: str, kind: str | None = None) -> dict[str, Path]:
    """The report paths of this run (and ``--junit``/``--jsonl``'s), inside ``--output``."""
    targets = report_targets(command, cfg.output, plugin, name, kind)
    prepare_output(cfg.output, targets)
    if cfg.junit is None and cfg.jsonl is None:
        return targets
    from agentsproof.report.exports import extra_targets

    return {**targets, **extra_targets(cfg.junit, cfg.jsonl)}


def check_writable(targets: Mapping[str, Path], cfg: RunFlags) -> None:
    """The report folder (and --jsonl / --junit folders) can be made before any trial runs:
    an impossible path (``/proc/foo``, a file in the way, no permission) is one line, exit 30."""
    from agentsproof.core.inputs import display

    flags = {"--jsonl": cfg.jsonl, "--junit": cfg.junit}
    folders = [("--output", targets["json"].parent)] + [(f, Path(p).parent) for f, p in flags.items() if p]
    for flag, folder in folders:
        made: list[Path] = []  # tried, then taken away again: a run that fails later leaves no folder
        try:
            for part in reversed([folder, *folder.parents]):
                if not part.exists():
                    part.mkdir()
                    made.append(part)
        except OSError as err:
            raise InputError("command line", flag, f"cannot create {display(folder)!r}: {err.strerror or err}") from None
        finally:
            for part in reversed(made):
                with contextlib.suppress(OSError):  # best effort: a folder we made for the check
                    part.rmdir()
        if folder.exists() and not (folder.is_dir() and os.access(folder, os.W_OK)):
            raise InputError("command line", flag, f"{display(folder)!r} is not a writable folder")
