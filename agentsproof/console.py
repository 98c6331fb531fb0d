"""Terminal output: progress while trials run, a summary table at the end."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Callable

import click

from agentsproof.schemas.artifacts import RunResult


def progress_printer() -> Callable[[Any, Any], None] | None:
    """A per-trial progress line on stderr when it is a terminal; silent otherwise."""
    if not sys.stderr.isatty():
        return None
    count = {"n": 0}

    def on_trial(item: Any, trial: Any) -> None:
        count["n"] += 1
        mark = "E" if trial.status == "errored" else ("✓" if trial.passed else "✗")
        click.echo(f"\r  {count['n']:>5} trials  last: {item.name} [{trial.arm}] {mark}   ", err=True, nl=False)

    return on_trial


def _fmt(v: float | None, spec: str) -> str:
    return "—" if v is None else format(v, spec)


def print_run(run: RunResult, written: dict[str, Path]) -> None:
    if sys.stderr.isatty():
        click.echo("", err=True)
    click.echo(f"agentsproof {run.command} · {run.plugin} · provider {run.provider} · model {run.model}")
    width = max([len(i.name) for i in run.items] + [4])
    click.echo(f"  {'item':<{width}}  {'with':>5}  {'w/o':>5}  {'delta':>6}  grade  {'pass':>5}  err  result")
    for it in run.items:
        result = "PASS" if it.passed else ("ERROR" if it.status == "errored" else "FAIL")
        conf = it.stats.get("grade_label") if it.stats else None
        click.echo(
            f"  {it.name:<{width}}  {_fmt(it.with_arm.mean_score, '.2f'):>5}  {_fmt(it.without_arm.mean_score, '.2f'):>5}"
            f"  {_fmt(it.delta, '+.2f'):>6}  {(it.grade or '—'):<5}  {'—' if it.pass_rate is None else f'{it.pass_rate * 100:.0f}%':>5}"
            f"  {it.with_arm.errored + it.without_arm.errored:>3}  {result}" + (f"  {conf}" if conf else "")
        )
        if it.status_reason:
            click.echo(f"      {it.status}: {it.status_reason}")
    o = run.overall
    click.echo(
        f"verdict: {run.verdict} · {o.passed}/{o.total} passed"
        + (f" · {o.errored} errored" if o.errored else "")
        + (f" · avg delta {o.avg_delta:+.2f}" if o.avg_delta is not None else "")
    )
    if run.incomplete:
        click.echo(f"incomplete: {run.incomplete_reason}", err=True)
    for fmt in ("html", "md", "json"):
        if fmt in written:
            click.echo(f"{fmt} report: {written[fmt]}")
