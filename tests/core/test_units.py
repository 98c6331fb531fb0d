"""core/units: sizes, signed numbers and durations as people read them, and float dust off
results. (The rounding test moved here from tests/report/test_counts_and_labels.py.)"""

from __future__ import annotations

import pytest

from agentsproof.core.units import human_size, seconds, signed, tidy


def test_helpers_round_durations_and_signs() -> None:
    assert signed(-0.001) == "+0.00" and signed(-0.25) == "-0.25" and signed(None) == "—"
    assert seconds(29.5109) == "29.5s" and seconds(3) == "3s" and seconds(125) == "2m 05s"
    assert tidy({"ci": [1.39e-17, 0.5, -0.0]}) == {"ci": [0.0, 0.5, 0.0]}


@pytest.mark.parametrize("n, shown", [(0, "0 B"), (1023, "1023 B"), (1024, "1 KB"), (200_000, "195 KB"), (1024 * 1024, "1.0 MB"), (5_500_000, "5.2 MB")])
def test_human_size(n: int, shown: str) -> None:
    assert human_size(n) == shown


@pytest.mark.parametrize("value, digits, shown", [(0.0, 2, "+0.00"), (0.125, 1, "+0.1"), (-0.04, 1, "+0.0"), (-0.06, 1, "-0.1"), (1.0, 3, "+1.000")])
def test_signed(value: float, digits: int, shown: str) -> None:
    assert signed(value, digits) == shown


@pytest.mark.parametrize("value, shown", [(0.04, "0s"), (119.94, "119.9s"), (119.96, "120s"), (120, "2m 00s"), (3599.6, "60m 00s")])
def test_seconds(value: float, shown: str) -> None:
    assert seconds(value) == shown


def test_tidy_walks_lists_tuples_and_mappings_only() -> None:
    assert tidy((0.1 + 0.2, [1e-13, {"x": -1e-15}])) == (0.3, [0.0, {"x": 0.0}])
    assert tidy(0.123456789, places=3) == 0.123
    assert tidy("0.30000000000000004") == "0.30000000000000004"
    assert tidy(3) == 3 and tidy(None) is None and tidy(True) is True
