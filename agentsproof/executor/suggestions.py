"""Improvement suggestions for an item: which checks still fail, how to tighten the eval."""

from __future__ import annotations

from agentsproof.core.units import signed
from agentsproof.model.results import ItemResult
from agentsproof.stats.checks import check_counts


def _short(text: str, n: int = 70) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


def suggestions_for(item: ItemResult) -> list[str]:
    """What to do about the item, one line each: the checks that still fail, how to tighten the eval (none without a grade)."""
    out: list[str] = []
    word = "agent" if item.kind == "agent" else "skill"  # one word for what is measured, in every line
    if item.status == "errored":
        out.append(f"No grade: {item.status_reason}. Fix the provider problem and re-run.")
        return out
    if item.grade is None:
        return out
    with_rates = check_counts(item.with_arm)
    base_rates = check_counts(item.without_arm)
    if item.grade == "F":
        out.append(
            f"The {word} lowers the score against the baseline. Check that its instructions do not conflict with the "
            f"task, and that the graders reward what the {word} teaches."
        )
    for (kind, target), (p, n) in sorted(with_rates.items()):
        if n and p < n:
            out.append(f"Still failing with the {word}: {kind} {_short(target)!r} passed {p}/{n} trials.")
    for (kind, target), (p, n) in sorted(base_rates.items()):
        if n and p == n and kind not in ("rubric",):
            out.append(
                f"Passes without the {word} too: {kind} {_short(target)!r} ({p}/{n} baseline trials) — it cannot show "
                f"the {word}'s effect; replace it with a check only the {word}'s technique satisfies."
            )
    stats = item.stats or {}
    for c in stats.get("non_discriminating_checks") or []:
        p, n = c["baseline_passed"], c["baseline_total"]
        if p < n and c["kind"] != "rubric":  # checks passing every baseline trial are listed above
            out.append(
                f"Non-discriminating: {c['kind']} {_short(c['target'])!r} passes in {p}/{n} baseline trials "
                f"(≥ 90 %) — it can barely show the {word}'s effect; make it something the baseline misses."
            )
    for c in stats.get("flaky_checks") or []:
        arm = f"with-{word}" if c["arm"] == "with" else "baseline"
        out.append(
            f"Flaky: {c['kind']} {_short(c['target'])!r} passed {c['passed']}/{c['total']} {arm} trials — the "
            "answer varies between runs; tighten the instruction or the check, or run more trials."
        )
    if item.grade in ("B", "C"):
        out.append(
            f"Delta {signed(item.delta)} is below the A band (+0.30): add checks for the specific outputs the {word} "
            f"should produce, or make the instruction harder for a model without the {word}."
        )
    if item.with_arm.errored or item.without_arm.errored:
        out.append(
            f"{item.with_arm.errored + item.without_arm.errored} trial(s) errored and were left out of the scores; re-run them before trusting the grade."
        )
    if item.trials_requested < 5:
        out.append(f"Only {item.trials_requested} trial(s) per arm: use --smoke (5) or --reliable (15) before trusting the grade.")
    return out
