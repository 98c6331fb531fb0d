"""Question (a) on pass/fail scores: the stratified Miettinen–Nurminen score interval.

When every trial of an item scored 0 or 1, the effect *on these cases* is a difference of
pass chances in each case, ``δ_j = p_with,j − p_without,j``, and the item's delta is their
mean ``D = mean(x_w,j/n_w,j − x_wo,j/n_wo,j)`` (equal weights, the delta printed). The
interval is the set of candidate deltas ``Δ`` a **score test** does not reject:

    (D − Δ)² ≤ z² · Σ_j V_j(Δ) / c²,
    V_j(Δ) = [p̃_w,j(1 − p̃_w,j)/n_w,j + p̃_wo,j(1 − p̃_wo,j)/n_wo,j] · N_j/(N_j − 1),

where ``(p̃_w,j, p̃_wo,j)`` is case ``j``'s maximum-likelihood pair of pass chances with
``p̃_w,j − p̃_wo,j = Δ`` (Farrington–Manning's closed-form cubic root), ``N_j`` the case's
trial count and ``N/(N − 1)`` Miettinen and Nurminen's (1985) small-sample factor. Every
case is held at the same candidate ``Δ``: the score form of a stratified interval whose
weights are the delta's own (equal per case).

Why a score interval: the variance is evaluated at the candidate, not at the observed
rates, so an arm whose trials all agreed (0/6 against 6/6) still gets a real interval,
and it does not fall apart near 0 and 1 the way a Wald interval does. At a nominal 95 %
the score interval's exact coverage oscillates with the pass chances (as every interval
of a few counts does) and dips to 91–92 % with 5–10 trials, so ``z`` is that of a
level with a fifth less error (:data:`ALPHA_SHARE`: 0.96 for 95 %, 0.9867 for 98.3 %): measured exactly for one case over
pass chances 0.1–0.9 its coverage is then ≥ 93.5 % from 2 trials (tests/stats and
bench/coverage.py). The score interval's known weak spot, the corners with one chance at
0 and the other ≥ 0.95 (86–91 % there), is closed by keeping each restricted chance a
little away from 0 and 1 in the variance (:data:`EDGE_FLOOR`): exact one-case coverage is
then ≥ 94 % over every pair of pass chances 0–1 with 1–30 trials. The interval holds ``D`` (its score is 0
there) and lies in [−1, 1]; a higher level gives a wider interval around the same ``D``.

Everything is arithmetic on arrays (items along the leading axes, cases along the last),
found by bisection on each side of ``D``, so the bench runs this very function on
thousands of simulated items.
"""

from __future__ import annotations

import numpy as np

from agentsproof.stats.quantiles import norm_ppf

ALPHA_SHARE = 0.8
"""The interval's z is that of the level 1 − ALPHA_SHARE · (1 − level): 0.96 for 95 % (see
the module docstring)."""
BISECTIONS = 40
"""Bisection steps for each end (to about 1e-12)."""
EDGE_FLOOR = 0.25
"""Each restricted pass chance is kept at least EDGE_FLOOR/(n + 1) from 0 and 1 in the
variance (an arm of n trials): without it a candidate delta near ±1 gets a variance near 0
and is rejected by a hair (0/8 against 7/8 left out −0.98: 85 % coverage at pass chances 0
and 0.98). Exact one-case coverage over pass chances 0–1 (step 0.02), 1–30 trials: lowest
94.1 % with it, 85.1 % without; the width away from the edges moves by 0–3 %."""

SCORE_METHOD = (
    "stratified Miettinen–Nurminen score interval of the difference of pass chances (equal case weights, "
    f"z of the level 1 − {ALPHA_SHARE:g}·α: 96 % for 95 %); coverage in bench/coverage.py"
)


def restricted_rates(p_w: np.ndarray, n_w: np.ndarray, p_wo: np.ndarray, n_wo: np.ndarray, delta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The maximum-likelihood pass chances (with, without) of two binomial arms whose
    difference is held at ``delta`` (Farrington and Manning 1990, the root of a cubic);
    arrays broadcast."""
    theta = n_wo / n_w
    a = 1.0 + theta
    b = -(1.0 + theta + p_w + theta * p_wo + delta * (theta + 2.0))
    c = delta * delta + delta * (2.0 * p_w + theta + 1.0) + p_w + theta * p_wo
    d = -p_w * delta * (1.0 + delta)
    v = b**3 / (27.0 * a**3) - b * c / (6.0 * a * a) + d / (2.0 * a)
    u = np.where(v >= 0, 1.0, -1.0) * np.sqrt(np.maximum(0.0, b * b / (9.0 * a * a) - c / (3.0 * a)))
    safe = np.abs(u) > 1e-15
    ratio = np.where(safe, v / np.where(safe, u**3, 1.0), 0.0)
    w = (np.pi + np.arccos(np.clip(ratio, -1.0, 1.0))) / 3.0
    q_w = np.clip(2.0 * u * np.cos(w) - b / (3.0 * a), np.maximum(0.0, delta), np.minimum(1.0, 1.0 + delta))
    return q_w, q_w - delta


def _score_variance(p_w: np.ndarray, n_w: np.ndarray, p_wo: np.ndarray, n_wo: np.ndarray, delta: np.ndarray, edge_floor: float = EDGE_FLOOR) -> np.ndarray:
    """Σ_j V_j(Δ) / c² for candidates ``delta`` of shape (...,) (cases along the last axis of the rest)."""
    dl = delta[..., None]
    q_w, q_wo = restricted_rates(p_w, n_w, p_wo, n_wo, dl)
    e_w, e_wo = edge_floor / (n_w + 1.0), edge_floor / (n_wo + 1.0)  # away from 0 and 1 (EDGE_FLOOR)
    q_w, q_wo = np.clip(q_w, e_w, 1.0 - e_w), np.clip(q_wo, e_wo, 1.0 - e_wo)
    total = n_w + n_wo
    factor = np.where(total > 1, total / np.maximum(total - 1.0, 1.0), 2.0)
    v = (q_w * (1.0 - q_w) / n_w + q_wo * (1.0 - q_wo) / n_wo) * factor
    c = p_w.shape[-1]
    out: np.ndarray = v.sum(axis=-1) / (c * c)
    return out


def score_interval(
    passes_w: np.ndarray,
    n_w: np.ndarray,
    passes_wo: np.ndarray,
    n_wo: np.ndarray,
    level: float = 0.95,
    edge_floor: float = EDGE_FLOOR,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(low, high, delta) of the mean per-case difference of pass chances; every argument
    has shape (..., cases), ``n`` ≥ 1. See the module docstring (``edge_floor`` 0: the
    published Miettinen–Nurminen interval, without :data:`EDGE_FLOOR`)."""
    n_w = np.asarray(n_w, float)
    n_wo = np.asarray(n_wo, float)
    p_w = np.asarray(passes_w, float) / n_w
    p_wo = np.asarray(passes_wo, float) / n_wo
    delta = (p_w - p_wo).mean(axis=-1)
    z2 = float(norm_ppf(1.0 - ALPHA_SHARE * (1.0 - level) / 2.0)) ** 2

    def accepted(cand: np.ndarray) -> np.ndarray:
        ok: np.ndarray = (delta - cand) ** 2 <= z2 * _score_variance(p_w, n_w, p_wo, n_wo, cand, edge_floor) + 1e-15
        return ok

    # both ends bisected at once (a leading axis of 2: low, high), element by element as apart
    edge = np.array([-1.0, 1.0]).reshape((2,) + (1,) * delta.ndim)
    far = np.broadcast_to(edge, (2, *delta.shape)).copy()
    near = np.broadcast_to(delta, far.shape).copy()  # accepted (score 0); ``far`` may be too
    at_edge = accepted(far)
    for _ in range(BISECTIONS):
        mid = (far + near) / 2.0
        ok = accepted(mid)
        near = np.where(ok, mid, near)
        far = np.where(ok, far, mid)
    ends = np.where(at_edge, edge, near)
    lo = np.clip(np.minimum(ends[0], delta), -1.0, 1.0)
    hi = np.clip(np.maximum(ends[1], delta), -1.0, 1.0)
    return lo, hi, delta
