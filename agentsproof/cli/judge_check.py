"""``agentsproof judge-check``: measure the judge against a gold set people labelled."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from agentsproof.llm.registry import PROVIDERS


@click.command("judge-check")
@click.argument("gold", type=click.Path(path_type=Path), metavar="GOLD.jsonl")
@click.option("--judge-model", "judge_models", metavar="A[,B…]", help="Judge model(s) to measure, comma-separated (default: the configured judge model).")
@click.option("--model", help="Model (the judge's default when --judge-model is not given). Env: AGENTSPROOF_MODEL.")
@click.option("--provider", type=click.Choice(PROVIDERS, case_sensitive=False), envvar="AGENTSPROOF_PROVIDER_TYPE", help="LLM provider (as for eval). Env: AGENTSPROOF_PROVIDER_TYPE.")
@click.option("--parallel", type=click.IntRange(1, 64), default=4, show_default=True, help="Judge calls at a time.")
@click.option("--json", "json_path", type=click.Path(dir_okay=False, path_type=Path), help="Also write the figures and every verdict as JSON.")
def judge_check_cmd(gold: Path, judge_models: str | None, json_path: Path | None, **opts: Any) -> None:
    """Measure how far the judge agrees with people on GOLD.jsonl.

    Each line: a task, an answer and a rubric with the person's score (0-1), or
    an assertion with the person's label (true/false), or two answers with the
    person's preference (A, B or tie). Every item is judged twice
    (self-consistency), pairs in both orders (position consistency). Prints
    accuracy and Cohen's kappa (Spearman for scores) with 95 % intervals, and
    warns when kappa is below 0.6. See docs/statistics.md.

    \b
    Example:
      agentsproof judge-check tests/data/gold/judge-gold.jsonl --provider local
      agentsproof judge-check gold.jsonl --judge-model gpt-4o,gpt-4o-mini
    """
    from agentsproof.commands.judge_check import judge_check, render, write_json

    names = [n.strip() for n in judge_models.split(",") if n.strip()] if judge_models else None
    report = judge_check(gold, provider=opts["provider"], model=opts["model"], judge_models=names, parallel=opts["parallel"])
    for line in render(report):
        click.echo(line)
    if json_path is not None:
        write_json(report, json_path)
        click.echo(f"wrote {json_path}", err=True)
