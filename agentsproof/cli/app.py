"""The agentsproof command line. Commands parse, call the library, print, and exit.

Exit codes: 0 all passed; 1 an eval/case failed its threshold or got F (with --ci);
30 an error (bad input, missing files, unusable provider, aborted run).
"""

from __future__ import annotations

import functools
import os
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from agentsproof.cli.options import budget_options, p_adjust_option, tasks_option
from agentsproof.core.errors import EXIT_ERROR, EXIT_FAILED, EXIT_OK, AgentsproofError, InputError
from agentsproof.core.version import __version__
from agentsproof.llm.registry import PROVIDERS

PRESETS = {"smoke": 5, "reliable": 15, "regression": 30}


class _Group(click.Group):
    """Turns every AgentsproofError into one line on stderr and exit 30."""

    def invoke(self, ctx: click.Context) -> Any:
        previous = _sigterm_as_interrupt()
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            # SIGINT or SIGTERM outside a run (a run writes its incomplete report itself).
            click.echo("\nerror: interrupted", err=True)
            sys.exit(EXIT_ERROR)
        except AgentsproofError as err:
            click.echo(f"error: {err}", err=True)
            sys.exit(err.exit_code)
        except click.UsageError as err:
            # Bad flags are bad input too: one line, exit 30.
            click.echo(f"error: {err.format_message()}", err=True)
            sys.exit(EXIT_ERROR)
        except (click.exceptions.Exit, click.Abort, SystemExit):
            raise
        except Exception as err:  # noqa: BLE001 - one line for users, the traceback on request
            if os.environ.get("AGENTSPROOF_DEBUG"):
                raise
            click.echo(
                f"error: internal error: {type(err).__name__}: {err} (set AGENTSPROOF_DEBUG=1 for the traceback)",
                err=True,
            )
            sys.exit(EXIT_ERROR)
        finally:
            if previous is not None:
                signal.signal(signal.SIGTERM, previous)


def _raise_interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


def _sigterm_as_interrupt() -> Any:
    """SIGTERM behaves like Ctrl-C (clean stop, exit 30); returns the previous handler."""
    try:
        return signal.signal(signal.SIGTERM, _raise_interrupt)
    except (ValueError, AttributeError):  # not the main thread
        return None


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="agentsproof")
def main() -> None:
    """Prove that a skill or agent makes a model, or a whole agent, better.

    Every eval runs N trials with the skill/agent (as the system prompt, or
    installed in a real agent working in its own workspace: --target) and N
    without it, grades both arms, and grades the delta: A >= +0.30,
    B >= +0.15, C >= 0, F < 0. Exit codes: 0 passed, 1 failed (with --ci),
    30 error.
    """


# ---------------------------------------------------------------- shared options


def provider_options(f: Callable) -> Callable:
    f = click.option(
        "--judge-model",
        envvar="AGENTSPROOF_JUDGE_MODEL",
        help="Model for LLM graders (default: --model). Env: AGENTSPROOF_JUDGE_MODEL.",
    )(f)
    f = click.option(
        "--provider",
        type=click.Choice(PROVIDERS, case_sensitive=False),
        envvar="AGENTSPROOF_PROVIDER_TYPE",
        help="LLM provider (default auto: BYOK env, else Copilot, else local). Env: AGENTSPROOF_PROVIDER_TYPE.",
    )(f)
    f = click.option("--model", help="Model for the trials. Env: AGENTSPROOF_MODEL.")(f)
    return f


def trial_options(default_trials_help: str) -> Callable[[Callable], Callable]:
    def deco(f: Callable) -> Callable:
        for name, n in reversed(list(PRESETS.items())):
            f = click.option(f"--{name}", "preset", flag_value=name, help=f"{n} trials per arm.")(f)
        f = click.option("--trials", type=click.IntRange(1, 1000), help=f"Trials per arm ({default_trials_help}).")(f)

        @functools.wraps(f)
        def wrapper(*args: Any, preset: str | None = None, trials: int | None = None, **kw: Any) -> Any:
            if preset and trials is not None:
                raise InputError("command line", "--trials", f"conflicts with --{preset}; give one of them")
            return f(*args, trials=PRESETS[preset] if preset else trials, **kw)

        return wrapper

    return deco


def run_options(f: Callable) -> Callable:
    f = click.option(
        "--abort-after",
        type=click.IntRange(0, None),
        default=5,
        show_default=True,
        help="Stop after this many errored trials in a row, write an incomplete report, exit 30 (0: never).",
    )(f)
    f = click.option("--output", type=click.Path(file_okay=False, path_type=Path), default=Path("runs"), show_default=True, help="Output directory.")(f)
    f = click.option("--ci", is_flag=True, help="Exit 1 when an eval is below its threshold or graded F.")(f)
    f = click.option("--parallel", type=click.IntRange(1, 512), default=1, show_default=True, help="Concurrent trials across the whole command.")(f)
    f = click.option(
        "--adaptive",
        is_flag=True,
        help="Run trials in batches; stop once the grade is settled (trials/preset = cap, default 15). See docs/statistics.md.",
    )(f)
    f = click.option(
        "--retry-errors",
        type=click.Path(dir_okay=False, path_type=Path),
        metavar="RUN.json",
        help="Re-run only the errored trials of this saved run (its JSON report) and merge them.",
    )(f)
    f = click.option(
        "--cache-dir",
        type=click.Path(file_okay=False, path_type=Path),
        help="Response cache folder (default: $AGENTSPROOF_CACHE_DIR, else ~/.cache/agentsproof).",
    )(f)
    f = click.option(
        "--no-cache",
        "cache",
        flag_value=False,
        default=None,
        help="Make every call; neither read nor store the response cache (env AGENTSPROOF_NO_CACHE=1).",
    )(f)
    f = click.option(
        "--no-prompt-cache",
        "prompt_cache",
        flag_value=False,
        default=None,
        help="Do not mark the system prompt for the provider's prompt cache (anthropic; on by default).",
    )(f)
    f = click.option(
        "--resume",
        is_flag=True,
        help="Keep the trials journalled by an interrupted or killed run of the same command; run only the missing ones.",
    )(f)
    f = click.option(
        "--target",
        metavar="NAME",
        help="Run the trials with this agent (a targets.yaml name, or the built-in 'copilot'); overrides eval.yaml's execution. See docs/agent-trials.md.",
    )(f)
    f = click.option(
        "--targets",
        "targets_file",
        type=click.Path(dir_okay=False, path_type=Path),
        metavar="FILE",
        help="A targets.yaml to look in first (then beside the eval, .agentsproof/ above it, ~/.config/agentsproof/).",
    )(f)
    f = click.option(
        "--keep-workspaces",
        is_flag=True,
        default=None,
        help="Keep every agent trial's workspace in <report>.workspaces/ (default: deleted after grading).",
    )(f)
    f = click.option("--junit", type=click.Path(dir_okay=False, path_type=Path), metavar="FILE", help="Also write JUnit XML: one testcase per item or case.")(f)
    f = click.option("--jsonl", type=click.Path(dir_okay=False, path_type=Path), metavar="FILE", help="Also write one JSON line per trial.")(f)
    f = click.option(
        "--baseline",
        type=click.Choice(["default", "none"]),
        default="default",
        show_default=True,
        help="none: run only the with-arm (or the target alone): pass rates and flaky cases, no grade. See docs/interop.md.",
    )(f)
    f = click.option(
        "--config",
        multiple=True,
        metavar="KEY=VALUE",
        help="Record a setting of the agent in the report (repeatable); compare warns when two runs differ.",
    )(f)
    return f


def _threshold_option(f: Callable) -> Callable:
    return click.option("--threshold", type=click.FloatRange(0, 1), help="Pass rate required in the with-skill arm (default: from eval.yaml).")(f)


# ---------------------------------------------------------------- commands


def _finish(run: Any, written: dict[str, Path], ci: bool, fail_on_underpowered: bool = False) -> None:
    from agentsproof.commands.console import print_run

    if run is None:  # --plan: printed, nothing ran
        sys.exit(EXIT_OK)
    print_run(run, written)
    if run.incomplete or run.overall.errored:
        sys.exit(EXIT_ERROR)
    if ci and run.overall.failed:
        sys.exit(EXIT_FAILED)
    if ci and fail_on_underpowered and any((it.stats or {}).get("verdict") == "underpowered" for it in run.items):
        sys.exit(EXIT_FAILED)
    sys.exit(EXIT_OK)


@main.command("eval")
@click.argument("path", type=click.Path(path_type=Path))
@trial_options("default: from eval.yaml")
@_threshold_option
@click.option("--skill", type=click.Path(dir_okay=False, path_type=Path), metavar="FILE", help="An EVAL.yaml's with-arm skill (default: skills/<name>/SKILL.md above its evals/ folder).")
@provider_options
@run_options
@tasks_option
@budget_options
def eval_cmd(path: Path, **opts: Any) -> None:
    """Run one eval.yaml (or EVAL.yaml): N trials with the skill/agent, N without.

    Writes runs/<plugin>/<skill>-eval.{md,json,html} (agents: <name>-agent-eval.*),
    and keeps a copy of the JSON in runs/<plugin>/history/. An EVAL.yaml
    (agentv's or the reference's dialect) runs one case per test, like
    tc-eval, and writes runs/<name>/<name>-tc-eval.*; see docs/interop.md.

    \b
    Example:
      agentsproof eval evals/my-plugin/skills/my-skill/eval.yaml --smoke --model gpt-4o
      agentsproof eval skills/my-skill/evals/EVAL.yaml --trials 3 --model gpt-4o
    """
    from agentsproof.commands.run import run_eval
    from agentsproof.model.options import RunConfig

    cfg = RunConfig.from_cli(opts)
    run, written = run_eval(path, cfg)
    _finish(run, written, cfg.ci, cfg.fail_on_underpowered)


@main.command("eval-all")
@click.argument("directory", type=click.Path(path_type=Path))
@trial_options("default: from each eval.yaml")
@_threshold_option
@provider_options
@run_options
@tasks_option
@budget_options
@p_adjust_option
@click.option("--shard", metavar="I/N", help="Run only slice I of N (stable, by item id), e.g. one per CI machine; join them with `agentsproof merge`.")
def eval_all_cmd(directory: Path, **opts: Any) -> None:
    """Run every eval.yaml (and skill EVAL.yaml, evals/evals.json) below DIRECTORY.

    Writes one report for the plugin: runs/<plugin>/<plugin>-eval.html, plus
    eval-all-summary.md and eval-all-summary.json.

    \b
    Example:
      agentsproof eval-all evals/my-plugin/ --smoke --ci --model gpt-4o
      agentsproof eval-all evals/my-plugin/ --shard 2/4 --output runs/shard-2
    """
    from agentsproof.commands.run import run_eval_all
    from agentsproof.model.options import RunConfig

    cfg = RunConfig.from_cli(opts)
    run, written = run_eval_all(directory, cfg)
    _finish(run, written, cfg.ci, cfg.fail_on_underpowered)


@main.command("tc-eval")
@click.argument("path", type=click.Path(path_type=Path))
@trial_options("default: 1")
@click.option("--threshold", type=click.FloatRange(0, 1), help="Pass rate required per case in the with-skill arm (default 0.6; EVAL.yaml: 0.8).")
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True), default=300.0, show_default=True, help="Seconds per trial.")
@click.option("--skill", type=click.Path(dir_okay=False, path_type=Path), metavar="FILE", help="A JSONL dataset's or EVAL.yaml's with-arm skill (without one the model or --target runs alone).")
@provider_options
@run_options
@budget_options
def tc_eval_cmd(path: Path, **opts: Any) -> None:
    """Run hand-authored test cases from an evals.json, EVAL.yaml or JSONL dataset.

    Each assertion is judged in its own LLM call; expected_output is an LLM
    rubric. Writes runs/<name>/<name>-tc-eval.{html,md,json}: the JSON
    file's stem, or for evals.json the skill's folder name. A .jsonl file
    is an agentprobe-style dataset (id, input, expected_answer, answer_match,
    expected_tools, tags), graded without a judge; an EVAL.yaml runs one case
    per test; see docs/interop.md.

    \b
    Example:
      agentsproof tc-eval path/to/evals.json --trials 2 --model gpt-4o
      agentsproof tc-eval skills/my-skill/evals/EVAL.yaml --trials 2 --model gpt-4o
      agentsproof tc-eval cases.jsonl --skill SKILL.md --trials 5 --model gpt-4o
    """
    from agentsproof.commands.run import run_tc_eval
    from agentsproof.model.options import RunConfig

    cfg = RunConfig.from_cli(opts)
    run, written = run_tc_eval(path, cfg)
    _finish(run, written, cfg.ci, cfg.fail_on_underpowered)


@main.command("eval-generate")
@click.option(
    "--plugin-dir",
    required=True,
    type=click.Path(path_type=Path),
    help="Plugin folder: skills/*/SKILL.md and agents/*.md, an awesome-copilot plugin (plugin.json) or a Claude Code plugin (.claude-plugin/plugin.json).",
)
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), help="Output folder (default: evals/<plugin-name>/).")
@click.option("--trials", type=click.IntRange(1, 1000), default=1, show_default=True, help="Trials per arm written into each eval.yaml.")
@click.option("--dry-run", is_flag=True, help="Print what would be written; write nothing.")
@click.option("--parallel", type=click.IntRange(1, 64), default=1, show_default=True, help="Items generated (and check trials run) at once.")
@click.option("--check/--no-check", default=True, show_default=True, help="Check each eval: a relevance judge call, then a short real run of both arms.")
@click.option("--check-trials", type=click.IntRange(1, 100), default=2, show_default=True, help="Trials per arm of the check run (at least one per case).")
@click.option("--check-retries", type=click.IntRange(0, 10), default=1, show_default=True, help="Regenerations, with the evidence, of an eval with fewer than 5 distinct cases, a copied case, or one that is unrelated or does not discriminate.")
@provider_options
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
    its eval, an agent's file beside its eval. --model defaults to gpt-4o
    (after AGENTSPROOF_MODEL; the local provider runs its own model);
    --judge-model makes the relevance check's call.

    \b
    Example:
      agentsproof eval-generate --plugin-dir path/to/my-plugin --trials 3 --model gpt-4o
    """
    from agentsproof.generator.command import generate_cli

    code = generate_cli(**opts)
    sys.exit(code)


@main.command("schema")
@click.argument("which", type=click.Choice(["eval-yaml", "evals-json", "targets-yaml", "report"]))
def schema_cmd(which: str) -> None:
    """Print the JSON Schema of an input file format or of the JSON report.

    eval-yaml: eval.yaml files; evals-json: tc-eval's evals.json; targets-yaml:
    the agents agent trials run (docs/agent-trials.md); report: the JSON report
    every command writes (versioned, see docs/report-schema.md).

    \b
    Example:
      agentsproof schema evals-json > evals.schema.json
    """
    import json

    from agentsproof.formats.evalfile import SkillEvalConfig
    from agentsproof.model.tc_eval import evals_json_schema
    from agentsproof.report.render import json_schema
    from agentsproof.targets.config import targets_json_schema

    schema = {
        "eval-yaml": SkillEvalConfig.model_json_schema, "evals-json": evals_json_schema,
        "targets-yaml": targets_json_schema, "report": json_schema,
    }[which]()
    click.echo(json.dumps(schema, indent=2))


@main.command("convert")
@click.argument("path", type=click.Path(path_type=Path), metavar="FILE")
@click.option("--to", "to", required=True, type=click.Choice(["EVAL.yaml", "eval-yaml", "evals-json", "agentprobe-report"]), help="The format to write (eval-yaml: the same as EVAL.yaml).")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), metavar="FILE", help="Write here instead of stdout.")
@click.option("--skill", type=click.Path(dir_okay=False, path_type=Path), metavar="FILE", help="The skill an EVAL.yaml is for, when it is not skills/<name>/SKILL.md (for skill_name).")
def convert_cmd(path: Path, to: str, out: Path | None, skill: Path | None) -> None:
    """Convert between evals.json, eval.yaml and EVAL.yaml, or a run to an agentprobe report.

    evals.json -> EVAL.yaml and back (skill_name -> name, id -> tests[].id, prompt
    -> input, expected_output kept, assertions -> rubrics); eval.yaml -> EVAL.yaml;
    a saved run (RUN.json) -> an agentprobe report that agentprobe-compare reads.
    What the target format cannot hold is named in a 'warning: ... lossy' line.

    \b
    Example:
      agentsproof convert skills/my-skill/evals/evals.json --to EVAL.yaml --out skills/my-skill/evals/EVAL.yaml
      agentsproof convert runs/cases/cases-tc-eval.json --to agentprobe-report --out before.json
    """
    from agentsproof.core.inputs import display
    from agentsproof.interop.convert import convert

    text, warnings = convert(path, to, skill)
    for w in warnings:
        click.echo(f"warning: {display(path)}: lossy: {w}", err=True)
    if out is None:
        click.echo(text, nl=False)
        return
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text, encoding="utf-8")
    except OSError as err:
        raise InputError(str(out), "--out", f"cannot write: {err.strerror or err}") from None
    click.echo(f"wrote {display(out)}", err=True)


@main.command("doctor")
@provider_options
def doctor_cmd(**opts: Any) -> None:
    """Make one tiny call through the configured provider and report on it.

    Prints provider, model and latency, or what to fix. Exit 0 when the call
    works, 30 when it does not.

    \b
    Example:
      agentsproof doctor --provider local
    """
    from agentsproof.commands.run import doctor

    sys.exit(doctor(**opts))


@main.command("compare")
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path), metavar="BEFORE AFTER | [RUNS_DIR]")
@click.option("--last", type=click.IntRange(2, 1000), metavar="N", help="Compare the newest run in RUNS_DIR (default runs/) with the one N-1 runs before it (history/ copies).")
@click.option("--alpha", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=0.05, show_default=True, help="Significance level for BETTER / WORSE.")
@click.option("--markdown", "markdown_path", type=click.Path(dir_okay=False, path_type=Path), help="Also write the comparison as Markdown to this file.")
@click.option("--json", "as_json", is_flag=True, help="Print the comparison as JSON on stdout instead of the table.")
@click.option("--ci", is_flag=True, help="Exit 1 when any item or case is WORSE.")
def compare_cmd(paths: tuple[Path, ...], last: int | None, alpha: float, markdown_path: Path | None, as_json: bool, ci: bool) -> None:
    """Compare two saved runs, item by item (or case by case).

    Per item, a two-sided Fisher exact test on the with-skill arm's pass/fail
    counts: SAME, BETTER, WORSE, NOISE, NEW, REMOVED or INCONCLUSIVE; ↑/↓ mark
    a pass rate that rose/fell, and a last row gives the overall pass rate.
    BEFORE and AFTER may be JSON reports of any command, agentprobe report
    files or agentv index.jsonl files (the format is detected). Warns when the
    runs' --config settings differ.

    \b
    Example:
      agentsproof compare before/eval-all-summary.json runs/my-plugin/eval-all-summary.json --ci
      agentsproof compare --last 2 runs/
    """
    import json

    from agentsproof.interop.compare_extra import compare_any, last_runs
    from agentsproof.report.compare import render_markdown, render_terminal

    if last is not None:
        if len(paths) > 1:
            raise InputError("command line", "--last", "takes at most one RUNS_DIR, not BEFORE AFTER")
        before, after = last_runs(paths[0] if paths else Path("runs"), last)
    elif len(paths) != 2:
        raise InputError("command line", "compare", "give BEFORE AFTER, or --last N [RUNS_DIR]")
    else:
        before, after = paths
    cmp = compare_any(before, after, alpha)
    if as_json:
        click.echo(json.dumps(cmp.to_dict(), indent=2))
    else:
        click.echo(render_terminal(cmp))
    if markdown_path is not None:
        try:
            markdown_path.parent.mkdir(parents=True, exist_ok=True)
            markdown_path.write_text(render_markdown(cmp), encoding="utf-8")
        except OSError as err:
            raise InputError(str(markdown_path), None, f"cannot write: {err.strerror or err}") from None
    sys.exit(EXIT_FAILED if ci and cmp.worse else EXIT_OK)


@main.command("merge")
@click.argument("results", nargs=-1, required=True, type=click.Path(path_type=Path), metavar="RESULT.json...")
@click.option("--output", type=click.Path(file_okay=False, path_type=Path), default=Path("runs"), show_default=True, help="Output directory.")
@click.option("--ci", is_flag=True, help="Exit 1 when an eval is below its threshold or graded F.")
def merge_cmd(results: tuple[Path, ...], output: Path, ci: bool) -> None:
    """Join the reports of `eval-all --shard I/N` runs into one report.

    The merged report is the one a single machine would have written: the same items,
    in the same order, with the run's summaries computed anew. Exit codes as eval-all.

    \b
    Example:
      agentsproof merge shard-*/my-plugin/eval-all-summary.json --output runs
    """
    from agentsproof.executor.merge import merge_runs
    from agentsproof.report.files import prepare_output, report_targets, write_reports
    from agentsproof.stats.compare import load_run

    run = merge_runs([(p, load_run(p)) for p in results])
    single = run.items[0] if run.command == "eval" and run.items else None
    targets = report_targets(run.command, output, run.plugin, single.name if single else run.plugin, single.kind if single else None)
    prepare_output(output, targets)
    _finish(run, write_reports(run, targets), ci)


@main.group("cache")
def cache_group() -> None:
    """The response cache: an unchanged re-run makes no LLM call.

    Responses are keyed by provider, model, messages, sampling settings and trial;
    errored calls and keys are never stored. Folder: --cache-dir, else
    $AGENTSPROOF_CACHE_DIR, else ~/.cache/agentsproof.

    \b
    Example:
      agentsproof cache info
      agentsproof cache clear
    """


def _cache_option(f: Callable) -> Callable:
    return click.option("--cache-dir", type=click.Path(file_okay=False, path_type=Path), help="Cache folder (default: $AGENTSPROOF_CACHE_DIR, else ~/.cache/agentsproof).")(f)


@cache_group.command("info")
@_cache_option
def cache_info_cmd(cache_dir: Path | None) -> None:
    """Where the cache is, how many responses it holds and its size bound.

    \b
    Example:
      agentsproof cache info
    """
    from agentsproof.llm.cache import ResponseCache, default_cache_dir

    info = ResponseCache(cache_dir or default_cache_dir()).info()
    click.echo(f"cache: {info['path']}")
    click.echo(f"entries: {info['entries']:,}")
    click.echo(f"size: {info['bytes'] / 1e6:,.1f} MB of {info['max_bytes'] / 1e6:,.0f} MB (AGENTSPROOF_CACHE_MAX_MB)")


@cache_group.command("clear")
@_cache_option
def cache_clear_cmd(cache_dir: Path | None) -> None:
    """Delete every cached response.

    \b
    Example:
      agentsproof cache clear
    """
    from agentsproof.llm.cache import ResponseCache, default_cache_dir

    n = ResponseCache(cache_dir or default_cache_dir()).clear()
    click.echo(f"cleared {n:,} cached responses")


@main.command("runs-needed")
@click.option("--before", type=click.FloatRange(0, 1), required=True, help="True pass rate before the change (0..1).")
@click.option("--after", type=click.FloatRange(0, 1), required=True, help="True pass rate after the change (0..1).")
@click.option("--power", "target", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=0.8, show_default=True, help="Chance of detecting the change.")
@click.option("--alpha", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=0.05, show_default=True, help="Significance level of compare.")
def runs_needed_cmd(before: float, after: float, target: float, alpha: float) -> None:
    """How many runs per side compare needs to detect a change in pass rate.

    Exact power of compare's two-sided Fisher test (counting only a verdict in
    the change's direction), by enumerating every binomial outcome; searches
    up to 100 runs per side.

    \b
    Example:
      agentsproof runs-needed --before 1.0 --after 0.8
    """
    from agentsproof.stats.power import runs_needed

    if abs(before - after) < 1e-12:
        raise InputError("command line", "--after", "equals --before; there is no change to detect")
    res = runs_needed(before, after, target, alpha)
    verdict = "WORSE" if after < before else "BETTER"
    if res.runs is None:
        click.echo(
            f"{before:g} → {after:g}: power {target:g} not reached within {res.max_runs} runs per side "
            f"(power at {res.max_runs}: {res.achieved:.3f}; alpha {alpha:g})"
        )
    else:
        click.echo(
            f"{before:g} → {after:g}: {res.runs} runs per side give power {res.achieved:.3f} "
            f"(chance compare says {verdict}; alpha {alpha:g})"
        )


from agentsproof.server.commands import register as _register_server  # noqa: E402

_register_server(main)

from agentsproof.cli.sdk import register as _register_sdk  # noqa: E402

_register_sdk(main)


if __name__ == "__main__":  # pragma: no cover
    main()
