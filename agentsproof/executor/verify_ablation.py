"""``agentsproof verify`` for ablations: every per-part number derived again from the trials.

An ablation's run report (``agentsproof ablate``) holds every arm's trials and the ablation
as its ``settings.ablation`` section. :func:`rederive_ablation` derives that section's numbers
again from the trials with the very function ``ablate`` wrote them with
(:func:`agentsproof.stats.ablation_looks.derive`): each part's effect, interval, p-values at
each look, sequential and Holm-adjusted p-values, verdict; the removable parts; the smallest
skill's confirmation; the trials the arms ran. :func:`against_run` checks an ablation's own
JSON file (``<skill>-ablation.json``) against the run report it names: the same numbers and
the same manifest. :mod:`agentsproof.commands.verify` calls both, beside
:func:`agentsproof.executor.verify.rederive` (which this module's helpers come from).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentsproof.executor.verify_diff import Difference
from agentsproof.executor.verify_diff import diff as _diff
from agentsproof.executor.verify_diff import diff_tree as _diff_tree
from agentsproof.model.results import RunResult

SHOWN = ("whole", "parts", "removable", "smallest", "calls", "margin", "alpha", "looks", "level", "trials")
"""The keys of the section an ablation's own JSON file repeats (and verify compares)."""


def rederive_ablation(run: RunResult) -> list[Difference]:
    """The differences between the run's ``settings.ablation`` and its re-derivation (empty
    when it holds, or when the run is not an ablation)."""
    block = (run.settings or {}).get("ablation")
    if block is None:
        return []
    if not isinstance(block, Mapping):
        return [Difference("settings.ablation", block, "an ablation section (a mapping)")]
    from agentsproof.stats.ablation_looks import derive

    try:
        derived = derive(block, run.items)
    except (KeyError, TypeError, ValueError, IndexError) as err:
        return [Difference("settings.ablation", "(cannot be derived again)", f"parts, items and trials that match: {type(err).__name__}: {err}")]
    out: list[Difference] = []
    _diff_tree(out, "settings.ablation", block, derived)
    level = 1 - float(block.get("alpha", 0.05)) / max(1, len(block.get("looks") or [1]))
    _diff(out, "settings.ablation.level", block.get("level"), level)
    return out


def against_run(own: Mapping[str, Any], run: RunResult) -> list[Difference]:
    """An ablation file's numbers and manifest against those of the run report it names."""
    block = (run.settings or {}).get("ablation")
    if not isinstance(block, Mapping):
        return [Difference("run_report", "(an ablation's run)", "a run report without an ablation section")]
    out: list[Difference] = []
    _diff_tree(out, "ablation", own, {k: block.get(k) for k in SHOWN})
    _diff(out, "manifest", own.get("manifest"), run.manifest)
    return out
