"""``agentsproof regrade``: a saved run's recorded trials graded again, no target run."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from agentsproof.cli.options import provider_options


@click.command("regrade")
@click.argument("run", type=click.Path(dir_okay=False, path_type=Path), metavar="RUN.json")
@click.option("--eval", "eval_file", type=click.Path(path_type=Path), metavar="FILE", help="Grade with this (edited) eval file instead of the one the run names (a run of one file).")
@click.option("--output", type=click.Path(file_okay=False, path_type=Path), metavar="DIR", help="Where to write the new report (default: beside RUN.json).")
@click.option("--no-cache", "no_cache", is_flag=True, help="Do not use the response cache for the judges.")
@click.option("--parallel", type=click.IntRange(1, 64), default=4, show_default=True, help="Trials graded at a time.")
@click.option("--ci", is_flag=True, help="Exit 1 when an item fails, as a run would.")
@provider_options
def regrade_cmd(run: Path, eval_file: Path | None, output: Path | None, no_cache: bool, parallel: int, ci: bool, **opts: Any) -> None:
    """Grade a saved run's recorded trials again with the current graders and judges.

    No target runs: every trial's answer, trajectory, skill use and produced
    files (the flight recorder's store RUN.files/ beside the report) are graded
    by the eval's graders as they are now (or --eval FILE's). Only judges make
    calls (cached like any judge). Writes <RUN>-regraded.{json,md,html},
    marked re-graded, listing what changed. A grader that needs something the
    run did not record (a file over the size cap) is refused by name, exit 30.

    \b
    Example:
      agentsproof regrade runs/my-plugin/my-skill-eval.json
      agentsproof regrade runs/my-plugin/my-skill-eval.json --eval evals/my-plugin/skills/my-skill/eval.yaml
    """
    from agentsproof.commands.console import print_run
    from agentsproof.commands.regrade import regrade
    from agentsproof.core.errors import EXIT_ERROR, EXIT_FAILED, EXIT_OK

    result, written = regrade(
        run, eval_file=eval_file, output=output, provider=opts.get("provider"), model=opts.get("model"),
        judge_model=opts.get("judge_model"), cache=not no_cache, parallel=parallel,
    )
    print_run(result, written)
    info = result.regraded or {}
    click.echo(f"re-graded {run}: {info.get('target_calls', 0)} target calls, {info.get('judge_calls', 0)} judge calls", err=True)
    for line in info.get("changes", []):
        click.echo(f"  changed: {line}", err=True)
    if result.overall.errored:
        sys.exit(EXIT_ERROR)
    sys.exit(EXIT_FAILED if ci and result.overall.failed else EXIT_OK)
