"""The statistics kept in agentsproof/stats agree with scipy.stats where scipy has them
(the reasons each is still ours are in its module: speed, one-trial arms, recorded numbers)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from agentsproof.stats.agreement import spearman
from agentsproof.stats.intervals import EXACT_PERMUTATION_LIMIT, PERMUTATION_RESAMPLES, permutation_p

SCORES = [0.0, 0.25, 0.5, 0.75, 1.0]


def _sum_first(x, y, axis):
    return np.sum(x, axis=axis)


def _scipy_p(w, wo, n_resamples):
    res = stats.permutation_test((np.asarray(w, float), np.asarray(wo, float)), _sum_first, permutation_type="independent",
                                 alternative="greater", n_resamples=n_resamples, vectorized=True, rng=np.random.default_rng(1))
    return float(res.pvalue)


@pytest.mark.parametrize("seed", range(40))
def test_the_exact_permutation_p_is_scipys(seed):
    rng = np.random.default_rng(seed)
    n1, n2 = int(rng.integers(2, 8)), int(rng.integers(2, 8))
    pick = [lambda n: rng.choice(SCORES, n), lambda n: rng.choice([0.0, 1.0], n), lambda n: rng.random(n)][seed % 3]
    w, wo = pick(n1), pick(n2)
    p, method = permutation_p(list(w), list(wo))
    assert method.startswith("one-sided exact")
    assert p == _scipy_p(w, wo, EXACT_PERMUTATION_LIMIT)


def test_the_sampled_permutation_p_is_within_sampling_error_of_scipys():
    rng = np.random.default_rng(7)
    w, wo = rng.choice(SCORES, 12), rng.choice(SCORES, 12) * 0.8  # C(24, 12) relabellings: sampled
    p, method = permutation_p(list(w), list(wo))
    assert "random relabellings" in method
    theirs = _scipy_p(w, wo, PERMUTATION_RESAMPLES)
    assert 0.0 < p < 1.0 and abs(p - theirs) < 0.03  # two Monte Carlo estimates, sd about 0.007 at most


@pytest.mark.parametrize("seed", range(60))
def test_spearman_is_scipys_rho(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 30))
    pick = [lambda: rng.choice(SCORES, n), lambda: rng.integers(1, 6, n).astype(float), lambda: rng.random(n)][seed % 3]
    a, b = pick(), pick()
    got = spearman(list(a), list(b))
    assert got is not None
    if np.ptp(a) == 0 or np.ptp(b) == 0:
        assert got["value"] is None
    else:
        assert got["value"] == pytest.approx(float(stats.spearmanr(a, b).statistic), abs=1e-12)
