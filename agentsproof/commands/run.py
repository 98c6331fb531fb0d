"""What each CLI command does, as plain functions the CLI (and tests) call."""

from __future__ import annotations

import contextlib
import dataclasses
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentsproof.core.errors import InputError
from agentsproof.executor.runner import BatchPolicy, run_all_at_once
from agentsproof.executor.session import SessionOptions, run_items
from agentsproof.formats import registry as formats
from agentsproof.formats.base import ItemRequest, Loaded
from agentsproof.model.items import EvalItem
from agentsproof.model.options import RunConfig
from agentsproof.model.results import RunResult, TrialResult
from agentsproof.model.settings import RunSettings
from agentsproof.report.files import prepare_output, report_targets

if TYPE_CHECKING:
    from agentsproof.commands.progress import Progress
    from agentsproof.targets.spec import TargetDef


def write_outputs(run: RunResult, targets: dict[str, Path]) -> dict[str, Path]:
    """Every report of ``run``; the writers (and jinja2) are imported only now, after the run.
    A run stopped by a failure every trial would repeat (a refused key, an unreachable
    endpoint) is written into its own run folder, beside the last good report, never over it."""
    from agentsproof.executor.fatal import stopped_by_fatal
    from agentsproof.report.files import write_outputs as write

    return write(run, targets, failed_run=stopped_by_fatal(run))


def _session(
    cfg: RunConfig,
    settings: RunSettings,
    *,
    journal: Path,
    target_defs: dict[str, TargetDef],
    workspaces_dir: Path | None,
    spill: bool,
    prior: dict[tuple[str, str, int], TrialResult] | None = None,
    base_duration_s: float = 0.0,
    record_dir: Path | None = None,
    caps: Sequence[int] = (),
    progress: Progress | None = None,
) -> SessionOptions:
    if progress is None:
        from agentsproof.commands.progress import Progress

        progress = Progress()
    policy, settings = policy_for(cfg, settings, caps)
    return SessionOptions(
        run=cfg,
        settings=settings,
        policy=policy,
        on_trial=progress.trial,
        on_item=progress.item,
        prior=prior or {},
        journal=journal,
        base_duration_s=base_duration_s,
        target_defs=target_defs,
        workspaces_dir=workspaces_dir,
        spill=spill,
        record_dir=record_dir,
    )


def policy_for(cfg: RunConfig, settings: RunSettings, caps: Sequence[int] = ()) -> tuple[BatchPolicy, RunSettings]:
    """The runner's BatchPolicy for a command's options, and the settings that record it
    (``--adaptive``: the stopping rule, agentsproof.stats.adaptive). ``caps``: the items'
    trials per arm (the runner's cap of each item), whose looks the settings record."""
    if not cfg.adaptive:
        return run_all_at_once, settings
    from agentsproof.stats.adaptive import AdaptivePolicy

    policy = AdaptivePolicy()
    return policy, dataclasses.replace(settings, adaptive=policy.describe(caps))


def adaptive_defaults(cfg: RunConfig) -> RunConfig:
    """With --adaptive and no trial count, the cap is DEFAULT_CAP trials per arm per item."""
    if cfg.adaptive and cfg.trials is None and cfg.trials_per_item is None:
        from agentsproof.stats.adaptive import DEFAULT_CAP

        return cfg.replace(trials_per_item=DEFAULT_CAP)
    return cfg


def per_item_trials(items: list[EvalItem], cfg: RunConfig) -> list[EvalItem]:
    """``--smoke/--reliable/--regression`` (and the --adaptive cap): N trials per arm per
    item; the runner spreads them round robin over the cases, and an item with more cases
    than N runs one per case (``--plan`` says so)."""
    if cfg.trials_per_item is None:
        return items
    return [dataclasses.replace(it, trials=max(cfg.trials_per_item, len(it.cases) or 1)) for it in items]


def _settings(cfg: RunConfig, *, trials: int | None = None) -> RunSettings:
    """What eval and eval-all record of their options (trials and threshold only when given;
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
        baseline=_baseline(cfg),
        config=_config(cfg),
        ci_rule=_ci_rule(cfg),
        aa=_aa(cfg),
    )


def tc_settings(cfg: RunConfig, trials: int, threshold: float, timeout: float, *, eval_yaml: str | None = None, dataset: str | None = None) -> RunSettings:
    """What tc-eval records (an evals.json, an EVAL.yaml, a JSONL dataset): trials,
    threshold and timeout always."""
    return RunSettings(
        trials=trials,
        threshold=threshold,
        timeout=timeout,
        eval_yaml=eval_yaml,
        dataset=dataset,
        baseline=_baseline(cfg),
        config=_config(cfg),
        ci_rule=_ci_rule(cfg),
        aa=_aa(cfg),
    )


def _aa(cfg: RunConfig) -> dict[str, Any] | None:
    """``--aa`` is recorded (its summary replaces this once the items are graded: :func:`_after_run`)."""
    return {"mode": "baseline against itself"} if cfg.aa else None


def _ci_rule(cfg: RunConfig) -> str | None:
    """``--ci-rule interval`` is recorded (how the items' pass/fail was decided); the default is not."""
    return "interval" if cfg.ci_rule == "interval" else None


def _baseline(cfg: RunConfig) -> str | None:
    """``--baseline none`` is recorded (``compare`` and ``--retry-errors`` read it); the default is not."""
    return "none" if cfg.baseline == "none" else None


def _config(cfg: RunConfig) -> dict[str, str] | None:
    """The ``--config`` pairs (secret-looking values already redacted), when given."""
    return dict(cfg.config) if cfg.config else None


def _arms(items: list[EvalItem], cfg: RunConfig) -> list[EvalItem]:
    """``--baseline none``: every item runs its with-arm only; ``--arms ...,plugin``: also
    the plugin arm (agentsproof.formats.activation.with_plugin_arm)."""
    import dataclasses

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


def _all_settings(cfg: RunConfig) -> RunSettings:
    return dataclasses.replace(_settings(cfg), p_adjust=cfg.p_adjust)


def _check_writable(targets: dict[str, Path], cfg: RunConfig) -> None:
    """The report folder (and --jsonl / --junit folders) can be made before any trial runs:
    an impossible path (``/proc/foo``, a file in the way, no permission) is one line, exit 30."""
    from agentsproof.core.inputs import display

    flags = {"--jsonl": getattr(cfg, "jsonl", None), "--junit": getattr(cfg, "junit", None)}
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


def _targets(command: str, cfg: RunConfig, plugin: str, stem: str, kind: str | None = None) -> dict[str, Path]:
    """The report paths of this run, checked writable before the first model call."""
    targets = report_targets(command, cfg.output, plugin, stem, kind)
    prepare_output(cfg.output, targets)
    if cfg.junit is None and cfg.jsonl is None:
        return targets
    from agentsproof.report.exports import extra_targets

    return {**targets, **extra_targets(cfg.junit, cfg.jsonl)}


def resolve_targets(items: list[EvalItem], cfg: RunConfig) -> dict[str, TargetDef]:
    """The definition of every agent target the items name (targets.yaml lookup from each
    eval file's folder); one line naming where the name was given when one is unknown. An
    item without an ``environment:`` takes its target's, when the target has one."""
    defs: dict[str, TargetDef] = {}
    for it in items:
        if it.target == "chat":
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
        if it.environment is None and found.environment is not None:  # the target's default image (the eval's own wins)
            it.environment = found.environment
    return defs


def _run(
    command: str,
    plugin: str,
    items: list[EvalItem],
    cfg: RunConfig,
    stem: str,
    settings: RunSettings,
    after: Callable[[RunResult], None] | None = None,
) -> tuple[RunResult | None, dict[str, Path]]:
    """The one path every run takes: targets checked, trials run (journalled, resumable),
    reports written. ``--plan``: the plan printed, nothing run (None)."""
    from agentsproof.commands.matrix import expand
    from agentsproof.executor.journal import journal_path

    items = per_item_trials(_arms(expand(items, cfg.target), cfg), cfg)  # --target a,b,c: every item on each agent
    if cfg.plan:
        from agentsproof.executor.costplan import render_plan

        for line in render_plan(command, items, cfg):
            print(line)
        from agentsproof.commands.progress import plan_wall_time_lines

        for line in plan_wall_time_lines(command, items, cfg, plugin, stem):
            print(line)
        return None, {}
    from agentsproof.commands.progress import Progress, more_allowed, run_total
    from agentsproof.report.files import ReportLock

    target_defs = resolve_targets(items, cfg)
    targets = _targets(command, cfg, plugin, stem, items[0].kind if command == "eval" and items else None)
    _check_writable(targets, cfg)
    progress = Progress(run_total(items), parallel=cfg.parallel, more_allowed=more_allowed(cfg.provider), capped=cfg.adaptive)
    from agentsproof.commands.proof import check_sign_key

    check_sign_key(cfg.sign)
    session = _session(
        cfg,
        settings,
        journal=journal_path(targets["json"]),
        record_dir=_record_dir(targets),
        target_defs=target_defs,
        caps=[it.trials for it in items],
        workspaces_dir=_workspaces_dir(targets) if cfg.keep_workspaces and target_defs else None,
        spill=after is None and cfg.atif is None,  # ``after`` edits the trials in memory (datasets), --atif writes them: they stay there
        progress=progress,
    )
    with ReportLock(targets["json"]):  # one run per report set: a second is refused naming this one
        with progress:
            run = run_items(command, plugin, items, session)
        _after_run(run, items, cfg, targets, after)
        return run, _write_sealed(run, items, target_defs, cfg, targets)


def _write_sealed(run: RunResult, items: Sequence[EvalItem], target_defs: dict[str, TargetDef], cfg: RunConfig, targets: dict[str, Path]) -> dict[str, Path]:
    """The run's manifest written into it, its reports written, the JSON signed with ``--sign``."""
    from agentsproof.commands.proof import proof_options, seal, sign_report

    seal(run, items, target_defs, proof_options(cfg))
    written = write_outputs(run, targets)
    sign_report(written, cfg.sign)
    return written


def _after_run(run: RunResult, items: list[EvalItem], cfg: RunConfig, targets: dict[str, Path], after: Callable[[RunResult], None] | None) -> None:
    """What a finished run gets before its reports: the format's hook, the A/A summary, the
    judge's agreement with gold labels, the ATIF export."""
    if after is not None:  # e.g. a dataset's failure reasons on its checks
        after(run)
    from agentsproof.executor.gate import gate

    run.verdict = gate(run, ci=cfg.ci, fail_on_underpowered=cfg.fail_on_underpowered).verdict  # the reports' verdict is the exit code's
    if cfg.aa:
        from agentsproof.stats.aa import aa_summary

        run.settings["aa"] = aa_summary(run.items)  # the A/A block needs the graded items: written where --aa's mode was
    if any(it.judge_gold for it in items):
        from agentsproof.commands.judge_check import attach_gold_agreement

        for line in attach_gold_agreement(run, items, cfg):
            print(f"warning: {line}", file=sys.stderr)
    if cfg.atif is not None:
        from agentsproof.interop.atif import write_atif

        write_atif(run, cfg.atif, _record_dir(targets))


def _record_dir(targets: dict[str, Path]) -> Path:
    """The flight recorder's store: ``<report>.files/`` beside the JSON report."""
    from agentsproof.executor.recorder import store_dir

    return store_dir(targets["json"])


def _workspaces_dir(targets: dict[str, Path]) -> Path:
    """Kept workspaces go beside the JSON report: ``<report>.workspaces/``."""
    json_path = targets["json"]
    return json_path.with_name(json_path.stem + ".workspaces")


def _retry(command: str, path: Path, cfg: RunConfig) -> tuple[RunResult, dict[str, Path]]:
    """--retry-errors RUN.json: the saved run's scored trials kept, its errored ones run again,
    through the same session path as any run."""
    from agentsproof.commands.rerun import retry_items, retry_plan
    from agentsproof.executor.journal import journal_path
    from agentsproof.report.saved import load_run

    saved_path = Path(cfg.retry_errors)  # type: ignore[arg-type]
    saved = load_run(saved_path)
    if saved.command != command:
        raise InputError(str(saved_path), "command", f"is a {saved.command!r} run; retry it with `agentsproof {saved.command}`")
    by_id, after = retry_items(saved, saved_path, path, cfg.skill)  # the items as the original run built them
    items, prior, settings = retry_plan(saved, by_id, saved_path)
    if settings.baseline == "none":  # a single-arm run is retried single-armed
        items = _arms(items, cfg.replace(baseline="none", adaptive=False))
    name = saved.items[0].name if command == "eval" and saved.items else saved.plugin
    targets = _targets(command, cfg, saved.plugin, name, saved.items[0].kind if command == "eval" and saved.items else None)
    target_defs = resolve_targets(items, cfg)
    from agentsproof.commands.progress import Progress, more_allowed, run_total

    progress = Progress(run_total(items, len(prior)), parallel=cfg.parallel, more_allowed=more_allowed(cfg.provider))
    from agentsproof.commands.proof import check_sign_key

    check_sign_key(cfg.sign)
    session = _session(
        cfg.replace(adaptive=False),
        settings,
        prior=prior,
        journal=journal_path(targets["json"]),
        record_dir=_record_dir(targets),
        base_duration_s=saved.duration_s,
        target_defs=target_defs,
        workspaces_dir=_workspaces_dir(targets) if cfg.keep_workspaces and target_defs else None,
        spill=after is None,  # `after` labels the trials in memory, as in _run
        progress=progress,
    )
    from agentsproof.report.files import ReportLock

    with ReportLock(targets["json"]):
        with progress:
            run = run_items(command, saved.plugin, items, session)
        if after is not None:  # check labels of an EVAL.yaml, a dataset's failure reasons
            after(run)
        return run, _write_sealed(run, items, target_defs, cfg, targets)


def _request(cfg: RunConfig, *, in_plugin: bool = False) -> ItemRequest:
    """The options that shape a file's items (see agentsproof.formats.base.ItemRequest);
    a matrix's items are loaded for its first agent, then copied per agent in :func:`_run`."""
    from agentsproof.commands.matrix import first_target

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


def _run_file(command: str, path: Path, cfg: RunConfig) -> tuple[RunResult | None, dict[str, Path]]:
    """``eval`` / ``tc-eval`` on one file, in whatever format it is (agentsproof.formats)."""
    if cfg.retry_errors:
        return _retry(command, path, cfg)
    cfg = adaptive_defaults(cfg)
    loaded = _load(Path(path), command, _request(cfg))
    _lint_gate(loaded, Path(path))
    copies_gate(loaded, cfg)
    after = _oracle(loaded, cfg)
    if loaded.single_arm:  # nothing to compare against: the model or target alone
        cfg = cfg.replace(baseline="none")
    if loaded.report == "eval":
        settings = _settings(cfg, trials=cfg.trials_per_item)
    else:
        given = {"trials": cfg.trials_per_item} if cfg.trials_per_item is not None else {}
        settings = tc_settings(cfg, **{**loaded.settings, **given})
    return _run(loaded.report, loaded.plugin, loaded.items, cfg, loaded.name, settings, after=after)


def _load(path: Path, command: str, request: ItemRequest) -> Loaded:
    """The file's items, read and validated once: the format's detection and its loader share
    one read, and the lint gate and the oracle use what the load built."""
    from agentsproof.core.inputs import read_once

    with read_once():
        return formats.load(path, command, request)


def copies_gate(loaded: Loaded, cfg: RunConfig) -> None:
    """A generated eval whose copied skill/agent file no longer matches its source
    (:mod:`agentsproof.formats.copies`): a warning naming each, or under ``--ci`` the file is
    refused (exit 30, before any trial). ``--live-source`` runs the sources: nothing to check."""
    if loaded.format != "eval.yaml" or cfg.live_source:
        return
    from agentsproof.core.inputs import display
    from agentsproof.formats.copies import STALE_HINT, stale_copies

    folder = Path(loaded.path).parent
    stale = stale_copies(folder)
    if not stale:
        return
    if cfg.ci:
        more = f" (and {len(stale) - 1} more)" if len(stale) > 1 else ""
        raise InputError(display(folder / stale[0].split(" ", 1)[0].rstrip(":")), None, f"stale copy: {stale[0]}{more}; --ci fails on it ({STALE_HINT})")
    from agentsproof.core.notice import warn

    for line in stale:
        warn(f"{display(folder)}: stale copy: {line}; {STALE_HINT}")


def _lint_gate(loaded: Loaded, path: Path) -> None:
    """The errors of `agentsproof lint` refuse a run (agentsproof.formats.lint), checked on
    the loaded file."""
    from agentsproof.commands.lint import gate

    gate(loaded, path)


def _oracle(loaded: Loaded, cfg: RunConfig) -> Callable[[RunResult], None] | None:
    """The oracle preflight (agentsproof.commands.oracle): refuses the run when the oracle
    fails a grader; otherwise the file's ``after`` hook, which also records the oracle's score."""
    if cfg.plan:
        return loaded.after
    from agentsproof.commands.oracle import attach, preflight

    return attach(preflight(loaded, cfg), loaded.after)


def run_eval(path: Path, cfg: RunConfig) -> tuple[RunResult | None, dict[str, Path]]:
    """One eval.yaml (or an EVAL.yaml, run as its cases)."""
    return _run_file("eval", path, cfg)


def run_tc_eval(path: Path, cfg: RunConfig) -> tuple[RunResult | None, dict[str, Path]]:
    """One evals.json, EVAL.yaml or JSONL dataset: an item per case."""
    return _run_file("tc-eval", path, cfg)
