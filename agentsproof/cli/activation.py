"""``agentsproof activation`` (and ``tune-description``): click only; the work is in
:mod:`agentsproof.commands.activation`."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from agentsproof.cli.options import FiniteRange, executor_options, provider_options, sign_option
from agentsproof.core.errors import EXIT_ERROR, EXIT_FAILED, EXIT_OK
from agentsproof.model.activation import DEFAULT_MIN_PRECISION, DEFAULT_MIN_RECALL


def arms_option(f: Any) -> Any:
    """``--arms`` for eval and eval-all."""
    return click.option(
        "--arms",
        metavar="LIST",
        help="baseline,skill (default) or baseline,skill,plugin: also run each skill with every skill of its plugin installed, for an interference verdict (docs/activation.md).",
    )(f)


def _trial_options(*, target: str, trials: str, timeout: str) -> Callable[[Any], Any]:
    """``--target``, ``--targets``, ``--trials``, ``--parallel`` and ``--timeout`` of the
    commands that run activation trials; ``target``, ``trials`` and ``timeout`` are their helps."""
    options = [
        click.option("--target", metavar="NAME", help=f"{target} (a targets.yaml name, or 'copilot'); default: the chat simulation."),
        click.option("--targets", "targets_file", type=click.Path(dir_okay=False, path_type=Path), metavar="FILE", help="A targets.yaml to look in first."),
        click.option("--trials", type=click.IntRange(1, 100), default=1, show_default=True, help=trials),
        click.option("--parallel", type=click.IntRange(1, 512), default=1, show_default=True, help="Concurrent trials."),
        click.option("--timeout", type=FiniteRange(1, 3600), default=120.0, show_default=True, help=timeout),
    ]

    def wrap(f: Any) -> Any:
        for option in reversed(options):  # as if stacked in this order above the function
            f = option(f)
        return f

    return wrap


@click.command("activation")
@click.argument("plugin_dir", type=click.Path(path_type=Path), metavar="PLUGIN_DIR|TRIGGER_EVALS.json")
@provider_options
@_trial_options(target="Load the skills in this agent", trials="Runs of every prompt.", timeout="Seconds per trial.")
@click.option("--skill", "skills", multiple=True, metavar="NAME", help="Only this skill's suite (repeatable); every skill stays installed.")
@click.option("--output", type=click.Path(file_okay=False, path_type=Path), default=Path("runs"), show_default=True, help="Output directory.")
@click.option(
    "--ci",
    is_flag=True,
    help=f"Exit 1 when a skill's recall or precision is below its floor (activation.min_recall / min_precision; default {DEFAULT_MIN_RECALL} / {DEFAULT_MIN_PRECISION}).",
)
@sign_option
@executor_options
def activation_cmd(plugin_dir: Path, ci: bool, **kw: Any) -> None:
    """Does each skill load when it should, and stay quiet when it shouldn't?

    Runs every prompt of the plugin's activation suites (eval.yaml 'activation:',
    EVAL.yaml skill-used / not-skill-used tests) once per trial, one turn, with
    all of the plugin's skills installed, and records which skills the agent
    loaded. Prints per skill precision, recall and F1 with 95 % intervals, the
    prompts that fired wrongly and the colliding pairs; writes
    <output>/<plugin>/<plugin>-activation.{md,json,html}. Without --target the chat
    model chooses from a simulated skill tool (docs/activation.md). A JSON file
    of skill-creator trigger evals ([{"query", "should_trigger"}], plain or
    wrapped in an object, or an evals.json's should_trigger cases) runs as its
    skill's suite (the SKILL.md above its evals/ folder, or its skill_name).

    \b
    Example:
      agentsproof activation evals/office-plugin --target copilot --ci
      agentsproof activation skills/pdf/evals/trigger-evals.json
    """
    from agentsproof.commands.activation import ActivationOptions

    kw.pop("judge_model", None)
    kw["skills"] = tuple(kw.pop("skills") or ())
    report_activation(plugin_dir, ActivationOptions(**kw, ci=ci), ci)


def report_activation(plugin_dir: Path, opts: Any, ci: bool, *, then_exit: bool = True) -> None:
    """Run ``agentsproof activation`` on a plugin folder or a trigger-eval file, print its
    report and exit with its code (``tc-eval`` on a trigger-eval file comes here too; on an
    evals.json with should_trigger cases, ``then_exit=False``: the cases run after it)."""
    from agentsproof.commands.activation import run_plugin_activation
    from agentsproof.report.activation import markdown

    run = run_plugin_activation(plugin_dir, opts)
    click.echo(markdown(run.stats, run.plugin.name, run.settings, run.trials))
    if run.plugin.without_suite:
        click.echo(f"note: no activation suite for {', '.join(run.plugin.without_suite)} (installed, scored only as a sibling)", err=True)
    for _kind, path in run.paths.items():
        click.echo(f"wrote {path}", err=True)
    from agentsproof.executor.proof import activation_exit_code

    code = activation_exit_code(run.stats, ci)  # the code the report's manifest states (agentsproof verify)
    if code == EXIT_ERROR:
        first = next((t.error for t in run.trials if t.error), "")
        click.echo(f"error: every activation trial errored; the first: {first}", err=True)
    elif code == EXIT_FAILED and then_exit:
        for name, why in run.stats.failing:
            click.echo(f"FAILED {name}: {'; '.join(why)}", err=True)
    if then_exit:
        sys.exit(code)


@click.command("tune-description")
@click.argument("skill_dir", type=click.Path(path_type=Path), metavar="SKILL_DIR|TRIGGER_EVALS.json")
@provider_options
@_trial_options(target="Score candidates in this agent", trials="Runs of every prompt per candidate.", timeout="Seconds per trial (and per proposal call).")
@click.option(
    "--rounds", type=click.IntRange(1, 20), default=3, show_default=True, help="Proposal rounds at most (it stops when the held-out score stops improving)."
)
@click.option("--candidates", type=click.IntRange(1, 10), default=3, show_default=True, help="Descriptions proposed per round.")
@click.option("--holdout", type=FiniteRange(0.1, 0.9), default=0.4, show_default=True, help="Share of each kind of prompt kept out of the search.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the train/held-out split.")
@click.option("--write", is_flag=True, help="Replace the description line of SKILL.md when the held-out gain's interval is above 0.")
def tune_description_cmd(skill_dir: Path, rounds: int, candidates: int, holdout: float, seed: int, write: bool, **kw: Any) -> None:
    """Propose better description: lines for a skill, and prove them on held-out prompts.

    The skill's activation suite is split into train and held-out prompts. Each
    round the model proposes descriptions from the train prompts it got wrong;
    each is scored on the train prompts with the plugin's skills installed, the
    best on the held-out ones. It stops when the held-out score stops
    improving, and reports the held-out gain over the original with a 95 %
    interval. SKILL.md changes only with --write and a gain whose interval is
    above 0. The suite may be skill-creator's trigger evals: give the JSON file
    ([{"query", "should_trigger"}]) itself, or keep it in SKILL_DIR/evals/.

    \b
    Example:
      agentsproof tune-description evals/csv-plugin/skills/chart-builder --model gpt-4o
    """
    from agentsproof.commands.activation import ActivationOptions
    from agentsproof.commands.tune import TuneOptions, render, tune_description

    kw.pop("judge_model", None)
    opts = TuneOptions(run=ActivationOptions(**kw), rounds=rounds, candidates=candidates, holdout=holdout, seed=seed, write=write)
    result = tune_description(skill_dir, opts)
    click.echo(render(result))
    sys.exit(EXIT_OK)
