"""agentsproof.stats.quantiles is scipy.stats' ppf, number for number: the same values
(bit for bit, NaN and the sign of zero included), the same type for scalars, the same
shapes for arrays, the same ends of the support at 0 and 1 and NaN outside."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from scipy import stats

from agentsproof.stats.quantiles import beta_ppf, norm_ppf, t_ppf

RNG = np.random.default_rng(0)
QS = np.concatenate([[0.0, 1.0, 0.5, -0.1, 1.1, np.nan, 1e-300, 1 - 1e-16, 0.975, 0.025, 0.98, 0.99167], RNG.random(60)])
DFS = np.concatenate([[0.0, -1.0, 1.0, 1.5, 2.0, 3.0, 49.0, 1e6, np.inf, np.nan], RNG.random(20) * 40])
SHAPES = np.concatenate([[0.0, -1.0, 1e-9, 1.0, 2.0, 50.0, np.nan], RNG.random(12) * 60])


def _same(ours, theirs):
    assert type(ours) is type(theirs)
    a, b = np.asarray(ours), np.asarray(theirs)
    assert a.shape == b.shape and a.dtype == b.dtype
    assert np.array_equal(a, b, equal_nan=True)
    assert np.array_equal(np.signbit(a), np.signbit(b))


def test_norm_ppf_is_scipys():
    _same(norm_ppf(QS), stats.norm.ppf(QS))
    for q in QS:
        _same(norm_ppf(q), stats.norm.ppf(q))
    _same(norm_ppf(0.5), stats.norm.ppf(0.5))  # 0.0, not -0.0


@pytest.mark.parametrize("q", list(QS[:20]))
def test_t_ppf_is_scipys(q):
    _same(t_ppf(q, DFS), stats.t.ppf(q, DFS))
    for df in DFS[:12]:
        _same(t_ppf(q, df), stats.t.ppf(q, df))
    _same(t_ppf(QS[:, None], DFS[None, :]), stats.t.ppf(QS[:, None], DFS[None, :]))


@pytest.mark.parametrize("q", list(QS[:20]))
def test_beta_ppf_is_scipys(q):
    a, b = SHAPES[:, None], SHAPES[None, :]
    with np.errstate(all="ignore"):
        _same(beta_ppf(q, a, b), stats.beta.ppf(q, a, b))
        for x in SHAPES[:8]:
            for y in SHAPES[:8]:
                _same(beta_ppf(q, x, y), stats.beta.ppf(q, x, y))
        _same(beta_ppf(QS[:, None], SHAPES[None, :], 3.0), stats.beta.ppf(QS[:, None], SHAPES[None, :], 3.0))


def test_clopper_pearson_counts_as_scipy_gives_them():
    from agentsproof.stats.intervals import clopper_pearson_bounds

    passed = np.arange(0, 31, dtype=float)
    total = np.full_like(passed, 30.0)
    lo, hi = clopper_pearson_bounds(passed, total, 0.95)
    a = 1 - 0.95
    with np.errstate(all="ignore"):
        want_lo = np.where(passed > 0, stats.beta.ppf(a / 2, np.maximum(passed, 1e-9), total - passed + 1), 0.0)
        want_hi = np.where(passed < total, stats.beta.ppf(1 - a / 2, passed + 1, np.maximum(total - passed, 1e-9)), 1.0)
    assert np.array_equal(lo, want_lo) and np.array_equal(hi, want_hi)


def test_the_item_statistics_do_not_import_scipy_stats():
    # importing scipy.stats costs ~0.5 s of CPU per run; the quantiles come from scipy.special
    code = (
        "import sys\n"
        "from agentsproof.stats.intervals import clopper_pearson\n"
        "from agentsproof.stats.wald import interval_from_moments\n"
        "from agentsproof.stats.score import score_interval\n"
        "from agentsproof.stats import item_stats\n"
        "clopper_pearson(3, 10)\n"
        "assert 'scipy.stats' not in sys.modules, 'scipy.stats imported'\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
