"""The sampled permutation test's fast path gives the p-values of the plain computation it
replaced (argpartition of every row of float32 keys, the chosen scores summed), bit for bit."""

from __future__ import annotations

import math

import numpy as np
import pytest

from agentsproof.stats import intervals
from agentsproof.stats.intervals import BLOCK, EXACT_PERMUTATION_LIMIT, PERMUTATION_RESAMPLES, SEED, permutation_p


def plain_p(w: list[float], wo: list[float]) -> float:
    """The computation as it was before the fast path (agentsproof 2026-12-05), kept as the reference."""
    n1, n2 = len(w), len(wo)
    pooled = np.asarray(list(w) + list(wo), dtype=float)
    observed = pooled[:n1].sum()
    tol = 1e-9 * max(1.0, abs(observed))
    rng = np.random.default_rng(SEED)
    b = 0
    for start in range(0, PERMUTATION_RESAMPLES, BLOCK):
        keys = rng.random((min(BLOCK, PERMUTATION_RESAMPLES - start), n1 + n2), dtype=np.float32)
        perm = np.argpartition(keys, n1 - 1, axis=1)[:, :n1]
        b += int(np.sum(pooled[perm].sum(axis=1) >= observed - tol))
    return (b + 1) / (PERMUTATION_RESAMPLES + 1)


def _scores(rng: np.random.Generator, kind: int, n: int, chance: float) -> list[float]:
    if kind == 0:  # pass/fail
        return [float(x) for x in rng.random(n) < chance]
    if kind == 1:  # a third of the checks each
        return [float(x) for x in rng.integers(0, 4, n) / 3]
    if kind == 2:  # tenths: sums that are not exact in binary
        return [float(x) for x in rng.integers(0, 11, n) / 10]
    if kind == 3:  # continuous (more distinct scores than the fast path takes)
        return [float(x) for x in rng.random(n)]
    return [1 / 3] * n  # every trial the same (a score not exact in binary)


@pytest.mark.parametrize("kind", range(5))
def test_the_fast_path_gives_the_plain_p_values(kind):
    """Random arms of each kind of score, above the exact limit: the same p as the plain way."""
    rng = np.random.default_rng(100 + kind)
    checked = 0
    while checked < 6:
        n1, n2 = int(rng.integers(1, 90)), int(rng.integers(1, 90))
        if math.comb(n1 + n2, n1) <= EXACT_PERMUTATION_LIMIT:
            continue
        w, wo = _scores(rng, kind, n1, 0.7), _scores(rng, kind, n2, 0.45)
        got = permutation_p(w, wo)
        assert got is not None and got[0] == plain_p(w, wo), (kind, n1, n2)
        checked += 1


def test_an_odd_number_of_keys_a_block_and_the_large_arms():
    """Arms of 500 (as bench/verify.py's), and a block with an odd count of keys (read through ``rng.random``)."""
    rng = np.random.default_rng(7)
    w, wo = _scores(rng, 0, 500, 0.6), _scores(rng, 0, 500, 0.5)
    assert permutation_p(w, wo)[0] == plain_p(w, wo)
    w, wo = _scores(rng, 1, 13, 0.6), _scores(rng, 1, 20, 0.5)  # 33 keys a row; 1000 rows: even
    assert permutation_p(w, wo)[0] == plain_p(w, wo)
    w, wo = _scores(rng, 0, 2100, 0.52), _scores(rng, 0, 2101, 0.5)  # over 4,096 keys a row: partitioned on all 24 bits
    assert permutation_p(w, wo)[0] == plain_p(w, wo)


def test_integer_keys_are_the_float32_keys():
    """The bit generator read directly gives the keys ``rng.random(dtype=float32)`` gives (×2²⁴)."""
    a = np.random.default_rng(SEED).random((BLOCK, 36), dtype=np.float32)
    raw = intervals._keys(np.random.default_rng(SEED), BLOCK, 36, True)
    assert raw.dtype == np.uint32
    assert np.array_equal(intervals._as_float32(raw), a)
    via_floats = intervals._keys(np.random.default_rng(SEED), BLOCK, 36, False)
    assert np.array_equal(raw, via_floats)


def test_the_draws_hold_the_keys_in_their_top_24_bits():
    """``_draws >> 8`` are ``_keys``' keys, read raw or through float32 (an odd count)."""
    for raw, n in ((True, 36), (False, 35)):
        draws = intervals._draws(np.random.default_rng(SEED), BLOCK, n, raw)
        assert draws.dtype == np.uint32 and draws.shape == (BLOCK, n)
        assert np.array_equal(draws >> np.uint32(8), intervals._keys(np.random.default_rng(SEED), BLOCK, n, raw))


def test_rows_with_tied_keys_are_counted_the_plain_way(monkeypatch):
    """Keys with many ties at the n1-th place: those rows go the plain way, and the count
    equals the plain count over the same keys."""
    real = intervals._draws

    def coarse(rng, rows, n, raw):
        return real(rng, rows, n, raw) >> np.uint32(26) << np.uint32(26)  # 64 distinct keys: ties everywhere

    monkeypatch.setattr(intervals, "_draws", coarse)
    rng = np.random.default_rng(11)
    for kind in (0, 1, 2):
        w, wo = _scores(rng, kind, 40, 0.7), _scores(rng, kind, 35, 0.4)
        pooled = np.asarray(w + wo)
        bound = pooled[:40].sum() - 1e-9 * max(1.0, pooled[:40].sum())
        gen = np.random.default_rng(SEED)
        expected = sum(int(np.sum(intervals._plain_rows(coarse(gen, BLOCK, 75, True) >> np.uint32(8), pooled, 40) >= bound)) for _ in range(PERMUTATION_RESAMPLES // BLOCK))
        assert intervals._sampled_at_least(pooled, 40, bound) == expected


def plain_stratified_p(cases, resamples: int = PERMUTATION_RESAMPLES, seed: int = SEED) -> float | None:
    """``stratified_permutation_p`` as it was before (every row's keys sorted), kept as the reference."""
    usable = [(np.asarray(w, float), np.asarray(wo, float)) for w, wo in cases if len(w) and len(wo)]
    if not usable:
        return None
    rng = np.random.default_rng(seed)
    observed = np.mean([w.mean() - wo.mean() for w, wo in usable])
    stat = np.zeros(resamples)
    for w, wo in usable:
        pooled = np.concatenate([w, wo])
        order = np.argsort(rng.random((resamples, len(pooled))), axis=1)
        perm = pooled[order]
        stat += perm[:, : len(w)].mean(axis=1) - perm[:, len(w) :].mean(axis=1)
    stat /= len(usable)
    return (int(np.sum(stat >= observed - 1e-9 * max(1.0, abs(observed)))) + 1) / (resamples + 1)


@pytest.mark.parametrize("kind", range(5))
def test_the_stratified_test_gives_the_sorted_p_values(kind):
    """Several cases each, every kind of score, arms of 1 to 60: the same p as sorting every row."""
    from agentsproof.stats.cases import stratified_permutation_p

    rng = np.random.default_rng(200 + kind)
    for _ in range(4):
        cases = [(_scores(rng, kind, int(rng.integers(1, 60)), 0.65), _scores(rng, kind, int(rng.integers(1, 60)), 0.45)) for _ in range(int(rng.integers(2, 7)))]
        cases.append(([], [0.5]))  # a case with an empty arm is left out
        assert stratified_permutation_p(cases, resamples=3000) == plain_stratified_p(cases, resamples=3000), kind
    cases = [([1.0, 0.0], [0.0]), ([1.0], [0.0, 0.0, 1.0])]  # tiny arms: many relabellings equal the observed
    assert stratified_permutation_p(cases) == plain_stratified_p(cases)


def test_rows_done_the_sorted_way_are_the_sorted_ways_bit_for_bit():
    """The rows the stratified test redoes (tied or near the bound) get exactly the sorted computation's statistic."""
    from agentsproof.stats.cases import _sorted_stats

    rng = np.random.default_rng(9)
    usable = [(rng.random(7), rng.random(5)), (rng.random(3), rng.random(11))]
    gen = np.random.default_rng(SEED)
    full = np.zeros(500)
    for w, wo in usable:
        pooled = np.concatenate([w, wo])
        perm = pooled[np.argsort(gen.random((500, len(pooled))), axis=1)]
        full += perm[:, : len(w)].mean(axis=1) - perm[:, len(w) :].mean(axis=1)
    full /= len(usable)
    rows = np.array([0, 17, 123, 499])
    assert np.array_equal(_sorted_stats(usable, 500, SEED, rows), full[rows])
