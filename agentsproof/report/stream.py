"""Reports written piece by piece, so that a run of 100,000 trials never exists as one
string (or one list of trials) in memory.

- :func:`json_chunks` yields the JSON report item by item and trial by trial; joined,
  the pieces are exactly ``RunResult.model_dump_json(indent=2)`` (the schema is unchanged:
  docs/report-schema.md).
- :func:`template_chunks` renders a report template with ``Template.generate``.
- :class:`LazyViews` stands for an arm's list of trial views in the report's view model:
  each view is made when the template reaches it, from trials read back from the journal
  (:mod:`agentsproof.executor.spill`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any

from agentsproof.model.results import ItemResult, RunResult, TrialResult

if TYPE_CHECKING:
    from pydantic import BaseModel

_ITEMS_EMPTY = '\n  "items": [],\n'
_TRIALS_EMPTY = '\n    "trials": []'


def _dump(model: BaseModel) -> str:
    try:
        text: str = model.model_dump_json(indent=2)
        return text
    except ValueError:
        # Undecodable bytes of a file name (surrogates) cannot be encoded as UTF-8: JSON \u
        # escapes instead, which read back to the same path (as report.render_json does).
        return json.dumps(model.model_dump(mode="json"), indent=2, ensure_ascii=True)


def _indent(text: str, spaces: int) -> str:
    pad = " " * spaces
    return pad + text.replace("\n", "\n" + pad)


def _trials_json(trials: Iterable[TrialResult]) -> Iterator[str]:
    """``"trials": [...]`` of an arm at the depth of an item's arm (base indentation 4)."""
    first = True
    for t in trials:
        yield ('\n    "trials": [\n' if first else ",\n") + _indent(_dump(t), 6)
        first = False
    yield '\n    "trials": []' if first else "\n    ]"


def _item_json(item: ItemResult) -> Iterator[str]:
    """One item of the report at indentation 0, its trials streamed from their arms."""
    shell = item.model_copy(
        update={"with_arm": item.with_arm.model_copy(update={"trials": []}), "without_arm": item.without_arm.model_copy(update={"trials": []})}
    )
    text = _dump(shell)
    pos = 0
    for key, arm in (('"with_arm": {', item.with_arm), ('"without_arm": {', item.without_arm)):
        start = text.index(key, pos)
        hole = text.index(_TRIALS_EMPTY, start)  # an arm's third field: nothing before it can match
        yield text[pos:hole]
        yield from _trials_json(arm.trials)
        pos = hole + len(_TRIALS_EMPTY)
    yield text[pos:]


def json_chunks(run: RunResult) -> Iterator[str]:
    """The JSON report in pieces; ``"".join(json_chunks(run)) == render_json(run)``."""
    head = _dump(run.model_copy(update={"items": []}))
    cut = head.index(_ITEMS_EMPTY)
    if not run.items:
        yield head
        return
    yield head[:cut] + '\n  "items": ['
    for n, item in enumerate(run.items):
        yield "\n" if n == 0 else ",\n"
        # each piece re-indented by 4 (an element of the top-level "items" list)
        carry = "    "
        for piece in _item_json(item):
            yield carry + piece.replace("\n", "\n    ")
            carry = ""
    yield "\n  ],\n" + head[cut + len(_ITEMS_EMPTY) :]


def stream_writers() -> dict[str, Callable[[RunResult], Any]]:
    """Formats written piece by piece (an iterator of str) by report_files.write_reports."""
    from agentsproof.report.views import build_view

    views: dict[int, dict[str, Any]] = {}

    def view(run: RunResult) -> dict[str, Any]:  # one view model for both templates
        if id(run) not in views:
            views.clear()
            views[id(run)] = build_view(run)
        return views[id(run)]

    def html(run: RunResult) -> Any:
        from agentsproof.report.lazy import lazy_after

        context = view(run)
        # a large run's trial details are drawn in the browser when opened (agentsproof.report.lazy)
        return template_chunks("report.html.j2", {**context, "lazy_trials": context["trial_count"] > lazy_after()})

    return {"json": json_chunks, "md": lambda run: template_chunks("report.md.j2", view(run)), "html": html}


def template_chunks(name: str, context: dict[str, Any]) -> Iterator[str]:
    """The report template ``name`` rendered with ``context``, piece by piece (``Template.generate``)."""
    from agentsproof.report.lazy import html_env

    pieces: Iterator[str] = html_env().get_template(name).generate(**context)
    return pieces
