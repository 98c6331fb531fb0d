"""One matrix across agents: ``--target copilot,claude-code,codex`` runs every item on each.

The items are loaded once (with the first name, which checks that agent graders have an
agent), then each is copied once per agent: the copy's ``target`` is that agent and its
id gains ``@<agent>`` (so the journal, workspaces, ``compare`` and ``--retry-errors`` keep
the agents apart, and ``compare`` of two matrix runs shows each agent's drift). The report
carries one item per (item, agent); :func:`~agentsproof.report.matrix.by_agent` sums them
up for the terminal, :func:`~agentsproof.report.matrix.agent_matrix` for the reports.
"""

from __future__ import annotations

import dataclasses

from agentsproof.core.errors import InputError
from agentsproof.model.items import EvalItem
from agentsproof.report.matrix import SEPARATOR as SEPARATOR
from agentsproof.report.matrix import base_id as base_id
from agentsproof.report.matrix import by_agent as by_agent


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
    """The first agent named by ``--target`` (None when it names none); InputError as :func:`target_names`."""
    names = target_names(value)
    return names[0] if names else None


def expand(items: list[EvalItem], value: str | None) -> list[EvalItem]:
    """Every item once per agent of ``--target`` (unchanged for one agent or none)."""
    names = target_names(value)
    if len(names) < 2:
        return items
    return [dataclasses.replace(it, id=f"{it.id}{SEPARATOR}{name}", target=name) for it in items for name in names]
