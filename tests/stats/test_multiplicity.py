"""Holm and Benjamini–Hochberg (known values), and no-effect plugins in a seeded simulation."""

from __future__ import annotations

import numpy as np
import pytest

from agentsproof.model.results import compute_grade
from agentsproof.stats.cases import mean_case_delta, stratified_permutation_p
from agentsproof.stats.multiplicity import adjust, benjamini_hochberg, holm


def test_holm_known_values():
    assert holm([0.04, 0.001, 0.03, 0.5]) == pytest.approx([0.09, 0.004, 0.09, 0.5])
    assert holm([0.01, 0.02, 0.03, 0.04, 0.05]) == pytest.approx([0.05, 0.08, 0.09, 0.09, 0.09])
    assert holm([0.3, 0.6]) == pytest.approx([0.6, 0.6])
    assert holm([]) == []


def test_bh_known_values():
    assert benjamini_hochberg([0.04, 0.001, 0.03, 0.5]) == pytest.approx([0.04 * 4 / 3, 0.004, 0.04 * 4 / 3, 0.5])
    assert benjamini_hochberg([0.01, 0.02, 0.03, 0.04, 0.05]) == pytest.approx([0.05] * 5)
    assert benjamini_hochberg([0.9, 0.8]) == pytest.approx([0.9, 0.9])


def test_adjust_none_and_unknown():
    assert adjust([0.2, 0.01], "none") == [0.2, 0.01]
    with pytest.raises(ValueError):
        adjust([0.1], "bonferroni-ish")


def _no_effect_plugin(rng: np.random.Generator, items: int = 12, cases: int = 5, trials: int = 3) -> list[tuple[str, float]]:
    """(grade, p) per item of a plugin whose skills change nothing (both arms pass half the time)."""
    out = []
    for _ in range(items):
        cs = [(list((rng.random(trials) < 0.5).astype(float)), list((rng.random(trials) < 0.5).astype(float))) for _ in range(cases)]
        out.append((compute_grade(mean_case_delta(cs)), stratified_permutation_p(cs, resamples=2000, seed=int(rng.integers(1 << 30)))))
    return out


def test_no_effect_plugins_false_grade_rate_within_bound_after_correction():
    rng = np.random.default_rng(2024)
    plugins = 40
    raw_false = holm_any = bh_false = 0
    for _ in range(plugins):
        items = _no_effect_plugin(rng)
        grades = [g for g, _ in items]
        ps = [p for _, p in items]
        raw_false += sum(g in ("A", "B") for g in grades)
        h = holm(ps)
        holm_any += any(g in ("A", "B") and q < 0.05 for g, q in zip(grades, h))
        b = benjamini_hochberg(ps)
        bh_false += sum(g in ("A", "B") and q < 0.05 for g, q in zip(grades, b))
    # without correction, chance alone grades some no-effect skills A or B
    assert raw_false / (plugins * 12) > 0.05
    # Holm: the chance of any false A/B in a plugin stays near alpha (bound 0.05, slack for 40 plugins)
    assert holm_any / plugins <= 0.10
    # BH: false significant A/B per item stays far below the uncorrected rate
    assert bh_false / (plugins * 12) <= 0.02
