"""One matrix across agents (``--target a,b,c``): the items of each agent side by side.

A matrix run's report has one item per (item, agent), the agent's name appended to the
item's id (``skills/x@codex``, see :mod:`agentsproof.commands.per_target`). :func:`by_agent`
sums each agent up (the terminal's ``by agent:`` block); :func:`agent_matrix` is the
reports' table: a row per item, a column per agent, each cell the item's grade and its
delta with the interval; the skill helps an agent where that interval is above 0, hurts
where it is below. Both are empty for a run on one target.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agentsproof.model.results import ItemResult

SEPARATOR = "@"


def base_id(item_id: str, target: str) -> str:
    """The item's id without its agent (``skills/x@codex`` → ``skills/x``)."""
    suffix = f"{SEPARATOR}{target}"
    return item_id[: -len(suffix)] if item_id.endswith(suffix) else item_id


def _targets(items: Sequence[ItemResult]) -> list[str]:
    return list(dict.fromkeys(it.target for it in items))


def effect(item: ItemResult) -> str | None:
    """``helps`` when the delta's interval is above 0, ``hurts`` when below, else None."""
    ci = (item.stats or {}).get("delta_ci")
    if isinstance(ci, list) and len(ci) == 2 and ci[0] is not None and ci[1] is not None:
        if ci[0] > 0:
            return "helps"
        if ci[1] < 0:
            return "hurts"
    return None


def by_agent(items: Sequence[ItemResult]) -> list[dict[str, Any]]:
    """Per agent of a matrix run: its items' grades, mean delta, and where the skill helps
    (the delta's interval above 0) or hurts (below 0). Empty for a run on one target."""
    targets = _targets(items)
    if len(targets) < 2:
        return []
    out = []
    for target in targets:
        mine = [it for it in items if it.target == target]
        deltas = [it.delta for it in mine if it.delta is not None]
        out.append(
            {
                "target": target,
                "items": len(mine),
                "grades": [it.grade or "—" for it in mine],
                "mean_delta": sum(deltas) / len(deltas) if deltas else None,
                "helps": [it.name for it in mine if effect(it) == "helps"],
                "hurts": [it.name for it in mine if effect(it) == "hurts"],
            }
        )
    return out


def agent_matrix(items: Sequence[ItemResult], anchors: dict[str, str] | None = None) -> dict[str, Any] | None:
    """The reports' side-by-side table of a matrix run: ``agents`` (the columns),
    ``rows`` (per item: its name and one cell per agent — ``grade``, ``delta``, ``ci``,
    ``effect``, ``anchor`` of its drill-down — or None where that agent did not run it)
    and ``summary`` (:func:`by_agent`). None for a run on one target."""
    summary = by_agent(items)
    if not summary:
        return None
    agents = [r["target"] for r in summary]
    rows: dict[str, dict[str, Any]] = {}
    for it in items:
        row = rows.setdefault(base_id(it.id, it.target), {"name": it.name, "cells": dict.fromkeys(agents)})
        row["cells"][it.target] = {
            "grade": it.grade,
            "delta": it.delta,
            "ci": (it.stats or {}).get("delta_ci"),
            "effect": effect(it),
            "anchor": (anchors or {}).get(it.id),
        }
    return {
        "agents": agents,
        "rows": [{"name": r["name"], "cells": [r["cells"][a] for a in agents]} for r in rows.values()],
        "summary": summary,
    }
