"""``agentsproof lint``: structural problems of eval files, before any model call."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from agentsproof.cli.options import provider_options, root_option


@click.command("lint")
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path), metavar="PATH...")
@click.option("--json", "as_json", is_flag=True, help="Print the problems as JSON (for CI).")
@click.option("--errors-only", is_flag=True, help="Report errors only (no warnings such as too few cases).")
@click.option("--strict", is_flag=True, help="Exit 1 on warnings too (by default only errors make lint fail).")
@click.option(
    "--judge",
    is_flag=True,
    help="Also ask an LLM reviewer for checks that reward the skill's wording instead of the outcome, and tasks that do not need the skill.",
)
@provider_options
@root_option
def lint_cmd(paths: tuple[Path, ...], as_json: bool, errors_only: bool, strict: bool, judge: bool, **opts: Any) -> None:
    """Find what makes an eval unable to measure anything, without running a model.

    PATH is an eval.yaml, EVAL.yaml, evals.json or targets.yaml, or a folder
    (every one of them below it). Each problem is one line: file, field, what
    is wrong, the fix and its rule name. Errors (missing or unreadable fixtures
    and scripts, graders with nothing to check, duplicate keys or case names,
    checks no answer can pass, regexes that never match, globs outside the
    workspace, zero weights) also refuse every run; warnings (fewer than 5
    cases, instructions quoting the skill) do not. --judge adds an LLM review
    (overfitting, tasks that do not need the skill), with evidence.
    Exit codes, as ruff's or eslint's: 0 no error (warnings alone pass; with
    --strict they exit 1 too); 1 errors found (in a file, what its loader
    refuses too: invalid YAML, an unknown key); 30 a PATH lint cannot check
    (missing, not a regular file, unreadable, a JSONL dataset, a folder with
    no eval file) or a --judge reviewer that fails.

    \b
    Example:
      agentsproof lint evals/my-plugin/
      agentsproof lint skills/my-skill/evals/EVAL.yaml --json > lint.json
      agentsproof lint evals/my-plugin/skills/my-skill/eval.yaml --judge --model gpt-4o
    """
    from agentsproof.commands import lint as cmd

    problems = cmd.lint(paths, errors_only=errors_only)
    reviews: list[Any] = []
    if judge:
        from agentsproof.commands.lint_judge import review

        reviews = review(paths, provider=opts.get("provider"), model=opts.get("model"), judge_model=opts.get("judge_model"))
        problems = [*problems, *reviews]
    if as_json:
        click.echo(cmd.as_json(problems))
    else:
        for p in problems:
            click.echo(p.line())
        errors = sum(p.severity == "error" for p in problems)
        click.echo(f"{len(problems)} problem(s): {errors} error(s), {len(problems) - errors} warning(s)" if problems else "no problems found", err=True)
    sys.exit(cmd.exit_code(problems, strict=strict))
