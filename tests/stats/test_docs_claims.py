"""What the docs claim about the statistics is what the code computes: each figure is read
from the page it is printed on (README, docs/statistics.md, docs/eval-generate.md) and
checked against the code, so a page and the code cannot drift apart (issues 46 and 50)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from helpers import item

from agentsproof.model.results import compute_grade
from agentsproof.stats import item_stats
from agentsproof.stats.tasks import all_agree_interval, betting_interval, cases_to_settle, clear_cut_cases
from agentsproof.stats.tasks import clear_cut_settled_share as _share

ROOT = Path(__file__).resolve().parents[2]
WORDS = {"five": 5, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15}


def page(name: str) -> str:
    return re.sub(r"\s+", " ", (ROOT / name).read_text(encoding="utf-8")).replace("−", "-")


def number(word: str) -> int:
    return int(word) if word.isdigit() else WORDS[word.lower()]


def interval(text: str) -> tuple[float, float]:
    lo, hi = re.findall(r"[+-]?\d+\.\d+", text)
    return float(lo), float(hi)


def clear_cut_settled_share(cases: int, trials: int = 3) -> float:
    """Share of seeded runs of a clear-cut skill (pass chance 0.95 against 0.05) whose (b)
    interval settles its A, ``cases`` cases of ``trials`` trials per arm each."""
    return _share(cases, trials)


def clear_cut_cases_needed(share: float = 0.9) -> int:
    """The fewest cases that settle a clear-cut skill's A in ``share`` of runs, at 3 trials per case."""
    n = clear_cut_cases(3, share)
    assert n is not None
    return n


def test_clear_cut_simulation_is_what_it_says():
    """The yardstick itself, against an independent count: 12 cases settle in about 95 % of runs, 11 in about 82 %."""
    rng = np.random.default_rng(23)
    w = (rng.random((400, 12, 3)) < 0.95).mean(axis=-1)
    wo = (rng.random((400, 12, 3)) < 0.05).mean(axis=-1)
    lo, hi = betting_interval(w - wo)
    settled = np.mean([compute_grade(float(a)) == compute_grade(float(b)) == "A" for a, b in zip(lo, hi, strict=True)])
    assert clear_cut_settled_share(12) == pytest.approx(float(settled))
    assert clear_cut_settled_share(11) < 0.9 <= clear_cut_settled_share(12)


def test_statistics_md_five_ten_and_all_zero_cases():
    text = page("docs/statistics.md")
    m = re.search(r"five cases that all gain \+1 give about (\[[^\]]+\]), five that all gain 0 about (\[[^\]]+\]); ten \+1 cases give about (\[[^\]]+\])", text)
    assert m, "docs/statistics.md no longer states the five/ten-case intervals"
    for claim, (c, d) in zip(m.groups(), ((5, 1.0), (5, 0.0), (10, 1.0)), strict=True):
        assert interval(claim) == pytest.approx(all_agree_interval(c, d), abs=0.005), (claim, c, d)


def test_statistics_md_how_many_all_plus_one_cases_settle_an_a():
    text = page("docs/statistics.md")
    m = re.search(r"; (\w+) settle an A \(about (\[[^\]]+\])\)", text)
    assert m, "docs/statistics.md no longer says how many +1 cases settle an A"
    n = number(m.group(1))
    assert cases_to_settle([1.0]) == n  # the fewest, and they do settle an A
    lo, hi = all_agree_interval(n, 1.0)
    assert compute_grade(lo) == compute_grade(hi) == "A"
    assert compute_grade(all_agree_interval(n - 1, 1.0)[0]) != "A"
    assert interval(m.group(2)) == pytest.approx((lo, hi), abs=0.005)


def test_statistics_md_how_many_cases_a_clear_cut_skill_needs():
    text = page("docs/statistics.md")
    m = re.search(r"at 3 trials per case needs (\w+) cases to settle its A in (\d+) % of runs", text)
    assert m, "docs/statistics.md no longer says how many cases a clear-cut skill needs"
    n = number(m.group(1))
    assert n == clear_cut_cases_needed()
    assert clear_cut_settled_share(n) * 100 == pytest.approx(int(m.group(2)), abs=3)


def test_readme_how_many_cases_settle_a_grade_for_tasks_like_these():
    text = page("README.md")
    m = re.search(r"(\w+) cases that all gain \+1 settle an A for tasks like these, a clear-cut skill at 3 trials per case needs about (\w+)", text)
    assert m, "README no longer says how many cases settle a grade for tasks like these"
    assert number(m.group(1)) == cases_to_settle([1.0])
    assert number(m.group(2)) == clear_cut_cases_needed()


def test_readme_sample_label_says_how_many_more_cases():
    text = page("README.md")
    m = re.search(r"PASS A on this case \(95 % interval within A\); for tasks like these not settled yet: about (\d+) more cases like these would settle it", text)
    assert m, "the README's sample row lost its two-question label"
    assert int(m.group(1)) == cases_to_settle([1.0]) - 1
    # the very label the code prints for that sample (one case, every trial 1.00 against 0.00)
    s = item([1.0] * 5, [0.0] * 5).stats  # the README's eval: trials 5, every trial 1.00 against 0.00
    assert s["grade_label"] == m.group(0).removeprefix("PASS ")


def test_eval_generate_md_cases_for_tasks_like_these():
    text = page("docs/eval-generate.md")
    m = re.search(r"for tasks like these\*\* it takes about (\d+) cases at 3 trials each", text)
    assert m, "docs/eval-generate.md no longer says how many cases a clear-cut skill needs"
    assert int(m.group(1)) == clear_cut_cases_needed()
    from agentsproof.generator.core import DEFAULT_TRIALS

    assert DEFAULT_TRIALS == 3


def test_question_note_quotes_the_computed_five_case_interval():
    """docs/statistics.md: five all-+1 cases give about [−0.07, +1.00]; the report's note says the same."""
    it = item([1.0] * 15, [0.0] * 15)
    for k, t in enumerate(it.with_arm.trials + it.without_arm.trials):
        t.case = f"c{k % 5}"
    s = item_stats(it)
    low = all_agree_interval(5, 1.0)[0]
    assert f"about [{low:+.2f}, +1]" in s["question_note"] and "-0.07" in s["question_note"]
    assert "-0.2," not in s["question_note"]


@pytest.mark.parametrize("cases", [1, 3, 5, 6])
def test_p_value_method_starts_with_the_questions_name(cases):
    """docs/statistics.md: `delta_ci_method` and `p_value_method` start with its name."""
    it = item([1.0, 1.0, 0.0] * 6, [0.0, 0.0, 1.0] * 6)
    for k, t in enumerate(it.with_arm.trials + it.without_arm.trials):
        t.case = f"c{k % cases}"
    s = item_stats(it)
    name = "on tasks like these (b)" if s["question"] == "tasks" else "on these cases (a)"
    assert s["question"] == ("tasks" if cases >= 5 else "cases")
    assert s["delta_ci_method"].startswith(name + ": ")
    assert s["p_value_method"].startswith(name + ": ")


def _cased(per_case: list[tuple[list[float], list[float]]]):
    """An item whose trial i of each arm runs case i mod len(per_case)."""
    c = len(per_case)
    n = max(len(w) for w, _ in per_case) * c
    ws, wos, names = [], [], []
    for i in range(n):
        w, wo = per_case[i % c]
        k = i // c
        ws.append(w[k] if k < len(w) else None)
        wos.append(wo[k] if k < len(wo) else None)
        names.append(f"c{i % c}")
    it = item([x if x is not None else 0.0 for x in ws], [x if x is not None else 0.0 for x in wos])
    for arm, vals in ((it.with_arm, ws), (it.without_arm, wos)):
        for t, v, name in zip(arm.trials, vals, names, strict=True):
            t.case = name
            if v is None:
                t.status, t.score, t.passed, t.error = "errored", None, None, "provider: boom"
    return it


def test_settled_counts_usable_cases_like_the_question():
    """A 5-case item with one case unscored answers question (a) (4 usable cases) and is
    therefore underpowered — exactly as the same four cases alone."""
    good = [([1.0] * 6, [0.0] * 6)] * 4
    five = _cased(good + [([None] * 6, [0.0] * 6)])  # type: ignore[list-item]
    four = _cased(good)
    s5, s4 = item_stats(five), item_stats(four)
    assert s5["question"] == s4["question"] == "cases"
    assert s5["delta_ci"] == pytest.approx(s4["delta_ci"])
    assert s4["verdict"] == "underpowered"
    assert s5["verdict"] == "underpowered"
    assert any("4 usable cases of 5" in r for r in s5["verdict_reasons"])


def test_more_cases_never_read_less_certain():
    """The issue's perfect skill: one case and five cases, every trial 1.00 with the skill
    and 0.00 without: both read A within A on their cases; five are closer to settling
    tasks like these, and enough such cases settle it."""
    one = item([1.0] * 15, [0.0] * 15).stats
    five = _cased([([1.0] * 3, [0.0] * 3)] * 5)
    s5 = item_stats(five)
    assert one["grade_label"].startswith("A on this case (95 % interval within A); for tasks like these not settled yet: about 8 more cases")
    assert s5["grade_label"] == (
        "A on these 5 cases (95 % interval within A); for tasks like these not settled yet: about 4 more cases like these would settle it"
    )
    nine = item_stats(_cased([([1.0] * 3, [0.0] * 3)] * 9))
    assert nine["grade_label"] == "A on these 9 cases (95 % interval within A); for tasks like these settled too: A"
    assert nine["verdict"] == "settled"
