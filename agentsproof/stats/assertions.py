"""The spec's per-case ``assertion_results`` and ``summary`` for tc-eval reports.

For each assertion of a case: its text, whether it passed in every scored with-arm trial,
how many trials it passed, and evidence (the first failing trial's, else the first
trial's). ``summary`` counts the assertions: passed, failed, total and pass_rate. With one
trial per arm (tc-eval's default) this is exactly the spec's example shape.
"""

from __future__ import annotations

from typing import Any

from agentsproof.model.results import ItemResult


def assertion_results(item: ItemResult) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Each ``assertions`` check of the with-skill arm's scored trials (passed in every trial or not, with evidence of the first failure) and their summary counts."""
    rows: dict[str, dict[str, Any]] = {}
    for t in item.with_arm.trials:
        if t.status != "scored":
            continue
        for g in t.graders:
            if g.type != "assertions":
                continue
            for c in g.checks:
                row = rows.setdefault(c.target, {"text": c.target, "passed": True, "passed_trials": 0, "trials": 0, "evidence": c.evidence})
                row["trials"] += 1
                if c.passed:
                    row["passed_trials"] += 1
                elif row["passed"]:
                    row["passed"], row["evidence"] = False, c.evidence
    results = list(rows.values())
    passed = sum(1 for r in results if r["passed"])
    summary = {"passed": passed, "failed": len(results) - passed, "total": len(results), "pass_rate": passed / len(results) if results else None}
    return results, summary
