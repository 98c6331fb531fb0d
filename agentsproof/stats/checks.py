"""Flaky and non-discriminating checks, from the per-check results of scored trials."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from agentsproof.model.results import ArmResult

NON_DISCRIMINATING_RATE = 0.9
"""A check that passes in at least this share of baseline trials cannot show the skill's effect."""


def check_counts(arm: ArmResult) -> dict[tuple[str, str], tuple[int, int]]:
    """(kind, target) -> (passed, total) over the arm's scored trials."""
    counts: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])
    for t in arm.trials:
        if t.status != "scored":
            continue
        for g in t.graders:
            for c in g.checks:
                key = (c.kind, c.target)
                counts[key][1] += 1
                counts[key][0] += int(c.passed)
    return {k: (v[0], v[1]) for k, v in counts.items()}


def flaky_checks(with_arm: ArmResult, without_arm: ArmResult) -> list[dict[str, Any]]:
    """Checks that passed in some trials and failed in others of the same arm."""
    out = []
    for arm in (with_arm, without_arm):
        for (kind, target), (passed, total) in sorted(check_counts(arm).items()):
            if 0 < passed < total:
                out.append({"arm": arm.arm, "kind": kind, "target": target, "passed": passed, "total": total})
    return out


def non_discriminating_checks(without_arm: ArmResult) -> list[dict[str, Any]]:
    """Checks that pass in ≥ 90 % of baseline trials."""
    out = []
    for (kind, target), (passed, total) in sorted(check_counts(without_arm).items()):
        if total and passed / total >= NON_DISCRIMINATING_RATE - 1e-12:
            out.append({"kind": kind, "target": target, "baseline_passed": passed, "baseline_total": total})
    return out
