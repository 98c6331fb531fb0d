"""CLI commands of the server: ``serve``, ``keys``, ``golden``, ``push``.

Only click is imported at load time; FastAPI, SQLAlchemy and uvicorn are imported inside
the commands, so ``import agentsproof`` and ``agentsproof --help`` stay light.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click

from agentsproof.core.errors import InputError

DB_HELP = (
    "Database URL: sqlite:///PATH or postgresql://USER:PASS@HOST:PORT/DB (env AGENTSPROOF_DB; default a SQLite file at ~/.local/share/agentsproof/server.db)."
)
db_option = click.option("--db", "db", default=None, metavar="URL", help=DB_HELP)


def _open(db: str | None):
    from agentsproof.server.db import open_db

    return open_db(db)


@contextmanager
def _session(db: str | None) -> Iterator[Any]:
    """A session on the database at ``db``; the database is closed afterwards, errors included."""
    database = _open(db)
    try:
        with database.session() as s:
            yield s
    finally:
        database.close()


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="Interface to bind; loopback unless you mean to expose the server.")
@click.option("--port", default=8787, show_default=True, type=click.IntRange(0, 65535), help="TCP port.")
@db_option
@click.option(
    "--runs-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Import every eval/eval-all/tc-eval JSON report below this folder at start-up.",
)
@click.option("--provider", default=None, help="LLM provider of the judge, as for eval (default: AGENTSPROOF_PROVIDER_TYPE, else the embedded local model).")
@click.option("--model", default=None, help="Judge model (default: the provider's, or AGENTSPROOF_MODEL).")
@click.option(
    "--public-url",
    default=None,
    metavar="URL",
    help="Base of the report URLs handed to SDKs (default: the address the server is bound to; never the request's Host).",
)
@click.option(
    "--allowed-host",
    "allowed_hosts",
    multiple=True,
    metavar="NAME",
    help="Host header name to serve (repeat or comma-separate; '*' = any, '*.example.org' = its subdomains). Default: --host, localhost, 127.0.0.1, ::1 and --public-url's host; any other Host gets 400.",
)
def serve(
    host: str, port: int, db: str | None, runs_dir: Path | None, provider: str | None, model: str | None, public_url: str | None, allowed_hosts: tuple[str, ...]
) -> None:
    """Run the self-hosted AgentsProof server (API under /api, pages at /).

    Speaks the wire protocol of the published agentsproof SDKs: point them at
    http://HOST:PORT/api with a key from `agentsproof keys create`. Runs are graded
    in the background by the judge of --provider/--model.

    \b
    Example:
      agentsproof serve --port 8787 --db sqlite:///agentsproof.db
    """
    import uvicorn

    from agentsproof.server.app import Settings, create_app
    from agentsproof.server.db import resolve_db_url, safe_url

    if runs_dir is not None and not runs_dir.is_dir():
        raise InputError(str(runs_dir), "--runs-dir", "not a folder")
    url = resolve_db_url(db)
    if provider is None:
        from agentsproof.core.envcfg import env_text

        provider = env_text("AGENTSPROOF_PROVIDER_TYPE") or "local"
    _warn_judge(provider, model)
    if host not in ("127.0.0.1", "localhost", "::1"):
        click.echo(f"warning: binding {host}: the dashboard pages need no key; expose them only behind your own access control", err=True)
    names = [n.strip() for item in allowed_hosts for n in item.split(",") if n.strip()]
    from agentsproof.server.app import bad_host_pattern

    for name in names:
        if bad_host_pattern(name):
            raise InputError("command line", "--allowed-host", f"{name!r}: a '*' stands alone (any Host) or leads a domain ('*.example.org')")
    if public_url and not public_url.startswith(("http://", "https://")):
        raise InputError("command line", "--public-url", f"{public_url!r} is not an http(s) URL")
    settings = Settings(
        db_url=url, provider=provider, model=model, runs_dir=str(runs_dir) if runs_dir else None, public_url=public_url, host=host, allowed_hosts=names or None
    )
    app = create_app(settings)
    click.echo(f"agentsproof server on http://{host}:{port}/ (API http://{host}:{port}/api, database {safe_url(url)})", err=True)
    from agentsproof.server.timeouts import timed_protocol

    uvicorn.run(
        app,
        host=host,
        port=port,
        log_level="warning",
        access_log=False,
        http=timed_protocol(settings.header_timeout, settings.body_timeout, settings.body_min_rate, settings.max_slow_uploads),
    )


def _warn_judge(provider: str, model: str | None) -> None:
    """Say at start-up when the judge cannot be set up; gradings stay errored (and are retried) until it can."""
    from agentsproof.core.errors import ProviderUnavailable
    from agentsproof.llm.registry import resolve_models, resolve_provider_name

    try:
        resolve_models(resolve_provider_name(provider), model, None)
    except ProviderUnavailable as err:
        click.echo(f"warning: judge not usable yet, runs will be stored but grading stays errored until fixed: {err}", err=True)


@click.group()
def keys() -> None:
    """Create, list and revoke per-project API keys.

    \b
    Example:
      agentsproof keys create --project shop
      agentsproof keys list
      agentsproof keys revoke 3
    """


@keys.command("create")
@click.option("--project", required=True, metavar="SLUG", help="Project the key belongs to (created when new).")
@db_option
def keys_create(project: str, db: str | None) -> None:
    """Create a key; it is printed once, alone on the last line, and stored only hashed."""
    from agentsproof.server import store

    with _session(db) as s:
        key = store.create_key(s, project)
    click.echo(f"API key for project {project} (shown once; store it now):", err=True)
    click.echo(key)


@keys.command("list")
@db_option
def keys_list(db: str | None) -> None:
    """List keys (id, project, prefix, state); never the keys themselves."""
    from agentsproof.server import store

    with _session(db) as s:
        rows = store.list_keys(s)
    for r in rows:
        click.echo(f"{r['id']}\t{r['project']}\t{r['prefix']}…\t{'revoked' if r['revoked'] else 'active'}\t{store.fmt_time(r['created_at'])}")


@keys.command("revoke")
@click.argument("key_id")
@db_option
def keys_revoke(key_id: str, db: str | None) -> None:
    """Revoke a key by its id (from `keys list`), its prefix, or the key itself."""
    from agentsproof.server import store

    with _session(db) as s:
        ok = store.revoke_key(s, key_id)
    if not ok:
        raise InputError("command line", "KEY_ID", f"no single key matches {key_id!r}; see `agentsproof keys list`")
    click.echo(f"revoked {key_id}")


@click.group()
def golden() -> None:
    """Import, list and approve goldens (the cases of proof suites).

    \b
    Example:
      agentsproof golden import goldens.jsonl --project shop --suite regression --approve
      agentsproof golden list --project shop
      agentsproof golden approve 3f2a9c01d4e5b6a7 --project shop
    """


@golden.command("import")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--project", required=True, metavar="SLUG", help="Project of the goldens.")
@click.option("--suite", required=True, metavar="SLUG", help="Proof suite to put them in.")
@click.option("--approve", is_flag=True, help="Approve them at once (a suite serves only approved goldens).")
@db_option
def golden_import(file: Path, project: str, suite: str, approve: bool, db: str | None) -> None:
    """Import goldens from FILE.jsonl: one JSON object per line with the golden fields
    (id, name, input, goal, expected_output, expected_behavior, success_criteria,
    trace_assertions, failure_modes). A line with a known id updates that golden."""
    from agentsproof.server import store

    store.check_slug(project, "--project")
    store.check_slug(suite, "--suite")
    if not file.is_file():
        raise InputError(str(file), "file", "not found")
    goldens = store.read_goldens_jsonl(file)
    with _session(db) as s:
        p = store.get_or_create_project(s, project)
        ids = []
        for n, fields in enumerate(goldens, 1):
            try:
                ids.append(store.upsert_golden(s, p, suite, fields, True if approve else None).id)
            except InputError as err:
                s.rollback()
                raise InputError(f"{file}:{n}", err.field, err.message) from None
        s.commit()
    for gid in ids:
        click.echo(gid)
    click.echo(f"imported {len(ids)} golden(s) into {project}/{suite}{' (approved)' if approve else ''}", err=True)


@golden.command("list")
@click.option("--project", default=None, metavar="SLUG", help="Only this project.")
@db_option
def golden_list(project: str | None, db: str | None) -> None:
    """List goldens: id, project, suite, approved, name."""
    from sqlalchemy import select

    from agentsproof.server.models import Golden, Project

    with _session(db) as s:
        q = select(Golden, Project.slug).join(Project, Project.id == Golden.project_id).order_by(Project.slug, Golden.suite_slug, Golden.created_at)
        if project:
            q = q.where(Project.slug == project)
        rows = s.execute(q).all()
    for g, slug in rows:
        click.echo(f"{g.id}\t{slug}\t{g.suite_slug or '-'}\t{'approved' if g.approved else 'draft'}\t{g.name}")


@golden.command("approve")
@click.argument("golden_id")
@click.option("--project", default=None, metavar="SLUG", help="Project of the golden (needed when several projects have a golden with that id).")
@db_option
def golden_approve(golden_id: str, project: str | None, db: str | None) -> None:
    """Approve a golden so its suite serves it (golden ids are per project)."""
    from sqlalchemy import select

    from agentsproof.server.models import Golden, Project, utcnow

    with _session(db) as s:
        q = select(Golden, Project.slug).join(Project, Project.id == Golden.project_id).where(Golden.id == golden_id)
        if project:
            q = q.where(Project.slug == project)
        rows = s.execute(q).all()
        if not rows:
            where = f" in project {project!r}" if project else ""
            raise InputError("command line", "ID", f"no golden {golden_id!r}{where}; see `agentsproof golden list`")
        if len(rows) > 1:
            slugs = ", ".join(sorted(slug for _, slug in rows))
            raise InputError("command line", "--project", f"golden {golden_id!r} exists in several projects ({slugs}); name one with --project")
        g = rows[0][0]
        g.approved, g.updated_at = True, utcnow()
        s.commit()
    click.echo(f"approved {golden_id}")


@click.command()
@click.argument("results", nargs=-1, required=True, type=click.Path(dir_okay=False, path_type=Path))
@db_option
def push(results: tuple[Path, ...], db: str | None) -> None:
    """Store eval / eval-all / tc-eval JSON reports (RESULTS.json) in the server's
    database, for its results pages and trend charts. Pushing a report twice is a no-op.

    \b
    Example:
      agentsproof push runs/my-plugin/eval-all-summary.json --db sqlite:///agentsproof.db
      agentsproof push runs/my-plugin/my-skill-eval.json runs/cases/cases-tc-eval.json
    """
    from agentsproof.server.reports import load_report, store_report

    reports = [(p, load_report(p)) for p in results]
    database = _open(db)
    for path, data in reports:
        new = store_report(database, data, str(path))
        click.echo(f"{'pushed' if new else 'already stored'}: {path} ({data['command']} {data['plugin']}, {data['created_at']})")
    database.close()


def register(main: click.Group) -> None:
    """Add the server's commands (``serve``, ``keys``, ``golden``, ``push``) to the CLI group ``main``."""
    for cmd in (serve, keys, golden, push):
        main.add_command(cmd)
