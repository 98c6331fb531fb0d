"""The other commands: ``schema``, ``convert``, ``doctor``, ``compare``, ``merge``, ``runs-needed``."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from agentsproof.cli.options import FiniteRange, provider_options, root_option, sign_option
from agentsproof.cli.run import finish
from agentsproof.core.errors import EXIT_FAILED, EXIT_OK, InputError


@click.command("schema")
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

    from agentsproof.formats.eval_yaml.models import SkillEvalConfig
    from agentsproof.model.tc_eval import evals_json_schema
    from agentsproof.report.render import json_schema
    from agentsproof.targets.config import targets_json_schema

    schema = {
        "eval-yaml": SkillEvalConfig.model_json_schema,
        "evals-json": evals_json_schema,
        "targets-yaml": targets_json_schema,
        "report": json_schema,
    }[which]()
    click.echo(json.dumps(schema, indent=2))


@click.command("convert")
@click.argument("path", type=click.Path(path_type=Path), metavar="FILE")
@click.option(
    "--to",
    "to",
    required=True,
    type=click.Choice(["EVAL.yaml", "eval-yaml", "evals-json", "agentprobe-report"]),
    help="The format to write (eval-yaml: the same as EVAL.yaml).",
)
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    metavar="FILE",
    help="Write here instead of stdout (never over FILE itself, never through a symlink).",
)
@click.option(
    "--skill",
    type=click.Path(dir_okay=False, path_type=Path),
    metavar="FILE",
    help="The skill an EVAL.yaml is for, when it is not skills/<name>/SKILL.md (for skill_name).",
)
@click.option("--strict", is_flag=True, help="Make any field that cannot be carried over an error (exit 30, nothing written).")
@root_option
def convert_cmd(path: Path, to: str, out: Path | None, skill: Path | None, strict: bool) -> None:
    """Convert between evals.json, eval.yaml, promptfooconfig.yaml and EVAL.yaml, or a run to an agentprobe report.

    evals.json -> EVAL.yaml and back (skill_name -> name, id -> tests[].id, prompt
    -> input, expected_output kept, assertions -> rubrics); eval.yaml -> EVAL.yaml
    (every task of a version 2 file); promptfooconfig.yaml -> EVAL.yaml (one test
    per prompt x test, defaultTest merged in); a saved run (RUN.json) -> an agentprobe report that agentprobe-compare reads.
    What the target format cannot hold is named in a 'warning: FILE: lossy: FIELD'
    line each (--strict: an error). The output is loaded back by agentsproof's own
    loader (from a temporary copy in its folder) before it is written: output that
    would not load is never written (exit 30, one line).

    \b
    Example:
      agentsproof convert skills/my-skill/evals/evals.json --to EVAL.yaml --out skills/my-skill/evals/EVAL.yaml
      agentsproof convert runs/cases/cases-tc-eval.json --to agentprobe-report --out before.json
    """
    from agentsproof.core.inputs import display
    from agentsproof.interop.convert import convert, strict_refusal, write_checked

    text, warnings = convert(path, to, skill, out.parent if out is not None else None)
    for w in warnings:
        click.echo(f"warning: {display(path)}: lossy: {w}", err=True)
    refused = strict_refusal(path, warnings) if strict else None
    if refused is not None:
        raise refused
    write_checked(path, to, text, out, [path, skill], skill)
    if out is None:
        click.echo(text, nl=False)
        return
    click.echo(f"wrote {display(out)}", err=True)


@click.command("doctor")
@provider_options
def doctor_cmd(**opts: Any) -> None:
    """Make one tiny call through the configured provider and report on it.

    Prints the installed plugins (each ok or why it failed), then provider,
    model and latency, or what to fix. Exit 0 when the call works, 30 when it
    does not.

    \b
    Example:
      agentsproof doctor --provider local
    """
    from agentsproof.commands.doctor import doctor

    sys.exit(doctor(**opts))


@click.command("compare")
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path), metavar="BEFORE AFTER | [RUNS_DIR]")
@click.option(
    "--last",
    type=click.IntRange(2, 1000),
    metavar="N",
    help="Compare the newest run in RUNS_DIR (default runs/) with the one N-1 runs before it (history/ copies).",
)
@click.option("--alpha", type=FiniteRange(0, 1, min_open=True, max_open=True), default=0.05, show_default=True, help="Significance level for BETTER / WORSE.")
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
        from agentsproof.core.safepath import refuse_overwrite, write_file

        refuse_overwrite(markdown_path, [before, after], "command line", "--markdown")
        try:  # through core.safepath: a link at that name is replaced, never written through
            markdown_path.parent.mkdir(parents=True, exist_ok=True)
            write_file(markdown_path.parent, markdown_path.name, render_markdown(cmp).encode("utf-8"))
        except OSError as err:
            raise InputError(str(markdown_path), None, f"cannot write: {err.strerror or err}") from None
    sys.exit(EXIT_FAILED if ci and cmp.worse else EXIT_OK)


@click.command("merge")
@click.argument("results", nargs=-1, required=True, type=click.Path(path_type=Path), metavar="RESULT.json...")
@click.option("--output", type=click.Path(file_okay=False, path_type=Path), default=Path("runs"), show_default=True, help="Output directory.")
@click.option("--ci", is_flag=True, help="Exit 1 when an eval is below its threshold or graded F.")
@sign_option
def merge_cmd(results: tuple[Path, ...], output: Path, ci: bool, sign: Path | None) -> None:
    """Join the reports of `eval-all --shard I/N` runs into one report.

    The merged report is the one a single machine would have written: the same items,
    in the same order, with the run's summaries computed anew. Its manifest joins the
    shards' (a file that changed between shard runs is refused) and digests the merged
    trials: `agentsproof verify` checks it. Exit codes as eval-all.

    \b
    Example:
      agentsproof merge shard-*/my-plugin/eval-all-summary.json --output runs
    """
    from agentsproof.commands.proof import check_sign_key, proof_options, sign_report
    from agentsproof.executor.merge import merge_runs, merged_manifest
    from agentsproof.report.files import prepare_output, report_targets, write_reports
    from agentsproof.report.saved import load_run

    check_sign_key(sign)
    shards = [(p, load_run(p)) for p in results]
    run = merge_runs(shards)
    run.manifest = merged_manifest(run, shards, proof_options(sign=sign, ci=ci).argv, ci, sign)
    single = run.items[0] if run.command == "eval" and run.items else None
    targets = report_targets(run.command, output, run.plugin, single.name if single else run.plugin, single.kind if single else None)
    prepare_output(output, targets)
    written = write_reports(run, targets)
    sign_report(written, sign)
    finish(run, written, ci)


@click.command("runs-needed")
@click.option("--before", type=FiniteRange(0, 1), required=True, help="True pass rate before the change (0..1).")
@click.option("--after", type=FiniteRange(0, 1), required=True, help="True pass rate after the change (0..1).")
@click.option("--power", "target", type=FiniteRange(0, 1, min_open=True, max_open=True), default=0.8, show_default=True, help="Chance of detecting the change.")
@click.option("--alpha", type=FiniteRange(0, 1, min_open=True, max_open=True), default=0.05, show_default=True, help="Significance level of compare.")
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
        click.echo(f"{before:g} → {after:g}: {res.runs} runs per side give power {res.achieved:.3f} (chance compare says {verdict}; alpha {alpha:g})")
