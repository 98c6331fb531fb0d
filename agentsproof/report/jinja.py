"""The one Jinja environment of the reports: templates, autoescape, filters, bytecode cache.

A leaf of the report package: it imports no report module, so every writer can use it.
"""

from __future__ import annotations

import contextlib
import os
from typing import Any

from jinja2 import BytecodeCache, Environment, FileSystemBytecodeCache, PackageLoader, StrictUndefined, select_autoescape
from jinja2.bccache import Bucket

from agentsproof.core.mdtext import md_text
from agentsproof.core.version import __version__

_env: Environment | None = None


def _pvalue(v: float | None) -> str:
    if v is None:
        return "—"
    return "< 0.001" if v < 0.001 else f"{v:.3f}"


def _interval(v: Any, fmt: str) -> str:
    if not v or len(v) != 2 or v[0] is None or v[1] is None:
        return ""
    return f"[{format(v[0], fmt)}, {format(v[1], fmt)}]"


def _pct_interval(v: Any) -> str:
    if not v or len(v) != 2 or v[0] is None or v[1] is None:
        return ""
    return f"[{v[0] * 100:.0f}%, {v[1] * 100:.0f}%]"


def _tokens(v: float | int | None) -> str:
    return "—" if v is None else f"{v:,.0f}"


def _filesize(v: int | None) -> str:
    from agentsproof.core.units import human_size

    return "—" if v is None else human_size(int(v))


def _usd(v: float | None) -> str:
    if v is None:  # no price for the model: unknown, as --plan says, never "$0" nor a bare dash
        return "unknown"
    sign = "-" if v < 0 else ""
    v = abs(v)
    return f"{sign}${v:,.2f}" if v >= 1 else f"{sign}${v:.4f}" if v >= 0.01 or v == 0 else f"{sign}${v:.6f}"


def _bytecode_cache() -> BytecodeCache | None:
    """Compiled templates cached per user (templates only: no run data is ever stored).

    Compiling the report templates costs ~0.2 s a run; the cache turns that into a load.
    AGENTSPROOF_CACHE_DIR moves it; an unwritable location just disables it.
    """
    from agentsproof.core.envcfg import cache_root

    directory = os.path.join(cache_root(), f"jinja-{__version__}")
    try:
        os.makedirs(directory, exist_ok=True)
    except OSError:
        return None
    if not os.access(directory, os.W_OK):
        return None
    return _QuietCache(directory)


class _QuietCache(FileSystemBytecodeCache):
    """A bytecode cache that cannot be written (a full disk) or read is no cache, never a lost report."""

    def dump_bytecode(self, bucket: Bucket) -> None:
        with contextlib.suppress(OSError):
            super().dump_bytecode(bucket)

    def load_bytecode(self, bucket: Bucket) -> None:
        try:
            super().load_bytecode(bucket)
        except (OSError, ValueError, EOFError):
            bucket.reset()


def env() -> Environment:
    """The reports' Jinja environment, made once per process: StrictUndefined, autoescape for HTML, the report filters."""
    global _env
    if _env is None:
        _env = Environment(
            loader=PackageLoader("agentsproof", "templates"),
            autoescape=select_autoescape(enabled_extensions=("html", "html.j2"), default_for_string=False),
            undefined=StrictUndefined,
            trim_blocks=True,
            lstrip_blocks=True,
            bytecode_cache=_bytecode_cache(),
        )
        _env.filters["pct"] = lambda v: "—" if v is None else f"{v * 100:.0f}%"
        _env.filters["num"] = lambda v, d=2: "—" if v is None else f"{v:.{d}f}"
        from agentsproof.core.units import signed

        _env.filters["signed"] = signed
        _env.filters["secs"] = lambda v: "—" if v is None else (f"{v * 1000:.0f} ms" if v < 1 else f"{v:.1f} s")
        _env.filters["pvalue"] = _pvalue
        _env.filters["ci"] = lambda v, fmt="+.2f": _interval(v, fmt)
        _env.filters["pct_ci"] = _pct_interval
        _env.filters["md"] = md_text
        _env.filters["tokens"] = _tokens
        _env.filters["usd"] = _usd
        _env.filters["filesize"] = _filesize
        from agentsproof.report.ablation import filters as ablation_filters  # issue 49: the ablation section

        _env.filters.update(ablation_filters())
    return _env
