"""Reports: JSON (the RunResult itself), Markdown and self-contained HTML via Jinja.

Writers are a dict from format name to a function; ``write_reports`` writes the formats a
command asks for. Jinja autoescape is on for HTML: model output is always escaped.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape

from agentsproof.schemas.artifacts import RunResult

_env: Environment | None = None


def env() -> Environment:
    global _env
    if _env is None:
        _env = Environment(
            loader=PackageLoader("agentsproof", "templates"),
            autoescape=select_autoescape(enabled_extensions=("html", "html.j2"), default_for_string=False),
            undefined=StrictUndefined,
            trim_blocks=True,
            lstrip_blocks=True,
        )
        _env.filters["pct"] = lambda v: "—" if v is None else f"{v * 100:.0f}%"
        _env.filters["num"] = lambda v, d=2: "—" if v is None else f"{v:.{d}f}"
        _env.filters["signed"] = lambda v, d=2: "—" if v is None else f"{v:+.{d}f}"
        _env.filters["secs"] = lambda v: "—" if v is None else (f"{v * 1000:.0f} ms" if v < 1 else f"{v:.1f} s")
    return _env


def render_json(run: RunResult) -> str:
    return run.model_dump_json(indent=2)


def render_markdown(run: RunResult) -> str:
    return env().get_template("report.md.j2").render(run=run)


def render_html(run: RunResult) -> str:
    return env().get_template("report.html.j2").render(run=run)


WRITERS: dict[str, Callable[[RunResult], str]] = {
    "json": render_json,
    "md": render_markdown,
    "html": render_html,
}


def write_reports(run: RunResult, targets: dict[str, Path]) -> dict[str, Path]:
    """Write each format to its path: ``{"html": Path(...), ...}``. Returns what was written."""
    written: dict[str, Path] = {}
    for fmt, path in targets.items():
        try:
            writer = WRITERS[fmt]
        except KeyError:
            raise ValueError(f"unknown report format {fmt!r}; known: {', '.join(WRITERS)}") from None
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(writer(run), encoding="utf-8")
        written[fmt] = path
    return written


def report_targets(command: str, output: Path, plugin: str, stem: str) -> dict[str, Path]:
    """Where each command writes (see README 'Outputs')."""
    if command == "eval":
        base = output / plugin
        return {f: base / f"{stem}-eval.{f}" for f in ("md", "json", "html")}
    if command == "eval-all":
        base = output / plugin
        return {
            "html": base / f"{plugin}-eval.html",
            "md": base / "eval-all-summary.md",
            "json": base / "eval-all-summary.json",
        }
    if command == "tc-eval":
        base = output / stem
        return {f: base / f"{stem}-tc-eval.{f}" for f in ("html", "md", "json")}
    raise ValueError(command)
