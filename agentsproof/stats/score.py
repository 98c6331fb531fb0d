"""Question (a) on pass/fail scores: the stratified Miettinen–Nurminen score interval.

When every trial of an item scored 0 or 1, the effect *on these cases* is a difference of
pass chances in each case, ``δ_j = p_with,j − p_without,j``, and the item's delta is their
mean ``D = mean(x_w,j/n_w,j − x_wo,j/n_wo,j)`` (equal weights, the delta printed). The
interval is the set of candidate deltas ``Δ`` a **score test** does not reject:

    (D − Δ)² ≤ z² · Σ_j V_j(Δ) / c²,
    V_j(Δ) = [p̃_w,j(1 − p̃_w,j)/n_w,j + p̃_wo,j(1 − p̃_wo,j)/n_wo,j] · N_j/(N_j − 1),

where ``(p̃_w,j, p̃_wo,j)`` is case ``j``'s maximum-likelihood pair of pass chances with
``p̃_w,j − p̃_wo,j = Δ_j`` (Farrington–Manning's closed-form cubic root), ``N_j`` the case's
trial count and ``N/(N − 1)`` Miettinen and Nurminen's (1985) small-sample factor; the
weights are the delta's own (equal per case).

Where each case is held: ``Δ_j = Δ + λ·(d̂_j − D)`` (clipped to [−1, 1]), with ``d̂_j`` the
case's own delta and ``λ`` (:func:`case_share`) the share of the spread of the case deltas
that is more than trial noise — James and Stein's positive-part factor, 1 − (mean sampling
variance of a case delta) / (variance of the case deltas), in [0, 1]. So every case keeps
its own estimated delta, shrunk toward the mean, and all move together with the candidate.
When the cases agree up to noise (λ = 0) every case is held at the one common ``Δ``: the
textbook stratified Miettinen–Nurminen interval. That common ``Δ`` overstates the variance
when the cases' deltas truly differ (a skill that gains 0.8 on a quarter of the tasks and
nothing on the rest: a case with chances 0.9 and 0.1 is scored at chances whose difference
is the mean, near 0.6 and 0.4), which made such items 1.36–1.58× the known-variance
interval at 6–30 trials; shrunk, 1.10–1.54× (1.10–1.30× at 15–30), with exact coverage of
two cases (every chance 0, 0.05, …, 1; 1–15 trials) and three (0, 0.1, …, 1; 1–5 trials)
≥ 94.6 %. One case, or cases with equal deltas, have offsets 0: the interval is unchanged
there. Each case at its own shifted delta (λ = 1) measured as narrow but fell to 92.9 % on
10 cases × 3 trials whose deltas differ only by noise; the cases' joint restricted maximum
likelihood under the mean constraint (a Lagrange tilt per arm) to 90.6 %
(bench/score_shift.py, docs/statistics.md "Round 4").

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

**Graded or continuous scores** (question (a), :func:`agentsproof.stats.wald.dispersion`):
the same interval on the scores' sums, its variance times ``r`` — the item's trial
variance as a share of a pass/fail score's with the same mean (a score in [0, 1] with mean
``m`` has variance at most ``m(1 − m)``: ``r`` ≤ 1, 1 for pass/fail). A quasi-likelihood
score interval: the variance still follows the candidate to the edges, where an arm whose
scores sat near 0 no longer gets the spread of its observed mean alone.

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
    "each case held at its own delta shrunk toward the mean by the James–Stein share of their spread, "
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


def case_share(passes_w: np.ndarray, n_w: np.ndarray, passes_wo: np.ndarray, n_wo: np.ndarray, dispersion: np.ndarray | float = 1.0) -> np.ndarray:
    """Per item (shape (...)), the share λ ∈ [0, 1] of the spread of its case deltas that is
    not trial noise: 1 − mean_j σ̂_j² / s²(d̂_j), σ̂_j² the sampling variance of case j's
    delta (each arm's rate smoothed by half a pass and half a fail, so an arm of equal trials
    still counts some noise; times ``dispersion``, the item's r, for graded scores), s² the
    variance of the case deltas; 0 with one case or equal deltas."""
    n_w, n_wo = np.asarray(n_w, float), np.asarray(n_wo, float)
    x_w, x_wo = np.asarray(passes_w, float), np.asarray(passes_wo, float)
    d = x_w / n_w - x_wo / n_wo
    if d.shape[-1] < 2:
        return np.zeros(d.shape[:-1])
    s_w, s_wo = (x_w + 0.5) / (n_w + 1.0), (x_wo + 0.5) / (n_wo + 1.0)
    noise = (s_w * (1.0 - s_w) / n_w + s_wo * (1.0 - s_wo) / n_wo).mean(axis=-1) * dispersion
    spread = d.var(axis=-1, ddof=1)
    share: np.ndarray = np.clip(1.0 - noise / np.maximum(spread, 1e-12), 0.0, 1.0)
    return share


def _score_variance(
    p_w: np.ndarray, n_w: np.ndarray, p_wo: np.ndarray, n_wo: np.ndarray, delta: np.ndarray, edge_floor: float = EDGE_FLOOR, offsets: np.ndarray | float = 0.0
) -> np.ndarray:
    """Σ_j V_j(Δ) / c² for candidates ``delta`` of shape (...,) (cases along the last axis of the rest);
    case j is held at ``Δ + offsets_j`` (clipped to [−1, 1])."""
    dl = np.clip(delta[..., None] + offsets, -1.0, 1.0)
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
    shift: float | np.ndarray | None = None,
    dispersion: float | np.ndarray = 1.0,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(low, high, delta) of the mean per-case difference of pass chances; every argument
    has shape (..., cases), ``n`` ≥ 1. See the module docstring (``edge_floor`` 0: the
    published Miettinen–Nurminen interval, without :data:`EDGE_FLOOR`; ``shift`` the λ of
    every item, None for :func:`case_share`'s, 0 for every case at the common Δ;
    ``dispersion`` the r of every item, 1 for pass/fail: graded scores pass their sums)."""
    n_w = np.asarray(n_w, float)
    n_wo = np.asarray(n_wo, float)
    p_w = np.asarray(passes_w, float) / n_w
    p_wo = np.asarray(passes_wo, float) / n_wo
    delta = (p_w - p_wo).mean(axis=-1)
    r = np.broadcast_to(np.asarray(dispersion, float), delta.shape)
    lam = case_share(passes_w, n_w, passes_wo, n_wo, r) if shift is None else np.broadcast_to(np.asarray(shift, float), delta.shape)
    offsets = lam[..., None] * ((p_w - p_wo) - delta[..., None])
    z2 = float(norm_ppf(1.0 - ALPHA_SHARE * (1.0 - level) / 2.0)) ** 2

    def accepted(cand: np.ndarray) -> np.ndarray:
        ok: np.ndarray = (delta - cand) ** 2 <= z2 * r * _score_variance(p_w, n_w, p_wo, n_wo, cand, edge_floor, offsets) + 1e-15
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
