"""CLI commands of the SDK: ``agentsproof sync`` and ``agentsproof suite run``.

Only click is imported at load time; the SDK modules are imported inside the commands.
``register(main)`` adds them to the top-level group.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

API_KEY_HELP = "API key of the project (env AGENTSPROOF_API_KEY); never written anywhere."
BASE_URL_HELP = "Server API URL (env AGENTSPROOF_BASE_URL; default http://127.0.0.1:8787/api)."


@click.command("sync")
@click.option(
    "--base-url",
    envvar="AGENTSPROOF_BASE_URL",
    default=None,
    metavar="URL",
    help="Server API URL (env AGENTSPROOF_BASE_URL; default: the URL each run was meant for).",
)
@click.option("--api-key", envvar="AGENTSPROOF_API_KEY", default=None, metavar="KEY", help=API_KEY_HELP)
@click.option(
    "--dir",
    "directory",
    envvar="AGENTSPROOF_SPOOL_DIR",
    default=None,
    type=click.Path(file_okay=False, path_type=Path),
    help="Spool folder (env AGENTSPROOF_SPOOL_DIR; default ~/.local/state/agentsproof/spool).",
)
def sync(base_url: str | None, api_key: str | None, directory: Path | None) -> None:
    """Upload runs the SDK spooled while the server was unreachable.

    Each spooled run is created (idempotently, by its clientRunId), its steps sent and, if
    the agent completed it, completed; then its file is deleted. Runs the server still
    cannot take stay for the next sync; exit 30 when any is left.

    \b
    Example:
      AGENTSPROOF_API_KEY=... agentsproof sync --base-url http://127.0.0.1:8787/api
    """
    from agentsproof.core.errors import EXIT_ERROR
    from agentsproof.sdk import spool

    where = directory or spool.spool_dir()
    results = spool.sync(api_key=api_key, base_url=base_url, directory=where)
    if not results:
        click.echo(f"nothing to sync in {where}")
        return
    for r in results:
        click.echo(f"{'synced' if r.ok else 'kept  '} {r.path.stem}: {r.message}", err=not r.ok)
    left = sum(not r.ok for r in results)
    click.echo(f"{len(results) - left} synced, {left} left in {where}")
    if left:
        raise SystemExit(EXIT_ERROR)


@click.group("suite")
def suite() -> None:
    """Run proof suites (approved goldens) against your agent.

    \b
    Example:
      agentsproof suite run --suite core --project my-agent --handler my_agent:handle
    """


def load_handler(spec: str) -> Callable[..., Any]:
    """``module:function`` (importable from the current folder) → the function."""
    import importlib
    import sys

    from agentsproof.core.errors import InputError

    module_name, _, attr = spec.partition(":")
    if not module_name or not attr:
        raise InputError("command line", "--handler", f"{spec!r} is not MODULE:FUNCTION")
    if "" not in sys.path and str(Path.cwd()) not in sys.path:
        sys.path.insert(0, str(Path.cwd()))
    try:
        module = importlib.import_module(module_name)
    except ImportError as err:
        raise InputError("command line", "--handler", f"cannot import {module_name!r}: {err}") from err
    fn: object = module
    for part in attr.split("."):
        fn = getattr(fn, part, None)
        if fn is None:
            raise InputError("command line", "--handler", f"{module_name!r} has no {attr!r}")
    if not callable(fn):
        raise InputError("command line", "--handler", f"{spec} is not callable")
    return fn


@suite.command("run")
@click.option("--suite", "suite_slug", required=True, metavar="SLUG", help="Proof suite to run.")
@click.option("--project", required=True, metavar="SLUG", help="Project the suite belongs to.")
@click.option(
    "--handler",
    required=True,
    metavar="MODULE:FUNCTION",
    help="handler(input, ctx), sync or async, called once per golden; ctx.start_run() starts its traced run.",
)
@click.option("--base-url", envvar="AGENTSPROOF_BASE_URL", default=None, metavar="URL", help=BASE_URL_HELP)
@click.option("--api-key", envvar="AGENTSPROOF_API_KEY", default=None, metavar="KEY", help=API_KEY_HELP)
@click.option("--ci", is_flag=True, help="Exit 1 when any case failed.")
def suite_run(suite_slug: str, project: str, handler: str, base_url: str | None, api_key: str | None, ci: bool) -> None:
    """Run a proof suite's approved goldens against a Python handler, locally.

    A case passes when the handler returns without raising; each case's run is graded by
    the server, and the proof run's report URL is printed.

    \b
    Example:
      agentsproof suite run --suite core --project my-agent --handler my_agent:handle
    """
    import asyncio
    import inspect

    from agentsproof.core.errors import EXIT_FAILED, AgentsproofError
    from agentsproof.sdk import AgentsProof, ProofSuiteError

    fn = load_handler(handler)
    ap = AgentsProof(api_key=api_key, base_url=base_url)
    try:
        if inspect.iscoroutinefunction(fn):
            res = asyncio.run(ap.arun_proof_suite(project_slug=project, suite_slug=suite_slug, handler=fn))
        else:
            res = ap.run_proof_suite(project_slug=project, suite_slug=suite_slug, handler=fn)
    except ProofSuiteError as err:
        raise AgentsproofError(str(err)) from err
    passed, failed = res.get("passedCases", 0), res.get("failedCases", 0)
    score = res.get("overallScore")
    click.echo(f"{suite_slug}: {passed} passed, {failed} failed, overall score {'pending' if score is None else f'{score:.2f}'}")
    if res.get("publicUrl"):
        click.echo(f"Report: {res['publicUrl']}")
    if ci and failed:
        raise SystemExit(EXIT_FAILED)


def register(main: click.Group) -> None:
    """Add ``sync`` and ``suite`` to the top-level group."""
    main.add_command(sync)
    main.add_command(suite)
