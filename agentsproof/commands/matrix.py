"""One matrix across agents: ``--target copilot,claude-code,codex`` runs every item on each.

The items are loaded once (with the first name, which checks that agent graders have an
agent), then each is copied once per agent: the copy's ``target`` is that agent and its
id gains ``@<agent>`` (so the journal, workspaces, ``compare`` and ``--retry-errors`` keep
the agents apart, and ``compare`` of two matrix runs shows each agent's drift). The report
carries one item per (item, agent); :func:`by_agent` sums them up for the terminal.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from agentsproof.core.errors import InputError
from agentsproof.model.items import EvalItem

SEPARATOR = "@"


def target_names(value: str | None) -> list[str]:
    """The agents of ``--target`` (one, or several comma-separated); [] without it."""
    if not value:
        return []
    names = [n.strip() for n in value.split(",")]
    if any(not n for n in names):
        raise InputError("command line", "--target", f"{value!r} has an empty name (use NAME or NAME,NAME,...)")
    if len(set(names)) != len(names):
        raise InputError("command line", "--target", f"{value!r} names an agent twice")
    return names


def first_target(value: str | None) -> str | None:
    names = target_names(value)
    return names[0] if names else None


def expand(items: list[EvalItem], value: str | None) -> list[EvalItem]:
    """Every item once per agent of ``--target`` (unchanged for one agent or none)."""
    names = target_names(value)
    if len(names) < 2:
        return items
    return [dataclasses.replace(it, id=f"{it.id}{SEPARATOR}{name}", target=name) for it in items for name in names]


def base_id(item_id: str, target: str) -> str:
    suffix = f"{SEPARATOR}{target}"
    return item_id[: -len(suffix)] if item_id.endswith(suffix) else item_id


def by_agent(items: list[Any]) -> list[dict[str, Any]]:
    """Per agent of a matrix run: its items' grades, mean delta, and where the skill helps
    (the delta's interval above 0) or hurts (below 0). Empty for a run on one target."""
    targets = list(dict.fromkeys(it.target for it in items))
    if len(targets) < 2:
        return []
    out = []
    for target in targets:
        mine = [it for it in items if it.target == target]
        deltas = [it.delta for it in mine if it.delta is not None]
        helps, hurts = [], []
        for it in mine:
            ci = (it.stats or {}).get("delta_ci")
            if isinstance(ci, list) and len(ci) == 2 and ci[0] is not None:
                if ci[0] > 0:
                    helps.append(it.name)
                elif ci[1] < 0:
                    hurts.append(it.name)
        out.append({
            "target": target,
            "items": len(mine),
            "grades": [it.grade or "—" for it in mine],
            "mean_delta": sum(deltas) / len(deltas) if deltas else None,
            "helps": helps,
            "hurts": hurts,
        })
    return out
