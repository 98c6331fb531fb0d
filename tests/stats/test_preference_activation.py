"""Exact intervals for pairwise preference and activation precision/recall: their coverage,
computed over every outcome (no simulation noise), never falls below 95 %."""

from __future__ import annotations

import math

import pytest

from agentsproof.stats.activation import proportion
from agentsproof.stats.preference import effective_count, preference_interval


def _coverage(n: int, p: float, interval) -> float:
    """Exact coverage of ``interval(k, n)`` for a true rate ``p`` over k ~ Binomial(n, p)."""
    total = 0.0
    for k in range(n + 1):
        lo, hi = interval(k, n)
        if lo - 1e-12 <= p <= hi + 1e-12:
            total += math.comb(n, k) * p**k * (1 - p) ** (n - k)
    return total


@pytest.mark.parametrize("n", [5, 10, 30])
@pytest.mark.parametrize("p", [0.5, 0.8, 0.95, 0.99])
def test_preference_interval_holds_its_rate(n, p):
    """Wins and losses, one pair each: 5 wins of 5 is not [1.00, 1.00] (the bootstrap held a
    true 0.95 in 22.5 % of 5-pair runs)."""
    cov = _coverage(n, p, lambda k, n: preference_interval([1.0] * k + [0.0] * (n - k)))
    assert cov >= 0.95
    lo, hi = preference_interval([1.0] * 5)
    assert hi == 1.0 and lo == pytest.approx(0.025**0.2)


def test_preference_ties_count_half_and_clusters_shrink_the_count():
    assert preference_interval([0.5] * 4) == pytest.approx(preference_interval([1.0, 1.0, 0.0, 0.0]))
    # two cases that disagree completely (one always won, one always lost): the 20 pairs are
    # worth about two units, not twenty
    values, cases = [1.0] * 10 + [0.0] * 10, ["a"] * 10 + ["b"] * 10
    assert effective_count(values, cases) == pytest.approx(2.0)
    wide, narrow = preference_interval(values, cases), preference_interval(values)
    assert wide[0] < narrow[0] and wide[1] > narrow[1]
    # cases that agree within as much as across: nothing to shrink
    mixed = [1.0, 0.0] * 10
    assert effective_count(mixed, ["a", "a", "b", "b"] * 5) == 20


@pytest.mark.parametrize("n", [3, 10, 30])
@pytest.mark.parametrize("p", [0.8, 0.9, 0.95, 0.99])
def test_activation_recall_interval_is_exact_near_one(n, p):
    """Wilson's interval fell to 83–93 % with 3–30 prompts near a rate of 1."""
    assert _coverage(n, p, lambda k, n: proportion(k, n, n)) >= 0.95
