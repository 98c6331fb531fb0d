"""``compare``: did a change between two saved runs make any item better, worse, or nothing?

Items (and tc-eval cases) are matched by id. Per item, a two-sided Fisher exact test on the
with-skill arm's pass/fail counts gives the verdict; errored trials are left out, so a
rate limit cannot look like a regression.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from scipy.stats import fisher_exact

from agentsproof.model.results import ItemResult, RunResult

VERDICTS = ("SAME", "BETTER", "WORSE", "NOISE", "NEW", "REMOVED", "INCONCLUSIVE")


@dataclass
class ItemComparison:
    """One item's verdict in ``compare`` (one of ``VERDICTS``) with both runs' with-skill counts, deltas and grades."""

    id: str
    name: str
    verdict: str
    before_passed: int | None = None
    before_scored: int | None = None
    before_errored: int | None = None
    after_passed: int | None = None
    after_scored: int | None = None
    after_errored: int | None = None
    p_value: float | None = None
    before_delta: float | None = None
    after_delta: float | None = None
    delta_change: float | None = None
    before_grade: str | None = None
    after_grade: str | None = None

    @property
    def before_rate(self) -> float | None:
        """The with-skill pass rate in the earlier run; None without scored trials."""
        return self.before_passed / self.before_scored if self.before_passed is not None and self.before_scored else None

    @property
    def after_rate(self) -> float | None:
        """The with-skill pass rate in the later run; None without scored trials."""
        return self.after_passed / self.after_scored if self.after_passed is not None and self.after_scored else None


@dataclass
class Comparison:
    """What ``compare`` found between two saved runs: a verdict per item and warnings where the runs differ in setup."""

    before_path: str
    after_path: str
    alpha: float
    items: list[ItemComparison] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def worse(self) -> list[ItemComparison]:
        """The items whose verdict is WORSE."""
        return [i for i in self.items if i.verdict == "WORSE"]

    def counts(self) -> dict[str, int]:
        """How many items have each verdict (every verdict present, 0 when none)."""
        out = {v: 0 for v in VERDICTS}
        for i in self.items:
            out[i.verdict] += 1
        return out

    def to_dict(self) -> dict[str, Any]:
        """The comparison as the JSON ``compare --json`` prints: items with their pass rates, counts, warnings and the test used."""
        items = []
        for i in self.items:
            d = asdict(i)
            d["before_rate"], d["after_rate"] = i.before_rate, i.after_rate
            items.append(d)
        return {
            "before": self.before_path,
            "after": self.after_path,
            "alpha": self.alpha,
            "test": "two-sided Fisher exact test on the with-skill arm's pass/fail counts (scipy.stats.fisher_exact)",
            "warnings": self.warnings,
            "counts": self.counts(),
            "items": items,
        }


def compare_item(before: ItemResult | None, after: ItemResult | None, alpha: float) -> ItemComparison:
    """One item's ``ItemComparison``: NEW, REMOVED, INCONCLUSIVE without scored trials, else SAME, BETTER, WORSE or NOISE by Fisher's exact test at ``alpha``."""
    ref = after or before
    assert ref is not None
    c = ItemComparison(id=ref.id, name=ref.name, verdict="NOISE")
    if before is not None:
        c.before_passed, c.before_scored = before.with_arm.passed_trials, before.with_arm.scored
        c.before_errored = before.with_arm.errored
        c.before_delta, c.before_grade = before.delta, before.grade
    if after is not None:
        c.after_passed, c.after_scored = after.with_arm.passed_trials, after.with_arm.scored
        c.after_errored = after.with_arm.errored
        c.after_delta, c.after_grade = after.delta, after.grade
    if c.before_delta is not None and c.after_delta is not None:
        c.delta_change = c.after_delta - c.before_delta
    if before is None:
        c.verdict = "NEW"
    elif after is None:
        c.verdict = "REMOVED"
    elif not c.before_scored or not c.after_scored:
        c.verdict = "INCONCLUSIVE"
    else:
        bp, bn, ap, an = c.before_passed or 0, c.before_scored, c.after_passed or 0, c.after_scored
        table = np.asarray([[bp, bn - bp], [ap, an - ap]], dtype=np.int64)  # what fisher_exact makes of the list itself
        c.p_value = float(fisher_exact(table, alternative="two-sided").pvalue)
        if bp * an == ap * bn:
            c.verdict = "SAME"
        elif c.p_value < alpha:
            c.verdict = "BETTER" if ap * bn > bp * an else "WORSE"
        else:
            c.verdict = "NOISE"
    return c


def _differences(before: RunResult, after: RunResult) -> list[str]:
    out = []
    for label, attr in (("provider", "provider"), ("model", "model"), ("judge model", "judge_model")):
        b, a = getattr(before, attr), getattr(after, attr)
        if b != a:
            out.append(f"{label} differs: {b!r} before, {a!r} after")
    bt, at = before.settings.get("trials"), after.settings.get("trials")
    if bt != at and bt is not None and at is not None:
        out.append(f"trials setting differs: {bt} before, {at} after")
    bi = {i.id: i for i in before.items}
    for it in after.items:
        old = bi.get(it.id)
        if old is None:
            continue
        if old.trials_requested != it.trials_requested and bt == at:
            out.append(f"{it.id}: trials per arm differ: {old.trials_requested} before, {it.trials_requested} after")
        if old.source_sha256 and it.source_sha256 and old.source_sha256 != it.source_sha256:
            out.append(f"{it.id}: {Path(it.source_path).name} changed (content hash {old.source_sha256[:12]} → {it.source_sha256[:12]})")
    return out


def compare_runs(before: RunResult, after: RunResult, alpha: float = 0.05, before_path: str = "", after_path: str = "") -> Comparison:
    """Compare two saved runs item by item (matched by id, the earlier run's order first), with warnings where their setup or source files differ."""
    cmp = Comparison(before_path=before_path, after_path=after_path, alpha=alpha)
    cmp.warnings = _differences(before, after)
    bi = {i.id: i for i in before.items}
    ai = {i.id: i for i in after.items}
    for item_id in list(bi) + [i for i in ai if i not in bi]:
        cmp.items.append(compare_item(bi.get(item_id), ai.get(item_id), alpha))
    return cmp
