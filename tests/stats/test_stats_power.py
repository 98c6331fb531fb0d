"""runs-needed: the exact power of compare's Fisher test, and the known run counts."""

from __future__ import annotations


import pytest
from scipy.stats import fisher_exact

from agentsproof.stats.power import fisher_table, power, runs_needed
from conftest import run_cli
from helpers import fisher_two_sided


@pytest.mark.parametrize("before,after,runs", [(1.0, 0.8, 39), (1.0, 0.67, 19), (1.0, 0.5, 12)])
def test_known_runs_needed(before, after, runs):
    res = runs_needed(before, after)
    assert res.runs == runs
    assert res.achieved >= 0.8
    assert power(before, after, runs - 1) < 0.8


def test_ninety_to_eighty_not_reached_within_100():
    fisher_table.cache_clear()
    res = runs_needed(0.9, 0.8)  # every size up to 100 searched (how fast: bench/timings.py power-search)
    assert res.runs is None and res.achieved < 0.8


def test_power_at_ten_runs():
    # ten runs catch 100 % -> 50 % about 62 % of the time, 100 % -> 80 % only about 3 %
    assert power(1.0, 0.5, 10) == pytest.approx(0.623, abs=1e-3)
    assert power(1.0, 0.8, 10) == pytest.approx(0.0328, abs=1e-3)


@pytest.mark.parametrize("n", [1, 3, 7, 12, 25])
def test_fisher_table_matches_scipy_and_independent_computation(n):
    table = fisher_table(n)
    for a in range(n + 1):
        for b in range(n + 1):
            assert table[a, b] == pytest.approx(fisher_exact([[a, n - a], [b, n - b]]).pvalue, abs=1e-10)
            assert table[a, b] == pytest.approx(fisher_two_sided(a, n, b, n), abs=1e-10)


def test_runs_needed_cli(tmp_path):
    code, out, err = run_cli(["runs-needed", "--before", "1.0", "--after", "0.8"])
    assert code == 0, err
    assert "39 runs per side" in out
    code, out, _ = run_cli(["runs-needed", "--before", "0.9", "--after", "0.8", "--power", "0.8", "--alpha", "0.05"])
    assert code == 0 and "not reached within 100 runs per side" in out
    code, out, err = run_cli(["runs-needed", "--before", "0.5", "--after", "0.5"])
    assert code == 30 and "no change to detect" in err
    code, _, err = run_cli(["runs-needed", "--before", "1.5", "--after", "0.5"])
    assert code == 30 and err.startswith("error:")
