"""``agentsproof cache info|clear``: the response cache."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from agentsproof.llm.cache import ResponseCache


@click.group("cache")
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


def _cache_command(name: str) -> Callable[[Callable], Callable]:
    """``cache NAME``, with ``--cache-dir``."""
    option = click.option(
        "--cache-dir", type=click.Path(file_okay=False, path_type=Path), help="Cache folder (default: $AGENTSPROOF_CACHE_DIR, else ~/.cache/agentsproof)."
    )
    return lambda f: cache_group.command(name)(option(f))


def _cache(cache_dir: Path | None) -> ResponseCache:
    from agentsproof.llm.cache import ResponseCache, default_cache_dir

    return ResponseCache(cache_dir or default_cache_dir())


@_cache_command("info")
def cache_info_cmd(cache_dir: Path | None) -> None:
    """Where the cache is, how many responses it holds and its size bound.

    \b
    Example:
      agentsproof cache info
    """
    info = _cache(cache_dir).info()
    click.echo(f"cache: {info['path']}")
    click.echo(f"entries: {info['entries']:,}")
    click.echo(f"size: {info['bytes'] / 1e6:,.1f} MB of {info['max_bytes'] / 1e6:,.0f} MB (AGENTSPROOF_CACHE_MAX_MB)")


@_cache_command("clear")
def cache_clear_cmd(cache_dir: Path | None) -> None:
    """Delete every cached response.

    \b
    Example:
      agentsproof cache clear
    """
    click.echo(f"cleared {_cache(cache_dir).clear():,} cached responses")
