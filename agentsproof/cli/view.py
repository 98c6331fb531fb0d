"""``agentsproof view``: browse past runs."""

from __future__ import annotations

from pathlib import Path

import click


@click.command("view")
@click.argument("runs", required=False, default="runs", type=click.Path(file_okay=False, path_type=Path), metavar="[RUNS]")
@click.option("--item", metavar="NAME", help="List only the runs holding this item (its id, e.g. skills/sql-review, or its name).")
@click.option("--last", type=click.IntRange(1, 1000), default=10, show_default=True, metavar="N", help="Runs per item shown side by side on its page.")
@click.option(
    "--out", type=click.Path(file_okay=False, path_type=Path), metavar="DIR", help="Where the pages go (default: RUNS/_view/; with --serve, inside RUNS)."
)
@click.option("--serve", is_flag=True, help="Serve the pages and the runs' reports on 127.0.0.1 until interrupted (Ctrl-C).")
@click.option("--port", type=click.IntRange(0, 65535), default=8765, show_default=True, help="--serve's port (0: any free port).")
def view_cmd(runs: Path, item: str | None, last: int, out: Path | None, serve: bool, port: int) -> None:
    """Browse past runs: an index of every run and each item's runs side by side.

    Reads the run folders below RUNS (runs/<plugin>/<time>-<id>/, one per run,
    and the older history/ copies) and writes static pages: the index lists
    each run's date, plugin, command, target, provider, model, verdict and
    each item's grade and delta with its 95 % interval, linking its report;
    each item's page shows its last N runs side by side under a chart of the
    delta and its interval over time. No script, nothing fetched.

    \b
    Example:
      agentsproof view runs/
      agentsproof view runs/ --item skills/sql-review --last 5
      agentsproof view --serve --port 8765
    """
    from agentsproof.commands import view

    if serve:
        view.serve(runs, out, item, last, port, lambda url: click.echo(f"serving {url} (Ctrl-C to stop)"))
        return
    index, n = view.build(runs, out, item, last)
    click.echo(f"{n} run{'s' if n != 1 else ''}: {index}")
