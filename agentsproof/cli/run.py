"""The run commands: ``eval``, ``eval-all``, ``tc-eval`` and ``eval-generate``."""

from __future__ import annotations

import functools
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from agentsproof.cli.activation import arms_option
from agentsproof.cli.options import (
    FiniteRange,
    budget_options,
    executor_options,
    p_adjust_option,
    provider_options,
    run_options,
    tasks_option,
    threshold_option,
    trial_options,
)
from agentsproof.core.errors import EXIT_FAILED, EXIT_OK

if TYPE_CHECKING:
    from agentsproof.model.results import RunResult


def finish(run: RunResult | None, written: dict[str, Path], ci: bool, fail_on_underpowered: bool = False, ci_rule: str = "point") -> None:
    """Print the run's summary and exit (:func:`agentsproof.executor.gate.gate`): 30 when it is
    incomplete or has errored items, 1 when ``--ci`` and an item failed, passed unproven (too
    few trials) or, with ``fail_on_underpowered``, came out underpowered, else 0; every
    non-zero exit ends with one line saying why. ``run`` None (``--plan``) exits 0."""
    from agentsproof.commands.console import print_run
    from agentsproof.executor.gate import gate

    if run is None:  # --plan: printed, nothing ran
        sys.exit(EXIT_OK)
    print_run(run, written)
    result = gate(run, ci=ci, fail_on_underpowered=fail_on_underpowered)
    if ci and result.code == EXIT_FAILED and ci_rule == "point":
        from agentsproof.stats.item import harm_not_shown, harm_not_shown_words

        unshown = [f"{it.id} {harm_not_shown_words(it.stats)}" for it in run.items if not it.passed and it.grade == "F" and harm_not_shown(it.stats)]
        if unshown:
            click.echo(
                f"--ci: {len(unshown)} item{'s' if len(unshown) != 1 else ''} fail{'s' if len(unshown) == 1 else ''} on a point F "
                f"whose harm is not shown (the interval the grade answers reaches 0): "
                f"{', '.join(unshown[:5])}{' …' if len(unshown) > 5 else ''}; --ci-rule interval fails only a shown harm",
                err=True,
            )
    if result.line:
        click.echo(result.line, err=True)
    sys.exit(result.code)


@click.command("eval")
@click.argument("path", type=click.Path(path_type=Path))
@trial_options("default: from eval.yaml")
@threshold_option
@click.option(
    "--skill",
    type=click.Path(dir_okay=False, path_type=Path),
    metavar="FILE",
    help="An EVAL.yaml's or promptfooconfig.yaml's with-arm skill (EVAL.yaml default: skills/<name>/SKILL.md above its evals/ folder).",
)
@provider_options
@run_options
@tasks_option
@budget_options
@executor_options
@arms_option
@click.option(
    "--live-source",
    is_flag=True,
    help="A generated eval runs the skill/agent files it was copied from (recorded by eval-generate), not its copies; without it a copy that differs from its source is a warning (--ci: exit 30).",
)
def eval_cmd(path: Path, **opts: Any) -> None:
    """Run one eval.yaml (or EVAL.yaml): N trials with the skill/agent, N without.

    Writes runs/<plugin>/<skill>-eval.{md,json,html} (agents: <name>-agent-eval.*),
    keeps them in runs/<plugin>/<time>-<id>/ (latest: the newest; browse with
    agentsproof view) and the JSON in runs/<plugin>/history/. An EVAL.yaml
    (agentv's or the reference's dialect) runs one case per test, like
    tc-eval, and writes runs/<name>/<name>-tc-eval.*; so does a
    promptfooconfig.yaml (prompts x tests x providers), and a skill-creator
    evals.json runs as tc-eval runs it; see docs/interop.md. A Harbor task
    folder (task.toml + instruction.md: Terminal-Bench 2.0, SkillsBench) runs
    in its own container with --target AGENT; see docs/harbor.md.

    \b
    Example:
      agentsproof eval evals/my-plugin/skills/my-skill/eval.yaml --smoke --model gpt-4o
      agentsproof eval skills/my-skill/evals/EVAL.yaml --trials 3 --model gpt-4o
      agentsproof eval tasks/my-harbor-task --target claude-code --trials 5
    """
    from agentsproof.commands.run import run_eval
    from agentsproof.model.options import RunFlags

    cfg = RunFlags.from_cli(opts)
    run, written = run_eval(path, cfg)
    finish(run, written, cfg.ci, cfg.fail_on_underpowered, cfg.ci_rule)


@click.command("eval-all")
@click.argument("directory", type=click.Path(path_type=Path))
@trial_options("default: from each eval.yaml")
@threshold_option
@provider_options
@run_options
@tasks_option
@budget_options
@executor_options
@p_adjust_option
@arms_option
@click.option(
    "--live-source",
    is_flag=True,
    help="A generated eval runs the skill/agent files it was copied from (recorded by eval-generate), not its copies; without it a copy that differs from its source is a warning (--ci: exit 30).",
)
@click.option("--shard", metavar="I/N", help="Run only slice I of N (stable, by item id), e.g. one per CI machine; join them with `agentsproof merge`.")
@click.option(
    "--strict",
    is_flag=True,
    help="Any eval file that does not load fails the run (exit 30) before a trial starts; without it (and without --ci) the others run.",
)
@click.option(
    "--allow-refused", is_flag=True, help="With --ci, run the other eval files when one does not load (default under --ci: exit 30 naming the file and why)."
)
@click.option(
    "--ablate", is_flag=True, help="Ablate each eval's skill instead (as `agentsproof ablate DIR`, margin 0.05): every part priced; docs/ablation.md."
)
def eval_all_cmd(directory: Path, strict: bool, allow_refused: bool, ablate: bool, **opts: Any) -> None:
    """Run every eval file below DIRECTORY: eval.yaml, EVAL.yaml, agentv's *.eval.yaml, promptfooconfig.yaml, evals/evals.json, Harbor task folders.

    Writes one report for the plugin: runs/<plugin>/<plugin>-eval.html, plus
    eval-all-summary.md and eval-all-summary.json. A file that does not load is
    listed with its error (and in the report's settings.refused) and the others
    run; exit 30 when none runs, with --strict, or with --ci (unless
    --allow-refused). A file with no skill beside
    it (promptfooconfig.yaml, an EVAL.yaml without SKILL.md) runs single-armed.

    \b
    Example:
      agentsproof eval-all evals/my-plugin/ --smoke --ci --model gpt-4o
      agentsproof eval-all evals/my-plugin/ --shard 2/4 --output runs/shard-2
    """
    from agentsproof.commands.eval_all import run_eval_all
    from agentsproof.model.options import RunFlags

    cfg = RunFlags.from_cli(opts)
    if ablate:
        from agentsproof.cli.ablate import ablate_folder

        ablate_folder(directory, cfg, 0.05)
    run, written = run_eval_all(directory, cfg, strict=strict, allow_refused=allow_refused)
    finish(run, written, cfg.ci, cfg.fail_on_underpowered, cfg.ci_rule)


@click.command("tc-eval")
@click.argument("path", type=click.Path(path_type=Path))
@trial_options("default: 1")
@click.option("--threshold", type=FiniteRange(0, 1), help="Pass rate required per case in the with-skill arm (default 0.6; EVAL.yaml: 0.8).")
@click.option(
    "--timeout",
    type=FiniteRange(min=0, min_open=True),
    help="Seconds per trial (default 300; a Harbor task: its [agent] timeout_sec; a target's own timeout: wins).",
)
@click.option(
    "--skill",
    type=click.Path(dir_okay=False, path_type=Path),
    metavar="FILE",
    help="A JSONL dataset's, EVAL.yaml's or promptfooconfig.yaml's with-arm skill (without one the model or --target runs alone).",
)
@provider_options
@run_options
@budget_options
@executor_options
def tc_eval_cmd(path: Path, **opts: Any) -> None:
    """Run hand-authored test cases from an evals.json, EVAL.yaml, promptfooconfig.yaml or JSONL dataset.

    skill-creator's trigger evals ([{"query", "should_trigger"}]) run as an
    activation suite instead, as `agentsproof activation FILE` runs them.

    Each assertion is judged in its own LLM call; expected_output is an LLM
    rubric. Writes runs/<name>/<name>-tc-eval.{html,md,json}: the JSON
    file's stem, or for evals.json the skill's folder name. A .jsonl file
    is an agentprobe-style dataset (id, input, expected_answer, answer_match,
    expected_tools, tags), graded without a judge; an EVAL.yaml runs one case
    per test, a promptfooconfig.yaml one per prompt x test x provider; see
    docs/interop.md.

    \b
    Example:
      agentsproof tc-eval path/to/evals.json --trials 2 --model gpt-4o
      agentsproof tc-eval skills/my-skill/evals/EVAL.yaml --trials 2 --model gpt-4o
      agentsproof tc-eval cases.jsonl --skill SKILL.md --trials 5 --model gpt-4o
    """
    from agentsproof.commands.run import run_tc_eval
    from agentsproof.model.options import RunFlags

    cfg = RunFlags.from_cli(opts)
    import contextlib

    from agentsproof.core.inputs import parsed_as
    from agentsproof.formats.skill_creator import activation_prompts, only_triggers, read_json

    data = read_json(Path(path))  # a JSON file is read once: the checks below and the run share its parse
    with parsed_as(Path(path), data) if data is not None else contextlib.nullcontext():
        if only_triggers(Path(path)):  # skill-creator's trigger evals: whether the skill loads, not its answers
            _trigger_evals(Path(path), cfg)
        elif not cfg.retry_errors and not cfg.plan and activation_prompts(Path(path)):  # should_trigger cases: their suite first, then the cases
            from agentsproof.formats.evals_json import load_tc_eval

            load_tc_eval(Path(path))  # a file that does not load is refused before any call
            _trigger_evals(Path(path), cfg, then_exit=False)
        run, written = run_tc_eval(path, cfg)
    finish(run, written, cfg.ci, cfg.fail_on_underpowered, cfg.ci_rule)


def _trigger_evals(path: Path, cfg: Any, then_exit: bool = True) -> None:
    """``tc-eval`` on skill-creator trigger evals (or an evals.json's should_trigger cases): run
    as the activation suite they are (and say so)."""
    from agentsproof.cli.activation import report_activation
    from agentsproof.commands.activation import ActivationOptions
    from agentsproof.executor.activation import DEFAULT_ACTIVATION_TIMEOUT

    what = "is skill-creator trigger evals ({query, should_trigger})" if then_exit else "has should_trigger cases"
    click.echo(
        f"note: {path} {what}: tc-eval runs them as an activation suite, as `agentsproof activation {path}` does (docs/activation.md)",
        err=True,
    )
    opts = ActivationOptions(
        provider=cfg.provider,
        model=cfg.model,
        target=cfg.target,
        targets_file=cfg.targets_file,
        trials=cfg.trials_per_item or cfg.trials or 1,
        parallel=cfg.parallel,
        timeout=cfg.timeout or DEFAULT_ACTIVATION_TIMEOUT,
        output=cfg.output,
        executor=cfg.executor,
        ray_address=cfg.ray_address,
    )
    report_activation(path, opts, cfg.ci, then_exit=then_exit)


@click.command("eval-generate")
@click.option(
    "--plugin-dir",
    required=True,
    type=click.Path(path_type=Path),
    help="Plugin folder: skills/*/SKILL.md and agents/*.md, an awesome-copilot plugin (plugin.json) or a Claude Code plugin (.claude-plugin/plugin.json).",
)
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), help="Output folder (default: evals/<plugin-name>/).")
@click.option(
    "--trials",
    type=click.IntRange(1, 1000),
    default=3,
    show_default=True,
    help="Trials per arm and case written into each eval.yaml (3 × 5 cases settles a clear-cut skill on these cases; for tasks like these it takes about 12 cases).",
)
@click.option(
    "--refresh",
    is_flag=True,
    help="Copy each skill/agent file (and its folder) again into the existing evals of --out and record their sources; no model call, no eval rewritten.",
)
@click.option("--dry-run", is_flag=True, help="Print what would be written; write nothing.")
@click.option("--parallel", type=click.IntRange(1, 64), default=1, show_default=True, help="Items generated (and check trials run) at once.")
@click.option("--check/--no-check", default=True, show_default=True, help="Check each eval: a relevance judge call, then a short real run of both arms.")
@click.option("--check-trials", type=click.IntRange(1, 100), default=2, show_default=True, help="Trials per arm of the check run (at least one per case).")
@click.option(
    "--check-retries",
    type=click.IntRange(0, 10),
    default=1,
    show_default=True,
    help="Regenerations, with the evidence, of an eval with fewer than 5 distinct cases, a copied case, or one that is unrelated or does not discriminate.",
)
@click.option(
    "--activation/--no-activation",
    default=True,
    show_default=True,
    help="Also write each skill's activation suite: >= 10 should and >= 10 should-not prompts, checked (docs/activation.md).",
)
@click.option(
    "--target",
    metavar="NAME",
    help="Write agent evals for this target (a targets.yaml name, or the built-in 'copilot'): tasks with workspace seed files, graded by files/script graders; the check runs on it. Default: chat evals.",
)
@click.option("--targets", "targets_file", type=click.Path(dir_okay=False, path_type=Path), metavar="FILE", help="A targets.yaml to look --target up in first.")
@functools.partial(
    provider_options,
    model_help="Model that writes the evals and answers the check's chat trials (default: AGENTSPROOF_MODEL, else gpt-4o; the local provider runs its own). Env: AGENTSPROOF_MODEL.",
)
def eval_generate_cmd(**opts: Any) -> None:
    """Write one eval.yaml per skill and agent of a plugin, using an LLM.

    Each generated file is validated against the eval.yaml schema; an invalid
    one is retried once with the validation error. It must hold at least 5
    distinct tasks (cases), none copied from the skill's text (word 5-gram
    overlap above 30 %) and none naming the skill or its title; otherwise it
    is regenerated with the measurement (--check-retries) and, after that,
    the item fails. Then it is checked: a judge
    rejects a task unrelated to the skill, and a short real run (--check-trials
    per arm) must show the with-skill arm beating the baseline; a failing eval
    is regenerated with the evidence, and one still weak is written with a
    '# weak:' header and listed. Rejected replies are kept in <out>/.rejected/.
    A skill's whole folder (references/, assets/, scripts/) is copied beside
    its eval, an agent's file beside its eval. --model (the model that writes
    the evals) defaults to AGENTSPROOF_MODEL, else gpt-4o (the local provider
    runs its own model); --judge-model makes the relevance check's call.

    Generated evals are chat evals (one chat call per trial, the skill as the
    system prompt) unless --target NAME is given: then they are agent evals
    for that target (execution.target, a workspace of seed files per task,
    files/script graders on what the agent leaves). See docs/eval-files.md.

    Each skill's eval also gets an activation suite (should / should-not
    prompts, near-misses from its siblings; --no-activation: none).

    \b
    Example:
      agentsproof eval-generate --plugin-dir path/to/my-plugin --trials 3 --model gpt-4o
    """
    from agentsproof.generator.command import generate_cli

    code = generate_cli(**opts)
    sys.exit(code)
