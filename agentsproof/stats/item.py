"""``item_stats``: the uncertainty of one item's grade (the ``ItemResult.stats`` contract)."""

from __future__ import annotations

from typing import Any

from agentsproof.model.results import ArmResult, ItemResult, compute_grade
from agentsproof.stats.cases import (
    MIN_CASES,
    by_case,
    case_deltas,
    case_stats,
    delta_interval,
    mean_case_delta,
    power_verdict,
    stratified_permutation_p,
)
from agentsproof.stats.checks import flaky_checks, non_discriminating_checks
from agentsproof.stats.intervals import (
    PASS_RATE_CI_METHOD,
    PERMUTATION_RESAMPLES,
    SEED,
    clopper_pearson,
    hake_gain,
    interval_words,
    pass_at_k,
    pass_hat_k,
    pass_k_interval,
    permutation_p,
    sample_sd,
)
from agentsproof.stats.tasks import BETTING_METHOD, SIGN_FLIP_METHOD, sign_flip_p
from agentsproof.stats.wald import CASES, QUASI_METHOD, TASKS, cases_method, default_question

QUESTION_NAMES = {CASES: "on these cases (a)", TASKS: "on tasks like these (b)"}
QUESTION_NOTES = {
    CASES: (
        "the grade, its interval, 'settled' and --adaptive are about these cases (the trials the only randomness): "
        "with fewer than 5 cases the eval is read as a fixed set; questions.tasks says what the cases show of other tasks"
    ),
    TASKS: (
        "the grade, its interval, 'settled' and --adaptive are about tasks like these (the cases a sample of tasks), "
        "with an interval that assumes nothing about how task effects are spread: a few cases cannot rule out that "
        "unseen tasks differ (5 cases that all gain +1 still span about [{five_low:+.2f}, +1]); questions.cases is the effect on these cases"
    ),
}


def question_note(question: str) -> str:
    """``question_note``: why the grade answers ``question``; (b)'s quotes the betting interval
    of five cases that all gain +1, computed (docs/statistics.md states the same figure)."""
    if question != TASKS:
        return QUESTION_NOTES[question]
    from agentsproof.stats.tasks import all_agree_interval

    return QUESTION_NOTES[TASKS].format(five_low=all_agree_interval(5, 1.0)[0])


def usable_cases(groups: list[tuple[str, list[float], list[float], int]]) -> int:
    """Cases whose two arms both have a scored trial: the count the questions, ``settled``
    and the 5-case rule go by (a case with an empty arm answers nothing)."""
    return sum(1 for _, w, wo, _ in groups if w and wo)


def delta_basis(groups: list[tuple[str, list[float], list[float], int]], with_mean: float | None, without_mean: float | None) -> dict[str, Any]:
    """What the delta is a difference of. One case: the arms' means over their scored trials.
    Several: it is **paired by case**, the mean of the per-case deltas over the cases whose arms
    both scored, i.e. ``with`` − ``without`` of the per-case means averaged over those cases —
    which differ from the arm means (over every scored trial) when a case has an empty arm or
    more trials than another. ``differs``: the paired means are not the arm means as printed."""
    usable = [(sum(w) / len(w), sum(wo) / len(wo)) for _, w, wo, _ in groups if w and wo]
    if len(groups) <= 1 or not usable:
        return {"paired": False, "cases": len(usable), "of": len(groups), "with": with_mean, "without": without_mean, "differs": False}
    pw, pwo = sum(u[0] for u in usable) / len(usable), sum(u[1] for u in usable) / len(usable)
    differs = any(m is None or round(p, 2) != round(m, 2) for p, m in ((pw, with_mean), (pwo, without_mean)))
    return {"paired": True, "cases": len(usable), "of": len(groups), "with": pw, "without": pwo, "differs": differs}


def delta_basis_line(stats: dict[str, Any] | None, delta: float | None) -> str | None:
    """One line for a delta paired by case whose paired means are not the arm means printed beside it
    (``delta +0.07 is paired by case: with 0.30, w/o 0.23, over the 4 of 5 cases where both arms scored``); else None."""
    b = (stats or {}).get("delta_basis") or {}
    if not b.get("paired") or not b.get("differs") or delta is None:
        return None
    where = f"the {b['cases']} of {b['of']} cases" if b["cases"] != b["of"] else f"its {b['cases']} cases"
    return (
        f"delta {delta:+.2f} is paired by case: with {b['with']:.2f}, w/o {b['without']:.2f} averaged over {where} where both arms "
        "scored (the with / w/o columns are means over every scored trial)"
    )


MIN_SCORED_PER_ARM = 3
PASS_K: int | None = None
"""k of pass@k and pass^k; None: the number of scored with-arm trials (the run's own k)."""
PASS_K_EQUALS_N = (
    "k = n: the n trials are one set of k, so the unbiased estimate is 1 or 0 (did they all / any pass?), not a rate; the interval is the estimate"
)


EMPTY_ARM_STATS: dict[str, Any] = dict.fromkeys(("n", "errored", "mean", "sd", "pass_rate", "pass_rate_ci"))
"""Every per-arm key of the stats contract (docs/report-schema.md), unset."""
EMPTY_ITEM_STATS: dict[str, Any] = dict.fromkeys(
    (
        "delta", "delta_ci", "delta_ci_method", "p_value", "p_value_method", "normalized_gain", "pass_at_k",
        "pass_hat_k", "grade_low", "grade_high", "grade_label", "enough_data", "note", "cases", "verdict",
        "verdict_reasons", "pass_rate_ci_method", "delta_ci_level", "question", "question_note", "questions",
        "delta_basis",
    )
)  # fmt: skip
"""Every per-item key of the stats contract, unset (the arms and check lists aside)."""


def scores(arm: ArmResult) -> list[float]:
    """The scores of an arm's scored trials, in trial order."""
    return [t.score for t in arm.trials if t.status == "scored" and t.score is not None]


def arm_stats(arm: ArmResult) -> dict[str, Any]:
    """One arm's entry of the stats contract: scored count, errored count, mean, sd, pass rate and its Clopper–Pearson interval."""
    s = scores(arm)
    passed = sum(1 for t in arm.trials if t.status == "scored" and t.passed)
    ci = clopper_pearson(passed, len(s))
    return {
        "n": len(s),
        "errored": sum(1 for t in arm.trials if t.status == "errored"),
        "mean": sum(s) / len(s) if s else None,
        "sd": sample_sd(s),
        "pass_rate": passed / len(s) if s else None,
        "pass_rate_ci": list(ci) if ci else None,
    }


def grade_label(grade: str | None, low: str | None, high: str | None, level: float = 0.95, where: str = "") -> str | None:
    """``B (95 % interval spans C–A)``, ``A (95 % interval within A)``; ``where`` (e.g.
    ``on these 5 cases``) follows the grade. A point F whose interval reaches 0 or above is
    ``F (harm not shown: 95 % interval spans F–C)``: the delta is below 0, the harm is not
    shown (under either --ci rule the report says so; the default rule still fails a point F)."""
    if grade is None or low is None or high is None:
        return None
    words = interval_words(level)
    head = f"{grade} {where}".rstrip()
    if low == high:
        return f"{head} ({words} within {low})"
    if grade == "F":
        return f"{head} (harm not shown: {words} spans {low}–{high})"
    return f"{head} ({words} spans {low}–{high})"


def tasks_clause(deltas: list[float], settled_grade: str | None, level: float = 0.95, grade: str | None = None) -> str:
    """What the cases say of tasks like these (question (b)), for the grade label: settled,
    or how many more cases like these would settle it (:func:`cases_to_settle`, the
    report's own betting interval), or that more cases alone would not. A point F
    (``grade``) says it as harm: ``for tasks like these harm not shown yet: about 1 more
    case like these would show it`` — the words ``--ci``'s note uses for the same item."""
    from agentsproof.stats.tasks import cases_to_settle

    if settled_grade is not None:
        return f"for tasks like these settled too: {settled_grade}"
    need = cases_to_settle(deltas, level, MIN_CASES)
    harm = grade == "F"
    if need is None:
        if harm:
            return "for tasks like these harm not shown: more cases like these would not show it (the delta is too near 0 or the cases disagree)"
        return "for tasks like these not settled: more cases like these would not settle it (the delta is too near a band edge or the cases disagree)"
    more = need - len(deltas)
    cases = f"about {more} more case{'s' if more != 1 else ''} like these"
    if harm:
        return f"for tasks like these harm not shown yet: {cases} would show it"
    return f"for tasks like these not settled yet: {cases} would settle it"


def item_grade_label(grade: str, deltas: list[float], answers: dict[str, Any], level: float = 0.95) -> str | None:
    """The one label that answers both questions: the grade on these cases with (a)'s
    interval, then what they say of tasks like these, e.g. ``A on these 5 cases (95 %
    interval within A); for tasks like these not settled yet: about 4 more cases like these
    would settle it``. More cases with the same per-case results never read less certain:
    (a) only narrows, and (b) says how far it is from settled."""
    n = len(deltas)
    ci_a = answers[CASES]["delta_ci"]
    if ci_a is None:
        return None
    where = "on this case" if n == 1 else f"on these {n} cases"
    head = grade_label(grade, compute_grade(ci_a[0]), compute_grade(ci_a[1]), level, where)
    ci_b = answers[TASKS]["delta_ci"]
    settled = None
    if ci_b is not None and n >= MIN_CASES and compute_grade(ci_b[0]) == compute_grade(ci_b[1]):
        settled = compute_grade(ci_b[0])
    return f"{head}; {tasks_clause(deltas, settled, level, grade)}"


def harm_not_shown_words(stats: dict[str, Any] | None) -> str:
    """For :func:`harm_not_shown`'s item: where the harm is not shown, naming the question its
    interval answers, as the grade label does: ``for tasks like these (on these 5 cases it is
    shown)``, ``for tasks like these (nor on these 5 cases)``, ``on this case``."""
    s = stats or {}
    n = (s.get("cases") or {}).get("count") or 1
    where = "on this case" if n == 1 else f"on these {n} cases"
    if s.get("question") != TASKS:
        return where
    ci_a = ((s.get("questions") or {}).get(CASES) or {}).get("delta_ci")
    shown_a = ci_a is not None and compute_grade(ci_a[1]) == "F"
    return f"for tasks like these ({where} it is shown)" if shown_a else f"for tasks like these (nor {where})"


def harm_not_shown(stats: dict[str, Any] | None) -> bool:
    """A point F whose delta interval (the question the grade answers) reaches 0 or above:
    the delta is below 0, harm is not shown."""
    s = stats or {}
    delta, high = s.get("delta"), s.get("grade_high")
    return delta is not None and high is not None and compute_grade(delta) == "F" and high != "F"


def interval_rule_passes(stats: dict[str, Any], threshold: float) -> bool:
    """``--ci-rule interval``: an item fails only when its delta interval lies below 0 (its
    printed top, two decimals, is an F) or its pass rate's interval lies below the threshold
    (its printed top below it); a point F whose interval reaches 0 passes. Without an interval
    (too few trials) the point values decide, as under the default rule."""
    ci = stats.get("delta_ci")
    rate_ci = (stats.get("with") or {}).get("pass_rate_ci")
    if ci is None or rate_ci is None:
        delta, rate = stats.get("delta"), (stats.get("with") or {}).get("pass_rate")
        return delta is not None and compute_grade(delta) != "F" and (rate or 0.0) >= threshold - 1e-9
    harm_shown = compute_grade(ci[1]) == "F"
    rate_low_shown = round(round(rate_ci[1], 9), 2) < round(threshold, 9) - 1e-9
    return not harm_shown and not rate_low_shown


def item_stats(item: ItemResult, level: float = 0.95) -> dict[str, Any]:
    """``level``: the delta interval's (0.95; ``--adaptive``: the stopping rule's level, so
    the printed interval is the one the stop was decided on and holds after any stop)."""
    w, wo = arm_stats(item.with_arm), arm_stats(item.without_arm)
    ws, wos = scores(item.with_arm), scores(item.without_arm)
    out: dict[str, Any] = {
        "with": w,
        "without": wo,
        **EMPTY_ITEM_STATS,
        "pass_rate_ci_method": PASS_RATE_CI_METHOD,
        "delta_ci_method": QUASI_METHOD,
        "enough_data": False,
        "flaky_checks": flaky_checks(item.with_arm, item.without_arm),
        "non_discriminating_checks": non_discriminating_checks(item.without_arm),
    }
    if w["n"]:
        k = w["n"] if PASS_K is None else min(PASS_K, w["n"])
        c = sum(1 for t in item.with_arm.trials if t.status == "scored" and t.passed)
        cis = pass_k_interval(w["n"], c, k) or {}
        for key, est in (("pass_at_k", pass_at_k), ("pass_hat_k", pass_hat_k)):
            out[key] = {"k": k, "value": est(w["n"], c, k), "ci": cis.get(key)}
            if k == w["n"]:  # one set of k trials: the estimate is 0 or 1, an outcome, not a rate
                out[key].update(value=None, note=PASS_K_EQUALS_N)
    groups = by_case(item)
    out["cases"] = case_stats(item)
    out["verdict"], out["verdict_reasons"] = power_verdict(usable_cases(groups), None, None, len(groups))
    if not ws or not wos:
        empty = "with-skill" if not ws else "baseline"
        out["note"] = f"no statistics: the {empty} arm has no scored trial"
        return out
    per_case = [(g[1], g[2]) for g in groups]
    several = len(groups) > 1
    delta = mean_case_delta(per_case) if several else None
    delta = sum(ws) / len(ws) - sum(wos) / len(wos) if delta is None else delta
    out["delta"] = delta
    out["delta_basis"] = delta_basis(groups, w["mean"], wo["mean"])
    out["delta_ci_level"] = level
    n_usable = len(case_deltas(per_case))
    question = default_question(n_usable)
    out["question"] = question
    out["question_note"] = question_note(question)
    answers: dict[str, Any] = {}
    for q in (CASES, TASKS):
        ci = delta_interval(per_case, level, q) if q == CASES or n_usable >= 2 else None
        if ci is not None:
            ci = (min(ci[0], delta), max(ci[1], delta))  # it holds the delta; this only absorbs rounding
        answers[q] = {"delta_ci": list(ci) if ci else None, "method": cases_method(per_case) if q == CASES else BETTING_METHOD}
    if several:
        answers[CASES]["p_value"] = stratified_permutation_p(per_case)
        answers[CASES]["p_value_method"] = (
            f"one-sided stratified permutation test (labels shuffled within each case), {PERMUTATION_RESAMPLES} relabellings, seed {SEED}"
        )
    else:
        perm = permutation_p(ws, wos)
        if perm is not None:
            answers[CASES]["p_value"], answers[CASES]["p_value_method"] = perm
    if n_usable >= 2:
        answers[TASKS]["p_value"] = sign_flip_p(case_deltas(per_case))
        answers[TASKS]["p_value_method"] = SIGN_FLIP_METHOD
    out["questions"] = answers
    chosen = answers[question]
    out["delta_ci_method"] = f"{QUESTION_NAMES[question]}: {chosen['method']}"
    out["p_value"] = chosen.get("p_value")
    if chosen.get("p_value_method"):  # starts with the question's name, as delta_ci_method does (docs/statistics.md)
        out["p_value_method"] = f"{QUESTION_NAMES[question]}: {chosen['p_value_method']}"
    if chosen["delta_ci"] is not None:
        lo, hi = chosen["delta_ci"]
        out["delta_ci"] = [lo, hi]
        out["grade_low"] = compute_grade(lo)
        out["grade_high"] = compute_grade(hi)
    out["verdict"], out["verdict_reasons"] = power_verdict(n_usable, out["grade_low"], out["grade_high"], len(groups), question == TASKS)
    out["normalized_gain"] = hake_gain(w["mean"], wo["mean"])
    grade = item.grade or compute_grade(delta)
    out["grade_label"] = item_grade_label(grade, case_deltas(per_case), answers, level)
    if len(set(ws)) == 1 and set(ws) == set(wos):
        # Both arms scored the same in every trial: no spread, no difference to see.
        out["grade_label"] = f"{grade} (no difference: every trial of both arms scored {ws[0]:.2f})"
    fewest = min(len(ws), len(wos))
    out["enough_data"] = fewest >= MIN_SCORED_PER_ARM
    if not out["enough_data"]:
        out["note"] = f"too few trials to say anything: {fewest} scored in the smaller arm (need {MIN_SCORED_PER_ARM}); use --smoke (5) or --reliable (15)"
    return out
