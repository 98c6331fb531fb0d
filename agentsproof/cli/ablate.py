"""``agentsproof ablate``: which part of a skill earns its keep."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from agentsproof.cli.options import FiniteRange, budget_options, provider_options, run_options, tasks_option, threshold_option, trial_options
from agentsproof.core.errors import EXIT_ERROR, EXIT_OK


@click.command("ablate")
@click.argument("path", type=click.Path(path_type=Path))
@trial_options("default: from eval.yaml")
@threshold_option
@provider_options
@run_options
@tasks_option
@budget_options
@click.option(
    "--margin",
    type=FiniteRange(0, 1, min_open=True, max_open=True),
    default=0.05,
    show_default=True,
    help="A part is removable when removing it costs less than this (non-inferiority margin, on the 0-1 score).",
)
def ablate_cmd(path: Path, margin: float, **opts: Any) -> None:
    """Price every part of a skill: each '##' section of SKILL.md and each file or folder of the skill.

    One run holds the whole skill, no skill, and the skill without each part,
    on the same cases and trials. Each part gets the effect of removing it
    (paired by case) with its 95 % interval, its tokens, and a verdict:
    needed, removable (costs less than --margin) or unclear, adjusted across
    the parts (Holm). The smallest skill (every removable part out) is written
    beside the report and confirmed against the whole skill and no skill.
    --adaptive runs the arms in rounds and stops each part's arm once its
    verdict is settled (valid after any look, Holm kept). The run's report
    holds the ablation as a section (settings.ablation in the JSON; verify
    re-derives it), also written as <skill>-ablation.{json,md,html};
    --plan lists the parts and the calls. PATH may be a folder (a plugin):
    every eval below it is ablated in turn, as `eval-all DIR --ablate` does.
    See docs/ablation.md.

    \b
    Example:
      agentsproof ablate evals/ablation-demo/skills/release-notes/eval.yaml --provider local --trials 6
      agentsproof ablate evals/ablation-demo/ --trials 20 --margin 0.25
      agentsproof ablate evals/ablation-demo/ --trials 40 --margin 0.25 --adaptive
    """
    from agentsproof.model.options import RunFlags

    cfg = RunFlags.from_cli(opts)
    if path.is_dir():
        ablate_folder(path, cfg, margin)
    from agentsproof.commands.ablate import run_ablation

    run, written, ab = run_ablation(path, cfg, margin)
    if run is None or ab is None:
        sys.exit(EXIT_OK)
    show(ab, written)
    sys.exit(EXIT_ERROR if run.incomplete or run.overall.errored else EXIT_OK)


def show(ab: Any, written: dict[str, Path]) -> None:
    """One ablation's parts, smallest skill and report paths on stdout."""
    titles = {p.id: p.title for p in ab.parts}
    click.echo(f"ablate {ab.skill}: {len(ab.parts)} parts")
    for e in ab.effects:
        interval = f"[{e.interval[0]:+.2f}, {e.interval[1]:+.2f}]" if e.interval else "no scored pair"
        effect = f"{e.effect:+.2f}" if e.effect is not None else "  – "
        click.echo(f"  {titles[e.part][:40]:<40} {e.tokens:>6,} tokens  removing it: {effect} {interval}  {e.verdict}")
    small = ab.data.get("smallest")
    if small:
        vw = small["vs_whole"]
        click.echo(
            f"  smallest skill: without {', '.join(small['removed'])} ({small['tokens_saved']:,} tokens saved): "
            f"{'non-inferior' if vw['non_inferior'] else 'NOT shown non-inferior'} to the whole skill; {small['folder']}"
        )
    calls = ab.data.get("calls") or {}
    if ab.data.get("adaptive"):
        click.echo(f"  --adaptive: {calls.get('trials', 0):,} trials, {calls.get('fixed_trials', 0):,} with every arm at the cap")
    for key in ("ablation-html", "ablation-md", "ablation-json"):
        if key in written:
            click.echo(f"  {key.split('-')[1]}: {written[key]}")


def ablate_folder(directory: Path, cfg: Any, margin: float) -> None:
    """Every eval below ``directory`` ablated in turn (``ablate DIR``, ``eval-all DIR --ablate``); exits.

    Exit 30 when none could be ablated or a run errored; files that cannot be ablated are
    listed, one line each, and the others run."""
    from agentsproof.commands.ablate import Ablation, run_ablation_all

    done = run_ablation_all(directory, cfg, margin)
    if cfg.plan:
        sys.exit(EXIT_OK)
    ran = 0
    errored = False
    for _path, ab, run, written in done:
        if isinstance(ab, Ablation):
            ran += 1
            show(ab, written)
            errored = errored or bool(run is not None and (run.incomplete or run.overall.errored))
        else:
            click.echo(f"not ablated: {ab.format()}", err=True)
    if not ran:
        click.echo(f"error: {directory}: no eval below it could be ablated (each needs one skill with '## ' sections or files)", err=True)
    sys.exit(EXIT_ERROR if errored or not ran else EXIT_OK)
