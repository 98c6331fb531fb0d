"""Click options of the "grades that generalise" features, declared once and shared.

``eval`` and ``eval-all`` take ``--all-tasks``; every run command takes the budget and
plan options and ``--fail-on-underpowered``; ``eval-all`` also takes ``--p-adjust``.
They all land in :class:`agentsproof.model.options.RunConfig`.
"""

from __future__ import annotations

from collections.abc import Callable

import click

P_ADJUST_METHODS = ("holm", "bh", "none")


def tasks_option(f: Callable) -> Callable:
    return click.option(
        "--all-tasks",
        is_flag=True,
        default=None,
        help="Run every task of a version 1 'tasks' list as a case (default: the first only; version 2 'tasks' always run all).",
    )(f)


def budget_options(f: Callable) -> Callable:
    f = click.option(
        "--fail-on-underpowered",
        is_flag=True,
        default=None,
        help="With --ci, also exit 1 when an item's verdict is underpowered (fewer than 5 cases, or an interval spanning grade bands).",
    )(f)
    f = click.option(
        "--max-calls",
        type=click.IntRange(1, None),
        metavar="N",
        help="Stop cleanly before the run's N+1-th LLM call (incomplete report, exit 30).",
    )(f)
    f = click.option(
        "--max-cost",
        type=click.FloatRange(0, None, min_open=True),
        metavar="USD",
        help="Stop cleanly before a call would take the run's cost past USD (incomplete report, exit 30).",
    )(f)
    f = click.option(
        "--plan",
        is_flag=True,
        default=None,
        help="Print the LLM calls, tokens and cost the run would make, make no call, exit 0.",
    )(f)
    return f


def p_adjust_option(f: Callable) -> Callable:
    return click.option(
        "--p-adjust",
        type=click.Choice(P_ADJUST_METHODS, case_sensitive=False),
        default=None,
        help="Adjust the items' p-values for testing many items: holm (default), bh (Benjamini-Hochberg) or none.",
    )(f)
