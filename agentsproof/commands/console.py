"""Terminal output: the summary table at the end of a run (progress while it runs: :mod:`agentsproof.commands.progress`)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from agentsproof.model.results import RunResult


def _echo(message: str = "", **kw: Any) -> None:
    """click.echo for text that may hold undecodable file-name bytes (surrogates)."""
    from agentsproof.core.inputs import display

    click.echo(display(message), **kw)


def _fmt(v: float | None, spec: str) -> str:
    return "—" if v is None else format(v, spec)


def print_run(run: RunResult, written: dict[str, Path]) -> None:
    """The end-of-run summary on stdout: one row per item, the verdict, and where the reports were ``written``."""
    if sys.stderr.isatty():
        _echo("", err=True)
    from agentsproof.report.identity import identity_line

    _echo(f"agentsproof {run.command} · {run.plugin} · {identity_line(run)}")
    kinds = {i.kind for i in run.items}
    base = (lambda it: f"{it.kind}: {it.name}") if len(kinds) > 1 or kinds == {"agent"} else (lambda it: it.name)
    matrix = len({i.target for i in run.items}) > 1
    label = (lambda it: f"{base(it)} @ {it.target}") if matrix else base
    width = max([len(label(i)) for i in run.items] + [4])
    _echo(f"  {'item':<{width}}  {'with':>5}  {'w/o':>5}  {'delta':>6}  grade  {'pass':>5}  err  result")
    from agentsproof.core.units import signed
    from agentsproof.report.views import item_result_label

    for it in run.items:
        result = item_result_label(it)
        conf = it.stats.get("grade_label") if it.stats else None
        _echo(
            f"  {label(it):<{width}}  {_fmt(it.with_arm.mean_score, '.2f'):>5}  {_fmt(it.without_arm.mean_score, '.2f'):>5}"
            f"  {signed(it.delta):>6}  {(it.grade or '—') + ((it.stats or {}).get('grade_mark') or ''):<5}  {'—' if it.pass_rate is None else f'{it.pass_rate * 100:.0f}%':>5}"
            f"  {it.with_arm.errored + it.without_arm.errored:>3}  {result}"
            + (f"  {conf}" if conf else "")
            + ("  [underpowered]" if it.stats and it.stats.get("verdict") == "underpowered" else "")
            + ("  [not run]" if it.not_run else "")
        )
        if it.status_reason:
            _echo(f"      {it.status}: {it.status_reason}")
        from agentsproof.stats.item import delta_basis_line

        basis = delta_basis_line(it.stats, it.delta)
        if basis:
            _echo(f"      {basis}")
        if it.stats.get("flaky"):
            _echo(f"      flaky: {it.with_arm.passed_trials} of {it.with_arm.scored} trials passed")
        stop = it.stats.get("adaptive_stop") if it.stats else None
        if stop:
            _echo(f"      adaptive stop: {stop['label']} after {stop['trials']} of {stop['cap']} trials per arm")
    _print_agents(run)
    o = run.overall
    _echo(
        f"verdict: {run.verdict} · {o.passed}/{o.total} passed"
        + (f" · {o.errored} errored" if o.errored else "")
        + (f" · {o.not_run} not run" if o.not_run else "")
        + (f" · {unproven} unproven (passed on too few trials)" if (unproven := sum(1 for it in run.items if item_result_label(it) == "UNPROVEN")) else "")
        + (f" · avg delta {signed(o.avg_delta)}" if o.avg_delta is not None else "")
    )
    from agentsproof.report.generalise import cache_line

    reused = cache_line(run)
    if reused:  # a cached or resumed run says so: its speed is not the model's
        _echo(reused)
    if run.settings.get("baseline") == "none":
        _echo("single-arm run (--baseline none): pass rates only, no grades")
    aa = run.settings.get("aa") or {}
    if aa.get("items") is not None:
        c = aa["called"]
        _echo(
            f"A/A run (--aa, the baseline against itself): {aa['items']} items; called A {c['A']}, B {c['B']}, F {c['F']} "
            f"(interval within one band): {aa['called_share']:.0%} of items (alpha {aa['alpha']:.0%})"
            + (f"; mean delta {aa['mean_delta']:+.2f}" if aa.get("mean_delta") is not None else "")
        )
    config = run.settings.get("config")
    if config:  # recorded with --config KEY=VALUE; `compare` notes runs that recorded none
        _echo("config: " + ", ".join(f"{k}={v}" for k, v in config.items()))
    weak = [it for it in run.items if it.stats and it.stats.get("verdict") == "underpowered"]
    if weak:
        _echo(
            f"underpowered: {len(weak)} of {len(run.items)} item{'s' if len(run.items) != 1 else ''} "
            "(fewer than 5 cases, or an interval for tasks like these spanning grade bands): "
            + ", ".join(it.name for it in weak[:5])
            + (" …" if len(weak) > 5 else "")
        )
    if run.settings.get("p_adjust") and any(it.stats.get("grade_mark") for it in run.items if it.stats):
        _echo(f"†: an A or B not significant after the {run.settings['p_adjust']} correction across items")
    if run.incomplete:
        _echo(f"incomplete: {run.incomplete_reason}", err=True)
    for fmt in ("html", "md", "json"):
        if fmt in written:
            _echo(f"{fmt} report: {written[fmt]}")
    from agentsproof.report.runs import RUN_FOLDER

    if "json" in written and run.incomplete and RUN_FOLDER.match(written["json"].parent.name):
        _echo(f"these reports are in this run's own folder; the last good reports in {written['json'].parent.parent} were left as they were")


def _print_agents(run: RunResult) -> None:
    """A matrix run (``--target a,b,c``): the agents side by side."""
    from agentsproof.commands.per_target import by_agent

    rows = by_agent(run.items)
    if not rows:
        return
    _echo("by agent:")
    width = max(len(r["target"]) for r in rows)
    for r in rows:
        where = []
        if r["helps"]:
            where.append("helps: " + ", ".join(r["helps"]))
        if r["hurts"]:
            where.append("hurts: " + ", ".join(r["hurts"]))
        _echo(
            f"  {r['target']:<{width}}  grades {' '.join(r['grades'])}  mean delta {_fmt(r['mean_delta'], '+.2f')}"
            + ("  " + "; ".join(where) if where else "  (no interval clear of 0)")
        )
