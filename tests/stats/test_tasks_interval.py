"""Question (b)'s betting interval: valid for every bounded distribution, worst cases included."""

from __future__ import annotations

import numpy as np
import pytest

from agentsproof.stats.tasks import betting_interval

WORST = [  # (low value, high value, chance of the low one): two-point laws, mass at ±1, skewed
    (-1.0, 1.0, 0.5),
    (-1.0, 1.0, 0.45),
    (-1.0, 1.0, 0.1),
    (-1.0, 0.3, 0.1),
    (0.0, 0.8, 0.75),  # a quarter of the tasks gain +0.8, the rest nothing
    (-1.0, 0.0, 0.2),
]


@pytest.mark.parametrize("n", [3, 5, 10, 30])
@pytest.mark.parametrize("law", WORST)
def test_betting_interval_holds_the_mean_of_two_point_laws(n, law):
    a, b, p = law
    rng = np.random.default_rng([n, int(p * 100)])
    d = np.where(rng.random((600, n)) < p, a, b)
    lo, hi = betting_interval(d, 0.95)
    mean = p * a + (1 - p) * b
    assert np.mean((lo <= mean + 1e-9) & (mean <= hi + 1e-9)) >= 0.95


def test_betting_interval_holds_its_mean_is_clipped_and_nests_by_level():
    rng = np.random.default_rng(4)
    d = np.clip(rng.normal(0.2, 0.5, (300, 7)), -1, 1)
    prev = None
    for level in (0.8, 0.9, 0.95, 0.99):
        lo, hi = betting_interval(d, level)
        m = d.mean(-1)
        assert np.all((-1 <= lo) & (lo <= m) & (m <= hi) & (hi <= 1))
        if prev is not None:
            assert np.all((lo <= prev[0] + 1e-12) & (hi >= prev[1] - 1e-12))
        prev = (lo, hi)
