"""``eval`` and ``tc-eval`` on one file, and the one path every run takes.

A file is loaded in whatever format it is (:func:`load_file`, agentsproof.formats), refused
on lint errors (:func:`lint_gate`) and stale copies (:func:`copies_gate`), checked by the
oracle, then planned (:func:`agentsproof.commands.plan.plan_run`) and run by
:func:`execute`, which every run command shares (eval-all, ablate and ``--retry-errors``
too): the trials, what the run gets before its reports, the reports written and sealed.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable
from pathlib import Path

from agentsproof.commands.plan import adaptive_defaults, item_request, plan_run, run_settings, tc_settings
from agentsproof.core.errors import InputError
from agentsproof.executor.plan import RunPlan
from agentsproof.formats import registry as formats
from agentsproof.formats.base import ItemRequest, Loaded
from agentsproof.model.options import RunFlags
from agentsproof.model.results import RunResult


def write_outputs(run: RunResult, targets: dict[str, Path]) -> dict[str, Path]:
    """Every report of ``run``; the writers (and jinja2) are imported only now, after the run.
    A run stopped by a failure every trial would repeat (a refused key, an unreachable
    endpoint) is written into its own run folder, beside the last good report, never over it."""
    from agentsproof.executor.fatal import stopped_by_fatal
    from agentsproof.report.files import write_outputs as write

    return write(run, targets, failed_run=stopped_by_fatal(run))


def execute(plan: RunPlan) -> tuple[RunResult | None, dict[str, Path]]:
    """The one path every run takes, a retried one too: the plan's trials run (journalled,
    resumable, with progress lines), what the run gets before its reports (:func:`_after_run`),
    the reports written and sealed. ``--plan``: the plan printed, nothing run (None)."""
    if plan.run.plan:
        print_plan(plan)
        return None, {}
    from agentsproof.commands.progress import Progress, more_allowed, run_total
    from agentsproof.executor.session import run_plan
    from agentsproof.report.files import ReportLock

    cfg = plan.run
    progress = Progress(run_total(list(plan.items), len(plan.prior)), parallel=cfg.parallel, more_allowed=more_allowed(cfg.provider), capped=cfg.adaptive)
    with ReportLock(plan.reports["json"]):  # one run per report set: a second is refused naming this one
        with progress:
            run = run_plan(dataclasses.replace(plan, on_trial=progress.trial, on_item=progress.item))
        _after_run(run, plan)
        return run, write_sealed(run, plan)


def print_plan(plan: RunPlan) -> None:
    """``--plan``: the calls, tokens and cost of the run and its wall time, nothing called."""
    from agentsproof.commands.progress import plan_wall_time_lines
    from agentsproof.executor.costplan import render_plan

    items = list(plan.items)
    for line in render_plan(plan.command, items, plan.run):
        print(line)
    for line in plan_wall_time_lines(plan.command, items, plan.run, plan.plugin, plan.name):
        print(line)


def write_sealed(run: RunResult, plan: RunPlan) -> dict[str, Path]:
    """The run's manifest written into it, its reports written, the JSON signed with ``--sign``."""
    from agentsproof.commands.proof import proof_options, seal, sign_report

    seal(run, list(plan.items), dict(plan.target_defs), proof_options(plan.run))
    written = write_outputs(run, dict(plan.reports))
    sign_report(written, plan.run.sign)
    return written


def _after_run(run: RunResult, plan: RunPlan) -> None:
    """What a finished run gets before its reports: the format's hook, the verdict, the A/A
    summary, the judge's agreement with gold labels, the ATIF export."""
    cfg = plan.run
    if plan.after is not None:  # a dataset's failure reasons on its checks, an EVAL.yaml's check labels
        plan.after(run)
    if plan.retried:  # a retry's report is the saved run's with its errored trials run again
        return
    from agentsproof.executor.gate import gate

    run.verdict = gate(run, ci=cfg.ci, fail_on_underpowered=cfg.fail_on_underpowered).verdict  # the reports' verdict is the exit code's
    if cfg.aa:
        from agentsproof.stats.aa import aa_summary

        run.settings["aa"] = aa_summary(run.items)  # the A/A block needs the graded items: written where --aa's mode was
    if any(it.judge_gold for it in plan.items):
        from agentsproof.commands.judge_check import attach_gold_agreement

        for line in attach_gold_agreement(run, list(plan.items), cfg):
            print(f"warning: {line}", file=sys.stderr)
    if cfg.atif is not None and plan.record_dir is not None:
        from agentsproof.interop.atif import write_atif

        write_atif(run, cfg.atif, plan.record_dir)


def retry(command: str, path: Path, cfg: RunFlags) -> tuple[RunResult | None, dict[str, Path]]:
    """``--retry-errors RUN.json``: the saved run's scored trials kept, its errored ones run
    again, through :func:`plan_run` and :func:`execute` as any run."""
    from agentsproof.commands.plan import choose_arms
    from agentsproof.commands.rerun import retry_items, retry_plan
    from agentsproof.report.saved import load_run

    saved_path = Path(cfg.retry_errors)  # type: ignore[arg-type]
    saved = load_run(saved_path)
    if saved.command != command:
        raise InputError(str(saved_path), "command", f"is a {saved.command!r} run; retry it with `agentsproof {saved.command}`")
    by_id, after = retry_items(saved, saved_path, path, cfg.skill)  # the items as the original run built them
    items, prior, settings = retry_plan(saved, by_id, saved_path)
    if settings.baseline == "none":  # a single-arm run is retried single-armed
        items = choose_arms(items, cfg.replace(baseline="none", adaptive=False))
    single = saved.items[0] if command == "eval" and saved.items else None
    name = single.name if single is not None else saved.plugin
    kind = single.kind if single is not None else None
    return execute(plan_run(command, saved.plugin, items, cfg, name, settings, after=after, prior=prior, base_duration_s=saved.duration_s, kind=kind))


def _run_file(command: str, path: Path, cfg: RunFlags) -> tuple[RunResult | None, dict[str, Path]]:
    """``eval`` / ``tc-eval`` on one file, in whatever format it is (agentsproof.formats)."""
    if cfg.retry_errors:
        return retry(command, path, cfg)
    cfg = adaptive_defaults(cfg)
    loaded = load_file(Path(path), command, item_request(cfg))
    lint_gate(loaded, Path(path))
    copies_gate(loaded, cfg)
    after = _oracle(loaded, cfg)
    if loaded.single_arm:  # nothing to compare against: the model or target alone
        cfg = cfg.replace(baseline="none")
    if loaded.report == "eval":
        settings = run_settings(cfg, trials=cfg.trials_per_item)
    else:
        given = {"trials": cfg.trials_per_item} if cfg.trials_per_item is not None else {}
        settings = tc_settings(cfg, **{**loaded.settings, **given})
    return execute(plan_run(loaded.report, loaded.plugin, loaded.items, cfg, loaded.name, settings, after=after))


def load_file(path: Path, command: str, request: ItemRequest) -> Loaded:
    """The file's items, read and validated once: the format's detection and its loader share
    one read, and the lint gate and the oracle use what the load built."""
    from agentsproof.core.inputs import read_once

    with read_once():
        return formats.load(path, command, request)


def copies_gate(loaded: Loaded, cfg: RunFlags) -> None:
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


def lint_gate(loaded: Loaded, path: Path) -> None:
    """The errors of `agentsproof lint` refuse a run (agentsproof.formats.lint), checked on
    the loaded file."""
    from agentsproof.commands.lint import gate

    gate(loaded, path)


def _oracle(loaded: Loaded, cfg: RunFlags) -> Callable[[RunResult], None] | None:
    """The oracle preflight (agentsproof.commands.oracle): refuses the run when the oracle
    fails a grader; otherwise the file's ``after`` hook, which also records the oracle's score."""
    if cfg.plan:
        return loaded.after
    from agentsproof.commands.oracle import attach, preflight

    return attach(preflight(loaded, cfg), loaded.after)


def run_eval(path: Path, cfg: RunFlags) -> tuple[RunResult | None, dict[str, Path]]:
    """One eval.yaml (or an EVAL.yaml, run as its cases)."""
    return _run_file("eval", path, cfg)


def run_tc_eval(path: Path, cfg: RunFlags) -> tuple[RunResult | None, dict[str, Path]]:
    """One evals.json, EVAL.yaml or JSONL dataset: an item per case."""
    return _run_file("tc-eval", path, cfg)
