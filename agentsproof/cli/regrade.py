"""``agentsproof regrade``: a saved run's recorded trials graded again, no target run."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from agentsproof.cli.options import provider_options, sign_option


@click.command("regrade")
@click.argument("run", type=click.Path(dir_okay=False, path_type=Path), metavar="RUN.json")
@click.option(
    "--eval",
    "eval_file",
    type=click.Path(path_type=Path),
    metavar="FILE",
    help="Grade with this (edited) eval file instead of the one the run names (a run of one file).",
)
@click.option("--output", type=click.Path(file_okay=False, path_type=Path), metavar="DIR", help="Where to write the new report (default: beside RUN.json).")
@click.option("--no-cache", "no_cache", is_flag=True, help="Do not use the response cache for the judges.")
@click.option("--parallel", type=click.IntRange(1, 64), default=4, show_default=True, help="Trials graded at a time.")
@click.option("--ci", is_flag=True, help="Exit 1 when an item fails, as a run would.")
@sign_option
@provider_options
def regrade_cmd(run: Path, eval_file: Path | None, output: Path | None, no_cache: bool, parallel: int, ci: bool, sign: Path | None, **opts: Any) -> None:
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
    from agentsproof.commands.proof import check_sign_key, sign_report
    from agentsproof.commands.regrade import regrade
    from agentsproof.executor.gate import gate

    check_sign_key(sign)
    result, written = regrade(
        run,
        eval_file=eval_file,
        output=output,
        provider=opts.get("provider"),
        model=opts.get("model"),
        judge_model=opts.get("judge_model"),
        cache=not no_cache,
        parallel=parallel,
        ci=ci,
        sign=sign,
    )
    sign_report(written, sign)
    print_run(result, written)
    info = result.regraded or {}
    click.echo(f"re-graded {run}: {info.get('target_calls', 0)} target calls, {info.get('judge_calls', 0)} judge calls", err=True)
    for line in info.get("changes", []):
        click.echo(f"  changed: {line}", err=True)
    verdict = gate(result, ci=ci)  # as a run exits (the code its manifest records)
    if verdict.line:
        click.echo(verdict.line, err=True)
    sys.exit(verdict.code)


@click.group("import")
def import_group() -> None:
    """Turn trajectories recorded elsewhere into graded trials.

    \b
    Example:
      agentsproof import atif trajectories/ --eval evals/my-plugin/skills/my-skill/eval.yaml
    """


@import_group.command("atif")
@click.argument("folder", type=click.Path(path_type=Path), metavar="DIR")
@click.option(
    "--eval",
    "eval_file",
    required=True,
    type=click.Path(path_type=Path),
    metavar="FILE",
    help="The eval whose graders grade the trajectories (eval.yaml or EVAL.yaml).",
)
@click.option(
    "--arm", type=click.Choice(["with", "without"]), default="with", show_default=True, help="The arm of trajectories that do not say (another tool's)."
)
@click.option("--output", type=click.Path(file_okay=False, path_type=Path), metavar="DIR", help="Where to write the report (default: runs/<plugin>/).")
@click.option("--no-cache", "no_cache", is_flag=True, help="Do not use the response cache for the judges.")
@provider_options
def import_atif_cmd(folder: Path, eval_file: Path, arm: str, output: Path | None, no_cache: bool, **opts: Any) -> None:
    """Grade ATIF trajectories (Harbor's format, ATIF-v1.0 to v1.7) with an eval's graders.

    Every *.json below DIR is one trial: its last agent message is the answer,
    its tool calls the trajectory, its metrics the usage. Trajectories written
    by --atif carry their arm, trial, case and produced files (DIR/files/);
    another tool's are trials of --arm, matched to the eval's tasks by their
    user message. Writes <name>-imported.{json,md,html}; `agentsproof regrade`
    grades it again after an edit. No target runs.

    \b
    Example:
      agentsproof import atif runs/atif/ --eval evals/my-plugin/skills/my-skill/eval.yaml
    """
    from agentsproof.commands.console import print_run
    from agentsproof.commands.import_atif import import_atif
    from agentsproof.core.errors import EXIT_ERROR, EXIT_OK

    result, written = import_atif(
        folder,
        eval_file,
        output=output,
        arm=arm,
        provider=opts.get("provider"),
        model=opts.get("model"),
        judge_model=opts.get("judge_model"),
        cache=not no_cache,
    )
    print_run(result, written)
    info = result.regraded or {}
    click.echo(f"imported {info.get('trajectories', 0)} ATIF trajectories: 0 target calls, {info.get('judge_calls', 0)} judge calls", err=True)
    sys.exit(EXIT_ERROR if result.overall.errored else EXIT_OK)
