"""Reports: JSON (the RunResult itself), Markdown and self-contained HTML via Jinja.

Writers are a dict from format name to a function; ``write_reports`` writes the formats a
command asks for. Jinja autoescape is on for HTML templates (``*.html.j2``): model output
is always escaped. The templates render from a small view model built here in one pass
over the run (:mod:`agentsproof.report.views`), so a template never scans trials more
than once. Where the files go: :mod:`agentsproof.report.files`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from agentsproof.model.results import RunResult
from agentsproof.report.lazy import html_env
from agentsproof.report.views import build_view


def render_json(run: RunResult) -> str:
    """The JSON report: the run, indented (all non-ASCII as ``\\u`` escapes when a file name holds undecodable bytes)."""
    try:
        return run.model_dump_json(indent=2)
    except ValueError:
        # Undecodable bytes of a file name (surrogates) cannot be encoded as UTF-8: write
        # them as JSON \u escapes, which read back to the same path.
        return json.dumps(run.model_dump(mode="json"), indent=2, ensure_ascii=True)


def render_markdown(run: RunResult) -> str:
    """The Markdown report (``report.md.j2``)."""
    text: str = html_env().get_template("report.md.j2").render(**build_view(run))
    return text


def render_html(run: RunResult) -> str:
    """The self-contained HTML report (``report.html.j2``)."""
    text: str = html_env().get_template("report.html.j2").render(**build_view(run))
    return text


def json_schema() -> dict[str, Any]:
    """JSON Schema of the JSON report (the ``RunResult`` model)."""
    return RunResult.model_json_schema()


def render_json_schema() -> str:
    """:func:`json_schema` as indented JSON text."""
    return json.dumps(json_schema(), indent=2)


def _render_junit(run: RunResult) -> str:
    from agentsproof.report.exports import render_junit

    return render_junit(run)


def _render_jsonl(run: RunResult) -> str:
    from agentsproof.report.exports import render_jsonl

    return render_jsonl(run)


WRITERS: dict[str, Callable[[RunResult], str]] = {
    "json": render_json,
    "md": render_markdown,
    "html": render_html,
    "junit": _render_junit,  # --junit FILE (agentsproof.report.exports)
    "jsonl": _render_jsonl,  # --jsonl FILE: one line per trial
}
